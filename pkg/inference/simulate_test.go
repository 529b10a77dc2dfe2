package inference

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dbbench/dbbench/pkg/stats"
)

// The simulations below check the error rates and coverages the package
// claims, under its own model (independent log-normal or normal runs).
// They are seeded, so a failure reproduces; the bounds allow three
// binomial standard errors around the nominal rate. docs/noise.md quotes
// the figures they log (go test ./pkg/inference/ -run Sim -v).

// binomialMargin is three standard errors of a rate p over n trials.
func binomialMargin(p float64, n int) float64 { return 3 * math.Sqrt(p*(1-p)/float64(n)) }

// logNormalRuns draws n runs of a step whose geometric mean is level and
// whose run-to-run CV is cv.
func logNormalRuns(r *rand.Rand, n int, level, cv float64) []float64 {
	s := math.Sqrt(math.Log1p(cv * cv))
	out := make([]float64, n)
	for i := range out {
		out[i] = level * math.Exp(s*r.NormFloat64())
	}
	return out
}

// stepCVs are the run-to-run CVs of a 32-step suite: the 7–18 % seen on
// 10 s steps, and quieter steps.
func stepCVs() []float64 {
	cvs := make([]float64, 32)
	for i := range cvs {
		cvs[i] = 0.03 + 0.15*float64(i)/31
	}
	return cvs
}

// historyFloor simulates the floor of one step measured on sets earlier
// repeat sets of size per.
func historyFloor(r *rand.Rand, cv float64, sets, per int) NoiseFloor {
	var p NoisePool
	for range sets {
		if err := p.AddRepeats(logNormalRuns(r, per, 1000, cv)); err != nil {
			panic(err)
		}
	}
	f, _ := p.Floor()
	return f
}

// regressedRun says whether any of a run's steps is declared slower after
// the correction.
func regressedRun(p []float64, c Correction, alpha float64) bool {
	adj, err := Adjust(c, p)
	if err != nil {
		panic(err)
	}
	for _, q := range adj {
		if q < alpha {
			return true
		}
	}
	return false
}

func TestSimAAFalsePositiveRate(t *testing.T) {
	const (
		runs  = 2000
		alpha = 0.05
	)
	cvs := stepCVs()
	type scenario struct {
		name       string
		repeats    int
		magnitude  float64
		floor      bool // one-repeat runs judged against a history floor
		correction Correction
		maxRate    float64 // what the rate must not exceed
		minRate    float64 // what it must exceed (the uncorrected control)
	}
	margin := binomialMargin(alpha, runs)
	scenarios := []scenario{
		{"welch-log 3 repeats holm m=0", 3, 0, false, CorrectionHolm, alpha + margin, 0},
		{"welch-log 3 repeats holm m=5%", 3, 0.05, false, CorrectionHolm, alpha + margin, 0},
		{"welch-log 3 repeats bh m=0", 3, 0, false, CorrectionBH, alpha + margin, 0},
		{"noise floor 1 repeat holm m=0", 1, 0, true, CorrectionHolm, alpha + margin, 0},
		// Without correction 32 one-sided tests at 5 % flag an A/A run
		// most of the time (1 − 0.95³² ≈ 0.81 for independent tests):
		// the control shows the simulation can see a failure.
		{"welch-log 3 repeats none m=0", 3, 0, false, CorrectionNone, 1, 0.7},
	}
	for si, sc := range scenarios {
		r := rand.New(rand.NewPCG(11, uint64(si)))
		flagged := 0
		for range runs {
			p := make([]float64, len(cvs))
			for i, cv := range cvs {
				a := logNormalRuns(r, sc.repeats, 1000, cv)
				b := logNormalRuns(r, sc.repeats, 1000, cv)
				var res Test
				var err error
				if sc.floor {
					res, err = SlowdownKnownNoise(a, b, sc.magnitude, historyFloor(r, cv, 4, 4))
				} else {
					res, err = Slowdown(a, b, sc.magnitude)
				}
				if err != nil {
					t.Fatal(err)
				}
				p[i] = res.P
			}
			if regressedRun(p, sc.correction, alpha) {
				flagged++
			}
		}
		rate := float64(flagged) / runs
		t.Logf("A/A, 32 steps, CV 3–18 %%, %s: %d of %d runs regressed (%.3f)", sc.name, flagged, runs, rate)
		if rate > sc.maxRate || rate < sc.minRate {
			t.Errorf("%s: A/A false-positive rate %.3f, want in [%.3f, %.3f]", sc.name, rate, sc.minRate, sc.maxRate)
		}
	}
}

