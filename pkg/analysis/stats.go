package analysis

import (
	"fmt"
	"math"
	"sort"

	"github.com/dbbench/dbbench/pkg/stats"
)

// StddevKind selects the standard deviation estimator.
type StddevKind string

const (
	// StddevSample divides by n−1 (spreadsheets' STDEV, numpy ddof=1): the
	// default of the group and repeat reports.
	StddevSample StddevKind = "sample"
	// StddevPopulation divides by n (STDEVP, numpy's default ddof=0): what
	// the coefficient of variation of a time series uses.
	StddevPopulation StddevKind = "population"
)

// Validate checks the kind; "" is allowed and means sample.
func (k StddevKind) Validate() error {
	switch k {
	case "", StddevSample, StddevPopulation:
		return nil
	}
	return fmt.Errorf("stddev %q: must be %q or %q", k, StddevSample, StddevPopulation)
}

// Label is the short name printed in table headers.
func (k StddevKind) Label() string {
	if k == StddevPopulation {
		return "stddev (pop, n)"
	}
	return "stddev (sample, n-1)"
}

// stddev of xs by kind; NaN when undefined (sample of fewer than 2, or
// empty), and NaN when any value is infinite.
func stddev(xs []float64, kind StddevKind) float64 {
	if kind == StddevPopulation {
		return stats.Stddev(xs, 0)
	}
	return stats.Stddev(xs, 1)
}

func sortedCopy(xs []float64) []float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s
}

// Summary is the five statistics the group tables print, plus the count.
type Summary struct {
	N       int `json:"n"`
	Average Num `json:"average"`
	Median  Num `json:"median"`
	Min     Num `json:"min"`
	Max     Num `json:"max"`
	Stddev  Num `json:"stddev"`
}

// Summarize computes a Summary of xs. Infinite values are kept (an x/0 ratio
// makes the average and max inf and the stddev undefined); an empty input
// gives N 0 and undefined statistics.
func Summarize(xs []float64, kind StddevKind) Summary {
	if len(xs) == 0 {
		nan := Num(math.NaN())
		return Summary{Average: nan, Median: nan, Min: nan, Max: nan, Stddev: nan}
	}
	s := sortedCopy(xs)
	return Summary{
		N:       len(xs),
		Average: Num(stats.Mean(xs)),
		Median:  Num(stats.Quantile(s, 0.5)),
		Min:     Num(s[0]),
		Max:     Num(s[len(s)-1]),
		Stddev:  Num(stddev(xs, kind)),
	}
}

// quantilesSelect returns the type-7 quantiles qs (ascending, in [0, 1]) of
// buf, which it reorders. It uses selection (expected O(n) per quantile)
// instead of a full sort; the results equal stats.Quantile on sorted data.
func quantilesSelect(buf []float64, qs ...float64) []float64 {
	out := make([]float64, len(qs))
	n := len(buf)
	if n == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	lo := 0
	for j, q := range qs {
		h := q * float64(n-1)
		i := int(math.Floor(h))
		if i >= n-1 {
			i = n - 1
		}
		selectK(buf, lo, n-1, i)
		v := buf[i]
		if frac := h - float64(i); frac > 0 && i+1 < n {
			next := buf[i+1]
			for _, x := range buf[i+2:] {
				if x < next {
					next = x
				}
			}
			v += frac * (next - v)
		}
		out[j] = v
		lo = i
	}
	return out
}

// selectK reorders a[lo..hi] so that a[k] is the value a sorted slice would
// hold there, everything before it is <= and everything after >= (Hoare's
// selection with a median-of-three pivot).
func selectK(a []float64, lo, hi, k int) {
	for hi > lo {
		if hi-lo < 16 {
			for i := lo + 1; i <= hi; i++ {
				for j := i; j > lo && a[j] < a[j-1]; j-- {
					a[j], a[j-1] = a[j-1], a[j]
				}
			}
			return
		}
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		pivot := a[mid]
		i, j := lo, hi
		for i <= j {
			for a[i] < pivot {
				i++
			}
			for a[j] > pivot {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}
