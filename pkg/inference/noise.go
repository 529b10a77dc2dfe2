package inference

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
)

// NoiseFloor is the run-to-run noise of one (step, threads): the standard
// deviation of log throughput between independent runs of one
// configuration, pooled over the evidence it was measured on.
type NoiseFloor struct {
	// SigmaLog is the standard deviation of ln(throughput) of one run.
	SigmaLog float64 `json:"sigmaLog"`
	// DF are the degrees of freedom of the pooled variance: Σ(n−1) over
	// repeat sets plus one per A/A pair. A floor resting on few df is
	// itself uncertain; the t quantiles of the tests that use it account
	// for that.
	DF int `json:"df"`
	// Runs is how many runs the floor rests on; Sets how many repeat sets
	// and A/A pairs.
	Runs int `json:"runs"`
	Sets int `json:"sets"`
}

// CV is the coefficient of variation of throughput implied by SigmaLog
// under log-normality: √(exp(σ²) − 1) (≈ σ for small σ).
func (f NoiseFloor) CV() float64 { return math.Sqrt(math.Expm1(f.SigmaLog * f.SigmaLog)) }

func (f NoiseFloor) validate() error {
	if !(f.SigmaLog >= 0) || math.IsInf(f.SigmaLog, 0) || f.DF < 1 {
		return fmt.Errorf("noise floor: sigmaLog %v must be finite and >= 0 and df %d at least 1: %w", f.SigmaLog, f.DF, ErrInvalid)
	}
	return nil
}

// FloorFromCV is the noise floor of a known coefficient of variation cv
// (0.07 = 7 %) estimated with df degrees of freedom, under log-normality
// (σ = √ln(1 + cv²)).
func FloorFromCV(cv float64, df int) (NoiseFloor, error) {
	if !(cv >= 0) || math.IsInf(cv, 0) {
		return NoiseFloor{}, fmt.Errorf("cv %v: must be finite and >= 0: %w", cv, ErrInvalid)
	}
	f := NoiseFloor{SigmaLog: math.Sqrt(math.Log1p(cv * cv)), DF: df}
	return f, f.validate()
}

// NoisePool accumulates the evidence of one (step, threads)'s noise floor:
// sums of squares of log throughput and their degrees of freedom. The zero
// value is empty and ready.
type NoisePool struct {
	ss   float64
	df   int
	runs int
	sets int
}

// AddRepeats adds one set of repeats: runs of one configuration in one
// suite run (or any runs known to measure the same thing). It contributes
// Σ(ln x − mean ln x)² with n − 1 degrees of freedom.
//
// Model: the repeats are independent, log-normal with the floor's common
// variance (equal variance across sets: the floor is one number per
// (step, threads), pooled over versions and configurations; a
// configuration that is much noisier than the others is averaged in).
func (p *NoisePool) AddRepeats(xs []float64) error {
	l, err := logsOf("repeats", xs, 2)
	if err != nil {
		return err
	}
	_, v := meanVar(l)
	p.ss += v * float64(len(l)-1)
	p.df += len(l) - 1
	p.runs += len(l)
	p.sets++
	return nil
}

// AddPair adds an A/A pair: two runs of the same image and configuration
// from a suite's history (e.g. consecutive runs with nothing changed). With
// d = ln(b/a) it contributes d²/2 with one degree of freedom, because
// E[d²] = 2σ² when the two runs measure the same thing.
//
// Model: the pair's runs are independent, log-normal with the floor's
// variance, and truly equal in expectation — a real change between them
// inflates the floor (which errs on the safe side: a larger floor makes
// fewer "regressed" verdicts).
func (p *NoisePool) AddPair(a, b float64) error {
	l, err := logsOf("pair", []float64{a, b}, 2)
	if err != nil {
		return err
	}
	d := l[1] - l[0]
	p.ss += d * d / 2
	p.df++
	p.runs += 2
	p.sets++
	return nil
}

