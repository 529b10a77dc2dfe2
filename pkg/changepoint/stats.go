package changepoint

import (
	"math"
)

// This file holds the small amount of numerical code the package needs: the
// regularized incomplete beta function (for the Student's t distribution), the
// two-sample t-test in the form Otava applies it, and quantiles for the
// threshold tests. Everything is stdlib only.

// betaIncReg returns the regularized incomplete beta function I_x(a, b) for
// a, b > 0 and x in [0, 1]. It evaluates the continued fraction with the
// modified Lentz method, on whichever side of the symmetry
// I_x(a, b) = 1 - I_{1-x}(b, a) converges fastest.
func betaIncReg(x, a, b float64) float64 {
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
	for m := 1; m <= maxIter; m++ {
		fm := float64(m)
		m2 := 2 * fm
		// Even step.
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		// Odd step.
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// studentTTwoSidedP returns the two-sided p-value P(|T| >= |t|) for a Student's
// t distribution with df degrees of freedom. An infinite t gives 0; NaN gives NaN.
func studentTTwoSidedP(t, df float64) float64 {
	if math.IsNaN(t) || math.IsNaN(df) || df <= 0 {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		return 0
	}
	return betaIncReg(df/(df+t*t), df/2, 0.5)
}

// studentTCDF returns P(T <= t) for df degrees of freedom.
func studentTCDF(t, df float64) float64 {
	p := studentTTwoSidedP(t, df) / 2
	if t >= 0 {
		return 1 - p
	}
	return p
}

// studentTQuantile returns t such that P(T <= t) = p, for p in (0, 1), by
// bisection on the CDF (monotone, so bisection always converges).
func studentTQuantile(p, df float64) float64 {
	if p <= 0 || p >= 1 || df <= 0 || math.IsNaN(p) {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	// Bracket the root: the normal quantile is a lower bound in magnitude.
	z := normalQuantile(p)
	lo, hi := z, z
	if p > 0.5 {
		for studentTCDF(hi, df) < p {
			hi = 2*hi + 1
		}
	} else {
		for studentTCDF(lo, df) > p {
			lo = 2*lo - 1
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if studentTCDF(mid, df) < p {
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

// normalQuantile returns the standard normal quantile Φ⁻¹(p).
func normalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// segmentStats holds the mean and the population standard deviation (ddof=0,
// numpy's default, which Otava reports and feeds to its t-test) of a segment.
type segmentStats struct {
	n      int
	mean   float64
	stddev float64
}

// describe computes the mean and population stddev of xs with two passes,
// which stays accurate for large values with small spread (e.g. QPS ~ 1e6).
func describe(xs []float64) segmentStats {
	n := len(xs)
	if n == 0 {
		return segmentStats{}
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(n)
	if n < 2 {
		return segmentStats{n: n, mean: mean}
	}
	var ss float64
	for _, x := range xs {
		d := x - mean
		ss += d * d
	}
	return segmentStats{n: n, mean: mean, stddev: math.Sqrt(ss / float64(n))}
}

// otavaTTest returns the two-sided p-value of Student's pooled-variance
// t-test between two segments, computed exactly as Otava does it: the pooled
// variance is built from the *population* variances of the segments,
// ((n1-1)·σ1² + (n2-1)·σ2²) / (n1+n2-2), which makes it slightly smaller than the
// textbook estimator for short segments. Two single points give p = 1. A zero
// pooled variance gives p = 0 when the means differ and p = 1 when they are
// equal (Otava would produce NaN there, which it never treats as significant).
func otavaTTest(a, b segmentStats) float64 {
	if a.n == 0 || b.n == 0 || a.n+b.n <= 2 {
		return 1
	}
	n1, n2 := float64(a.n), float64(b.n)
	df := n1 + n2 - 2
	pooled := ((n1-1)*a.stddev*a.stddev + (n2-1)*b.stddev*b.stddev) / df
	denom := math.Sqrt(pooled * (1/n1 + 1/n2))
	diff := a.mean - b.mean
	// Rounding guard: a constant series such as 0.1, 0.1, … has means that differ
	// in the last bit and a spread of ~1e-17; treat such noise as exact equality
	// instead of letting it produce an arbitrary t statistic.
	scale := math.Max(math.Abs(a.mean), math.Abs(b.mean))
	if math.Abs(diff) <= 1e-12*scale {
		diff = 0
	}
	if denom <= 1e-12*scale {
		denom = 0
	}
	if denom == 0 {
		if diff == 0 {
			return 1
		}
		return 0
	}
	p := studentTTwoSidedP(diff/denom, df)
	if math.IsNaN(p) {
		return 1
	}
	return p
}
