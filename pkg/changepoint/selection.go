package changepoint

import (
	"math"
	"math/bits"
	"slices"
)

// median returns the median of xs, reordering xs: the middle value, or the
// mean of the two middle values for an even length, exactly as a full sort
// would give it, but in O(len(xs)) expected time (selection instead of a
// sort). It returns 0 for an empty slice.
func median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	k := n / 2
	upper := selectKth(xs, k)
	if n%2 == 1 {
		return upper
	}
	// After selection every value left of k is ≤ xs[k]: the lower middle
	// value is their maximum.
	lower := xs[0]
	for _, v := range xs[1:k] {
		if v > lower {
			lower = v
		}
	}
	return (lower + upper) / 2
}

// selectKth reorders xs so that xs[k] holds the value a sort would put
// there, every value before it is ≤ it and every value after it ≥ it, and
// returns xs[k]. Quickselect with a median-of-three pivot and a
// branch-free partition (the comparison with the pivot, a coin toss on
// noisy data, feeds an index instead of a branch the processor would
// mispredict half the time); a second pass splits off the values equal to
// the pivot when they crowd one side (ties, integer data). After
// 2·log₂(n) rounds without converging it sorts the remaining range, so
// the worst case stays O(n log n).
func selectKth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1 // the range still to select in, inclusive
	budget := 2 * bits.Len(uint(len(xs)))
	for hi-lo > 16 {
		if budget == 0 {
			slices.Sort(xs[lo : hi+1])
			return xs[k]
		}
		budget--
		// Median of three, moved to hi.
		mid := lo + (hi-lo)/2
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[mid] {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		xs[mid], xs[hi] = xs[hi], xs[mid]
		pivot := xs[hi]
		// xs[lo:j] < pivot ≤ xs[j:hi].
		j := lo + partitionBelow(xs[lo:hi], pivot)
		xs[j], xs[hi] = pivot, xs[j]
		switch {
		case k < j:
			hi = j - 1
		case k == j:
			return pivot
		default:
			// xs[j+1:hi+1] ≥ pivot. If most of the range is there, split off
			// the values equal to the pivot: xs[j+1:e] == pivot < xs[e:hi+1].
			if 16*(hi-j) >= 15*(hi-lo) {
				e := j + 1 + partitionAtMost(xs[j+1:hi+1], pivot)
				if k < e {
					return pivot
				}
				lo = e
				continue
			}
			lo = j + 1
		}
	}
	// Insertion sort of the short remaining range.
	for a := lo + 1; a <= hi; a++ {
		v := xs[a]
		b := a
		for ; b > lo && xs[b-1] > v; b-- {
			xs[b] = xs[b-1]
		}
		xs[b] = v
	}
	return xs[k]
}

// partitionBelow moves the values of xs below pivot to its front, keeping
// no order, and returns their number. The sign bit of v − pivot is the
// comparison (−0 only when v and pivot are zeros of opposite signs, equal
// values either way).
func partitionBelow(xs []float64, pivot float64) int {
	j := 0
	for i, v := range xs {
		xs[i] = xs[j]
		xs[j] = v
		j += int(math.Float64bits(v-pivot) >> 63)
	}
	return j
}

// partitionAtMost moves the values of xs not above pivot to its front and
// returns their number.
func partitionAtMost(xs []float64, pivot float64) int {
	j := 0
	for i, v := range xs {
		xs[i] = xs[j]
		xs[j] = v
		j += int(math.Float64bits(pivot-v)>>63) ^ 1
	}
	return j
}
