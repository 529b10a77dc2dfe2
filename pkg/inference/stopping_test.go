package inference

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestStopRuleDecide(t *testing.T) {
	flat := func(n int, v float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = v
		}
		return xs
	}
	// noisy alternates ±amp around 1000: batch means of 2+ samples are
	// nearly equal, so its long-run variance is small but not zero.
	noisy := func(n int, amp float64) []float64 {
		r := rand.New(rand.NewPCG(1, uint64(n)))
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 1000 + amp*r.NormFloat64()
		}
		return xs
	}
	cases := []struct {
		name   string
		rule   StopRule
		xs     []float64
		stop   bool
		reason string
	}{
		{"before min never stops", StopRule{MinSeconds: 30, MaxSeconds: 60, BetweenRunCV: 0.02}, flat(29, 100), false, ""},
		{"too few samples to judge", StopRule{MinSeconds: 0, MaxSeconds: 60, BetweenRunCV: 0.02}, flat(7, 100), false, ""},
		{"converged at min", StopRule{MinSeconds: 30, MaxSeconds: 60, BetweenRunCV: 0.02}, noisy(30, 10), true, StopConverged},
		{"target first", StopRule{MinSeconds: 10, MaxSeconds: 60, BetweenRunCV: 0.02, TargetRelHalfWidth: 0.05}, noisy(10, 10), true, StopTargetReached},
		{"noisy goes on", StopRule{MinSeconds: 10, MaxSeconds: 600, BetweenRunCV: 0.01}, noisy(20, 300), false, ""},
		{"max always stops", StopRule{MinSeconds: 10, MaxSeconds: 20, BetweenRunCV: 0.001}, noisy(20, 300), true, StopMaxDuration},
		{"max below the judged minimum", StopRule{MinSeconds: 0, MaxSeconds: 3, TargetRelHalfWidth: 0.01}, flat(3, 5), true, StopMaxDuration},
		{"zero throughput is never converged", StopRule{MinSeconds: 5, MaxSeconds: 60, TargetRelHalfWidth: 0.01}, flat(20, 0), false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := tc.rule.Decide(tc.xs)
			if err != nil {
				t.Fatal(err)
			}
			if d.Stop != tc.stop || d.Reason != tc.reason || d.Seconds != len(tc.xs) {
				t.Errorf("Decide = %+v, want stop %v reason %q", d, tc.stop, tc.reason)
			}
		})
	}
}

func TestStopRuleValidate(t *testing.T) {
	for _, r := range []StopRule{
		{MinSeconds: -1, MaxSeconds: 10, BetweenRunCV: 0.01},
		{MinSeconds: 20, MaxSeconds: 10, BetweenRunCV: 0.01},
		{MinSeconds: 5, MaxSeconds: 10},
		{MinSeconds: 5, MaxSeconds: 10, BetweenRunCV: math.NaN()},
		{MinSeconds: 5, MaxSeconds: 10, TargetRelHalfWidth: -0.1},
		{MinSeconds: 5, MaxSeconds: 10, BetweenRunCV: 0.01, NoiseShare: 2},
		{MinSeconds: 5, MaxSeconds: 10, BetweenRunCV: 0.01, Level: 1},
	} {
		if _, err := r.Decide(nil); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: err %v, want ErrInvalid", r, err)
		}
	}
}

