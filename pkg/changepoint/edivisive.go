package changepoint

import (
	"math"
	"sync"
)

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
// O(L²) with the recurrence W(a, b) = W(a+1, b) + Σ_{a<j<b} |z_a − z_j|, and
// the normalised sums V(a, b) = W(a, b)/(b−a−1) the search ranks with (best).
// The cross-sum follows as W(s, κ) − W(s, τ) − W(τ, κ), so Q costs O(1) per
// pair and every interval of the window is searched from the same table. A
// window takes the part of the table it shares with the previous one (slide).

// window holds the reusable buffers for one sliding window.
type window struct {
	xs     []float64 // the window's values (a sub-slice of the series)
	stride int
	// w holds W(a, b) at w[a*stride+b], 0 ≤ a ≤ b ≤ len(xs), and below the
	// diagonal V(a, b) = W(a, b)/(b−a−1) (0 for b−a = 1) at w[b*stride+a],
	// a < b: transposed, so that a column of the search (one κ, every τ)
	// is contiguous, and in the same array, which stays in the L1 cache.
	w      []float64
	inv    []float64 // inv[k] = 1/k, inv[0] = 0
	rinv   []float64 // inv reversed: rinv[j] = inv[len(inv)−1−j]
	minSeg int

	// Buffers of the search (best): vs[τ] = V(s, τ) for the interval being
	// searched, colS[κ] the smallest V(s, τ) + V(τ, κ) noted in column κ.
	vs, colS []float64

	// The window's place in its series, for slide; rEnd[a] is the running
	// sum Σ_{a<j<len(xs)}|z_a − z_j| of row a.
	series     []float64
	start, end int
	rEnd       []float64

	// Split state: boundaries of the current intervals (sorted, starting with 0
	// and ending with len(xs)) and the cached best candidate of each interval.
	bounds []int
	cands  []candidate
	tests  tThresholds

	// For hopeless: the critical |t| by degrees of freedom at the level
	// critP (see critical).
	critP float64
	crit  []float64
}

// candidate is the best split of one interval.
type candidate struct {
	tau int     // local index of the first point after the split, or -1
	q   float64 // the maximised Q value
	// hopeless: no split of the interval passes the t-test (hopeless);
	// pending: tau and q are not computed yet (only for a hopeless one).
	hopeless, pending bool
}

// reset loads values xs and builds the within-sum tables.
func (win *window) reset(xs []float64, minSeg int) {
	win.series = nil
	win.load(xs, minSeg, len(xs)+1)
	win.fill(0)
}

// slide loads the window series[start:end] and builds its tables. When the
// previous window (since the last call of forget) was of the same series,
// started before start and ended at or before end, the part of the tables
// both windows share is moved instead of computed again: W(a, b) depends
// on the values between a and b only, and the running sums
// Σ_{a<j<b}|z_a − z_j| of the rows that go on past the old end are kept
// (rEnd), so every entry gets the bits a full build would give it.
func (win *window) slide(series []float64, start, end, minSeg int) {
	L := end - start
	shift, overlap := start-win.start, win.end-start
	if win.series == nil || len(win.series) != len(series) || &win.series[0] != &series[0] ||
		shift <= 0 || overlap <= 0 || end < win.end || L+1 > win.stride {
		win.series, win.start, win.end = series, start, end
		win.load(series[start:end], minSeg, L+1)
		win.fill(0)
		return
	}
	win.start, win.end = start, end
	win.load(series[start:end], minSeg, win.stride)
	st := win.stride
	d := shift*st + shift // the offset of (a, b) from (a+shift, b+shift)
	w := win.w
	for a := 0; a <= overlap; a++ {
		copy(w[a*st:a*st+overlap+1], w[a*st+d:a*st+overlap+1+d])
	}
	copy(win.rEnd[:overlap+1], win.rEnd[shift:shift+overlap+1])
	win.fill(overlap)
}

// forget makes the next slide build its tables in full.
func (win *window) forget() { win.series = nil }

