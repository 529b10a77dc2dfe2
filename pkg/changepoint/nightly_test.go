package changepoint

import (
	"math"
	"testing"
)

// Tests of the nightly-suite passes (nightly.go) on synthetic series with
// fixed seeds. Rates are measured over many series; each case states the
// rate it asserts, and logs what it measured, so `go test -v -run Nightly`
// prints the figures.

// nightlyTrials is the number of series per case.
const nightlyTrials = 200

// detectSeries runs DetectSeries with opts on xs.
func detectSeries(t *testing.T, opts Options, xs []float64) Result {
	t.Helper()
	d, err := NewDetector(opts)
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.DetectSeries(Series{Values: xs})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func atLeast(t *testing.T, what string, got int, minRate float64) {
	t.Helper()
	if float64(got) < minRate*nightlyTrials {
		t.Errorf("%s: %d of %d, want at least %.0f %%", what, got, nightlyTrials, 100*minRate)
	}
}

// TestNightlyDropInNewestRuns drops the newest 1, 2 or 3 runs of a 40-run
// history: the change must be placed at the first dropped run and sized
// within 1 percentage point; one run is Suspected, two or more Confirmed.
// Without the newest-run test, the same series are never placed right
// (the minimum segment length puts the change at run n−3 at best).
func TestNightlyDropInNewestRuns(t *testing.T) {
	tests := []struct {
		newest     int
		drop, cv   float64
		wantStatus Status
		// Minimum rates: placed at the right run (and with the right
		// status); sized within 1 point. A single run's own noise (0.5 %)
		// keeps its size within 1 point only 95 % of the time.
		minPlaced, minSized float64
	}{
		{newest: 1, drop: 0.05, cv: 0.005, wantStatus: Suspected, minPlaced: 0.99, minSized: 0.90},
		{newest: 2, drop: 0.05, cv: 0.005, wantStatus: Confirmed, minPlaced: 0.98, minSized: 0.97},
		{newest: 3, drop: 0.05, cv: 0.005, wantStatus: Confirmed, minPlaced: 0.99, minSized: 0.99},
		{newest: 1, drop: 0.10, cv: 0.005, wantStatus: Suspected, minPlaced: 0.99, minSized: 0.90},
		{newest: 2, drop: 0.10, cv: 0.005, wantStatus: Confirmed, minPlaced: 0.99, minSized: 0.99},
		{newest: 3, drop: 0.10, cv: 0.005, wantStatus: Confirmed, minPlaced: 0.99, minSized: 0.99},
		{newest: 2, drop: 0.03, cv: 0.005, wantStatus: Confirmed, minPlaced: 0.95, minSized: 0.95},
	}
	const n = 40
	off := DefaultOptions()
	off.NewestRuns = false
	for _, tc := range tests {
		placed, sized, oldPlaced := 0, 0, 0
		for seed := range uint64(nightlyTrials) {
			xs := synth(31000+seed, tc.cv, segment{n - tc.newest, 1000}, segment{tc.newest, 1000 * (1 - tc.drop)})
			r := detectSeries(t, DefaultOptions(), xs)
			if k := len(r.ChangePoints); k > 0 {
				c := r.ChangePoints[k-1]
				if c.Index == n-tc.newest && c.Status == tc.wantStatus {
					placed++
					if math.Abs(c.ChangePercent+100*tc.drop) <= 1 {
						sized++
					}
				}
			}
			for _, c := range detectSeries(t, off, xs).ChangePoints {
				if c.Index == n-tc.newest {
					oldPlaced++
				}
			}
		}
		t.Logf("%.0f %% drop in the newest %d of %d runs, noise %.1f %%: placed (%s) %d, sized within 1 point %d of %d; without the newest-run test placed %d",
			100*tc.drop, tc.newest, n, 100*tc.cv, tc.wantStatus, placed, sized, nightlyTrials, oldPlaced)
		atLeast(t, "placed", placed, tc.minPlaced)
		atLeast(t, "sized", sized, tc.minSized)
		if tc.newest < DefaultMinSegmentLength && oldPlaced != 0 {
			t.Errorf("without the newest-run test %d series placed a change in the newest %d runs; the minimum segment length should forbid it", oldPlaced, tc.newest)
		}
	}
}

// TestNightlySuspectedThenConfirmed replays one history night by night:
// before the drop nothing is reported; the first bad night is Suspected at
// that run; the next night Confirms it at the same run; and from the third
// night the E-divisive search finds it there too.
func TestNightlySuspectedThenConfirmed(t *testing.T) {
	const first = 30 // the first bad night
	xs := synth(77, 0.005, segment{first, 1000}, segment{6, 950})
	for night := first - 2; night <= len(xs); night++ {
		r := detectSeries(t, DefaultOptions(), xs[:night])
		var want []ChangePoint
		switch {
		case night == first+1:
			want = []ChangePoint{{Index: first, Status: Suspected}}
		case night > first+1:
			want = []ChangePoint{{Index: first, Status: Confirmed}}
		}
		if len(r.ChangePoints) != len(want) {
			t.Errorf("night %d: change points %+v, want %+v", night, r.ChangePoints, want)
			continue
		}
		for i, w := range want {
			g := r.ChangePoints[i]
			if g.Index != w.Index || g.Status != w.Status || g.AfterLen != night-first {
				t.Errorf("night %d: got index %d status %s after %d runs, want index %d status %s after %d",
					night, g.Index, g.Status, g.AfterLen, w.Index, w.Status, night-first)
			}
			if math.Abs(g.ChangePercent+5) > 1 {
				t.Errorf("night %d: change %.2f %%, want −5 ± 1", night, g.ChangePercent)
			}
			if g.PValue >= DefaultMaxPValue {
				t.Errorf("night %d: p-value %g, want below %g", night, g.PValue, DefaultMaxPValue)
			}
		}
	}
}

// TestNightlyOutlierIsNotConfirmed: a single bad newest run is Suspected;
// when the next run is back to normal it is no longer reported at all.
func TestNightlyOutlierIsNotConfirmed(t *testing.T) {
	xs := synth(78, 0.005, segment{40, 1000})
	xs[38] *= 0.9
	if r := detectSeries(t, DefaultOptions(), xs[:39]); len(r.ChangePoints) != 1 || r.ChangePoints[0].Status != Suspected || r.ChangePoints[0].Index != 38 {
		t.Errorf("bad newest run: got %+v, want one Suspected at 38", r.ChangePoints)
	}
	if r := detectSeries(t, DefaultOptions(), xs); len(r.ChangePoints) != 0 {
		t.Errorf("bad run followed by a normal one: got %+v, want nothing", r.ChangePoints)
	}
}

// TestNightlySmallSteps puts 2 % and 3 % steps at runs 10–29 of 40-run
// histories at realistic noise. A step counts as found when a change point
// lies within one run of it. The old default (a fixed 3 % filter) is run
// on the same series for contrast: it finds almost none of the 2 % steps.
func TestNightlySmallSteps(t *testing.T) {
	tests := []struct {
		step, cv float64
		minFound float64
	}{
		{step: 0.02, cv: 0.005, minFound: 0.99},
		{step: 0.03, cv: 0.005, minFound: 0.99},
		{step: 0.02, cv: 0.01, minFound: 0.60},
		{step: 0.03, cv: 0.01, minFound: 0.90},
	}
	old := DefaultOptions()
	old.MinMagnitude, old.NoiseMultiple, old.NewestRuns, old.Drift = 0.03, 0, false, false
	for _, tc := range tests {
		found, oldFound := 0, 0
		for seed := range uint64(nightlyTrials) {
			pos := 10 + int(seed)%20
			xs := synth(32000+seed, tc.cv, segment{pos, 1000}, segment{40 - pos, 1000 * (1 - tc.step)})
			near := func(cps []ChangePoint) bool {
				for _, c := range cps {
					if c.Index >= pos-1 && c.Index <= pos+1 {
						return true
					}
				}
				return false
			}
			if near(detectSeries(t, DefaultOptions(), xs).ChangePoints) {
				found++
			}
			if near(detectSeries(t, old, xs).ChangePoints) {
				oldFound++
			}
		}
		t.Logf("%.0f %% step in 40 runs, noise %.1f %%: found %d of %d (fixed 3 %% filter: %d)",
			100*tc.step, 100*tc.cv, found, nightlyTrials, oldFound)
		atLeast(t, "found", found, tc.minFound)
		if found <= oldFound {
			t.Errorf("found %d, not more than the fixed 3 %% filter (%d)", found, oldFound)
		}
	}
}

// TestNightlySteadyDecline: a steady decline over all 40 runs is one Drift
// over the whole series with the right slope, and no change point; with
// Drift off the same series give change points.
func TestNightlySteadyDecline(t *testing.T) {
	tests := []struct {
		slope, cv float64 // fraction per run, of the first run's level
		minDrift  float64
	}{
		{slope: 0.002, cv: 0.005, minDrift: 0.99},
		{slope: 0.005, cv: 0.005, minDrift: 0.99},
		{slope: 0.003, cv: 0.01, minDrift: 0.99},
		{slope: 0.002, cv: 0.01, minDrift: 0.95},
	}
	noDrift := DefaultOptions()
	noDrift.Drift = false
	for _, tc := range tests {
		drift, withoutCPs := 0, 0
		for seed := range uint64(nightlyTrials) {
			xs := synth(33000+seed, tc.cv, segment{40, 1000})
			for i := range xs {
				xs[i] *= 1 - tc.slope*float64(i)
			}
			r := detectSeries(t, DefaultOptions(), xs)
			if len(r.ChangePoints) == 0 && len(r.Drifts) == 1 {
				dr := r.Drifts[0]
				// The slope's standard error is about cv·√(12/40³) of the
				// level, under 0.03 % per run here: allow 0.1 point.
				if dr.Start == 0 && dr.End == 40 && math.Abs(dr.SlopePercentPerRun+100*tc.slope) < 0.1 && dr.PValue < DefaultMaxPValue {
					drift++
				}
			}
			if len(detectSeries(t, noDrift, xs).ChangePoints) > 0 {
				withoutCPs++
			}
		}
		t.Logf("decline of %.1f %% per run over 40 runs, noise %.1f %%: one whole-series drift with the right slope %d of %d; with Drift off %d had change points",
			100*tc.slope, 100*tc.cv, drift, nightlyTrials, withoutCPs)
		atLeast(t, "drift", drift, tc.minDrift)
		if withoutCPs < nightlyTrials/2 {
			t.Errorf("with Drift off only %d series had change points: the case no longer shows what Drift fixes", withoutCPs)
		}
	}
}

// TestNightlyStaircaseAndStepsStayApart: two clear steps in the same
// direction stay two change points (a line fits them worse), while a
// decline that reaches the newest run holds no Suspected change at the end.
func TestNightlyStaircaseAndStepsStayApart(t *testing.T) {
	r := detectSeries(t, DefaultOptions(), synth(79, 0.005, segment{30, 1000}, segment{30, 950}, segment{30, 900}))
	if got := indices(r.ChangePoints); len(got) != 2 || got[0] != 30 || got[1] != 60 || len(r.Drifts) != 0 {
		t.Errorf("two steps: change points %v drifts %+v, want [30 60] and no drift", got, r.Drifts)
	}
	xs := synth(80, 0.005, segment{30, 1000}, segment{30, 1000})
	for i := 30; i < 60; i++ {
		xs[i] *= 0.95 - 0.004*float64(i-30)
	}
	r = detectSeries(t, DefaultOptions(), xs)
	if got := indices(r.ChangePoints); len(got) != 1 || got[0] != 30 || len(r.Drifts) != 1 || r.Drifts[0].Start != 30 || r.Drifts[0].End != 60 {
		t.Errorf("step then decline: change points %v drifts %+v, want [30] and a drift over [30, 60)", got, r.Drifts)
	}
}

// TestNightlyNoiseOnly counts what the defaults report on pure Gaussian
// noise, at several noise levels and history lengths. The stated rate: at
// most 1 % of series with a false Confirmed change, 1 % with a false
// Suspected one and 1 % with a false drift. Because the magnitude filter
// scales with the noise, the rate does not grow with the noise level.
func TestNightlyNoiseOnly(t *testing.T) {
	const trials = 500
	const maxRate = 0.01
	for _, n := range []int{20, 40, 100, 300} {
		for _, cv := range []float64{0.002, 0.005, 0.01, 0.02, 0.05} {
			var confirmed, suspected, drifts int
			for seed := range uint64(trials) {
				r := detectSeries(t, DefaultOptions(), synth(34000+seed, cv, segment{n, 1000}))
				for _, c := range r.ChangePoints {
					if c.Status == Confirmed {
						confirmed++
					} else {
						suspected++
					}
				}
				drifts += len(r.Drifts)
			}
			t.Logf("noise only, %d runs, noise %.1f %%: false Confirmed %d, Suspected %d, drifts %d in %d series",
				n, 100*cv, confirmed, suspected, drifts, trials)
			for _, f := range []struct {
				what string
				got  int
			}{{"Confirmed", confirmed}, {"Suspected", suspected}, {"drifts", drifts}} {
				if float64(f.got) > maxRate*trials {
					t.Errorf("%d runs, noise %v: %d false %s in %d series, want at most %.0f %%", n, cv, f.got, f.what, trials, 100*maxRate)
				}
			}
		}
	}
}

// TestEstimateNoiseCV checks the robust noise estimate on series whose
// steps, outliers and drift would inflate a plain standard deviation.
func TestEstimateNoiseCV(t *testing.T) {
	step := synth(81, 0.01, segment{100, 1000}, segment{100, 800})
	drift := synth(82, 0.01, segment{200, 1000})
	for i := range drift {
		drift[i] *= 1 - 0.002*float64(i)
	}
	tests := []struct {
		name string
		xs   []float64
		want float64 // the noise; 0 for an exact 0
	}{
		{"noise 1 %", synth(83, 0.01, segment{200, 1000}), 0.01},
		{"noise 0.3 %", synth(84, 0.003, segment{200, 1000}), 0.003},
		{"20 % step", step, 0.01},
		{"outliers", withOutliers(synth(85, 0.01, segment{200, 1000}), 1.5, 20, 90, 150), 0.01},
		{"drift of 0.2 % per run", drift, 0.01}, // synth's noise is relative to each run's level
		{"constant", constant(50, 7), 0},
		{"two values", []float64{1, 2}, 0},
	}
	for _, tc := range tests {
		got := EstimateNoiseCV(tc.xs)
		if tc.want == 0 {
			if got != 0 {
				t.Errorf("%s: %v, want 0", tc.name, got)
			}
			continue
		}
		if math.Abs(got/tc.want-1) > 0.2 {
			t.Errorf("%s: %.4f, want %.4f ± 20 %%", tc.name, got, tc.want)
		}
	}
}

// TestNoiseMagnitudeFilter: the threshold is max(MinMagnitude,
// NoiseMultiple × noise), with the caller's NoiseCV taking precedence over
// the estimate, and it is reported in the Result.
func TestNoiseMagnitudeFilter(t *testing.T) {
	xs := synth(86, 0.005, segment{20, 1000}, segment{20, 970})
	tests := []struct {
		name          string
		mod           func(*Options)
		wantThreshold float64 // 0: check against the estimate
		wantCPs       int
	}{
		{"estimated noise", func(*Options) {}, 0, 1},
		{"caller's noise 3 %: 3 % step is noise", func(o *Options) { o.NoiseCV = 0.03 }, 0.045, 0},
		{"caller's noise 0.1 %: the floor rules", func(o *Options) { o.NoiseCV = 0.001 }, DefaultMinMagnitude, 1},
		{"floor 5 %", func(o *Options) { o.MinMagnitude = 0.05 }, 0.05, 0},
		{"noise filter off", func(o *Options) { o.NoiseMultiple = 0; o.MinMagnitude = 0.02 }, 0.02, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			tc.mod(&o)
			r := detectSeries(t, o, xs)
			want := tc.wantThreshold
			if want == 0 {
				want = math.Max(DefaultMinMagnitude, DefaultNoiseMultiple*EstimateNoiseCV(xs))
				if r.NoiseCV != EstimateNoiseCV(xs) {
					t.Errorf("NoiseCV %v, want the estimate %v", r.NoiseCV, EstimateNoiseCV(xs))
				}
			}
			if math.Abs(r.MagnitudeThreshold-want) > 1e-12 {
				t.Errorf("MagnitudeThreshold %v, want %v", r.MagnitudeThreshold, want)
			}
			if len(r.ChangePoints) != tc.wantCPs {
				t.Errorf("change points %+v, want %d", r.ChangePoints, tc.wantCPs)
			}
		})
	}
}

