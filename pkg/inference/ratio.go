package inference

import (
	"errors"
	"fmt"
	"math"

	"github.com/dbbench/dbbench/pkg/stats"
)

// Method names how an interval or a test was computed; results carry it so
// that a report can say which one it printed.
type Method string

const (
	// MethodFieller is Fieller's interval for the ratio of two independent
	// means (unequal variances, Welch–Satterthwaite degrees of freedom).
	MethodFieller Method = "fieller"
	// MethodDelta is the delta-method (first-order Taylor) interval for the
	// ratio of two independent means; the fallback when Fieller's
	// confidence set is unbounded.
	MethodDelta Method = "delta"
	// MethodPairedLog is the interval of the geometric-mean ratio of
	// interleaved A/B pairs: Student's t on the per-pair log ratios.
	MethodPairedLog Method = "paired-log"
	// MethodWelchLog is Welch's t-test on log throughput (one value per
	// run), for runs with at least two repeats per side.
	MethodWelchLog Method = "welch-log"
	// MethodNoiseFloor is the t-test on log throughput whose variance comes
	// from a known noise floor (the suite's run-to-run CV and its degrees
	// of freedom), for runs with one repeat per side.
	MethodNoiseFloor Method = "noise-floor"
	// MethodBlocked is the t-test of a contrast between two builds in an
	// additive model of log throughput with a level per build and a shift
	// per block of runs measured together (a bisection's rounds): the
	// variance is pooled over every build and block.
	MethodBlocked Method = "blocked"
)

// DefaultLevel is the confidence level of the intervals reports print.
const DefaultLevel = 0.95

// Errors of the inputs; test with errors.Is.
var (
	// ErrTooFew means a side has fewer values than the method needs.
	ErrTooFew = errors.New("too few values")
	// ErrInvalid means an input is out of its domain (a negative or NaN
	// throughput, a level outside (0, 1), a zero denominator mean).
	ErrInvalid = errors.New("invalid input")
)

// Interval is a confidence interval for a ratio B/A (B over A: > 1 means B
// is faster when the values are throughputs).
type Interval struct {
	// Estimate is the point estimate: mean(B)/mean(A) for the ratio of
	// means, the geometric-mean ratio for the paired-log method.
	Estimate float64 `json:"estimate"`
	// Low and High bound the interval at Level.
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	Level float64 `json:"level"`
	// DF are the degrees of freedom of the t quantile used.
	DF     float64 `json:"df"`
	Method Method  `json:"method"`
	// FiellerUnbounded is set when Fieller's confidence set at Level is not
	// a finite interval: mean(A) is not significantly different from 0 at
	// that level (t²·var(mean A)/mean(A)² >= 1), so the data are
	// compatible with arbitrarily large ratios. Low and High are then the
	// delta method's (Method is MethodDelta), which understate the
	// uncertainty; a report should say so.
	FiellerUnbounded bool `json:"fiellerUnbounded,omitempty"`
	// PRatioOne is the two-sided p-value of "the ratio is 1" from the same
	// pivot as the interval (for Fieller: Welch's t of mean(B) − mean(A)),
	// so PRatioOne < 1 − Level exactly when Fieller's confidence set
	// excludes 1. Multiple-comparison control adjusts these p-values.
	PRatioOne float64 `json:"pRatioOne"`
	// NA and NB are the number of runs on each side (pairs for paired-log).
	NA int `json:"nA"`
	NB int `json:"nB"`
}

// Contains reports whether x lies in [Low, High].
func (iv Interval) Contains(x float64) bool { return iv.Low <= x && x <= iv.High }

// String prints the interval as "[low, high] (method)".
func (iv Interval) String() string {
	return fmt.Sprintf("[%.4g, %.4g] (%s)", iv.Low, iv.High, iv.Method)
}

// moments of one side: count, mean and the variance of the mean (s²/n).
type moments struct {
	n       int
	mean    float64
	varMean float64
}

func momentsOf(side string, xs []float64, minRuns int) (moments, error) {
	if len(xs) < minRuns {
		return moments{}, fmt.Errorf("%s: %d values, need at least %d: %w", side, len(xs), minRuns, ErrTooFew)
	}
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return moments{}, fmt.Errorf("%s[%d] = %v: throughput must be finite and >= 0: %w", side, i, x, ErrInvalid)
		}
	}
	m, v := meanVar(xs)
	vm := math.NaN()
	if len(xs) >= 2 {
		vm = v / float64(len(xs))
	}
	return moments{n: len(xs), mean: m, varMean: vm}, nil
}

