// Package stats holds the few distribution functions dbbench's statistics
// need (Student's t through the regularized incomplete beta function, the
// normal quantile) and the one sample quantile, shared by the change-point
// detection, the results summaries and the reports so that all compute
// p-values, intervals and percentiles the same way. Stdlib only; the tests
// check it against gonum's distributions.
package stats

import "math"

// RegIncBeta returns the regularized incomplete beta function I_x(a, b) for
// a, b > 0 and x in [0, 1]. It evaluates the continued fraction with the
// modified Lentz method, on whichever side of the symmetry
// I_x(a, b) = 1 - I_{1-x}(b, a) converges fastest.
func RegIncBeta(x, a, b float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsNaN(a) || math.IsNaN(b):
		return math.NaN()
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	// Prefactor x^a (1-x)^b / (a B(a,b)), computed in log space.
	lfront := lab - la - lb + a*math.Log(x) + b*math.Log1p(-x)
	if x < (a+1)/(a+b+2) {
		return math.Exp(lfront) * betaContinuedFraction(x, a, b) / a
	}
	return 1 - math.Exp(lfront)*betaContinuedFraction(1-x, b, a)/b
}

// betaContinuedFraction evaluates the continued fraction for I_x(a, b)
// (without the prefactor), using the modified Lentz algorithm.
func betaContinuedFraction(x, a, b float64) float64 {
	const (
		maxIter = 300
		eps     = 1e-16
		tiny    = 1e-300
	)
	qab, qap, qam := a+b, a+1, a-1
	c := 1.0
	d := 1 - qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	// term folds the fraction's next coefficient aa into c and d, Lentz's
	// way (a value near zero is replaced by tiny), and returns the factor
	// that moves h.
	term := func(aa float64) float64 {
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		return d * c
	}
	for m := 1; m <= maxIter; m++ {
		fm := float64(m)
		m2 := 2 * fm
		h *= term(fm * (b - fm) * x / ((qam + m2) * (a + m2)))            // even step
		del := term(-(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))) // odd step
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// StudentTwoSidedP returns the two-sided p-value P(|T| >= |t|) for a Student's
// t distribution with df degrees of freedom. An infinite t gives 0; NaN gives NaN.
func StudentTwoSidedP(t, df float64) float64 {
	if math.IsNaN(t) || math.IsNaN(df) || df <= 0 {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		return 0
	}
	return RegIncBeta(df/(df+t*t), df/2, 0.5)
}

// StudentCDF returns P(T <= t) for df degrees of freedom.
func StudentCDF(t, df float64) float64 {
	p := StudentTwoSidedP(t, df) / 2
	if t >= 0 {
		return 1 - p
	}
	return p
}

// StudentQuantile returns t such that P(T <= t) = p, for p in (0, 1), by
// bisection on the CDF (monotone, so bisection always converges).
func StudentQuantile(p, df float64) float64 {
	if p <= 0 || p >= 1 || df <= 0 || math.IsNaN(p) {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	// Bracket the root: the normal quantile is a lower bound in magnitude.
	z := NormalQuantile(p)
	lo, hi := z, z
	if p > 0.5 {
		for StudentCDF(hi, df) < p {
			hi = 2*hi + 1
		}
	} else {
		for StudentCDF(lo, df) > p {
			lo = 2*lo - 1
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if StudentCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*math.Max(1, math.Abs(mid)) {
			break
		}
	}
	return (lo + hi) / 2
}

// NormalQuantile returns the standard normal quantile Φ⁻¹(p).
func NormalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// Quantile returns the q-quantile (q in [0, 1]) of sorted, ascending data,
// interpolating linearly between closest ranks: Hyndman and Fan's type 7,
// the default of numpy, R and spreadsheets' PERCENTILE, so the median of an
// even count is the mean of the middle two. Empty data gives NaN.
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := q * float64(n-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= n {
		return sorted[n-1]
	}
	if i < 0 {
		return sorted[0]
	}
	if h == lo {
		// Exact rank: no interpolation, so an infinite neighbour does not
		// turn the value into NaN (inf × 0).
		return sorted[i]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

// Mean is the arithmetic mean of xs; NaN for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Stddev is the standard deviation of xs around their mean with divisor
// n − ddof: ddof 1 is the sample stddev, 0 the population one. It is NaN
// when undefined (n − ddof ≤ 0) and when any value is infinite. It sums
// the squared deviations plainly (no compensation), which the reports' and
// Welch's test's pinned numbers depend on.
func Stddev(xs []float64, ddof int) float64 {
	n := len(xs)
	div := float64(n - ddof)
	if n == 0 || div <= 0 {
		return math.NaN()
	}
	m := Mean(xs)
	if math.IsInf(m, 0) {
		return math.NaN()
	}
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / div)
}
