package changepoint

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dbbench/dbbench/pkg/stats"
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

// TestTThresholdsMatchTTest: the cached decisions p ≤ pmax (the split
// pass's) and p < pmax (strict: the outlier check's) agree with otavaTTest
// on every pair, in a sequence that keeps landing next to the critical |t|
// (where the cache must compute p) as well as far from it, for several
// levels, degrees of freedom and degenerate segments.
func TestTThresholdsMatchTTest(t *testing.T) {
	for _, strict := range []bool{false, true} {
		testTThresholds(t, strict)
	}
}

func testTThresholds(t *testing.T, strict bool) {
	rng := rand.New(rand.NewPCG(5, 6))
	th := tThresholds{strict: strict}
	decided := 0
	for _, pmax := range []float64{0.01, 0.001, 0.2, 1} {
		for i := range 4000 {
			n1, n2 := 1+rng.IntN(40), 1+rng.IntN(40)
			a := segmentStats{n: n1, mean: 100, stddev: 1 + rng.Float64()}
			b := segmentStats{n: n2, mean: 100, stddev: 1 + rng.Float64()}
			switch i % 4 {
			case 0: // far from the threshold either way
				b.mean += 10 * rng.NormFloat64()
			case 1: // near the critical |t|: p within a factor 1.001 of pmax
				df := float64(n1 + n2 - 2)
				if df < 1 {
					continue
				}
				crit := stats.StudentQuantile(1-pmax/2, df)
				n1f, n2f := float64(n1), float64(n2)
				pooled := ((n1f-1)*a.stddev*a.stddev + (n2f-1)*b.stddev*b.stddev) / df
				b.mean = a.mean - crit*(1+1e-4*rng.NormFloat64())*math.Sqrt(pooled*(1/n1f+1/n2f))
			case 2: // no spread
				a.stddev, b.stddev = 0, 0
				if rng.IntN(2) == 0 {
					b.mean++
				}
			case 3:
				b.mean += rng.NormFloat64()
			}
			want := otavaTTest(a, b) <= pmax
			if strict {
				want = otavaTTest(a, b) < pmax
			}
			if got := th.significant(a, b, pmax); got != want {
				t.Fatalf("strict %v, pmax %v, %+v vs %+v: significant %v, otavaTTest %v (p %v)", strict, pmax, a, b, got, want, otavaTTest(a, b))
			}
			decided++
		}
	}
	if decided < 14000 {
		t.Errorf("only %d pairs checked", decided)
	}
}

// TestDescribe2MatchesDescribe: describe2 gives describe's statistics bit
// for bit, for segments of every pair of lengths.
func TestDescribe2MatchesDescribe(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	same := func(x, y segmentStats) bool {
		return x.n == y.n && math.Float64bits(x.mean) == math.Float64bits(y.mean) &&
			math.Float64bits(x.stddev) == math.Float64bits(y.stddev)
	}
	for na := range 40 {
		for nb := range 40 {
			a, b := make([]float64, na), make([]float64, nb)
			for i := range a {
				a[i] = 1e6 + rng.NormFloat64()
			}
			for i := range b {
				b[i] = 1e3 * rng.NormFloat64()
			}
			ga, gb := describe2(a, b)
			if !same(ga, describe(a)) || !same(gb, describe(b)) {
				t.Fatalf("lengths %d, %d: describe2 %+v %+v, describe %+v %+v", na, nb, ga, gb, describe(a), describe(b))
			}
		}
	}
}