// meanVar returns the mean and the sample variance (n−1; NaN for n < 2),
// with the corrected two-pass algorithm: the second term removes the
// rounding error of the mean, so identical values give exactly 0.
func meanVar(xs []float64) (float64, float64) {
	var s float64
	for _, x := range xs {
		s += x
	}
	n := float64(len(xs))
	m := s / n
	if len(xs) < 2 {
		return m, math.NaN()
	}
	var ss, c float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
		c += x - m
	}
	return m, math.Max(0, ss-c*c/n) / (n - 1)
}

func checkLevel(level float64) error {
	if !(level > 0 && level < 1) {
		return fmt.Errorf("confidence level %v: must be in (0, 1): %w", level, ErrInvalid)
	}
	return nil
}

// tQuantile is Student's t quantile, the normal one for infinite df.
func tQuantile(p, df float64) float64 {
	if math.IsInf(df, 1) {
		return stats.NormalQuantile(p)
	}
	return stats.StudentQuantile(p, df)
}

// tTwoSidedP is the two-sided p-value of t, normal for infinite df.
func tTwoSidedP(t, df float64) float64 {
	if math.IsInf(df, 1) {
		return math.Erfc(math.Abs(t) / math.Sqrt2)
	}
	return stats.StudentTwoSidedP(t, df)
}

// tCDF is P(T <= t), normal for infinite df.
func tCDF(t, df float64) float64 {
	if math.IsInf(df, 1) {
		return 0.5 * math.Erfc(-t/math.Sqrt2)
	}
	return stats.StudentCDF(t, df)
}

// satterthwaiteDF is the Welch–Satterthwaite degrees of freedom of
// vb + k²·va, where va and vb are variances of means from na and nb values.
// Both variances zero gives na + nb − 2.
func satterthwaiteDF(va float64, na int, vb float64, nb int, k float64) float64 {
	wa := k * k * va
	num := (vb + wa) * (vb + wa)
	den := vb*vb/float64(nb-1) + wa*wa/float64(na-1)
	if den == 0 {
		return float64(na + nb - 2)
	}
	return num / den
}

// RatioOfMeans is the interval at level for mean(b)/mean(a) from the runs
// of each side, by Fieller's method, falling back to the delta method when
// Fieller's set is unbounded (then FiellerUnbounded is set and Method is
// MethodDelta).
//
// Model: the runs are independent; each side's per-run values are normal
// with its own mean and variance (unequal variances allowed); the two sides
// are independent. The pivot (mean(B) − θ·mean(A)) / √(var(mean B) +
// θ²·var(mean A)) is taken as Student's t with the Welch–Satterthwaite
// degrees of freedom evaluated at the point estimate θ̂ (exact when the
// variances are equal and the counts too; an approximation otherwise, as
// Welch's test is). Needs at least 2 runs per side and mean(a) > 0.
func RatioOfMeans(a, b []float64, level float64) (Interval, error) {
	ma, mb, err := ratioMoments(a, b, level)
	if err != nil {
		return Interval{}, err
	}
	iv := fieller(ma, mb, level)
	if iv.FiellerUnbounded {
		d := delta(ma, mb, level)
		d.FiellerUnbounded = true
		d.PRatioOne = iv.PRatioOne
		return d, nil
	}
	return iv, nil
}

// FiellerRatio is Fieller's interval for mean(b)/mean(a) under the model of
// RatioOfMeans, without the fallback: when the confidence set is unbounded
// it returns FiellerUnbounded with Low = −Inf and High = +Inf (the set is
// then the whole line or the complement of a finite interval; either way
// no finite interval covers it).
func FiellerRatio(a, b []float64, level float64) (Interval, error) {
	ma, mb, err := ratioMoments(a, b, level)
	if err != nil {
		return Interval{}, err
	}
	return fieller(ma, mb, level), nil
}

// ratioMoments checks the level and the runs of each side shared by the
// ratio intervals (at least 2 runs per side, mean(a) != 0) and returns
// their moments.
func ratioMoments(a, b []float64, level float64) (ma, mb moments, err error) {
	if err := checkLevel(level); err != nil {
		return moments{}, moments{}, err
	}
	if ma, err = momentsOf("a", a, 2); err != nil {
		return moments{}, moments{}, err
	}
	if mb, err = momentsOf("b", b, 2); err != nil {
		return moments{}, moments{}, err
	}
	if ma.mean == 0 {
		return moments{}, moments{}, fmt.Errorf("a: mean is 0, the ratio is undefined: %w", ErrInvalid)
	}
	return ma, mb, nil
}

