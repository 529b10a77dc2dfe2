package inference

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dbbench/dbbench/pkg/stats"
)

func TestRatioHalfWidths(t *testing.T) {
	k := Key{Step: "point-query", Threads: 4}
	// Base with no variance: Fieller's interval is Other's t interval over
	// mean(Base), symmetric, with nOther − 1 df.
	exactBase := RatioSamples{Key: k, Name: "b", Base: []float64{200, 200, 200}, Other: []float64{180, 190}}
	seExact := math.Sqrt(50.0/2) / 200
	wantExact := 100 * t975df1 * seExact / 0.925
	// Mean only: t(2)·s/√3 over the mean.
	meanOnly := RatioSamples{Key: k, Name: "a", Other: []float64{990, 1000, 1010}}
	wantMean := 100 * stats.StudentQuantile(0.975, 2) * (10 / math.Sqrt(3)) / 1000

	tests := []struct {
		name   string
		in     RatioSamples
		want   float64
		method Method
	}{
		{"fieller with an exact base", exactBase, wantExact, MethodFieller},
		{"mean of a run of one combination", meanOnly, wantMean, MethodMean},
		{"one run on a side is unknown", RatioSamples{Key: k, Base: []float64{100, 101}, Other: []float64{99}}, math.Inf(1), ""},
		{"one base run is unknown", RatioSamples{Key: k, Base: []float64{100}, Other: []float64{99, 98}}, math.Inf(1), ""},
		// Base spread so wide that its mean is not distinguishable from 0.
		{"unbounded fieller is unknown", RatioSamples{Key: k, Base: []float64{1, 200}, Other: []float64{100, 101}}, math.Inf(1), MethodFieller},
		{"identical runs are exact", RatioSamples{Key: k, Base: []float64{100, 100}, Other: []float64{90, 90}}, 0, MethodFieller},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RatioHalfWidths([]RatioSamples{tc.in}, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || !near(got[0].Percent, tc.want, 1e-9) {
				t.Fatalf("half-width = %+v, want %v %%", got, tc.want)
			}
			if got[0].Interval.Method != tc.method || got[0].Key != k {
				t.Errorf("method %q key %v, want %q %v", got[0].Interval.Method, got[0].Key, tc.method, k)
			}
		})
	}
}

func TestRatioHalfWidthsWiderSide(t *testing.T) {
	// Fieller's interval is skewed to the right when the base is noisy: the
	// half-width must be the wider (upper) side.
	rs := RatioSamples{Key: Key{Step: "s", Threads: 1}, Base: []float64{800, 1000, 1200}, Other: []float64{1000, 1010, 990}}
	got, err := RatioHalfWidths([]RatioSamples{rs}, 0)
	if err != nil {
		t.Fatal(err)
	}
	iv := got[0].Interval
	up, down := iv.High-iv.Estimate, iv.Estimate-iv.Low
	if !(up > down) {
		t.Fatalf("interval %v is not skewed upwards; the test's premise is wrong", iv)
	}
	if want := 100 * up / iv.Estimate; !near(got[0].Percent, want, 1e-12) {
		t.Errorf("half-width %v %%, want the upper side's %v %%", got[0].Percent, want)
	}
}

