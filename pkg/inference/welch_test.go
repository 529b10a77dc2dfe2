package inference

import (
	"math"
	"testing"

	"github.com/dbbench/dbbench/pkg/stats"
)

func TestWelch(t *testing.T) {
	// Reference: t = 2.25144, df = 5.52079, p = 0.0691336 (computed by
	// numerical integration of Student's t density).
	w, err := WelchTTest([]float64{1, 2, 3, 4}, []float64{2, 4, 6, 8, 10})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(w.T-2.2514363) > 1e-6 || math.Abs(w.DF-5.5207877) > 1e-6 || math.Abs(w.P-0.0691336) > 1e-6 {
		t.Errorf("welch %+v", w)
	}
	if q := stats.StudentQuantile(0.975, 2); math.Abs(q-4.302653) > 1e-5 {
		t.Errorf("t quantile %v", q)
	}
	if _, err := WelchTTest([]float64{1}, []float64{1, 2}); err == nil {
		t.Error("n=1 accepted")
	}
}