// load sets the window's values and sizes its buffers for a stride of st.
func (win *window) load(xs []float64, minSeg, st int) {
	L := len(xs)
	win.xs = xs
	win.minSeg = minSeg
	win.stride = st
	need := st * st
	if cap(win.w) < need {
		win.w = make([]float64, need)
	}
	win.w = win.w[:need]
	if len(win.vs) < L+1 {
		win.vs = make([]float64, L+1)
		win.colS = make([]float64, L+1)
		win.rEnd = make([]float64, L+1)
	}
	win.sizeInv(L)
}

// sizeInv makes inv and rinv hold at least L+2 entries.
func (win *window) sizeInv(L int) {
	if len(win.inv) < L+2 {
		win.inv = make([]float64, L+2)
		win.rinv = make([]float64, L+2)
		for k := 1; k < len(win.inv); k++ {
			win.inv[k] = 1 / float64(k)
			win.rinv[len(win.inv)-1-k] = win.inv[k]
		}
	}
}

// fill computes the tables of the loaded window, except the entries
// W(a, b), V(a, b) with b ≤ lo, which must be there already, with the
// running sums of rows a < lo up to lo in rEnd. Row a of W follows from
// row a+1: W(a, b) = W(a+1, b) + r_a(b), r_a(b) = Σ_{a<j<b}|z_a − z_j|
// summed in the order of j (so W(a, a+1) = 0 + 0).
func (win *window) fill(lo int) {
	L := len(win.xs)
	st := win.stride
	w, rEnd := win.w, win.rEnd
	// The rows from lo on, in full, four at a time after the last one: the
	// four running sums are independent, so the CPU overlaps their
	// additions. The triangle b ≤ a+1 of a block a … a−3 comes first. The
	// rows left over when their number is not a multiple of four are the
	// first ones, the shortest, one at a time.
	a := L
	if a >= lo {
		w[a*st+a] = 0
		rEnd[a] = 0
		a--
	}
	for ; a >= lo && (a-lo+1)%4 != 0; a-- {
		w[a*st+a] = 0
		rEnd[a] = win.rowSpan(a, a+1, L, 0)
	}
	for ; a-3 >= lo; a -= 4 {
		r0, r1, r2, r3 := win.triangle(a)
		rEnd[a], rEnd[a-1], rEnd[a-2], rEnd[a-3] = win.fourRows(a, a+2, r0, r1, r2, r3)
	}
	// The rows before lo, from column lo+1 on. When their number is not a
	// multiple of four, the last block is rows 3 … 0, which overlaps the
	// one before: its rows are computed again from the same operands (the
	// sums they had at column lo, kept), to the same bits.
	if a < 3 {
		for ; a >= 0; a-- {
			rEnd[a] = win.rowSpan(a, lo+1, L, rEnd[a])
		}
		return
	}
	kept := [4]float64(rEnd[:4])
	for ; a >= 3; a -= 4 {
		rEnd[a], rEnd[a-1], rEnd[a-2], rEnd[a-3] = win.fourRows(a, lo+1, rEnd[a], rEnd[a-1], rEnd[a-2], rEnd[a-3])
	}
	if a >= 0 {
		rEnd[3], rEnd[2], rEnd[1], rEnd[0] = win.fourRows(3, lo+1, kept[3], kept[2], kept[1], kept[0])
	}
}

