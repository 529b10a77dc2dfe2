package inference

import (
	"fmt"
	"math"

	"github.com/dbbench/dbbench/pkg/stats"
)

// ClopperPearson is the exact (Clopper–Pearson) two-sided confidence
// interval at level of a binomial proportion with k successes in n trials:
// the bounds are the Beta(k, n−k+1) quantile at (1−level)/2 and the
// Beta(k+1, n−k) quantile at (1+level)/2, with 0 and 1 at k = 0 and k = n.
// It covers at least level for every true proportion (conservative), which
// is what a false-positive count over few verdicts needs: "3 of 20" is
// consistent with α = 5 % when α lies in the interval. The quantiles are
// found by bisection on the regularized incomplete beta function.
func ClopperPearson(k, n int, level float64) (low, high float64, err error) {
	if err := checkLevel(level); err != nil {
		return 0, 0, err
	}
	if n < 1 || k < 0 || k > n {
		return 0, 0, fmt.Errorf("binomial interval of %d successes in %d trials: %w", k, n, ErrInvalid)
	}
	tail := (1 - level) / 2
	low, high = 0, 1
	if k > 0 {
		low = betaQuantile(tail, float64(k), float64(n-k+1))
	}
	if k < n {
		high = betaQuantile(1-tail, float64(k+1), float64(n-k))
	}
	return low, high, nil
}

// betaQuantile is the p-quantile of Beta(a, b): the x with I_x(a, b) = p.
// I_x is increasing in x, so bisection to 1e-12 converges in ~40 steps.
func betaQuantile(p, a, b float64) float64 {
	lo, hi := 0.0, 1.0
	for hi-lo > 1e-12 {
		mid := (lo + hi) / 2
		if stats.RegIncBeta(mid, a, b) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Max(0, math.Min(1, (lo+hi)/2))
}