// AddFloor adds a floor measured elsewhere (one stored with an earlier
// run whose evidence is no longer readable): σ²·DF to the sum of squares
// and its DF, Runs and Sets. The evidence behind f must not overlap with
// what the pool already holds, or it would be counted twice.
func (p *NoisePool) AddFloor(f NoiseFloor) error {
	if err := f.validate(); err != nil {
		return err
	}
	p.ss += f.SigmaLog * f.SigmaLog * float64(f.DF)
	p.df += f.DF
	p.runs += f.Runs
	p.sets += f.Sets
	return nil
}

// Floor returns the pooled floor; false when nothing was added.
func (p *NoisePool) Floor() (NoiseFloor, bool) {
	if p.df == 0 {
		return NoiseFloor{}, false
	}
	return NoiseFloor{SigmaLog: math.Sqrt(p.ss / float64(p.df)), DF: p.df, Runs: p.runs, Sets: p.sets}, true
}

// Key names one point of a suite: a step at a client concurrency.
type Key struct {
	Step    string `json:"step"`
	Threads int    `json:"threads"`
}

// NoiseModel is the noise floor of every (step, threads) of a suite. The
// zero value is empty and ready; it is not safe for concurrent writes.
type NoiseModel struct {
	pools map[Key]*NoisePool
}

func (m *NoiseModel) pool(k Key) *NoisePool {
	if m.pools == nil {
		m.pools = map[Key]*NoisePool{}
	}
	p, ok := m.pools[k]
	if !ok {
		p = &NoisePool{}
		m.pools[k] = p
	}
	return p
}

// AddRepeats adds a set of repeats of k (see NoisePool.AddRepeats).
func (m *NoiseModel) AddRepeats(k Key, xs []float64) error {
	if err := m.pool(k).AddRepeats(xs); err != nil {
		return fmt.Errorf("%s@%d: %w", k.Step, k.Threads, err)
	}
	return nil
}

// AddPair adds an A/A pair of k (see NoisePool.AddPair).
func (m *NoiseModel) AddPair(k Key, a, b float64) error {
	if err := m.pool(k).AddPair(a, b); err != nil {
		return fmt.Errorf("%s@%d: %w", k.Step, k.Threads, err)
	}
	return nil
}

// AddFloor adds a floor measured elsewhere to k (see NoisePool.AddFloor).
func (m *NoiseModel) AddFloor(k Key, f NoiseFloor) error {
	if err := m.pool(k).AddFloor(f); err != nil {
		return fmt.Errorf("%s@%d: %w", k.Step, k.Threads, err)
	}
	return nil
}

// Floor returns k's floor; false when there is no evidence for k.
func (m *NoiseModel) Floor(k Key) (NoiseFloor, bool) {
	p, ok := m.pools[k]
	if !ok {
		return NoiseFloor{}, false
	}
	return p.Floor()
}

// Keys returns the points that have a floor, by step then threads.
func (m *NoiseModel) Keys() []Key {
	var out []Key
	for k, p := range m.pools {
		if p.df > 0 {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b Key) int {
		return cmp.Or(cmp.Compare(a.Step, b.Step), cmp.Compare(a.Threads, b.Threads))
	})
	return out
}

// Design describes a two-sample comparison of n runs per side on log
// throughput, for power, minimum detectable effect and sample size.
//
// Model: independent runs, log-normal throughput with one variance σ² on
// both sides (σ from CV under log-normality), and the equal-variance
// (pooled) t-test on ln throughput: with FloorDF = 0 the variance is
// estimated from the 2n runs themselves (2n − 2 df); with FloorDF > 0 it
// comes from a noise floor with that many df (SlowdownKnownNoise). The
// power is exact under this model (noncentral t, by numerical
// integration); Welch's test (Slowdown) has slightly fewer df and so
// slightly less power at the same n.
//
// With MinEstimate > 0 the design is the estimate rule's: a slowdown is
// found when the test rejects "not slower" and the estimated slowdown is
// at least MinEstimate. The estimate (the mean log difference) and the
// variance estimate are independent under the model, so the power is
// still exact: E over the variance estimate of P(estimate beyond the
// larger of MinEstimate and the test's critical difference).
//
// With Inflation > 1 the test's variance estimate is larger than the
// variance of the difference it tests: runs spread over nodes in balanced
// blocks (every node runs as many cells of each side) lose the node effect
// from the difference of the sides' means, but a test that does not know
// the blocks, as the verdict's, sees it in each side's spread. Such a test
// keeps its level (conservative) and loses power; the power below divides
// the critical value's reach by √Inflation, taking the inflated estimate as
// the true variance times Inflation times χ²_df/df (an approximation: a
// sum of components with different df is not exactly a scaled χ²).
type Design struct {
	// CV is the run-to-run coefficient of variation (0.07 = 7 %).
	CV float64
	// Alpha is the test's level; 0 means 0.05.
	Alpha float64
	// TwoSided tests "different" instead of "B slower" (one-sided, the
	// regression question).
	TwoSided bool
	// FloorDF are the df of a noise floor the test takes its variance
	// from; 0 means the variance comes from the runs compared.
	FloorDF int
	// MinEstimate is the estimate rule's magnitude (0.05 = the estimated
	// slowdown must be at least 5 %); 0 is the test alone. One-sided only.
	MinEstimate float64
	// Inflation is the ratio of the variance the test estimates to the
	// variance of one run's value in the difference (CV's); 0 means 1.
	Inflation float64
}