func TestRatioHalfWidthsErrors(t *testing.T) {
	k := Key{Step: "s", Threads: 1}
	tests := []struct {
		name  string
		in    []RatioSamples
		level float64
	}{
		{"negative value", []RatioSamples{{Key: k, Base: []float64{1, 2}, Other: []float64{-1, 2}}}, 0.95},
		{"NaN in a short side", []RatioSamples{{Key: k, Base: []float64{1, 2}, Other: []float64{math.NaN()}}}, 0.95},
		{"zero base mean", []RatioSamples{{Key: k, Base: []float64{0, 0}, Other: []float64{1, 2}}}, 0.95},
		{"zero mean alone", []RatioSamples{{Key: k, Other: []float64{0, 0}}}, 0.95},
		{"level", []RatioSamples{{Key: k, Other: []float64{1, 2}}}, 1.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := RatioHalfWidths(tc.in, tc.level); !errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestPrecisionRuleDecide(t *testing.T) {
	rule := PrecisionRule{TargetPercent: 5, MinRepeats: 3, MaxRepeats: 6}
	k1, k2 := Key{Step: "point-query", Threads: 1}, Key{Step: "insert", Threads: 1}
	// tight: CV 0.5 % on both sides → half-width ~1-2 %; loose: CV ~10 %.
	tight := func(n int) []float64 { return spread(n, 1000, 5) }
	loose := func(n int) []float64 { return spread(n, 1000, 100) }
	tests := []struct {
		name     string
		rule     PrecisionRule
		rounds   int
		ratios   []RatioSamples
		wantMet  bool
		wantStop bool
	}{
		{"all tight after min rounds: met, stop", rule, 3,
			[]RatioSamples{{Key: k1, Base: tight(3), Other: tight(3)}, {Key: k2, Base: tight(3), Other: tight(3)}}, true, true},
		{"tight before min rounds: met but go on", rule, 2,
			[]RatioSamples{{Key: k1, Base: tight(2), Other: tight(2)}}, true, false},
		{"one ratio loose: go on", rule, 4,
			[]RatioSamples{{Key: k1, Base: tight(4), Other: tight(4)}, {Key: k2, Base: loose(4), Other: loose(4)}}, false, false},
		{"loose at max rounds: stop unmet", rule, 6,
			[]RatioSamples{{Key: k2, Base: loose(6), Other: loose(6)}}, false, true},
		{"a side short of runs (failed cell): unknown, go on", rule, 4,
			[]RatioSamples{{Key: k1, Base: tight(4), Other: tight(1)}}, false, false},
		{"min equals max: stop at once", PrecisionRule{TargetPercent: 1, MinRepeats: 2, MaxRepeats: 2}, 2,
			[]RatioSamples{{Key: k2, Base: loose(2), Other: loose(2)}}, false, true},
		{"mean only (one combination), tight", rule, 3,
			[]RatioSamples{{Key: k1, Other: tight(3)}}, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := tc.rule.Decide(tc.rounds, tc.ratios)
			if err != nil {
				t.Fatal(err)
			}
			if d.Met != tc.wantMet || d.Stop != tc.wantStop {
				t.Errorf("met %v stop %v, want %v %v (half-widths %+v)", d.Met, d.Stop, tc.wantMet, tc.wantStop, d.HalfWidths)
			}
			worst := 0.0
			for _, h := range d.HalfWidths {
				worst = math.Max(worst, h.Percent)
			}
			if d.Worst != worst || len(d.HalfWidths) != len(tc.ratios) {
				t.Errorf("worst %v of %d half-widths, want %v of %d", d.Worst, len(d.HalfWidths), worst, len(tc.ratios))
			}
		})
	}
}

func TestPrecisionRuleInvalid(t *testing.T) {
	ok := []RatioSamples{{Key: Key{Step: "s", Threads: 1}, Other: []float64{1, 2}}}
	tests := []struct {
		name   string
		rule   PrecisionRule
		ratios []RatioSamples
		want   error
	}{
		{"target 0", PrecisionRule{TargetPercent: 0, MinRepeats: 2, MaxRepeats: 4}, ok, ErrInvalid},
		{"target negative", PrecisionRule{TargetPercent: -1, MinRepeats: 2, MaxRepeats: 4}, ok, ErrInvalid},
		{"min 1", PrecisionRule{TargetPercent: 1, MinRepeats: 1, MaxRepeats: 4}, ok, ErrInvalid},
		{"max below min", PrecisionRule{TargetPercent: 1, MinRepeats: 3, MaxRepeats: 2}, ok, ErrInvalid},
		{"level", PrecisionRule{TargetPercent: 1, MinRepeats: 2, MaxRepeats: 2, Level: 1}, ok, ErrInvalid},
		{"no ratios", PrecisionRule{TargetPercent: 1, MinRepeats: 2, MaxRepeats: 2}, nil, ErrTooFew},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.rule.Decide(2, tc.ratios); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// spread is n values around m, evenly within ±d (deterministic).
func spread(n int, m, d float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		if n > 1 {
			out[i] = m - d + 2*d*float64(i)/float64(n-1)
		} else {
			out[i] = m
		}
	}
	return out
}

// adaptiveTrial runs the rule on one simulated comparison of normal runs
// (Fieller's model) with true ratio theta, and says whether the final
// interval covers theta and how many rounds it took.
func adaptiveTrial(r *rand.Rand, rule PrecisionRule, cvA, cvB, theta float64) (covered bool, rounds int) {
	var a, b []float64
	for n := 1; ; n++ {
		a = append(a, 1000*(1+cvA*r.NormFloat64()))
		b = append(b, 1000*theta*(1+cvB*r.NormFloat64()))
		if n < rule.MinRepeats {
			continue
		}
		d, err := rule.Decide(n, []RatioSamples{{Key: Key{Step: "s", Threads: 1}, Base: a, Other: b}})
		if err != nil {
			panic(err)
		}
		if d.Stop {
			iv, err := RatioOfMeans(a, b, DefaultLevel)
			if err != nil {
				panic(err)
			}
			return iv.Contains(theta), n
		}
	}
}

func TestSimAdaptiveCoverage(t *testing.T) {
	const trials = 4000
	type scenario struct {
		name    string
		rule    PrecisionRule
		cv      float64
		lowest  float64 // the coverage below which the test fails
		highest float64
	}
	// The target relative to the noise decides the bias: a target the
	// first rounds reach only when their variance happens to be small
	// stops exactly those rounds (the worst case); a target that is
	// always or never reached is a fixed design (nominal coverage).
	scenarios := []scenario{
		{"fixed 5 rounds (control)", PrecisionRule{TargetPercent: 1e-9, MinRepeats: 5, MaxRepeats: 5}, 0.05, 0.93, 0.97},
		{"CV 3 %, ±5 %, 2..10 rounds", PrecisionRule{TargetPercent: 5, MinRepeats: 2, MaxRepeats: 10}, 0.03, 0.88, 0.97},
		{"CV 3 %, ±5 %, 3..10 rounds", PrecisionRule{TargetPercent: 5, MinRepeats: 3, MaxRepeats: 10}, 0.03, 0.90, 0.97},
		{"CV 5 %, ±5 %, 2..10 rounds", PrecisionRule{TargetPercent: 5, MinRepeats: 2, MaxRepeats: 10}, 0.05, 0.88, 0.97},
		{"CV 5 %, ±5 %, 3..20 rounds", PrecisionRule{TargetPercent: 5, MinRepeats: 3, MaxRepeats: 20}, 0.05, 0.90, 0.97},
		{"CV 2 %, ±1 %, 2..10 rounds (mostly maxRepeats)", PrecisionRule{TargetPercent: 1, MinRepeats: 2, MaxRepeats: 10}, 0.02, 0.92, 0.97},
	}
	for i, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(20261124, uint64(i)))
			covered, rounds, atMax := 0, 0, 0
			for range trials {
				c, n := adaptiveTrial(r, sc.rule, sc.cv, sc.cv, 0.95)
				if c {
					covered++
				}
				rounds += n
				if n == sc.rule.MaxRepeats {
					atMax++
				}
			}
			cov := float64(covered) / trials
			t.Logf("%s: coverage %.3f (nominal 0.95), mean rounds %.2f, at maxRepeats %.2f",
				sc.name, cov, float64(rounds)/trials, float64(atMax)/trials)
			if cov < sc.lowest || cov > sc.highest {
				t.Errorf("coverage %.3f outside [%.2f, %.2f]", cov, sc.lowest, sc.highest)
			}
		})
	}
}
