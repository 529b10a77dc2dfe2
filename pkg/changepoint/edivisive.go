package changepoint

import "math"

// The E-divisive statistic of Matteson & James (2014) with α = 1, as Otava uses
// it. For a segment Z[s:e) split at τ and truncated at κ (s < τ < κ ≤ e), with
// X = Z[s:τ) (n points) and Y = Z[τ:κ) (m points):
//
//	Q(τ, κ) = 2/(n+m) · Σ|X_i − Y_j|
//	        − 2m/((n+m)(n−1)) · Σ_{i<k}|X_i − X_k|
//	        − 2n/((n+m)(m−1)) · Σ_{j<k}|Y_j − Y_k|
//
// (a within-sum term is 0 when its side has a single point). The candidate
// change point of Z[s:e) is the τ of the (τ, κ) pair maximising Q.
//
// Instead of Otava's dense matrices, the window keeps one table of within-sums
// W(a, b) = Σ_{a≤i<j<b} |z_i − z_j| for every sub-range of the window, built in
// O(L²) with the recurrence W(a, b) = W(a+1, b) + Σ_{a<j<b} |z_a − z_j|. The
// cross-sum follows as W(s, κ) − W(s, τ) − W(τ, κ), so Q costs O(1) per pair
// and every interval of the window is searched from the same table.

// window holds the reusable buffers for one sliding window.
type window struct {
	xs     []float64 // the window's values (a sub-slice of the series)
	stride int
	w      []float64 // W(a, b) at w[a*stride+b], 0 ≤ a ≤ b ≤ len(xs)
	inv    []float64 // inv[k] = 1/k, inv[0] = 0
	minSeg int

	// Split state: boundaries of the current intervals (sorted, starting with 0
	// and ending with len(xs)) and the cached best candidate of each interval.
	bounds []int
	cands  []candidate
}

// candidate is the best split of one interval.
type candidate struct {
	tau int     // local index of the first point after the split, or -1
	q   float64 // the maximised Q value
}

// reset loads values xs and builds the within-sum table.
func (win *window) reset(xs []float64, minSeg int) {
	L := len(xs)
	win.xs = xs
	win.minSeg = minSeg
	win.stride = L + 1
	need := (L + 1) * (L + 1)
	if cap(win.w) < need {
		win.w = make([]float64, need)
	}
	win.w = win.w[:need]
	if len(win.inv) < L+2 {
		win.inv = make([]float64, L+2)
		for k := 1; k < len(win.inv); k++ {
			win.inv[k] = 1 / float64(k)
		}
	}
	st := win.stride
	w := win.w
	// Row L: only W(L, L) = 0; row L−1: W(L−1, L−1) = W(L−1, L) = 0.
	w[L*st+L] = 0
	a := L - 1
	if a >= 0 {
		w[a*st+a] = 0
		w[a*st+a+1] = 0
		a--
	}
	// Two rows per pass: rows a and a−1 carry independent running sums, which
	// roughly doubles the adds the CPU can overlap.
	for ; a >= 1; a -= 2 {
		next := w[(a+1)*st : (a+1)*st+st]
		row := w[a*st : a*st+st]
		prev := w[(a-1)*st : (a-1)*st+st]
		row[a], row[a+1] = 0, 0
		prev[a-1], prev[a] = 0, 0
		xa, xp := xs[a], xs[a-1]
		// prev[a+1] = W(a−1, a+1) = |x_{a−1} − x_a|.
		rp := math.Abs(xp - xs[a])
		prev[a+1] = rp
		r := 0.0
		tail := xs[a+1 : L]
		next = next[a+2 : L+1]
		rowT := row[a+2 : L+1]
		prevT := prev[a+2 : L+1]
		for i, x := range tail {
			r += math.Abs(xa - x)
			rp += math.Abs(xp - x)
			v := next[i] + r
			rowT[i] = v
			prevT[i] = v + rp
		}
	}
	if a == 0 {
		next := w[st : st+st]
		row := w[:st]
		row[0], row[1] = 0, 0
		x0 := xs[0]
		r := 0.0
		for b := 2; b <= L; b++ {
			r += math.Abs(x0 - xs[b-1])
			row[b] = next[b] + r
		}
	}
}

// best returns the best split of the local interval [s, e), honouring the
// minimum segment length on both sides of τ and for Y = [τ, κ).
func (win *window) best(s, e int) candidate {
	m := win.minSeg
	res := candidate{tau: -1}
	if e-s < 2*m || e-s < 2 {
		return res
	}
	st := win.stride
	w := win.w
	inv := win.inv
	rowS := w[s*st : s*st+st]
	bestQ := math.Inf(-1)
	for tau := s + m; tau <= e-m; tau++ {
		n := tau - s
		wsTau := rowS[tau]
		// Coefficient of the X within-sum, without the common 1/(n+m) factor:
		// 2/(n−1); it is multiplied by the size of Y below.
		xCoef := 0.0
		if n > 1 {
			xCoef = 2 * inv[n-1] * wsTau
		}
		rowTau := w[tau*st : tau*st+st]
		twoN := 2 * float64(n)
		kappa := tau + m
		if m == 1 { // Y of one point: no Y within-sum term
			cross := rowS[kappa] - wsTau - rowTau[kappa]
			q := (2*cross - xCoef) * inv[n+1]
			if q > bestQ {
				bestQ, res.tau = q, tau
			}
			kappa++
		}
		// Here every Y has at least two points. Re-slicing lets the compiler
		// drop most bounds checks.
		rs := rowS[kappa : e+1]
		rt := rowTau[kappa : e+1]
		for i := range rs {
			mm := kappa + i - tau
			wTK := rt[i]
			cross := rs[i] - wsTau - wTK
			num := 2*cross - float64(mm)*xCoef
			num -= twoN * inv[mm-1] * wTK
			q := num * inv[n+mm]
			if q > bestQ {
				bestQ, res.tau = q, tau
			}
		}
	}
	res.q = bestQ
	return res
}

// split runs the divisive E-divisive search inside the window: repeatedly take
// the best candidate over all current intervals, test it with the t-test and
// keep it if p ≤ pmax; stop at the first candidate that is not significant.
// It appends the local indices of the change points found, sorted, to out.
func (win *window) split(pmax float64, out []int) []int {
	L := len(win.xs)
	win.bounds = append(win.bounds[:0], 0, L)
	win.cands = append(win.cands[:0], win.best(0, L))
	for {
		bi := -1
		for i, c := range win.cands {
			if c.tau < 0 {
				continue
			}
			if bi < 0 || c.q > win.cands[bi].q {
				bi = i
			}
		}
		if bi < 0 {
			break
		}
		s, e, tau := win.bounds[bi], win.bounds[bi+1], win.cands[bi].tau
		p := otavaTTest(describe(win.xs[s:tau]), describe(win.xs[tau:e]))
		if !(p <= pmax) {
			break
		}
		// Insert tau as a new boundary; the interval bi becomes [s,tau),[tau,e).
		win.bounds = append(win.bounds, 0)
		copy(win.bounds[bi+2:], win.bounds[bi+1:])
		win.bounds[bi+1] = tau
		win.cands = append(win.cands, candidate{})
		copy(win.cands[bi+1:], win.cands[bi:])
		win.cands[bi] = win.best(s, tau)
		win.cands[bi+1] = win.best(tau, e)
	}
	out = append(out, win.bounds[1:len(win.bounds)-1]...)
	return out
}