func (d Design) inflation() float64 { return cmp.Or(d.Inflation, 1) }

func (d Design) alpha() float64 {
	if d.Alpha == 0 {
		return 0.05
	}
	return d.Alpha
}

func (d Design) validate(n int) error {
	switch {
	case !(d.CV > 0) || math.IsInf(d.CV, 0):
		return fmt.Errorf("design: cv %v must be finite and > 0: %w", d.CV, ErrInvalid)
	case !(d.alpha() > 0 && d.alpha() < 1):
		return fmt.Errorf("design: alpha %v must be in (0, 1): %w", d.Alpha, ErrInvalid)
	case d.FloorDF < 0:
		return fmt.Errorf("design: floor df %d must be >= 0: %w", d.FloorDF, ErrInvalid)
	case !(d.MinEstimate >= 0 && d.MinEstimate < 1):
		return fmt.Errorf("design: min estimate %v must be in [0, 1): %w", d.MinEstimate, ErrInvalid)
	case !(d.inflation() >= 1) || math.IsInf(d.Inflation, 0):
		return fmt.Errorf("design: inflation %v must be finite and >= 1: %w", d.Inflation, ErrInvalid)
	case d.MinEstimate > 0 && d.TwoSided:
		return fmt.Errorf("design: the estimate rule (min estimate %v) is one-sided: %w", d.MinEstimate, ErrInvalid)
	case n < 1 || (d.FloorDF == 0 && n < 2):
		return fmt.Errorf("design: %d runs per side: need 2 (1 with a noise floor): %w", n, ErrTooFew)
	}
	return nil
}

func (d Design) df(n int) float64 {
	if d.FloorDF > 0 {
		return float64(d.FloorDF)
	}
	return float64(2*n - 2)
}

func (d Design) sigma() float64 { return math.Sqrt(math.Log1p(d.CV * d.CV)) }

// Power is the probability that the test detects a slowdown of effect
// (0.10 = B is 10 % slower: ratio 0.9) with n runs per side, under the
// Design's model.
func (d Design) Power(n int, effect float64) (float64, error) {
	if err := d.validate(n); err != nil {
		return 0, err
	}
	if !(effect >= 0 && effect < 1) {
		return 0, fmt.Errorf("design: effect %v must be in [0, 1): %w", effect, ErrInvalid)
	}
	return d.power(n, d.critical(n), -math.Log1p(-effect)), nil
}

// critical is the test's critical value of t, times √Inflation: the
// reach of the test in units of the true standard error.
func (d Design) critical(n int) float64 {
	k := math.Sqrt(d.inflation())
	if d.TwoSided {
		return k * tQuantile(1-d.alpha()/2, d.df(n))
	}
	return k * tQuantile(1-d.alpha(), d.df(n))
}

// power for a log-scale shift delta >= 0, given the critical value c.
func (d Design) power(n int, c, delta float64) float64 {
	se := d.sigma() * math.Sqrt(2/float64(n))
	floor := 0.0
	if d.MinEstimate > 0 {
		floor = -math.Log1p(-d.MinEstimate) / se
	}
	return d.powerAt(d.df(n), c, delta/se, floor)
}

