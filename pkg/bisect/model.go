package bisect

import (
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dbbench/dbbench/pkg/analysis"
)

// cellScore is one cell's score (Key.score) of one key, with the point
// and the round (block) it was measured in.
type cellScore struct {
	point, round int
	y            float64
}

// additive is the least-squares fit of the model
//
//	y = μ[point] + β[round] + ε,  ε ~ N(0, σ²) independent,
//
// on the log scale of a rate (Key.score): every build has a level, every
// round a shift that all builds measured in it share (the slot: machine
// load, node, time of day), and the cells of a build in a round scatter
// around the sum with one variance for all builds and rounds. Contrasts
// between builds are then within-round comparisons pooled over rounds: a
// shift of the whole environment between rounds cancels out.
//
// Only the points and rounds connected to the anchor point through shared
// rounds enter (a round none of whose points was measured elsewhere says
// nothing about levels); the first of those rounds is the reference
// (β = 0).
type additive struct {
	ok     bool
	col    map[int]int // point → column of μ
	rcol   map[int]int // round → column of β (absent: the reference round)
	inv    *mat.Dense  // (XᵀX)⁻¹
	coef   []float64
	sigma2 float64
	df     int
	// sum and n are the scores' sum and count per point and per
	// (point, round): the within-round means the interaction check uses.
	n map[[2]int]int
	s map[[2]int]float64
}

// fitAdditive fits the model to the cells connected to anchor.
func fitAdditive(cells []cellScore, anchor int) additive {
	f := additive{col: map[int]int{}, rcol: map[int]int{}, n: map[[2]int]int{}, s: map[[2]int]float64{}}
	// The connected component of the anchor in the point–round graph.
	pointsOf := map[int][]int{}
	roundsOf := map[int][]int{}
	for _, c := range cells {
		pointsOf[c.round] = append(pointsOf[c.round], c.point)
		roundsOf[c.point] = append(roundsOf[c.point], c.round)
	}
	inPoint, inRound := map[int]bool{anchor: true}, map[int]bool{}
	queue := []int{anchor}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, r := range roundsOf[p] {
			if inRound[r] {
				continue
			}
			inRound[r] = true
			for _, q := range pointsOf[r] {
				if !inPoint[q] {
					inPoint[q] = true
					queue = append(queue, q)
				}
			}
		}
	}
	var use []cellScore
	refRound := math.MaxInt
	for _, c := range cells {
		if inPoint[c.point] && inRound[c.round] {
			use = append(use, c)
			refRound = min(refRound, c.round)
		}
	}
	if len(use) == 0 {
		return f
	}
	for _, c := range use {
		if _, ok := f.col[c.point]; !ok {
			f.col[c.point] = -1
		}
		if _, ok := f.rcol[c.round]; !ok && c.round != refRound {
			f.rcol[c.round] = -1
		}
		k := [2]int{c.point, c.round}
		f.n[k]++
		f.s[k] += c.y
	}
	// Columns in a stable order: points, then rounds, ascending.
	nc := 0
	for _, p := range sortedKeys(f.col) {
		f.col[p] = nc
		nc++
	}
	for _, r := range sortedKeys(f.rcol) {
		f.rcol[r] = nc
		nc++
	}
	xtx := mat.NewSymDense(nc, nil)
	xty := mat.NewVecDense(nc, nil)
	row := make([]int, 0, 2)
	for _, c := range use {
		row = append(row[:0], f.col[c.point])
		if j, ok := f.rcol[c.round]; ok {
			row = append(row, j)
		}
		for _, a := range row {
			xty.SetVec(a, xty.AtVec(a)+c.y)
			for _, b := range row {
				if a <= b {
					xtx.SetSym(a, b, xtx.At(a, b)+1)
				}
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(xtx) {
		return f
	}
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		return f
	}
	f.inv = mat.DenseCopyOf(&inv)
	var coef mat.VecDense
	if err := ch.SolveVecTo(&coef, xty); err != nil {
		return f
	}
	f.coef = make([]float64, nc)
	for i := range f.coef {
		f.coef[i] = coef.AtVec(i)
	}
	rss := 0.0
	for _, c := range use {
		fit := f.coef[f.col[c.point]]
		if j, ok := f.rcol[c.round]; ok {
			fit += f.coef[j]
		}
		rss += (c.y - fit) * (c.y - fit)
	}
	f.df = len(use) - nc
	if f.df > 0 {
		f.sigma2 = rss / float64(f.df)
	}
	f.ok = true
	return f
}

// has reports whether point p is in the fit.
func (f additive) has(p int) bool {
	_, ok := f.col[p]
	return f.ok && ok
}

// contrast is μ[b] − μ[a] with its standard error (σ̂ times the norm of
// the contrast under (XᵀX)⁻¹) and df; ok is false when a point is not in
// the fit.
func (f additive) contrast(a, b int) (d, se float64, df int, ok bool) {
	if !f.has(a) || !f.has(b) {
		return math.NaN(), math.NaN(), 0, false
	}
	i, j := f.col[a], f.col[b]
	d = f.coef[j] - f.coef[i]
	v := f.inv.At(i, i) + f.inv.At(j, j) - 2*f.inv.At(i, j)
	return d, math.Sqrt(f.sigma2 * math.Max(v, 0)), f.df, true
}

// shift is round r's β (the shift of every build measured in it against
// the reference round) with its standard error; ok is false for the
// reference round and rounds not in the fit.
func (f additive) shift(r int) (d, se float64, ok bool) {
	j, in := f.rcol[r]
	if !f.ok || !in {
		return 0, 0, false
	}
	return f.coef[j], math.Sqrt(f.sigma2 * f.inv.At(j, j)), true
}

// changeOf is the change in metric m's own terms, 100 × (b/a − 1), of a
// score contrast d = score(b) − score(a).
func changeOf(m analysis.Metric, d float64) float64 {
	if m.LowerIsBetter() {
		d = -d
	}
	return 100 * math.Expm1(d)
}

func sortedKeys(m map[int]int) []int { return slices.Sorted(maps.Keys(m)) }

// level is μ[p], point p's level in the reference round (NaN when p is
// not in the fit).
func (f additive) level(p int) float64 {
	if !f.has(p) {
		return math.NaN()
	}
	return f.coef[f.col[p]]
}

// weighted is Σ w[p]·μ[p] with its variance σ²·wᵀ(XᵀX)⁻¹w (points not in
// the fit count as 0).
func (f additive) weighted(w map[int]float64) (d, variance float64) {
	for p, wp := range w {
		if f.has(p) {
			d += wp * f.coef[f.col[p]]
		}
	}
	for p, wp := range w {
		for q, wq := range w {
			if f.has(p) && f.has(q) {
				variance += wp * wq * f.inv.At(f.col[p], f.col[q])
			}
		}
	}
	return d, f.sigma2 * variance
}