// fieller solves (b − θa)² <= t²(vb + θ²va) for θ, with a, b the means
// and va, vb the variances of the means:
// θ²(a² − t²va) − 2abθ + (b² − t²vb) <= 0.
func fieller(ma, mb moments, level float64) Interval {
	a, b, va, vb := ma.mean, mb.mean, ma.varMean, mb.varMean
	r := b / a
	df := satterthwaiteDF(va, ma.n, vb, mb.n, r)
	t := tQuantile(1-(1-level)/2, df)
	iv := Interval{Estimate: r, Level: level, DF: df, Method: MethodFieller, NA: ma.n, NB: mb.n,
		PRatioOne: welchP(ma, mb, df)}
	qa := a*a - t*t*va
	if qa <= 0 {
		iv.FiellerUnbounded = true
		iv.Low, iv.High = math.Inf(-1), math.Inf(1)
		return iv
	}
	// qa > 0 makes the discriminant non-negative:
	// a²vb + b²va − t²va·vb >= b²va >= 0 since a² > t²va.
	disc := a*a*vb + b*b*va - t*t*va*vb
	h := t * math.Sqrt(math.Max(disc, 0))
	iv.Low, iv.High = (a*b-h)/qa, (a*b+h)/qa
	return iv
}

// welchP is the two-sided p-value of mean(b) = mean(a), Welch's statistic
// with df degrees of freedom; it is Fieller's pivot at θ = 1.
func welchP(ma, mb moments, df float64) float64 {
	return welch(ma.mean, ma.varMean, mb.mean, mb.varMean, df).P
}

// DeltaRatio is the delta-method interval r ± t·se(r) for r =
// mean(b)/mean(a), with se(r)² = (var(mean B) + r²·var(mean A)) / mean(A)².
//
// Model: as RatioOfMeans (independent runs, normal per side, unequal
// variances, Welch–Satterthwaite df). It is symmetric around r and finite
// even when the denominator is poorly determined, which is exactly when it
// is wrong: Fieller's interval is preferred whenever it is bounded.
func DeltaRatio(a, b []float64, level float64) (Interval, error) {
	ma, mb, err := ratioMoments(a, b, level)
	if err != nil {
		return Interval{}, err
	}
	return delta(ma, mb, level), nil
}

func delta(ma, mb moments, level float64) Interval {
	a, b := ma.mean, mb.mean
	r := b / a
	df := satterthwaiteDF(ma.varMean, ma.n, mb.varMean, mb.n, r)
	t := tQuantile(1-(1-level)/2, df)
	se := math.Sqrt(mb.varMean+r*r*ma.varMean) / math.Abs(a)
	p := 1.0
	switch {
	case se > 0:
		p = tTwoSidedP((r-1)/se, df)
	case r != 1:
		p = 0
	}
	return Interval{Estimate: r, Low: r - t*se, High: r + t*se, Level: level, DF: df,
		Method: MethodDelta, PRatioOne: p, NA: ma.n, NB: mb.n}
}

// PairedLogRatio is the interval of the geometric-mean ratio of interleaved
// pairs: pair i is (a[i], b[i]), run back to back in the same slot (same
// node, same time of day). With d_i = ln(b_i/a_i) the interval is
// exp(mean(d) ± t(n−1)·sd(d)/√n).
//
// Model: log throughput is normal; a slot may shift both runs of its pair
// by the same factor (which the pairing cancels); the pairs are
// independent of each other and d has one variance. It estimates the
// ratio of geometric means (the median ratio under log-normality), not of
// arithmetic means: the two coincide when both sides have the same CV and
// otherwise differ by the factor exp((σ_B² − σ_A²)/2) of the log-scale
// variances, under 0.5 % for CVs up to 10 %. Needs at least 2 pairs and
// positive values.
func PairedLogRatio(a, b []float64, level float64) (Interval, error) {
	if err := checkLevel(level); err != nil {
		return Interval{}, err
	}
	if len(a) != len(b) {
		return Interval{}, fmt.Errorf("paired: a has %d values and b %d, pairs need equal counts: %w", len(a), len(b), ErrInvalid)
	}
	if len(a) < 2 {
		return Interval{}, fmt.Errorf("paired: %d pairs, need at least 2: %w", len(a), ErrTooFew)
	}
	d := make([]float64, len(a))
	for i := range a {
		if !(a[i] > 0) || !(b[i] > 0) || math.IsInf(a[i], 0) || math.IsInf(b[i], 0) {
			return Interval{}, fmt.Errorf("paired: pair %d (%v, %v): log ratio needs finite values > 0: %w", i, a[i], b[i], ErrInvalid)
		}
		d[i] = math.Log(b[i] / a[i])
	}
	m, v := meanVar(d)
	n := float64(len(d))
	df := n - 1
	se := math.Sqrt(v / n)
	t := tQuantile(1-(1-level)/2, df)
	p := 1.0
	switch {
	case se > 0:
		p = tTwoSidedP(m/se, df)
	case m != 0:
		p = 0
	}
	return Interval{Estimate: math.Exp(m), Low: math.Exp(m - t*se), High: math.Exp(m + t*se), Level: level,
		DF: df, Method: MethodPairedLog, PRatioOne: p, NA: len(a), NB: len(b)}, nil
}
