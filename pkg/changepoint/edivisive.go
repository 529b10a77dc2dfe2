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

	// Buffers of the fast search (best): h[n*hStride+m] is the coefficient
	// of W(τ, κ) for n points in X and m in Y, u[κ] = 2·W(s, κ)/(κ−s) for
	// the interval being searched, rowQ[τ] the largest Q of row τ.
	h       []float64
	hStride int
	u, rowQ []float64

	// Split state: boundaries of the current intervals (sorted, starting with 0
	// and ending with len(xs)) and the cached best candidate of each interval.
	bounds []int
	cands  []candidate
	tests  tThresholds
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
	if len(win.u) < L+1 {
		win.u = make([]float64, L+1)
		win.rowQ = make([]float64, L+1)
	}
	if win.hStride < L+1 {
		// h[n*hStride+m] = 2(n+m−1)/((m−1)(n+m)), the coefficient of W(τ, κ)
		// in the fast form of Q (best); it depends on the sizes only.
		hs := L + 1
		win.hStride = hs
		win.h = make([]float64, hs*hs)
		for n := 1; n <= L; n++ {
			for m := 2; n+m <= L; m++ {
				win.h[n*hs+m] = 2 * float64(n+m-1) / (float64(m-1) * float64(n+m))
			}
		}
	}
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
// minimum segment length on both sides of τ and for Y = [τ, κ): the τ of the
// first (τ, κ), in row-major order, with the largest Q, and that Q.
//
// With n = τ−s, m = κ−τ, D = n+m, Wx = W(s, τ), Wy = W(τ, κ) and
// xc = 2·Wx/(n−1) (0 for n = 1), the direct form of Q (exactRow) rearranges
// into
//
//	Q = 2·W(s, κ)/D + (n·xc − 2·Wx)/D − Wy · 2(D−1)/((m−1)·D) − xc
//
// where 2·W(s, κ)/D is tabulated once per interval and the last coefficient
// once per window length: 4 floating-point operations per (τ, κ) instead of
// 11. That form rounds differently, so it only ranks the rows: every row
// whose fast maximum lies within twice a rigorous bound on the difference
// of the best one is evaluated again in the direct form, and τ and Q are
// the direct form's, bit for bit, as a plain scan would give them. Usually
// that is one row.
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
	u := win.u[:e+1]
	for k := s + 1; k <= e; k++ {
		u[k] = 2 * rowS[k] * inv[k-s]
	}
	hs := win.hStride
	h := win.h
	rowQ := win.rowQ
	// A bound on |fast − direct| for any pair: every term of either form is
	// at most 4·L·W(s, e) and each form takes at most a dozen roundings of
	// relative size 2⁻⁵³; 2⁻⁴⁰ leaves a factor of over 100.
	tol := float64(e-s+2) * rowS[e] * 0x1p-40
	// g is the largest Q seen so far. A row keeps (in rowQ) only the
	// values within 3·tol of g at the time they are met; every value that
	// ends within 2·tol of the final g passes that test (g only grows), so
	// rowQ is exact for every row the last loop re-evaluates, and the
	// inner loop's comparisons are nearly always false: no running maximum
	// per row, whose updates the branch predictor cannot foresee.
	g := math.Inf(-1)
	// note records the value q (= f − xc) of a row: its row maximum and g.
	note := func(row *float64, q float64) {
		if q > *row {
			*row = q
		}
		if q > g {
			g = q
		}
	}
	// Y has at least two points in the fast form; with m = 1 the
	// single-point Y is taken in the direct form (singleY).
	my := max(m, 2)
	last := e - m // the last τ
	for tau := s + m; tau <= last; tau += 2 {
		// Rows τ and τ+1 together: they share the loads of u[κ] and
		// 1/(κ−s). Row τ+1, when there is one, starts one κ later.
		nA := tau - s
		wxA := rowS[tau]
		xcA := 0.0
		if nA > 1 {
			xcA = 2 * inv[nA-1] * wxA
		}
		cA := float64(nA)*xcA - 2*wxA
		rowA := w[tau*st : tau*st+st]
		hA := h[nA*hs-tau : nA*hs-tau+st] // hA[κ] = h(nA, κ−τ)
		qA := math.Inf(-1)
		if m == 1 {
			note(&qA, win.singleY(rowS, rowA, tau, nA, wxA, xcA))
		}
		k0 := tau + my // first κ of row τ
		if k0 <= e {
			note(&qA, u[k0]+cA*inv[k0-s]-rowA[k0]*hA[k0]-xcA)
		}
		if tau == last {
			rowQ[tau] = qA
			break
		}
		nB := nA + 1
		wxB := rowS[tau+1]
		xcB := 2 * inv[nB-1] * wxB
		cB := float64(nB)*xcB - 2*wxB
		rowB := w[(tau+1)*st : (tau+1)*st+st]
		hB := h[nB*hs-tau-1 : nB*hs-tau-1+st] // hB[κ] = h(nB, κ−τ−1)
		qB := math.Inf(-1)
		if m == 1 {
			note(&qB, win.singleY(rowS, rowB, tau+1, nB, wxB, xcB))
		}
		if k0+1 <= e {
			// κ = k0+1 … e for both rows; the thresholds are in the units
			// of f = Q + xc.
			uu := u[k0+1 : e+1]
			cnt := len(uu)
			vv := inv[k0+1-s : k0+1-s+cnt]
			wa, wb := rowA[k0+1:k0+1+cnt], rowB[k0+1:k0+1+cnt]
			ha, hb := hA[k0+1:k0+1+cnt], hB[k0+1:k0+1+cnt]
			thrA, thrB := g-3*tol+xcA, g-3*tol+xcB
			for i, uk := range uu {
				vk := vv[i]
				fa := vk*cA + uk - wa[i]*ha[i]
				fb := vk*cB + uk - wb[i]*hb[i]
				if fa >= thrA {
					note(&qA, fa-xcA)
					thrA, thrB = g-3*tol+xcA, g-3*tol+xcB
				}
				if fb >= thrB {
					note(&qB, fb-xcB)
					thrA, thrB = g-3*tol+xcA, g-3*tol+xcB
				}
			}
		}
		rowQ[tau], rowQ[tau+1] = qA, qB
	}
	bestQ := math.Inf(-1)
	for tau := s + m; tau <= last; tau++ {
		if rowQ[tau] < g-2*tol {
			continue
		}
		if q := win.exactRow(s, e, tau); q > bestQ {
			bestQ, res.tau = q, tau
		}
	}
	res.q = bestQ
	return res
}

