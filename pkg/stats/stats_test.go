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
