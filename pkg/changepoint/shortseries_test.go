package changepoint

import "testing"

// TestTwoOppositeShiftsInAShortSeries pins the shortest series of two
// opposite shifts whose change points the defaults find at the right runs
// (docs/changepoints.md, "Limits"): a durable build's writes, a
// re-pointed tag's fast build, then the durable build again, as the site
// e2e measured them on the local cluster (QPS of a 4-s update-index step).
func TestTwoOppositeShiftsInAShortSeries(t *testing.T) {
	slow := []float64{514, 459, 943, 600, 520}
	fast := []float64{25120, 22124, 17927, 20000, 21000}
	slowAgain := []float64{3103, 1889, 2500}
	for _, tc := range []struct {
		name              string
		before, fast, end int
	}{
		{"5+5+2: confirmed on the second run of the drop", 5, 5, 2},
		{"5+5+3", 5, 5, 3},
		{"4+4+3", 4, 4, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			xs := append(append(append([]float64{}, slow[:tc.before]...), fast[:tc.fast]...), slowAgain[:tc.end]...)
			opts := DefaultOptions()
			opts.MinMagnitude, opts.MaxPValue = 0.3, 0.01
			d, err := NewDetector(opts)
			if err != nil {
				t.Fatal(err)
			}
			cps, err := d.Detect(xs)
			if err != nil {
				t.Fatal(err)
			}
			want := []int{tc.before, tc.before + tc.fast}
			if len(cps) != len(want) {
				t.Fatalf("%v: %d change points %+v, want at %v", xs, len(cps), cps, want)
			}
			for i, cp := range cps {
				if cp.Index != want[i] || cp.Status != Confirmed || (i == 1) != (cp.ChangePercent < 0) {
					t.Errorf("change point %d: at %d, %s, %+.1f %%; want Confirmed at %d, the second a drop", i, cp.Index, cp.Status, cp.ChangePercent, want[i])
				}
			}
		})
	}
}