// singleY returns Q for a Y of the single point τ (m = 1), in the direct
// form, as exactRow computes it.
func (win *window) singleY(rowS, rowTau []float64, tau, n int, wx, xc float64) float64 {
	cross := rowS[tau+1] - wx - rowTau[tau+1]
	return (2*cross - xc) * win.inv[n+1]
}

// exactRow returns the largest Q of row τ of the interval [s, e) with the
// direct form of the statistic: these are the values best reports and
// compares.
func (win *window) exactRow(s, e, tau int) float64 {
	m := win.minSeg
	st := win.stride
	w := win.w
	inv := win.inv
	rowS := w[s*st : s*st+st]
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
	bestQ := math.Inf(-1)
	if m == 1 { // Y of one point: no Y within-sum term
		cross := rowS[kappa] - wsTau - rowTau[kappa]
		bestQ = (2*cross - xCoef) * inv[n+1]
		kappa++
	}
	// Here every Y has at least two points.
	for ; kappa <= e; kappa++ {
		mm := kappa - tau
		wTK := rowTau[kappa]
		cross := rowS[kappa] - wsTau - wTK
		num := 2*cross - float64(mm)*xCoef
		num -= twoN * inv[mm-1] * wTK
		if q := num * inv[n+mm]; q > bestQ {
			bestQ = q
		}
	}
	return bestQ
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
		if !win.tests.significant(describe(win.xs[s:tau]), describe(win.xs[tau:e]), pmax) {
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
