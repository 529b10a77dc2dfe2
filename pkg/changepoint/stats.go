package changepoint

import (
	"math"

	"github.com/dbbench/dbbench/pkg/stats"
)

// This file holds the two-sample t-test in the form Otava applies it; the
// distribution functions are in pkg/stats.

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

// describe2 returns describe(a) and describe(b), bit for bit, from loops
// that take a value of each at a time: two independent chains of
// additions, which the CPU overlaps.
func describe2(a, b []float64) (segmentStats, segmentStats) {
	if len(a) < 2 || len(b) < 2 {
		return describe(a), describe(b)
	}
	k := min(len(a), len(b))
	a0, b0 := a[:k], b[:k]
	var sa, sb float64
	for i, x := range a0 {
		sa += x
		sb += b0[i]
	}
	for _, x := range a[k:] {
		sa += x
	}
	for _, x := range b[k:] {
		sb += x
	}
	na, nb := float64(len(a)), float64(len(b))
	ma, mb := sa/na, sb/nb
	var qa, qb float64
	for i, x := range a0 {
		d, e := x-ma, b0[i]-mb
		qa += d * d
		qb += e * e
	}
	for _, x := range a[k:] {
		d := x - ma
		qa += d * d
	}
	for _, x := range b[k:] {
		e := x - mb
		qb += e * e
	}
	return segmentStats{n: len(a), mean: ma, stddev: math.Sqrt(qa / na)},
		segmentStats{n: len(b), mean: mb, stddev: math.Sqrt(qb / nb)}
}

// otavaTTest returns the two-sided p-value of Student's pooled-variance
// t-test between two segments, computed exactly as Otava does it: the pooled
// variance is built from the *population* variances of the segments,
// ((n1-1)·σ1² + (n2-1)·σ2²) / (n1+n2-2), which makes it slightly smaller than the
// textbook estimator for short segments. Two single points give p = 1. A zero
// pooled variance gives p = 0 when the means differ and p = 1 when they are
// equal (Otava would produce NaN there, which it never treats as significant).
func otavaTTest(a, b segmentStats) float64 {
	t, df, p, done := otavaT(a, b)
	if done {
		return p
	}
	return studentP(t, df)
}

// studentP is otavaTTest's p-value from the t statistic and the degrees of
// freedom: 1 where the distribution gives NaN.
func studentP(t, df float64) float64 {
	if p := stats.StudentTwoSidedP(t, df); !math.IsNaN(p) {
		return p
	}
	return 1
}

// otavaT returns the t statistic and the degrees of freedom of otavaTTest,
// or (done) its p-value where it needs no t distribution: 1 for fewer than
// three points or equal means, 0 for different means with no spread.
func otavaT(a, b segmentStats) (t, df, p float64, done bool) {
	if a.n == 0 || b.n == 0 || a.n+b.n <= 2 {
		return 0, 0, 1, true
	}
	n1, n2 := float64(a.n), float64(b.n)
	df = n1 + n2 - 2
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
			return 0, df, 1, true
		}
		return 0, df, 0, true
	}
	return diff / denom, df, 0, false
}

// tThresholds decides p ≤ pmax (or, strict, p < pmax) for the p-values of
// Student's t distribution (otavaTTest's, the line fit's) without
// evaluating the distribution whenever it can: p decreases with |t| at
// fixed degrees of freedom, so it keeps, per degrees of freedom, the
// largest |t| seen that fails (below[df]) and the smallest that passes
// (above[df]), and decides a |t| beyond them by a margin of 10⁻⁹ (far more
// than the p-value's rounding) without computing p. The split pass tests
// one candidate per search, at the same level every time; the outlier
// check and the drift pass test at MaxPValue.
type tThresholds struct {
	strict       bool
	pmax         float64
	below, above []float64
}

// pass reports whether p passes the level.
func (th *tThresholds) pass(p, pmax float64) bool {
	if th.strict {
		return p < pmax
	}
	return p <= pmax
}

// significant reports whether otavaTTest(a, b) ≤ pmax (< pmax if strict).
func (th *tThresholds) significant(a, b segmentStats, pmax float64) bool {
	t, df, p, done := otavaT(a, b)
	if done {
		return th.pass(p, pmax)
	}
	return th.passT(t, df, pmax)
}

// passT reports whether the two-sided p-value of t at df (an integer)
// degrees of freedom passes pmax; a NaN p-value counts as 1, as
// otavaTTest and fitLine report it.
func (th *tThresholds) passT(t, df, pmax float64) bool {
	if pass, ok := th.decided(t, df, pmax); ok {
		return pass
	}
	return th.record(t, df, studentP(t, df), pmax)
}

// decided reports whether the bounds decide the p-value of t at df
// degrees of freedom, and if so whether it passes pmax.
func (th *tThresholds) decided(t, df, pmax float64) (pass, ok bool) {
	if th.pmax != pmax {
		th.pmax, th.below, th.above = pmax, th.below[:0], th.above[:0]
	}
	k := int(df)
	for len(th.below) <= k {
		th.below = append(th.below, -1) // nothing known yet
		th.above = append(th.above, math.Inf(1))
	}
	t = math.Abs(t)
	switch {
	case t >= th.above[k]*(1+1e-9):
		return true, true
	case t <= th.below[k]*(1-1e-9):
		return false, true
	}
	return false, false
}

// record reports whether p, the p-value of t at df degrees of freedom
// (after decided), passes pmax, and moves the bounds of df to t.
func (th *tThresholds) record(t, df, p, pmax float64) bool {
	k := int(df)
	t = math.Abs(t)
	if th.pass(p, pmax) {
		th.above[k] = math.Min(th.above[k], t)
		return true
	}
	th.below[k] = math.Max(th.below[k], t)
	return false
}