// TestSimAdaptiveStop runs the rule on seeded AR(1) series of per-second
// throughput around 1000 with a per-second long-run CV of 5 % (φ 0.7, as
// a loaded server's series), and reports the stopping times. With a target
// of ±0.5 % the fixed length that reaches it is (1.96·5/0.5)² ≈ 384 s; the
// rule stops near it, and the true half-width at the stop (from the known
// long-run variance) and the realised coverage of mean ± target show what
// optional stopping costs. With a between-run CV of 2 % instead, the
// within-run error is small beside it after about 25 s: the step stops at
// its minimum.
func TestSimAdaptiveStop(t *testing.T) {
	const (
		trials = 150
		mean   = 1000.0
		lrCV   = 0.05
		phi    = 0.7
	)
	run := func(rule StopRule, seed uint64) (stops []int, reasons map[string]int, covered int) {
		r := rand.New(rand.NewPCG(26, seed))
		reasons = map[string]int{}
		for range trials {
			xs := ar1Series(r, rule.MaxSeconds, phi, (lrCV*mean)*(lrCV*mean))
			for i := range xs {
				xs[i] += mean
			}
			for n := 1; n <= rule.MaxSeconds; n++ {
				d, err := rule.Decide(xs[:n])
				if err != nil {
					t.Fatal(err)
				}
				if !d.Stop {
					continue
				}
				stops = append(stops, n)
				reasons[d.Reason]++
				var s float64
				for _, x := range xs[:n] {
					s += x
				}
				if math.Abs(s/float64(n)-mean)/mean <= math.Max(rule.TargetRelHalfWidth, d.RelHalfWidth) {
					covered++
				}
				break
			}
		}
		slices.Sort(stops)
		return stops, reasons, covered
	}
	q := func(xs []int, p float64) int { return xs[int(p*float64(len(xs)-1))] }

	target := StopRule{MinSeconds: 30, MaxSeconds: 900, TargetRelHalfWidth: 0.005}
	stops, reasons, covered := run(target, 1)
	k := 1.96 * lrCV / target.TargetRelHalfWidth
	fixed := k * k
	t.Logf("target ±0.5 %%: stop seconds p10 %d, median %d, p90 %d (fixed length for the target %.0f s); reasons %v; mean within ±target or the achieved half-width in %d of %d",
		q(stops, 0.1), q(stops, 0.5), q(stops, 0.9), fixed, reasons, covered, trials)
	if med := float64(q(stops, 0.5)); med < 0.6*fixed || med > 1.3*fixed {
		t.Errorf("median stop %.0f s, want within [0.6, 1.3] × %.0f s", med, fixed)
	}
	// The true half-width at the median stop, from the known long-run
	// variance, meets the target within 15 %.
	if hw := 1.96 * lrCV / math.Sqrt(float64(q(stops, 0.5))); hw > 1.15*target.TargetRelHalfWidth {
		t.Errorf("true half-width at the median stop %.4f, want at most 1.15 × %.4f", hw, target.TargetRelHalfWidth)
	}
	if reasons[StopTargetReached] < trials*9/10 {
		t.Errorf("reasons %v: want at least 90 %% TargetReached", reasons)
	}
	// A 95 % interval; optional stopping and batch means' small bias low
	// cost a few points.
	if covered < trials*85/100 {
		t.Errorf("covered %d of %d, want at least 85 %%", covered, trials)
	}

	conv := StopRule{MinSeconds: 30, MaxSeconds: 900, BetweenRunCV: 0.02}
	stops, reasons, _ = run(conv, 2)
	t.Logf("between-run CV 2 %%: stop seconds p10 %d, median %d, p90 %d; reasons %v (converged half-width %.4f)",
		q(stops, 0.1), q(stops, 0.5), q(stops, 0.9), reasons, conv.ConvergedHalfWidth())
	if q(stops, 0.9) > 120 || reasons[StopConverged] < trials*95/100 {
		t.Errorf("converged: p90 stop %d s (want ≤ 120), reasons %v", q(stops, 0.9), reasons)
	}

	short := StopRule{MinSeconds: 30, MaxSeconds: 120, TargetRelHalfWidth: 0.005}
	_, reasons, _ = run(short, 3)
	// The true half-width at 120 s is 1.96·5 %/√120 ≈ 0.9 %: a stop
	// before is a variance estimate that came out low (optional
	// stopping); it stays rare.
	t.Logf("unreachable target (max 120 s): reasons %v", reasons)
	if reasons[StopMaxDuration] < trials*97/100 {
		t.Errorf("unreachable target: reasons %v, want at least 97 %% MaxDuration", reasons)
	}
}
