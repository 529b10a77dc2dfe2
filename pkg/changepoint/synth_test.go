package changepoint

import (
	"math/rand/v2"
)

// Synthetic series with fixed-seed Gaussian noise, shared by the tests, the
// benchmark and the Otava cross-check.

// segment is a run of n points around mean.
type segment struct {
	n    int
	mean float64
}

// synth builds a series from segments with Gaussian noise of relative
// standard deviation relSD (0.01 = 1 % of each segment's mean).
func synth(seed uint64, relSD float64, segs ...segment) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	var out []float64
	for _, s := range segs {
		for range s.n {
			out = append(out, s.mean*(1+relSD*rng.NormFloat64()))
		}
	}
	return out
}

// withOutliers returns a copy of xs with xs[i] multiplied by factor at each i.
func withOutliers(xs []float64, factor float64, at ...int) []float64 {
	out := append([]float64(nil), xs...)
	for _, i := range at {
		out[i] *= factor
	}
	return out
}

// benchSuite returns the benchmark data set: metrics series of n runs each,
// with a few shifts and outliers per series so that the detector does work,
// as a real history of 32 steps would have.
func benchSuite(metrics, n int) [][]float64 {
	out := make([][]float64, metrics)
	for m := range metrics {
		rng := rand.New(rand.NewPCG(uint64(m)+1, 42))
		base := 1000 + 500*rng.Float64()
		var segs []segment
		left := n
		for left > 0 {
			l := min(left, 50+rng.IntN(250))
			base *= 1 + (rng.Float64()-0.5)*0.2 // shifts of up to ±10 %
			segs = append(segs, segment{l, base})
			left -= l
		}
		xs := synth(uint64(m)+100, 0.01+0.02*rng.Float64(), segs...)
		for range 3 {
			xs[rng.IntN(n)] *= 1.3
		}
		out[m] = xs
	}
	return out
}
