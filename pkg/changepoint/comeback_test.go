package changepoint

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Come-back histories: a level, a shift, then a drop in the newest runs
// (a speed-up, then a slowdown back toward the old level: a revert, or an
// environment change a build undoes), replayed night by night as the
// growth tests do, with a suite's rule (p < 0.01, 10 %). docs/changepoints.md
// ("Newest runs after a come-back") gives the figures before and after the
// merge pass held the last change point.

const comebackTrials = 200

// comebackHistory is trial seed's history: h1 runs at 1000, h2 runs at
// 1000·(1+rise), then after runs at 1000·(1+rise)·(1−drop); noise cv.
func comebackHistory(seed uint64, cv, rise, drop float64, h1, h2, after int) []float64 {
	return synth(90000+seed, cv, segment{h1, 1000}, segment{h2, 1000 * (1 + rise)}, segment{after, 1000 * (1 + rise) * (1 - drop)})
}

// comebackRates are the per-history outcomes: confirmed2 (3): the night
// with two (three) runs of the drop reports it Confirmed at its run;
// riseKept: every night from the drop's first run on reports the rise at
// its run; off: some night reports the drop one or two runs off; extra:
// some night reports another change point.
type comebackRates struct{ confirmed2, confirmed3, riseKept, off, extra float64 }

func TestNewestDropAfterAComeback(t *testing.T) {
	tests := []struct {
		cv, rise, drop float64
		h1, h2         int
		min, max       comebackRates // floors of the first three, ceilings of the last two
	}{
		{0.05, 0.5, 0.33, 5, 5, comebackRates{0.70, 0.93, 0.60, 0, 0}, comebackRates{0, 0, 0, 0.03, 0.05}},
		{0.05, 0.5, 0.33, 10, 5, comebackRates{0.80, 0.93, 0.92, 0, 0}, comebackRates{0, 0, 0, 0.02, 0.06}},
		{0.05, 0.5, 0.33, 30, 10, comebackRates{0.90, 0.97, 0.97, 0, 0}, comebackRates{0, 0, 0, 0.05, 0.07}},
		// A level that comes back to 0.91 of the first after five and five
		// runs: the drop is Confirmed on its second run, then on its third
		// the first split's test (two levels mixed on one side) fails more
		// often than not; the limit docs/changepoints.md states.
		{0.03, 0.3, 0.3, 5, 5, comebackRates{0.90, 0.25, 0, 0, 0}, comebackRates{0, 0, 0, 0.02, 0.02}},
		{0.03, 0.3, 0.3, 20, 8, comebackRates{0.93, 0.97, 0.95, 0, 0}, comebackRates{0, 0, 0, 0.02, 0.04}},
		{0.02, 0.2, 0.2, 40, 20, comebackRates{0.97, 0.98, 0.98, 0, 0}, comebackRates{0, 0, 0, 0.02, 0.02}},
		{0.02, 0.2, 0.15, 40, 20, comebackRates{0.97, 0.98, 0.98, 0, 0}, comebackRates{0, 0, 0, 0.02, 0.02}},
		// The site e2e's shape: five durable runs, five fast, the durable
		// build again.
		{0.05, 4, 0.8, 5, 5, comebackRates{0.97, 0.97, 0.97, 0, 0}, comebackRates{0, 0, 0, 0.02, 0.03}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("cv %.2f rise %.2f drop %.2f after %d+%d runs", tc.cv, tc.rise, tc.drop, tc.h1, tc.h2), func(t *testing.T) {
			opts := DefaultOptions()
			opts.MinMagnitude, opts.MaxPValue = 0.1, 0.01
			d, err := NewDetector(opts)
			if err != nil {
				t.Fatal(err)
			}
			var got comebackRates
			for seed := range uint64(comebackTrials) {
				xs := comebackHistory(seed, tc.cv, tc.rise, tc.drop, tc.h1, tc.h2, 6)
				drop := tc.h1 + tc.h2
				kept, off, extra := true, false, false
				for n := drop + 1; n <= len(xs); n++ {
					cps, err := d.Detect(xs[:n])
					if err != nil {
						t.Fatal(err)
					}
					rise := false
					for _, c := range cps {
						switch {
						case c.Index == tc.h1:
							rise = true
						case c.Index == drop && c.Status == Confirmed && n-drop == 2:
							got.confirmed2++
						case c.Index == drop && c.Status == Confirmed && n-drop == 3:
							got.confirmed3++
						case c.Index == drop:
						case c.Index >= drop-2 && c.Index <= drop+2:
							off = true
						default:
							extra = true
						}
					}
					kept = kept && rise
				}
				got.riseKept += b2f(kept)
				got.off += b2f(off)
				got.extra += b2f(extra)
			}
			got.confirmed2 /= comebackTrials
			got.confirmed3 /= comebackTrials
			got.riseKept /= comebackTrials
			got.off /= comebackTrials
			got.extra /= comebackTrials
			t.Logf("Confirmed after 2 runs %.3f, after 3 %.3f; the rise kept every night %.3f; the drop 1–2 runs off %.3f; another change point %.3f",
				got.confirmed2, got.confirmed3, got.riseKept, got.off, got.extra)
			if got.confirmed2 < tc.min.confirmed2 || got.confirmed3 < tc.min.confirmed3 || got.riseKept < tc.min.riseKept {
				t.Errorf("rates %+v below the floors %+v", got, tc.min)
			}
			if got.off > tc.max.off || got.extra > tc.max.extra {
				t.Errorf("rates %+v above the ceilings off %.2f, extra %.2f", got, tc.max.off, tc.max.extra)
			}
		})
	}
}

// TestManyShiftsUnchangedByTheHold: on histories of many shifts (segments
// of 6–35 runs, shifts of ±3–33 %, noise 1–3 %) at each of their last 12
// nights, the defaults find the shifts older than two runs within ±2 runs
// and report few others; the merge pass's hold of the last point moved
// neither figure (recall 0.9294 before, 0.9295 after; 152 not near a
// shift of about 36,060 reported, both).
func TestManyShiftsUnchangedByTheHold(t *testing.T) {
	var truths, found, false_, reported int
	d, err := NewDetector(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 120 + rng.IntN(120)
		var segs []segment
		var shifts []int
		base := 1000.0
		for at := 0; at < n; {
			l := min(n-at, 6+rng.IntN(30))
			if at > 0 {
				shifts = append(shifts, at)
				sign := float64(1 - 2*rng.IntN(2))
				base *= 1 + sign*(0.03+0.3*rng.Float64())
			}
			segs = append(segs, segment{l, base})
			at += l
		}
		xs := synth(seed+5000, 0.01+0.02*rng.Float64(), segs...)
		near := func(i, p int) bool { return i >= p-2 && i <= p+2 }
		for m := n - 11; m <= n; m++ {
			cps, err := d.Detect(xs[:m])
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range shifts {
				if p >= m-2 {
					continue
				}
				truths++
				for _, c := range cps {
					if near(c.Index, p) {
						found++
						break
					}
				}
			}
			for _, c := range cps {
				reported++
				hit := false
				for _, p := range shifts {
					hit = hit || near(c.Index, p)
				}
				if !hit {
					false_++
				}
			}
		}
	}
	recall, falseShare := float64(found)/float64(truths), float64(false_)/float64(reported)
	t.Logf("recall %d/%d = %.4f; not near a shift %d of %d reported = %.4f", found, truths, recall, false_, reported, falseShare)
	if recall < 0.92 || falseShare > 0.01 {
		t.Errorf("recall %.4f (want ≥ 0.92), not near a shift %.4f (want ≤ 0.01)", recall, falseShare)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
