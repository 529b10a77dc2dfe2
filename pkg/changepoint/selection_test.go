package changepoint

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSelectMatchesSort: selectKth and median give exactly what a full sort
// gives, on random, sorted, reversed, constant and few-valued inputs of
// every small length and some long ones.
func TestSelectMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	shapes := []struct {
		name string
		gen  func(n int) []float64
	}{
		{"gaussian", func(n int) []float64 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = 1000 + 10*rng.NormFloat64()
			}
			return xs
		}},
		{"sorted", func(n int) []float64 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(i)
			}
			return xs
		}},
		{"reversed", func(n int) []float64 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(n - i)
			}
			return xs
		}},
		{"constant", func(n int) []float64 { return constant(n, 3) }},
		{"three values", func(n int) []float64 {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(rng.IntN(3))
			}
			return xs
		}},
	}
	lengths := []int{1, 2, 3, 4, 5}
	for n := 6; n <= 40; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 99, 100, 1000, 1001)
	for _, sh := range shapes {
		for _, n := range lengths {
			xs := sh.gen(n)
			sorted := slices.Sorted(slices.Values(xs))
			wantMedian := sorted[n/2]
			if n%2 == 0 {
				wantMedian = (sorted[n/2-1] + sorted[n/2]) / 2
			}
			if got := median(slices.Clone(xs)); got != wantMedian {
				t.Errorf("%s, n=%d: median %v, want %v", sh.name, n, got, wantMedian)
			}
			for _, k := range []int{0, n / 3, n / 2, n - 1} {
				buf := slices.Clone(xs)
				if got := selectKth(buf, k); got != sorted[k] {
					t.Errorf("%s, n=%d: selectKth(%d) = %v, want %v", sh.name, n, k, got, sorted[k])
				}
				for i, v := range buf {
					if (i < k && v > buf[k]) || (i > k && v < buf[k]) {
						t.Fatalf("%s, n=%d, k=%d: xs[%d] = %v on the wrong side of %v", sh.name, n, k, i, v, buf[k])
					}
				}
			}
		}
	}
	if got := median(nil); got != 0 {
		t.Errorf("median(nil) = %v, want 0", got)
	}
}