// triangle computes W and V of rows a … a−3 for the columns up to a+1
// (rowSpan from each diagonal, written out: 0 + r = r, r·1 = r), and
// returns the running sums r_{a−k}(a+1).
func (win *window) triangle(a int) (r0, r1, r2, r3 float64) {
	st := win.stride
	w, inv := win.w, win.inv
	z := win.xs[a-3 : a+1] // z_{a−3} … z_a
	for k := range 4 {
		row := a - k
		w[row*st+row], w[row*st+row+1], w[(row+1)*st+row] = 0, 0, 0 // W(row, row), W(row, row+1), V(row, row+1)
	}
	r1 = math.Abs(z[2] - z[3])
	w[(a-1)*st+a+1], w[(a+1)*st+a-1] = r1, r1
	r2a := math.Abs(z[1] - z[2])
	w[(a-2)*st+a], w[a*st+a-2] = r2a, r2a
	r2 = r2a + math.Abs(z[1]-z[3])
	v := r1 + r2
	w[(a-2)*st+a+1], w[(a+1)*st+a-2] = v, v*inv[2]
	r3a := math.Abs(z[0] - z[1])
	w[(a-3)*st+a-1], w[(a-1)*st+a-3] = r3a, r3a
	r3b := r3a + math.Abs(z[0]-z[2])
	u := r2a + r3b
	w[(a-3)*st+a], w[a*st+a-3] = u, u*inv[2]
	r3 = r3b + math.Abs(z[0]-z[3])
	u = v + r3
	w[(a-3)*st+a+1], w[(a+1)*st+a-3] = u, u*inv[3]
	return 0, r1, r2, r3
}

// fourRows computes W and V of rows a … a−3 for the columns b0 … L, from
// row a+1 and the running sums r_{a−k}(b0−1) = rk, and returns the sums
// r_{a−k}(L).
func (win *window) fourRows(a, b0 int, r0, r1, r2, r3 float64) (float64, float64, float64, float64) {
	L := len(win.xs)
	if b0 > L {
		return r0, r1, r2, r3
	}
	if !useAVX {
		return win.fourRowsGo(a, b0, r0, r1, r2, r3)
	}
	st := win.stride
	w := win.w
	k := rowKernel{
		x:         [4]float64(win.xs[a-3 : a+1]),
		r:         [4]float64{r3, r2, r1, r0},
		z:         &win.xs[b0-1],
		n:         L - b0 + 1,
		next:      &w[(a+1)*st+b0],
		w0:        &w[a*st+b0],
		w1:        &w[(a-1)*st+b0],
		w2:        &w[(a-2)*st+b0],
		w3:        &w[(a-3)*st+b0],
		inv:       &win.rinv[len(win.rinv)-1-(b0-a+2)],
		col:       &w[b0*st+a-3],
		colStride: 8 * st,
	}
	fourRowsAVX(&k)
	return k.r[3], k.r[2], k.r[1], k.r[0]
}

// rowKernel holds the operands of fourRowsAVX (kernels_amd64.s, which
// reads its fields by offset): lanes 0 … 3 are rows a−3 … a.
type rowKernel struct {
	x, r                 [4]float64 // z_{a−3} … z_a; their running sums (in and out)
	z                    *float64   // z_{b0−1}
	n                    int        // the columns b0 … b0+n−1
	next, w0, w1, w2, w3 *float64   // W(a+1, b0), W(a, b0) … W(a−3, b0)
	inv                  *float64   // 1/(b0−a+2) … 1/(b0−a−1) (rinv), one back per column
	col                  *float64   // V(a−3, b0)
	colStride            int        // bytes from V(·, b) to V(·, b+1)
}

// fourRowsGo is fourRows in Go.
func (win *window) fourRowsGo(a, b0 int, r0, r1, r2, r3 float64) (float64, float64, float64, float64) {
	L := len(win.xs)
	st := win.stride
	w := win.w
	x0, x1, x2, x3 := win.xs[a], win.xs[a-1], win.xs[a-2], win.xs[a-3]
	tail := win.xs[b0-1 : L] // z_{b−1}
	cnt := len(tail)
	next := w[(a+1)*st+b0:][:cnt]
	row0 := w[a*st+b0:][:cnt]
	row1 := w[(a-1)*st+b0:][:cnt]
	row2 := w[(a-2)*st+b0:][:cnt]
	row3 := w[(a-3)*st+b0:][:cnt]
	inv0 := win.inv[b0-a-1:][:cnt] // 1/(b−a−1)
	inv1 := win.inv[b0-a:][:cnt]
	inv2 := win.inv[b0-a+1:][:cnt]
	inv3 := win.inv[b0-a+2:][:cnt]
	col := w[b0*st+a-3:] // col[j : j+4]: V(a−3, b) … V(a, b)
	j := 0
	for i, x := range tail {
		r0 += math.Abs(x0 - x)
		r1 += math.Abs(x1 - x)
		r2 += math.Abs(x2 - x)
		r3 += math.Abs(x3 - x)
		v0 := next[i] + r0
		v1 := v0 + r1
		v2 := v1 + r2
		v3 := v2 + r3
		row0[i], row1[i], row2[i], row3[i] = v0, v1, v2, v3
		c := col[j : j+4]
		c[0], c[1], c[2], c[3] = v3*inv3[i], v2*inv2[i], v1*inv1[i], v0*inv0[i]
		j += st
	}
	return r0, r1, r2, r3
}

