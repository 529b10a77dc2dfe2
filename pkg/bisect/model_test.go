package bisect

import (
	"math"
	"math/rand"
	"testing"
)

// A shift of the whole environment between rounds does not enter a
// contrast: point 2, measured only in a round where everything ran 5×
// faster, is compared with the references of its own round.
func TestAdditiveContrastIsWithinRounds(t *testing.T) {
	var cells []cellScore
	add := func(point, round int, qps ...float64) {
		for _, q := range qps {
			cells = append(cells, cellScore{point: point, round: round, y: math.Log(q)})
		}
	}
	add(0, 0, 1000, 1010, 990)
	add(3, 0, 800, 810, 790)
	add(0, 1, 5000, 5050, 4950)
	add(3, 1, 4000, 4040, 3960)
	add(2, 1, 5020, 4980)
	f := fitAdditive(cells, 0)
	d, se, df, ok := f.contrast(0, 2)
	// 14 cells, 4 parameters (3 levels, 1 round shift).
	if !ok || df != 14-4 {
		t.Fatalf("contrast ok %v df %d, want a fit with 10 df", ok, df)
	}
	if math.Abs(math.Exp(d)-1) > 0.01 || !(se > 0 && se < 0.02) {
		t.Fatalf("point 2 over 0: %.4f ± %.4f, want 1.00 within its round", math.Exp(d), se)
	}
	shift, _, ok := f.shift(1)
	if !ok || math.Abs(math.Exp(shift)-5) > 0.05 {
		t.Fatalf("round 1's shift %.3f, want 5×", math.Exp(shift))
	}
	// A round none of whose points was measured elsewhere says nothing.
	add(5, 2, 100, 101)
	if f := fitAdditive(cells, 0); f.has(5) {
		t.Fatal("point 5, alone in its round, entered the fit")
	}
}

func TestPosterior(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const n = 8 // points 0..7, first bad 4
	var cells []cellScore
	measure := func(point, round, repeats int, shift float64) {
		for i := 0; i < repeats; i++ {
			y := math.Log(1000) + shift + 0.05*rng.NormFloat64()
			if point >= 4 {
				y += math.Log(0.8)
			}
			cells = append(cells, cellScore{point: point, round: round, y: y})
		}
	}
	measure(0, 0, 3, 0)
	measure(7, 0, 3, 0)
	for _, p := range []int{0, 3, 4, 7} {
		measure(p, 1, 3, math.Log(3))
	}
	post := posterior(cells, n)
	if post == nil {
		t.Fatal("no posterior")
	}
	sum := 0.0
	for _, p := range post {
		sum += p
	}
	if math.Abs(sum-1) > 1e-9 || post[0] != 0 {
		t.Fatalf("posterior %v: want a distribution with nothing on the good point", post)
	}
	if post[4] < 0.99 {
		t.Fatalf("P(first bad = 4) = %.3f, want ≥ 0.99 (posterior %v)", post[4], post)
	}
	// Without point 3 the posterior cannot tell 1, 2, 3 and 4 apart.
	var no3 []cellScore
	for _, c := range cells {
		if c.point != 3 {
			no3 = append(no3, c)
		}
	}
	post = posterior(no3, n)
	for c := 1; c <= 4; c++ {
		if math.Abs(post[c]-post[1]) > 1e-12 || post[c] < 0.24 {
			t.Fatalf("without point 3, P(%d) = %.4f, want about 1/4 each for 1..4 (%v)", c, post[c], post)
		}
	}
	if posterior(cells[:3], n) != nil {
		t.Fatal("a posterior from one point's cells")
	}
}