// TestOtavaOptionsLeaveNightlyPassesOff: Otava's settings never report a
// drift or a Suspected change, whatever the series, so their change points
// stay those of Otava (TestOtavaCrossCheck compares them with Otava).
func TestOtavaOptionsLeaveNightlyPassesOff(t *testing.T) {
	o := OtavaOptions()
	if o.NewestRuns || o.Drift || o.NoiseMultiple != 0 || o.NoiseCV != 0 {
		t.Fatalf("OtavaOptions enables a nightly pass: %+v", o)
	}
	decline := synth(87, 0.005, segment{40, 1000})
	for i := range decline {
		decline[i] *= 1 - 0.005*float64(i)
	}
	for _, xs := range [][]float64{decline, synth(88, 0.005, segment{38, 1000}, segment{2, 900})} {
		r := detectSeries(t, o, xs)
		if len(r.Drifts) != 0 || r.NoiseCV != 0 || r.MagnitudeThreshold != 0 {
			t.Errorf("Otava options: drifts %+v, noise %v, threshold %v; want none", r.Drifts, r.NoiseCV, r.MagnitudeThreshold)
		}
		for _, c := range r.ChangePoints {
			if c.Status != Confirmed {
				t.Errorf("Otava options: %+v is not Confirmed", c)
			}
		}
	}
}
