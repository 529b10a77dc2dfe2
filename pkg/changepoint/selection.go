package changepoint

import (
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
// returns xs[k]. Quickselect with a median-of-three pivot (Hoare's
// partition, which splits runs of equal values evenly); after 2·log₂(n)
// rounds without converging it sorts the remaining range, so the worst case
// stays O(n log n).
func selectKth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	budget := 2 * bits.Len(uint(len(xs)))
	for hi-lo > 16 {
		if budget == 0 {
			slices.Sort(xs[lo : hi+1])
			return xs[k]
		}
		budget--
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
		pivot := xs[mid]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		// Now xs[lo..j] ≤ pivot ≤ xs[i..hi], and any value strictly between
		// j and i equals the pivot.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
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