// rowSpan computes W and V of row a for the columns b0 … b1 from row a+1
// and the running sum r = r_a(b0−1), and returns r_a(b1).
func (win *window) rowSpan(a, b0, b1 int, r float64) float64 {
	st := win.stride
	w, inv := win.w, win.inv
	xa := win.xs[a]
	for b := b0; b <= b1; b++ {
		r += math.Abs(xa - win.xs[b-1])
		v := w[(a+1)*st+b] + r
		w[a*st+b] = v
		w[b*st+a] = v * inv[b-a-1] // V, below the diagonal
	}
	return r
}

// best returns the best split of the local interval [s, e), honouring the
// minimum segment length on both sides of τ and for Y = [τ, κ): the τ of the
// first (τ, κ), in row-major order, with the largest Q, and that Q.
//
// With n = τ−s, m = κ−τ, D = n+m = κ−s, Wx = W(s, τ), Wy = W(τ, κ) and
// V(a, b) = W(a, b)/(b−a−1) (0 for a single point), the direct form of Q
// (exactQ) rearranges into
//
//	Q = 2/D · (W(s, κ) − (D−1) · (V(s, τ) + V(τ, κ)))
//
// In a column (one κ) D and W(s, κ) are fixed, so the largest Q of the
// column is at the smallest V(s, τ) + V(τ, κ): one addition per (τ, κ),
// against contiguous rows of the transposed V table. That form rounds
// differently, so it only ranks the pairs: every pair whose fast Q lies
// within 3·tol, more than a rigorous bound on the difference of the two
// forms, of the best one is evaluated again in the direct form, and τ and
// Q are the direct form's, bit for bit, as a plain scan would give them.
// Usually that is one pair.
func (win *window) best(s, e int) candidate {
	m := win.minSeg
	if e-s < 2*m || e-s < 2 {
		return candidate{tau: -1}
	}
	st := win.stride
	w := win.w
	rowS := w[s*st : s*st+st]
	vs := win.vs[:e+1]
	for t := s + 1; t <= e; t++ {
		vs[t] = w[t*st+s] // V(s, t), below the diagonal
	}
	colS := win.colS[:e+1]
	// A bound on |fast − direct| for any pair: every term of either form is
	// at most 4·L·W(s, e) and each form takes at most a dozen roundings of
	// relative size 2⁻⁵³; 2⁻⁴⁰ leaves a factor of over 100.
	tol := float64(e-s+2) * rowS[e] * 0x1p-40
	// g is the largest fast Q seen so far. A column notes (in colS) only
	// the sums whose Q is within 3·tol of g at the time they are met (the
	// threshold is the sum at g − 4·tol: a margin far above the rounding
	// of the threshold itself); every sum whose Q ends within 3·tol of the
	// final g passes that test (g only grows), and the scans' comparisons
	// are nearly always false.
	g := math.Inf(-1)
	lo := s + m     // the first τ
	first := lo + m // the first κ
	// Columns from the last: the longest ones, where the largest Q
	// usually is, set g early. Two columns per pass share the loads of
	// V(s, τ); the scans (scan1, scan2) stop only at a sum below its
	// threshold.
	for k := e; k >= first; k -= 2 {
		kb := k - 1
		sA, sB := math.Inf(1), math.Inf(1)
		thrA := win.sumAt(rowS[k], k-s, g-4*tol)
		colA := w[k*st : k*st+st]
		if kb < first {
			a, v := colA[lo:k-m+1], vs[lo:k-m+1]
			for i := 0; ; i++ {
				if i += scan1(v[i:], a[i:], thrA); i >= len(v) {
					break
				}
				sA = v[i] + a[i]
				g = max(g, win.fastQ(rowS[k], k-s, sA))
				thrA = min(sA, win.sumAt(rowS[k], k-s, g-4*tol))
			}
			colS[k] = sA
			break
		}
		thrB := win.sumAt(rowS[kb], kb-s, g-4*tol)
		colB := w[kb*st : kb*st+st]
		cnt := kb - m + 1 - lo // τ of both columns
		a, b, v := colA[lo:lo+cnt], colB[lo:lo+cnt], vs[lo:lo+cnt]
		for i := 0; ; i++ {
			if i += scan2(v[i:], a[i:], b[i:], thrA, thrB); i >= len(v) {
				break
			}
			if sa := v[i] + a[i]; sa < thrA {
				sA = sa
				g = max(g, win.fastQ(rowS[k], k-s, sa))
			}
			if sb := v[i] + b[i]; sb < thrB {
				sB = sb
				g = max(g, win.fastQ(rowS[kb], kb-s, sb))
			}
			thrA = min(sA, win.sumAt(rowS[k], k-s, g-4*tol))
			thrB = min(sB, win.sumAt(rowS[kb], kb-s, g-4*tol))
		}
		// The last τ of column k.
		if sa := vs[k-m] + colA[k-m]; sa < thrA {
			sA = sa
			g = max(g, win.fastQ(rowS[k], k-s, sa))
		}
		colS[k], colS[kb] = sA, sB
	}
	// The pairs whose fast Q is within 3·tol of g (the sum at g − 3·tol,
	// again with a margin for the threshold's rounding) hold every pair
	// whose direct Q is the largest: evaluate them in the direct form.
	res := candidate{tau: -1, q: math.Inf(-1)}
	for k := e; k >= first; k-- {
		thr := win.sumAt(rowS[k], k-s, g-3*tol)
		if colS[k] > thr {
			continue
		}
		col := w[k*st : k*st+st]
		for tau := lo; tau <= k-m; tau++ {
			if vs[tau]+col[tau] <= thr {
				if q := win.exactQ(s, tau, k); q > res.q || (q == res.q && tau < res.tau) {
					res.q, res.tau = q, tau
				}
			}
		}
	}
	return res
}

