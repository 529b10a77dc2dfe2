package stats

import (
	"math"
	"testing"
)

func TestBetaIncReg(t *testing.T) {
	tests := []struct{ x, a, b, want float64 }{
		{0.3, 2, 3, 0.34829999999999994},
		{0.9, 0.5, 0.5, 0.7951672353008665},
		{0.01, 10, 0.5, 1.770034965528571e-21},
		{0.999, 50, 0.5, 0.7523690199653766},
		{0.5, 200, 0.5, 3.50010248932063e-62},
		{0, 2, 3, 0},
		{1, 2, 3, 1},
	}
	for _, tc := range tests {
		got := RegIncBeta(tc.x, tc.a, tc.b)
		if relErr(got, tc.want) > 1e-10 {
			t.Errorf("RegIncBeta(%v, %v, %v) = %v, want %v", tc.x, tc.a, tc.b, got, tc.want)
		}
	}
}

func TestQuantiles(t *testing.T) {
	tests := []struct {
		name      string
		got, want float64
	}{
		{"t 0.99 df3", StudentQuantile(0.99, 3), 4.540702858471383},
		{"t 0.95 df10", StudentQuantile(0.95, 10), 1.8124611228107335},
		{"t 0.975 df1", StudentQuantile(0.975, 1), 12.706204736432095},
		{"t 0.01 df5", StudentQuantile(0.01, 5), -3.3649299989072756},
		{"z 0.99", NormalQuantile(0.99), 2.3263478740408408},
	}
	for _, tc := range tests {
		if relErr(tc.got, tc.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

// TestQuantile checks the type-7 sample quantile against values numpy's
// default method (np.quantile(x, q)) gives for the same data.
func TestQuantile(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name   string
		sorted []float64
		q      float64
		want   float64
	}{
		{"median of even count is the middle mean", []float64{1, 2, 3, 4}, 0.5, 2.5},
		{"median of odd count", []float64{1, 2, 9}, 0.5, 2},
		{"p5 interpolates", []float64{10, 20, 30, 40, 50}, 0.05, 12},
		{"p95 interpolates", []float64{10, 20, 30, 40, 50}, 0.95, 48},
		{"q1", []float64{1, 2, 3, 4, 5, 6, 7, 8}, 0.25, 2.75},
		{"q3", []float64{1, 2, 3, 4, 5, 6, 7, 8}, 0.75, 6.25},
		{"q 0 is the minimum", []float64{-3, 0, 8}, 0, -3},
		{"q 1 is the maximum", []float64{-3, 0, 8}, 1, 8},
		{"one value", []float64{7}, 0.3, 7},
		{"exact rank next to inf stays finite", []float64{1, 2, inf}, 0.5, 2},
		{"empty is NaN", nil, 0.5, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Quantile(tt.sorted, tt.q)
			if math.IsNaN(tt.want) != math.IsNaN(got) || !math.IsNaN(got) && math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Quantile(%v, %v) = %v, want %v", tt.sorted, tt.q, got, tt.want)
			}
		})
	}
}
