package inference

import (
	"fmt"
	"math"

	"github.com/dbbench/dbbench/pkg/stats"
)

// Welch is the result of Welch's unequal-variance t-test of mean(b) =
// mean(a): t is positive when b's mean is larger.
type Welch struct {
	T  float64 `json:"t"`
	DF float64 `json:"df"`
	P  float64 `json:"p"`
}

// WelchTTest compares the means of a and b without assuming equal
// variances. It needs at least two values on each side. When both sides have
// zero variance, p is 0 if the means differ and 1 if they are equal.
func WelchTTest(a, b []float64) (Welch, error) {
	if len(a) < 2 || len(b) < 2 {
		return Welch{}, fmt.Errorf("welch t-test needs at least 2 values per side, got %d and %d", len(a), len(b))
	}
	return WelchFromMoments(stats.Mean(a), stats.Stddev(a, 1), len(a), stats.Mean(b), stats.Stddev(b, 1), len(b)), nil
}

// WelchFromMoments is Welch's test from each side's mean, sample stddev and
// count (each count at least 2), with the Welch–Satterthwaite degrees of
// freedom: what a results document's per-second spread or a run's repeats
// summarize.
func WelchFromMoments(ma, sa float64, na int, mb, sb float64, nb int) Welch {
	va, vb := sa*sa/float64(na), sb*sb/float64(nb)
	return welch(ma, va, mb, vb, satterthwaiteDF(va, na, vb, nb, 1))
}

// welch is Welch's statistic of mean(b) − mean(a) from each side's mean and
// variance of the mean, with df degrees of freedom. Both variances zero give
// t = 0 and p = 1 when the means are equal, t = ±Inf and p = 0 otherwise.
func welch(ma, va, mb, vb, df float64) Welch {
	se := math.Sqrt(va + vb)
	if se == 0 {
		if ma == mb {
			return Welch{T: 0, DF: df, P: 1}
		}
		return Welch{T: math.Copysign(math.Inf(1), mb-ma), DF: df, P: 0}
	}
	t := (mb - ma) / se
	return Welch{T: t, DF: df, P: tTwoSidedP(t, df)}
}