// sumAt returns the sum V(s, τ) + V(τ, κ) at which the fast form of Q
// for a column κ with W(s, κ) = wsk and D = κ−s points is q.
func (win *window) sumAt(wsk float64, D int, q float64) float64 {
	return (wsk - q*0.5*float64(D)) * win.inv[D-1]
}

// fastQ returns the fast form of Q for a column κ with W(s, κ) = wsk and
// D = κ−s points, at the sum V(s, τ) + V(τ, κ).
func (win *window) fastQ(wsk float64, D int, sum float64) float64 {
	return (wsk - float64(D-1)*sum) * (2 * win.inv[D])
}

// scan1 returns the first i with v[i] + a[i] < thr, or len(v). Not
// inlined: alone, its loop keeps everything in registers.
//
//go:noinline
func scan1(v, a []float64, thr float64) int {
	a = a[:len(v)]
	for i, x := range v {
		if x+a[i] < thr {
			return i
		}
	}
	return len(v)
}

// scan2 returns the first i with v[i] + a[i] < thrA or v[i] + b[i] <
// thrB, or len(v).
//
//go:noinline
func scan2(v, a, b []float64, thrA, thrB float64) int {
	a, b = a[:len(v)], b[:len(v)]
	i := 0
	if useAVX && len(v) >= 4 {
		n := len(v) &^ 3
		if i = scan2AVX(&v[0], &a[0], &b[0], n, thrA, thrB); i < n {
			return i
		}
	}
	for ; i < len(v); i++ {
		if x := v[i]; x+a[i] < thrA || x+b[i] < thrB {
			return i
		}
	}
	return len(v)
}

