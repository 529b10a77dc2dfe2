package stats

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// The functions here are checked against gonum's independent
// implementations over a grid that covers what the reports and the
// change-point detection ask for: few degrees of freedom (3 to 10 repeats),
// tail probabilities down to 1e-6, and large t.

var dfs = []float64{1, 2, 3, 4.5, 9, 29, 120, 1000}

func TestRegIncBetaMatchesGonum(t *testing.T) {
	for _, a := range []float64{0.5, 1, 2.5, 10, 60} {
		for _, b := range []float64{0.5, 1, 3, 40} {
			for _, x := range []float64{0, 1e-6, 0.01, 0.2, 0.5, 0.8, 0.99, 1 - 1e-6, 1} {
				got, want := RegIncBeta(x, a, b), mathext.RegIncBeta(a, b, x)
				if !approx(got, want, 1e-10, 1e-300) {
					t.Errorf("RegIncBeta(%v, %v, %v) = %v, gonum %v", x, a, b, got, want)
				}
			}
		}
	}
}

func TestStudentMatchesGonum(t *testing.T) {
	for _, df := range dfs {
		dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
		for _, x := range []float64{-40, -6.3, -2.1, -1, -0.01, 0, 0.3, 1.96, 4.5, 12.7, 300} {
			if got, want := StudentCDF(x, df), dist.CDF(x); !approx(got, want, 1e-9, 1e-15) {
				t.Errorf("StudentCDF(%v, df %v) = %v, gonum %v", x, df, got, want)
			}
			want := 2 * dist.Survival(math.Abs(x))
			if got := StudentTwoSidedP(x, df); !approx(got, want, 1e-9, 1e-15) {
				t.Errorf("StudentTwoSidedP(%v, df %v) = %v, gonum %v", x, df, got, want)
			}
		}
		for _, p := range []float64{1e-6, 0.001, 0.025, 0.05, 0.3, 0.5, 0.8, 0.95, 0.975, 0.995, 1 - 1e-6} {
			if got, want := StudentQuantile(p, df), dist.Quantile(p); !approx(got, want, 1e-8, 1e-12) {
				t.Errorf("StudentQuantile(%v, df %v) = %v, gonum %v", p, df, got, want)
			}
		}
	}
}

func TestNormalQuantileMatchesGonum(t *testing.T) {
	for _, p := range []float64{1e-9, 1e-4, 0.01, 0.025, 0.2, 0.5, 0.7, 0.9, 0.975, 0.999, 1 - 1e-9} {
		if got, want := NormalQuantile(p), distuv.UnitNormal.Quantile(p); !approx(got, want, 1e-9, 1e-12) {
			t.Errorf("NormalQuantile(%v) = %v, gonum %v", p, got, want)
		}
	}
}

// approx reports whether got is within rel of want, or within abs of it for
// values near zero.
func approx(got, want, rel, abs float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) && math.IsNaN(want)
	}
	d := math.Abs(got - want)
	return d <= abs || d <= rel*math.Abs(want)
}