func TestSimFiellerCoverage(t *testing.T) {
	const trials = 2000
	tests := []struct {
		name         string
		na, nb       int
		cvA, cvB     float64
		meanA, meanB float64
	}{
		{"n 3/3 cv 10 %", 3, 3, 0.10, 0.10, 1000, 900},
		{"n 4/4 cv 18 %", 4, 4, 0.18, 0.18, 1000, 1000},
		{"n 2/5 cv 5/15 %", 2, 5, 0.05, 0.15, 1000, 1100},
		{"n 5/3 cv 3/7 %", 5, 3, 0.03, 0.07, 500, 450},
	}
	for ti, tc := range tests {
		r := rand.New(rand.NewPCG(22, uint64(ti)))
		truth := tc.meanB / tc.meanA
		covered, deltaCovered, unbounded := 0, 0, 0
		draw := func(n int, m, cv float64) []float64 {
			xs := make([]float64, n)
			for i := range xs {
				// Normal runs: Fieller's model. Negative draws are
				// impossible at these CVs (> 5 sd).
				xs[i] = m * (1 + cv*r.NormFloat64())
			}
			return xs
		}
		for range trials {
			a, b := draw(tc.na, tc.meanA, tc.cvA), draw(tc.nb, tc.meanB, tc.cvB)
			iv, err := RatioOfMeans(a, b, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			if iv.FiellerUnbounded {
				unbounded++
			}
			if iv.Contains(truth) {
				covered++
			}
			d, _ := DeltaRatio(a, b, 0.95)
			if d.Contains(truth) {
				deltaCovered++
			}
		}
		cov := float64(covered) / trials
		t.Logf("coverage of 95 %% intervals, %s: Fieller (delta fallback in %d) %.3f, delta %.3f",
			tc.name, unbounded, cov, float64(deltaCovered)/trials)
		if cov < 0.93 || cov > 0.97 {
			t.Errorf("%s: Fieller coverage %.3f, want 0.93–0.97", tc.name, cov)
		}
	}
}

func TestSimPairedLogCoverage(t *testing.T) {
	const trials = 2000
	r := rand.New(rand.NewPCG(33, 0))
	covered := 0
	for range trials {
		n := 4
		a, b := make([]float64, n), make([]float64, n)
		for i := range n {
			// A slot effect of 20 % shared by both runs of the pair, and
			// 5 % run-to-run noise on top.
			slot := 1000 * math.Exp(0.2*r.NormFloat64())
			a[i] = slot * math.Exp(0.05*r.NormFloat64())
			b[i] = 0.9 * slot * math.Exp(0.05*r.NormFloat64())
		}
		iv, err := PairedLogRatio(a, b, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if iv.Contains(0.9) {
			covered++
		}
	}
	cov := float64(covered) / trials
	t.Logf("coverage of paired-log 95 %% intervals, 4 pairs, slot effect 20 %%, noise 5 %%: %.3f", cov)
	if cov < 0.93 || cov > 0.97 {
		t.Errorf("paired-log coverage %.3f, want 0.93–0.97", cov)
	}
}

func TestSimDetection(t *testing.T) {
	const (
		trials = 2000
		alpha  = 0.05
		cv     = 0.03
	)
	type scenario struct {
		name       string
		magnitude  float64
		floorSets  int // > 0: judged against a noise floor from floorSets sets of 4 earlier runs (3 df each)
		inRun      bool
		minRate    float64
		correction Correction
	}
	scenarios := []scenario{
		// One test at α: the question "is this step slower?".
		{"one test, welch-log", 0, 0, false, 0.85, CorrectionNone},
		{"one test, welch-log, beyond 5 %", 0.05, 0, false, 0.4, CorrectionNone},
		// The run's verdict: the slowed step among 31 unchanged ones,
		// Holm over 32. Welch with 3 repeats has ≤ 4 df and little power
		// at α/32; a noise floor with 30 df restores it.
		{"32-step run, holm, welch-log", 0, 0, true, 0.10, CorrectionHolm},
		{"32-step run, holm, noise floor df 30", 0, 10, true, 0.8, CorrectionHolm},
	}
	for si, sc := range scenarios {
		r := rand.New(rand.NewPCG(44, uint64(si)))
		found := 0
		for range trials {
			steps := 1
			if sc.inRun {
				steps = 32
			}
			p := make([]float64, steps)
			for i := range p {
				level := 1.0
				if i == 0 {
					level = 0.9 // the slowed step
				}
				a := logNormalRuns(r, 3, 1000, cv)
				b := logNormalRuns(r, 3, 1000*level, cv)
				var res Test
				var err error
				if sc.floorSets > 0 {
					res, err = SlowdownKnownNoise(a, b, sc.magnitude, historyFloor(r, cv, sc.floorSets, 4))
				} else {
					res, err = Slowdown(a, b, sc.magnitude)
				}
				if err != nil {
					t.Fatal(err)
				}
				p[i] = res.P
			}
			adj, _ := Adjust(sc.correction, p)
			if adj[0] < alpha {
				found++
			}
		}
		rate := float64(found) / trials
		t.Logf("10 %% slowdown, CV 3 %%, 3 repeats per side, %s: detected in %.3f", sc.name, rate)
		if rate < sc.minRate {
			t.Errorf("%s: detection rate %.3f, want >= %.2f", sc.name, rate, sc.minRate)
		}
	}
}

// pooledSlowdownP is the one-sided equal-variance t-test on log throughput
// that Design models (written out here, independently of Design).
func pooledSlowdownP(a, b []float64) float64 {
	la, lb := make([]float64, len(a)), make([]float64, len(b))
	for i := range a {
		la[i] = math.Log(a[i])
	}
	for i := range b {
		lb[i] = math.Log(b[i])
	}
	ma, va := meanVar(la)
	mb, vb := meanVar(lb)
	na, nb := float64(len(a)), float64(len(b))
	df := na + nb - 2
	sp := math.Sqrt(((na-1)*va + (nb-1)*vb) / df)
	tt := (mb - ma) / (sp * math.Sqrt(1/na+1/nb))
	return stats.StudentCDF(tt, df)
}

func TestSimMDE(t *testing.T) {
	const trials = 4000
	tests := []struct {
		name      string
		cv        float64
		n         int
		floorSets int // > 0: the test takes its variance from a floor of floorSets × 4 runs
		estimate  float64
	}{
		{"cv 7 %, 3 repeats", 0.07, 3, 0, 0},
		{"cv 3 %, 5 repeats", 0.03, 5, 0, 0},
		{"cv 12 %, 2 repeats", 0.12, 2, 0, 0},
		{"cv 10 %, 1 repeat, floor df 12", 0.10, 1, 4, 0},
		// The estimate rule where the magnitude binds (cv 5 %, 10 runs)
		// and where the test does (cv 7 %, 3 runs).
		{"estimate rule 5 %, cv 5 %, 10 repeats", 0.05, 10, 0, 0.05},
		{"estimate rule 5 %, cv 7 %, 3 repeats", 0.07, 3, 0, 0.05},
		{"estimate rule 5 %, cv 6 %, 1 repeat, floor df 12", 0.06, 1, 4, 0.05},
	}
	for ti, tc := range tests {
		d := Design{CV: tc.cv, FloorDF: 3 * tc.floorSets, MinEstimate: tc.estimate}
		mde, err := d.MDE(tc.n, 0.8)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(55, uint64(ti)))
		found := 0
		for range trials {
			a := logNormalRuns(r, tc.n, 1000, tc.cv)
			b := logNormalRuns(r, tc.n, 1000*(1-mde), tc.cv)
			var p float64
			if tc.floorSets > 0 {
				res, err := SlowdownKnownNoise(a, b, 0, historyFloor(r, tc.cv, tc.floorSets, 4))
				if err != nil {
					t.Fatal(err)
				}
				p = res.P
			} else {
				p = pooledSlowdownP(a, b)
			}
			// The verdict's estimate: the ratio of the sides' means.
			ma, _ := meanVar(a)
			mb, _ := meanVar(b)
			if p < 0.05 && mb/ma <= 1-tc.estimate {
				found++
			}
		}
		rate := float64(found) / trials
		t.Logf("MDE at power 80 %%, α 5 %% one-sided, %s: %.1f %%; simulated detection at the MDE %.3f", tc.name, 100*mde, rate)
		if m := binomialMargin(0.8, trials); math.Abs(rate-0.8) > m {
			t.Errorf("%s: detection at the MDE %.3f, want 0.80 ± %.3f", tc.name, rate, m)
		}
	}
}
