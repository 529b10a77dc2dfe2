package changepoint

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestHopelessNeverSkipsASplit: whenever hopeless lets split skip a
// window, the search would have found nothing there: the best candidate's
// t-test does not pass. The windows are built around the critical t, with
// steps and slopes of every size, offsets, constant runs, ties and
// outliers, so that many are decided by a hair.
func TestHopelessNeverSkipsASplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 41))
	var win window
	skipped, near := 0, 0
	for trial := range 20000 {
		L := 3 + rng.IntN(70)
		if trial%10 == 0 {
			L = 3 + rng.IntN(400)
		}
		minSeg := 1 + rng.IntN(4)
		pmax := []float64{0.01, 0.001, 0.05, 0.5}[rng.IntN(4)]
		base := []float64{0, 1, 1000, 1e6, 1e12, -50}[rng.IntN(6)]
		noise := math.Abs(base) * []float64{0.01, 1e-4, 1e-7, 1e-12, 0}[rng.IntN(5)]
		if noise == 0 && rng.IntN(2) == 0 {
			noise = 1
		}
		tau := 1 + rng.IntN(L-1)
		step := noise * 6 * rng.Float64() / math.Sqrt(float64(L)) * 2
		slope := 0.0
		if rng.IntN(4) == 0 {
			slope = noise * rng.NormFloat64() / float64(L)
		}
		xs := make([]float64, L)
		for i := range xs {
			xs[i] = base + noise*rng.NormFloat64() + slope*float64(i)
			if i >= tau {
				xs[i] += step
			}
			if trial%7 == 0 {
				xs[i] = math.Round(xs[i])
			}
		}
		switch rng.IntN(10) {
		case 0:
			xs[rng.IntN(L)] *= 1.3
		case 1:
			xs[rng.IntN(L)] += 1e4 * noise // a spike far above the noise
		}
		win.reset(xs, minSeg)
		hopeless := win.hopeless(xs, minSeg, pmax)
		c := win.best(0, L)
		if c.tau < 0 {
			continue
		}
		before, after := describe2(xs[:c.tau], xs[c.tau:])
		p := otavaTTest(before, after)
		if hopeless {
			// Every τ the search may return, not only the best one, has
			// |t| below the critical value by most of the margin.
			tc := criticalT(float64(L-2), pmax)
			for tau := minSeg; tau <= L-minSeg; tau++ {
				before, after := describe2(xs[:tau], xs[tau:])
				tt, _, p, done := otavaT(before, after)
				if (done && p <= pmax) || (!done && math.Abs(tt) >= tc*(1-0.9e-5)) {
					t.Fatalf("trial %d: hopeless, but at %d t = %v (critical %v), p %v, done %v", trial, tau, tt, tc, p, done)
				}
			}
			skipped++
			if p <= pmax {
				t.Fatalf("trial %d: hopeless, but the best split at %d has p = %v ≤ %v (L %d, minSeg %d): %v", trial, c.tau, p, pmax, L, minSeg, xs)
			}
			if p < 1.5*pmax {
				near++
			}
		}
	}
	t.Logf("%d windows skipped, %d of them with p < 1.5×level", skipped, near)
	if skipped < 2000 || near < 50 {
		t.Errorf("only %d windows skipped, %d of them near the level: the test tests little", skipped, near)
	}
}

// TestCriticalT: the critical |t| has a p-value above the level, and one
// 10⁻⁹ larger has not.
func TestCriticalT(t *testing.T) {
	for _, df := range []float64{1, 2, 3, 10, 48, 200} {
		for _, pmax := range []float64{0.5, 0.05, 0.01, 0.001, 1e-6} {
			c := criticalT(df, pmax)
			if c == 0 && studentP(1<<20, df) > pmax {
				continue // none below 2²⁰
			}
			if c <= 0 || !(studentP(c, df) > pmax) || studentP(c*(1+1e-9), df) > pmax {
				t.Errorf("criticalT(%v, %v) = %v: p %v, p just above %v", df, pmax, c, studentP(c, df), studentP(c*(1+1e-9), df))
			}
		}
	}
}

// splitEager is split without hopeless: every interval's best split is
// computed, as before hopeless existed.
func splitEager(win *window, pmax float64) []int {
	L := len(win.xs)
	bounds := []int{0, L}
	cands := []candidate{win.best(0, L)}
	for {
		bi := -1
		for i, c := range cands {
			if c.tau >= 0 && (bi < 0 || c.q > cands[bi].q) {
				bi = i
			}
		}
		if bi < 0 {
			break
		}
		s, e, tau := bounds[bi], bounds[bi+1], cands[bi].tau
		if before, after := describe2(win.xs[s:tau], win.xs[tau:e]); !(otavaTTest(before, after) <= pmax) {
			break
		}
		bounds = append(bounds[:bi+1], append([]int{tau}, bounds[bi+1:]...)...)
		cands = append(cands[:bi], append([]candidate{win.best(s, tau), win.best(tau, e)}, cands[bi+1:]...)...)
	}
	return bounds[1 : len(bounds)-1]
}

// TestSplitMatchesEager: split, which skips the search of hopeless
// intervals, finds the change points of the eager search, in windows with
// several steps of every size near the significance level.
func TestSplitMatchesEager(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var win window
	multi := 0
	for trial := range 3000 {
		L := 6 + rng.IntN(120)
		minSeg := 1 + rng.IntN(4)
		pmax := []float64{0.01, 0.001, 0.05}[rng.IntN(3)]
		xs := make([]float64, L)
		level := 1000.0
		for i := range xs {
			if rng.IntN(15) == 0 {
				level += 10 * rng.NormFloat64()
			}
			xs[i] = level + 10*rng.NormFloat64()
			if trial%5 == 0 {
				xs[i] = math.Round(xs[i] / 10)
			}
		}
		win.reset(xs, minSeg)
		got := win.split(pmax, nil)
		want := splitEager(&win, pmax)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d (L %d, minSeg %d, pmax %v): split %v, eager %v", trial, L, minSeg, pmax, got, want)
		}
		if len(want) >= 2 {
			multi++
		}
	}
	if multi < 300 {
		t.Errorf("only %d windows with two change points or more: the test tests little", multi)
	}
}