// exactQ returns Q(τ, κ) of the interval starting at s in the direct
// form: the values best reports and compares.
func (win *window) exactQ(s, tau, kappa int) float64 {
	st := win.stride
	w, inv := win.w, win.inv
	n := tau - s
	wsTau := w[s*st+tau]
	// Coefficient of the X within-sum, without the common 1/(n+m) factor:
	// 2/(n−1); it is multiplied by the size of Y below.
	xCoef := 0.0
	if n > 1 {
		xCoef = 2 * inv[n-1] * wsTau
	}
	mm := kappa - tau
	wTK := w[tau*st+kappa]
	cross := w[s*st+kappa] - wsTau - wTK
	num := 2*cross - float64(mm)*xCoef
	// With a Y of one point this subtracts 0 (inv[0] = 0, W = 0).
	num -= 2 * float64(n) * inv[mm-1] * wTK
	return num * inv[n+mm]
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
		if before, after := describe2(win.xs[s:tau], win.xs[tau:e]); !win.tests.significant(before, after, pmax) {
			break
		}
		// Insert tau as a new boundary; the interval bi becomes [s,tau),[tau,e).
		win.bounds = append(win.bounds, 0)
		copy(win.bounds[bi+2:], win.bounds[bi+1:])
		win.bounds[bi+1] = tau
		win.cands = append(win.cands, candidate{})
		copy(win.cands[bi+1:], win.cands[bi:])
		win.cands[bi] = win.lazyBest(s, tau, pmax)
		win.cands[bi+1] = win.lazyBest(tau, e, pmax)
		// When every interval is hopeless, the next test fails whichever
		// candidate is the best: the search ends here, as it would after
		// that test. Otherwise every candidate takes part in the choice.
		done := true
		for _, c := range win.cands {
			done = done && c.hopeless
		}
		if done {
			break
		}
		for i := range win.cands {
			if win.cands[i].pending {
				win.cands[i] = win.best(win.bounds[i], win.bounds[i+1])
				win.cands[i].hopeless = true
			}
		}
	}
	out = append(out, win.bounds[1:len(win.bounds)-1]...)
	return out
}

// lazyBest returns best(s, e), or, for an interval where no split can
// pass the t-test at pmax, a pending candidate marked hopeless. An interval
// too short for a split or for a p-value below 1 (fewer than 3 points) is
// hopeless without a check.
func (win *window) lazyBest(s, e int, pmax float64) candidate {
	if e-s < 2*win.minSeg || e-s < 3 || win.hopeless(win.xs[s:e], win.minSeg, pmax) {
		return candidate{tau: -1, hopeless: true, pending: true}
	}
	return win.best(s, e)
}

