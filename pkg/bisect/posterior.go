package bisect

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// posterior is the probability, for each point c, that c is the first
// bad build, given the cells' scores of one key: out[c] for c in
// 1..npoints−1 (out[0] is 0: the good endpoint is good by definition).
//
// Model: one change. Builds before c share a level a, builds from c on a
// level b; each round (block) shifts every build measured in it by β;
// the scores of cells scatter around level + shift with one unknown
// variance σ², normally and independently. With flat priors on a, b and
// the shifts, p(σ) ∝ 1/σ, and every c equally likely a priori, the
// marginal likelihood of c is ∝ |XᵀX|^(−1/2) · RSS^(−(N−k)/2), X the design
// of (a, b, shifts) under c (k columns, the same count for every c) and
// RSS its least-squares residual sum (Bayesian linear regression; the
// normalising constants are the same for every c and cancel). A build
// that was never measured (untested, failed) leaves the likelihood
// unchanged, so its probability is shared with its neighbour: the
// posterior cannot name a build nobody measured.
//
// It returns nil when the model cannot be fitted for some c (too few
// cells for the parameters, a design that does not identify them).
func posterior(cells []cellScore, npoints int) []float64 {
	if npoints < 2 || len(cells) == 0 {
		return nil
	}
	// Centred scores keep RSS = yᵀy − ŷᵀy free of cancellation.
	var centre float64
	for _, c := range cells {
		centre += c.y / float64(len(cells))
	}
	rounds := map[int]int{}
	ref := math.MaxInt
	for _, c := range cells {
		ref = min(ref, c.round)
	}
	for _, c := range cells {
		if _, ok := rounds[c.round]; !ok && c.round != ref {
			rounds[c.round] = -1
		}
	}
	k := 2
	for _, r := range sortedKeys(rounds) {
		rounds[r] = k
		k++
	}
	nu := len(cells) - k
	if nu <= 0 {
		return nil
	}
	logL := make([]float64, npoints)
	logL[0] = math.Inf(-1)
	row := make([]int, 0, 2)
	for c := 1; c < npoints; c++ {
		xtx := mat.NewSymDense(k, nil)
		xty := mat.NewVecDense(k, nil)
		var yy float64
		for _, cell := range cells {
			row = row[:0]
			if cell.point < c {
				row = append(row, 0)
			} else {
				row = append(row, 1)
			}
			if j, ok := rounds[cell.round]; ok {
				row = append(row, j)
			}
			y := cell.y - centre
			yy += y * y
			for _, a := range row {
				xty.SetVec(a, xty.AtVec(a)+y)
				for _, b := range row {
					if a <= b {
						xtx.SetSym(a, b, xtx.At(a, b)+1)
					}
				}
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(xtx) {
			return nil
		}
		var coef mat.VecDense
		if err := ch.SolveVecTo(&coef, xty); err != nil {
			return nil
		}
		// RSS = yᵀy − ŷᵀXᵀy for the least-squares coefficients.
		rss := yy - mat.Dot(&coef, xty)
		if !(rss > 0) {
			// A perfect fit: no noise to weigh the models by.
			return nil
		}
		logL[c] = -0.5*ch.LogDet() - 0.5*float64(nu)*math.Log(rss)
	}
	top := math.Inf(-1)
	for _, l := range logL {
		top = max(top, l)
	}
	out := make([]float64, npoints)
	sum := 0.0
	for c, l := range logL {
		out[c] = math.Exp(l - top)
		sum += out[c]
	}
	for c := range out {
		out[c] /= sum
	}
	return out
}