// powerAt is the power at noncentrality lambda = delta/se with nu df; floor
// is the estimate rule's magnitude in units of se (0: the test alone).
func (d Design) powerAt(nu, c, lambda, floor float64) float64 {
	if floor > 0 {
		// Found when the log slowdown D ~ N(delta, se²) is at least both
		// ln(1/(1 − MinEstimate)) and c·ŝe, ŝe = se·W/√nu with W ~ χ_nu.
		return 1 - chiMixture(nu, func(r float64) float64 {
			return normalCDF(math.Max(floor, c*r) - lambda)
		})
	}
	if !d.TwoSided {
		return 1 - noncentralTCDF(c, nu, lambda)
	}
	return 1 - noncentralTCDF(c, nu, lambda) + noncentralTCDF(-c, nu, lambda)
}

// MDE is the minimum detectable slowdown at the given power (0 means 0.8)
// with n runs per side: the relative effect e (B/A = 1 − e) whose power is
// exactly power under the Design's model.
func (d Design) MDE(n int, power float64) (float64, error) {
	if power == 0 {
		power = 0.8
	}
	if err := d.validate(n); err != nil {
		return 0, err
	}
	if !(power > d.alpha() && power < 1) {
		return 0, fmt.Errorf("design: power %v must be in (alpha, 1): %w", power, ErrInvalid)
	}
	c := d.critical(n)
	se := d.sigma() * math.Sqrt(2/float64(n))
	nu := d.df(n)
	if d.MinEstimate == 0 {
		// The power is a function of the noncentrality delta/se alone
		// (for the df, the critical value and the sides): its root is
		// found once and scales with the noise.
		key := mdeKey{nu: nu, c: c, power: power, twoSided: d.TwoSided}
		lambda, ok := mdeLambdas.Load(key)
		if !ok {
			lambda, _ = mdeLambdas.LoadOrStore(key, rootOf(func(l float64) float64 { return d.powerAt(nu, c, l, 0) }, power, 1))
		}
		return -math.Expm1(-lambda.(float64) * se), nil
	}
	floor := -math.Log1p(-d.MinEstimate) / se
	lambda := rootOf(func(l float64) float64 { return d.powerAt(nu, c, l, floor) }, power, 1)
	return -math.Expm1(-lambda * se), nil
}

// mdeKey identifies a noncentrality at which a test without an estimate
// floor reaches a power.
type mdeKey struct {
	nu, c, power float64
	twoSided     bool
}

var mdeLambdas sync.Map // mdeKey → noncentrality (float64)