// hopeless reports whether no split of the window xs (with segments of
// minSeg points) can pass split's t-test at pmax: then split would find
// nothing, whichever τ best returned, and splitPass neither searches the
// window nor builds its tables (most windows hold no change). It bounds
// the t statistic at every τ best may return (minSeg points on each side)
// from prefix sums of the window, which give it to a relative precision
// of 10⁻⁷ or better under the conditions it checks (a t-test denominator
// and a pooled sum of squares large enough against the rounding errors of
// its running sums, which hold unless the noise is tiny against the values'
// magnitude or against the window's steps), and answers true only when
// every |t| is below the critical value tc of the L−2 degrees of freedom
// by a relative margin of 10⁻⁵: far beyond both that precision and the
// rounding of the t statistic that split tests (describe2, otavaT), and of
// its p-value. Otherwise it answers false and the search runs as before.
// It uses the window's buffers only.
func (win *window) hopeless(xs []float64, minSeg int, pmax float64) bool {
	L := len(xs)
	m := max(minSeg, 1)
	if L < 2*m || L < 3 {
		return false
	}
	win.sizeInv(L)
	df := L - 2
	tc := win.critical(df, pmax)
	if tc <= 0 {
		return false
	}
	lim := tc * (1 - 1e-5)
	// The sums of the window about its first value, and a bound on the
	// magnitude of its values: |x₀| + √b ≥ max |x|.
	x0 := xs[0]
	var a, b float64
	for _, x := range xs {
		y := x - x0
		a += y
		b += y * y
	}
	scale := math.Abs(x0) + math.Sqrt(b)
	if !(scale < 1e100) {
		return false // far from overflow below, and not NaN
	}
	// The rounding errors of the prefix sums (L additions each) bound the
	// error of a difference of means by 4L²·u·scale, and that of a sum of
	// squares about a mean by 3L²·u·b (b bounds (Σ|x−x₀|)²/L): with the
	// denominator and the pooled sum of squares above these minimums,
	// each moves t by at most 10⁻⁷ of tc.
	const u = 0x1p-53
	l2u := float64(L) * float64(L) * u
	minDen := 4e7 * l2u * scale / tc
	minDen2 := minDen * minDen
	minSS := 6e7 * l2u * b
	// diff² < lim²·den2, den2 = ss·(1/n1 + 1/n2)/df.
	k := lim * lim / float64(df)
	minDen2 *= float64(df)
	inv := win.inv
	var s1a, s2a float64 // the sums of xs[:τ]
	for _, x := range xs[:m] {
		y := x - x0
		s1a += y
		s2a += y * y
	}
	for tau := m; tau <= L-m; tau++ {
		n1, n2 := tau, L-tau
		i1, i2 := inv[n1], inv[n2]
		s1b, s2b := a-s1a, b-s2a
		ma, mb := s1a*i1, s1b*i2
		ssa := s2a - s1a*ma // sums of squares about the means
		ssb := s2b - s1b*mb
		ss := float64(n1-1)*ssa*i1 + float64(n2-1)*ssb*i2
		den2 := ss * (i1 + i2) // ×df
		diff := ma - mb
		if !(den2 >= minDen2) || !(ss >= minSS) || !(diff*diff < k*den2) {
			return false
		}
		y := xs[tau] - x0
		s1a += y
		s2a += y * y
	}
	return true
}

// critical returns a |t| whose two-sided p-value at df degrees of freedom
// (studentP) is above pmax, within a relative 10⁻¹² of the largest such,
// or 0 when there is none below 2²⁰. The values are kept by the window and
// shared between windows (critCache).
func (win *window) critical(df int, pmax float64) float64 {
	if win.critP != pmax {
		win.critP, win.crit = pmax, win.crit[:0]
	}
	for len(win.crit) <= df {
		win.crit = append(win.crit, -1)
	}
	if c := win.crit[df]; c >= 0 {
		return c
	}
	key := critKey{df, pmax}
	if c, ok := critCache.Load(key); ok {
		win.crit[df] = c.(float64)
		return win.crit[df]
	}
	c := criticalT(float64(df), pmax)
	critCache.Store(key, c)
	win.crit[df] = c
	return c
}

type critKey struct {
	df   int
	pmax float64
}

// critCache holds criticalT by degrees of freedom and level.
var critCache sync.Map

// criticalT returns the largest |t| found by bisection whose p-value at df
// degrees of freedom is above pmax, or 0 when p(2²⁰) is still above it.
func criticalT(df, pmax float64) float64 {
	lo, hi := 0.0, 1.0
	for !(studentP(hi, df) <= pmax) {
		if hi >= 1e6 {
			return 0
		}
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1e-12*hi {
		mid := lo + (hi-lo)/2
		if studentP(mid, df) <= pmax {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo
}
