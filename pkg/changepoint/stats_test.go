package changepoint

import (
	"math"
	"slices"
	"testing"
)

// Reference values computed with SciPy (scipy.special.betainc,
// scipy.stats.ttest_ind_from_stats, scipy.stats.t.ppf, scipy.stats.norm.ppf).

func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

func TestOtavaTTest(t *testing.T) {
	tests := []struct {
		name string
		a, b segmentStats
		want float64
	}{
		{"small", segmentStats{5, 10, 1}, segmentStats{7, 12, 1.5}, 0.02732292020295862},
		{"not significant", segmentStats{30, 100, 2}, segmentStats{40, 101, 2.5}, 0.0762810325500946},
		{"df 1", segmentStats{2, 5, 0.1}, segmentStats{1, 5.3, 0.2}, 0.2467517144288499},
		{"5 % step", segmentStats{50, 1000, 10}, segmentStats{50, 950, 12}, 1.049605542373846e-40},
		{"two single points", segmentStats{1, 1, 0}, segmentStats{1, 2, 0}, 1},
		{"empty side", segmentStats{}, segmentStats{3, 2, 0}, 1},
		{"constant, equal", segmentStats{4, 7, 0}, segmentStats{9, 7, 0}, 1},
		{"constant, different", segmentStats{4, 7, 0}, segmentStats{9, 8, 0}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := otavaTTest(tc.a, tc.b)
			if relErr(got, tc.want) > 1e-9 {
				t.Errorf("otavaTTest = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDescribeLargeValuesSmallSpread(t *testing.T) {
	// 1e9 ± 1: a one-pass sum of squares would lose all precision here.
	xs := []float64{1e9 - 1, 1e9 + 1, 1e9 - 1, 1e9 + 1}
	st := describe(xs)
	if st.mean != 1e9 || math.Abs(st.stddev-1) > 1e-12 {
		t.Errorf("describe = %+v, want mean 1e9 stddev 1", st)
	}
}

func TestFullStatsWithout(t *testing.T) {
	xs := []float64{1003, 998, 1500, 1001, 997, 1002, 640}
	for k := 0; k <= 3; k++ {
		for _, largest := range []bool{true, false} {
			removed := mostExtreme(nil, xs, k, largest)
			// Reference: sort a copy and drop the k extreme values.
			rest := append([]float64(nil), xs...)
			slices.Sort(rest)
			if largest {
				rest = rest[:len(rest)-k]
			} else {
				rest = rest[k:]
			}
			want := describe(rest)
			got := full(describe(xs)).without(removed)
			if got.n != want.n || relErr(got.mean, want.mean) > 1e-12 || relErr(got.stddev, want.stddev) > 1e-9 {
				t.Errorf("k=%d largest=%v: removed %v, got %+v, want %+v", k, largest, removed, got, want)
			}
		}
	}
}
