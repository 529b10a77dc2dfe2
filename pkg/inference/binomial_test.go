package inference

import (
	"errors"
	"math"
	"testing"
)

// TestClopperPearson checks the exact interval against closed forms (k = 0:
// high = 1 − (tail)^(1/n); k = n: low = tail^(1/n)) and published values
// (R's binom.test), and that it refuses impossible counts.
func TestClopperPearson(t *testing.T) {
	tests := []struct {
		k, n      int
		level     float64
		low, high float64
	}{
		{0, 20, 0.95, 0, 1 - math.Pow(0.025, 1.0/20)}, // 0.1684
		{20, 20, 0.95, math.Pow(0.025, 1.0/20), 1},    // 0.8316
		{1, 20, 0.95, 0.001265, 0.248733},             // binom.test(1, 20)
		{3, 20, 0.95, 0.032071, 0.378927},             // binom.test(3, 20)
		{5, 10, 0.95, 0.187086, 0.812914},             // binom.test(5, 10)
		{0, 60, 0.95, 0, 1 - math.Pow(0.025, 1.0/60)}, // 0.0596
		{2, 40, 0.90, 0.008957, 0.149152},             // exact binomial tails: P(X >= 2) = P(X <= 2) = 0.05
	}
	for _, tt := range tests {
		lo, hi, err := ClopperPearson(tt.k, tt.n, tt.level)
		if err != nil {
			t.Fatalf("%d/%d: %v", tt.k, tt.n, err)
		}
		if math.Abs(lo-tt.low) > 2e-6 || math.Abs(hi-tt.high) > 2e-6 {
			t.Errorf("%d/%d at %g: [%.6f, %.6f], want [%.6f, %.6f]", tt.k, tt.n, tt.level, lo, hi, tt.low, tt.high)
		}
	}
	for _, bad := range [][2]int{{-1, 10}, {11, 10}, {0, 0}} {
		if _, _, err := ClopperPearson(bad[0], bad[1], 0.95); !errors.Is(err, ErrInvalid) {
			t.Errorf("%d/%d: err %v, want ErrInvalid", bad[0], bad[1], err)
		}
	}
	if _, _, err := ClopperPearson(1, 10, 1.5); err == nil {
		t.Error("level 1.5 accepted")
	}
}
