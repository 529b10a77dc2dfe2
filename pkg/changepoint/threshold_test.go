package changepoint

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCheckThreshold(t *testing.T) {
	// Baseline mean 100, sample stddev √6.5 ≈ 2.55.
	base := []float64{98, 102, 100, 97, 103}
	inf := math.Inf(1)
	tests := []struct {
		name     string
		baseline []float64
		value    float64
		opts     ThresholdOptions
		want     ThresholdResult
	}{
		{
			name: "percentage drop alerts", baseline: base, value: 94,
			opts: ThresholdOptions{Test: Percentage, Lower: 0.05},
			want: ThresholdResult{Value: 94, Center: 100, LowerLimit: 95, UpperLimit: inf, Samples: 5, Alert: true},
		},
		{
			name: "percentage within", baseline: base, value: 96,
			opts: ThresholdOptions{Test: Percentage, Lower: 0.05, Upper: 0.05},
			want: ThresholdResult{Value: 96, Center: 100, LowerLimit: 95, UpperLimit: 105, Samples: 5},
		},
		{
			name: "z-score 0.99", baseline: base, value: 93,
			opts: ThresholdOptions{Test: ZScore, Lower: 0.99},
			// 100 − Φ⁻¹(0.99)·√6.5 ≈ 94.07
			want: ThresholdResult{Value: 93, Center: 100, LowerLimit: 100 - 2.3263478740408408*math.Sqrt(6.5), UpperLimit: inf, Samples: 5, Alert: true},
		},
		{
			name: "t-test 0.99 is wider than z for 5 samples", baseline: base, value: 93,
			opts: ThresholdOptions{Test: TTest, Lower: 0.99},
			// 100 − t⁻¹(0.99; 4 df)·√6.5 ≈ 90.45
			want: ThresholdResult{Value: 93, Center: 100, LowerLimit: 100 - 3.7469473879811366*math.Sqrt(6.5), UpperLimit: inf, Samples: 5},
		},
		{
			name: "iqr upper (latency)", baseline: base, value: 107,
			opts: ThresholdOptions{Test: IQR, Upper: 1.5},
			// quartiles 98 and 102, median 100: 100 + 1.5·4
			want: ThresholdResult{Value: 107, Center: 100, LowerLimit: -inf, UpperLimit: 106, Samples: 5, Alert: true},
		},
		{
			name: "window keeps the newest", baseline: []float64{10, 10, 100, 100}, value: 100,
			opts: ThresholdOptions{Test: Percentage, Lower: 0.05, Window: 2},
			want: ThresholdResult{Value: 100, Center: 100, LowerLimit: 95, UpperLimit: inf, Samples: 2},
		},
		{
			name: "too few samples", baseline: []float64{100}, value: 1,
			opts: ThresholdOptions{Test: ZScore, Lower: 0.99},
			want: ThresholdResult{Value: 1, LowerLimit: -inf, UpperLimit: inf, Samples: 1, Skipped: true},
		},
		{
			name: "empty baseline", baseline: nil, value: 1,
			opts: ThresholdOptions{Test: Percentage, Lower: 0.1},
			want: ThresholdResult{Value: 1, LowerLimit: -inf, UpperLimit: inf, Skipped: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckThreshold(tc.baseline, tc.value, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestThresholdOptionsValidate(t *testing.T) {
	tests := []struct {
		name      string
		opts      ThresholdOptions
		wantField string
	}{
		{"no test", ThresholdOptions{Lower: 0.1}, "Test"},
		{"unknown test", ThresholdOptions{Test: "median", Lower: 0.1}, "Test"},
		{"no boundary", ThresholdOptions{Test: Percentage}, "Lower and ThresholdOptions.Upper"},
		{"negative lower", ThresholdOptions{Test: Percentage, Lower: -1}, "Lower"},
		{"NaN upper", ThresholdOptions{Test: IQR, Upper: math.NaN()}, "Upper"},
		{"z boundary not a confidence", ThresholdOptions{Test: ZScore, Upper: 2}, "Upper"},
		{"t boundary below 0.5", ThresholdOptions{Test: TTest, Lower: 0.3}, "Lower"},
		{"negative window", ThresholdOptions{Test: IQR, Lower: 1, Window: -1}, "Window"},
		{"negative min samples", ThresholdOptions{Test: IQR, Lower: 1, MinSamples: -2}, "MinSamples"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckThreshold([]float64{1, 2, 3}, 2, tc.opts)
			if err == nil || !strings.Contains(err.Error(), "ThresholdOptions."+tc.wantField) {
				t.Errorf("err = %v, want it to name ThresholdOptions.%s", err, tc.wantField)
			}
		})
	}
	if _, err := CheckThreshold([]float64{1, math.NaN()}, 2, ThresholdOptions{Test: IQR, Lower: 1}); err == nil ||
		!strings.Contains(err.Error(), "baseline") {
		t.Errorf("NaN baseline: err = %v", err)
	}
	if _, err := CheckThreshold([]float64{1, 2}, math.Inf(1), ThresholdOptions{Test: IQR, Lower: 1}); err == nil {
		t.Errorf("Inf value accepted")
	}
}
