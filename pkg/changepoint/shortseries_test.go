package changepoint

import "testing"

// TestTwoOppositeShiftsInAShortSeries pins the shortest series of two
// opposite shifts whose change points the defaults find at the right runs
// (docs/changepoints.md, "Newest runs after a come-back"): a durable build's writes, a
// re-pointed tag's fast build, then the durable build again, as the site
// e2e measured them on the local cluster (QPS of a 4-s update-index step).
func TestTwoOppositeShiftsInAShortSeries(t *testing.T) {
	// Two e2e runs' values; the third run after the drop of the second
	// (3100) is not measured: the e2e has three since.
	runs := [][3][]float64{
		{{514, 459, 943, 600, 520}, {25120, 22124, 17927, 20000, 21000}, {3103, 1889, 2500}},
		{{3372, 2483, 2987, 2799, 3325}, {27569, 26415, 25885, 22110, 25833}, {3072, 2445, 3100}},
	}
	for _, tc := range []struct {
		name                   string
		run, before, fast, end int
	}{
		{"run 1, 5+5+2", 0, 5, 5, 2},
		{"run 2, 5+5+2: Confirmed on the drop's second run", 1, 5, 5, 2},
		{"run 1, 5+5+3", 0, 5, 5, 3},
		{"run 1, 4+4+3", 0, 4, 4, 3},
		{"run 2, 5+5+3", 1, 5, 5, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runs[tc.run]
			xs := append(append(append([]float64{}, r[0][:tc.before]...), r[1][:tc.fast]...), r[2][:tc.end]...)
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