// rootOf is the x ≥ 0 at which the increasing f reaches target: bracket
// from start, then bisect to a relative 1e-7 (a detectable change is
// printed to 0.1 %).
func rootOf(f func(float64) float64, target, start float64) float64 {
	lo, hi := 0.0, start
	for f(hi) < target {
		lo, hi = hi, 2*hi
	}
	for range 100 {
		mid := (lo + hi) / 2
		if f(mid) < target {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-7*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// noncentralTCDF is P(T <= x) for the noncentral t with nu df and
// noncentrality lambda: E over W ~ χ_nu of Φ(x·W/√nu − lambda), integrated
// with Simpson's rule over W where the chi density is not negligible.
func noncentralTCDF(x, nu, lambda float64) float64 {
	return chiMixture(nu, func(r float64) float64 { return normalCDF(x*r - lambda) })
}

// chiMixture is E g(W/√nu) for W ~ χ_nu (the ratio of an estimated
// standard deviation with nu df to the true one), g a probability.
func chiMixture(nu float64, g func(r float64) float64) float64 {
	if math.IsInf(nu, 1) {
		return g(1)
	}
	q := chiQuadrature(nu)
	s := 0.0
	for i, r := range q.r {
		if q.w[i] != 0 {
			s += q.w[i] * g(r)
		}
	}
	return math.Min(1, math.Max(0, s))
}

// quadrature is Simpson's rule for E g(W/√nu), W ~ χ_nu: the points r_i =
// w_i/√nu and the weights (Simpson's coefficient × h/3 × the χ_nu density
// at w_i). The density is the same for every g, so the weights are
// computed once per nu: a verdict's every point asks for the power of
// tests with the same df many times over (the MDE is a root search).
type quadrature struct {
	r, w []float64
}

var chiQuadratures sync.Map // nu → *quadrature

func chiQuadrature(nu float64) *quadrature {
	if q, ok := chiQuadratures.Load(nu); ok {
		return q.(*quadrature)
	}
	// The χ_nu density is w^(nu−1) e^(−w²/2) / (2^(nu/2−1) Γ(nu/2)); it
	// peaks at √(nu−1) with a spread below 1, so ±12 around its mode holds
	// all of its mass to double precision.
	mode := math.Sqrt(math.Max(nu-1, 0))
	lo, hi := math.Max(0, mode-12), mode+12
	lg, _ := math.Lgamma(nu / 2)
	logNorm := -(nu/2-1)*math.Ln2 - lg
	density := func(w float64) float64 {
		if w == 0 {
			if nu > 1 {
				return 0
			}
			// nu = 1: the density is finite at 0.
			return math.Exp(logNorm)
		}
		return math.Exp(logNorm + (nu-1)*math.Log(w) - w*w/2)
	}
	const steps = 2000 // even
	h := (hi - lo) / steps
	q := &quadrature{r: make([]float64, steps+1), w: make([]float64, steps+1)}
	for i := 0; i <= steps; i++ {
		coef := 4.0
		switch {
		case i == 0 || i == steps:
			coef = 1
		case i%2 == 0:
			coef = 2
		}
		w := lo + float64(i)*h
		q.r[i] = w / math.Sqrt(nu)
		q.w[i] = coef * density(w) * h / 3
	}
	actual, _ := chiQuadratures.LoadOrStore(nu, q)
	return actual.(*quadrature)
}

func normalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// RequiredRepeats is the smallest number of runs per side (at least 2,
// at most max) whose ratio interval at level has a half-width of at most
// halfWidth (0.02 = ±2 %), for the adaptive-repeats feature: the log-scale
// interval ln(B/A) ± t·σ·√(2/n) must satisfy t·σ·√(2/n) <= ln(1 +
// halfWidth). t has floorDF df when the variance comes from a noise floor,
// else 2n − 2 (estimated from the runs).
//
// Model: as Design (independent, log-normal runs, one variance on both
// sides). The half-width is the expected one: the realised interval of a
// run varies with its sample variance. It returns an error naming the
// half-width reached at max when max runs are not enough.
func RequiredRepeats(cv, halfWidth, level float64, floorDF, maxRepeats int) (int, error) {
	if err := checkLevel(level); err != nil {
		return 0, err
	}
	switch {
	case !(cv > 0) || math.IsInf(cv, 0):
		return 0, fmt.Errorf("required repeats: cv %v must be finite and > 0: %w", cv, ErrInvalid)
	case !(halfWidth > 0) || math.IsInf(halfWidth, 0):
		return 0, fmt.Errorf("required repeats: half-width %v must be finite and > 0: %w", halfWidth, ErrInvalid)
	case floorDF < 0 || maxRepeats < 2:
		return 0, fmt.Errorf("required repeats: floor df %d must be >= 0 and maxRepeats %d >= 2: %w", floorDF, maxRepeats, ErrInvalid)
	}
	sigma := math.Sqrt(math.Log1p(cv * cv))
	target := math.Log1p(halfWidth)
	hw := func(n int) float64 {
		df := float64(2*n - 2)
		if floorDF > 0 {
			df = float64(floorDF)
		}
		return tQuantile(1-(1-level)/2, df) * sigma * math.Sqrt(2/float64(n))
	}
	// The half-width falls monotonically with n (the t quantile and
	// 1/√n both fall), so the first n that fits is the answer.
	for n := 2; n <= maxRepeats; n++ {
		if hw(n) <= target {
			return n, nil
		}
	}
	return 0, fmt.Errorf("required repeats: %d runs per side give ±%.1f %%, not ±%.1f %%: %w",
		maxRepeats, 100*math.Expm1(hw(maxRepeats)), 100*halfWidth, ErrTooFew)
}
