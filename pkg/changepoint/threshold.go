package changepoint

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/dbbench/dbbench/pkg/stats"
)

// Threshold tests are the simple alternative to E-divisive for suites with
// few runs, modelled on Bencher's thresholds: the newest value is compared
// with limits computed from a baseline window of earlier values. A lower
// limit catches drops (throughput); an upper limit catches rises (latency).

// ThresholdTest selects how limits are computed from the baseline.
type ThresholdTest string

const (
	// Percentage: limits are mean·(1 − Lower) and mean·(1 + Upper); Lower and
	// Upper are fractions (0.05 = 5 %).
	Percentage ThresholdTest = "percentage"
	// ZScore: limits are mean ∓ z·stddev with z = Φ⁻¹(boundary); Lower and Upper
	// are one-sided confidence levels in [0.5, 1), e.g. 0.99.
	ZScore ThresholdTest = "z_score"
	// TTest: like ZScore with the Student's t quantile for len(baseline)−1
	// degrees of freedom, better for small baselines.
	TTest ThresholdTest = "t_test"
	// IQR: limits are median ∓ boundary·IQR (interquartile range, linear
	// interpolation of quartiles); Lower and Upper are multipliers, e.g. 1.5.
	IQR ThresholdTest = "iqr"
)

// ThresholdOptions configures CheckThreshold. A boundary of 0 disables that
// side; at least one side must be set.
type ThresholdOptions struct {
	// Test is the model; required.
	Test ThresholdTest
	// Lower and Upper are the boundaries, meaning as documented per Test.
	Lower, Upper float64
	// Window keeps only the newest Window baseline values; 0 keeps all.
	Window int
	// MinSamples is the smallest baseline that gives limits; below it the check
	// is skipped (Result.Skipped). 0 means 2 (1 for Percentage).
	MinSamples int
}

// ThresholdResult is the outcome of CheckThreshold.
type ThresholdResult struct {
	Value float64 `json:"value"`
	// Center is the baseline mean (median for IQR).
	Center float64 `json:"center"`
	// LowerLimit and UpperLimit are ±Inf for a disabled side.
	LowerLimit float64 `json:"lowerLimit"`
	UpperLimit float64 `json:"upperLimit"`
	// Samples is the number of baseline values used.
	Samples int `json:"samples"`
	// Skipped is true when the baseline had fewer than MinSamples values.
	Skipped bool `json:"skipped"`
	// Alert is true when Value is below LowerLimit or above UpperLimit.
	Alert bool `json:"alert"`
}

// Validate reports the first invalid field, naming it.
func (o ThresholdOptions) Validate() error {
	bad := func(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) || f < 0 }
	switch {
	case bad(o.Lower):
		return fmt.Errorf("changepoint: ThresholdOptions.Lower is %v: must be finite and not negative", o.Lower)
	case bad(o.Upper):
		return fmt.Errorf("changepoint: ThresholdOptions.Upper is %v: must be finite and not negative", o.Upper)
	case o.Lower == 0 && o.Upper == 0:
		return errors.New("changepoint: ThresholdOptions.Lower and ThresholdOptions.Upper are both 0: set at least one")
	case o.Window < 0:
		return fmt.Errorf("changepoint: ThresholdOptions.Window is %d: must be 0 (all) or positive", o.Window)
	case o.MinSamples < 0:
		return fmt.Errorf("changepoint: ThresholdOptions.MinSamples is %d: must not be negative", o.MinSamples)
	}
	switch o.Test {
	case Percentage, IQR:
	case ZScore, TTest:
		for _, b := range []struct {
			name string
			v    float64
		}{{"Lower", o.Lower}, {"Upper", o.Upper}} {
			if b.v != 0 && (b.v < 0.5 || b.v >= 1) {
				return fmt.Errorf("changepoint: ThresholdOptions.%s is %v: a %s boundary is a confidence level in [0.5, 1)", b.name, b.v, o.Test)
			}
		}
	default:
		return fmt.Errorf("changepoint: ThresholdOptions.Test is %q: must be one of %q, %q, %q, %q",
			o.Test, Percentage, ZScore, TTest, IQR)
	}
	return nil
}

// CheckThreshold compares value with limits computed from baseline (oldest
// first; only the newest Window values are used).
func CheckThreshold(baseline []float64, value float64, opts ThresholdOptions) (ThresholdResult, error) {
	if err := opts.Validate(); err != nil {
		return ThresholdResult{}, err
	}
	if math.IsNaN(value) || math.IsInf(value, 0) {
		return ThresholdResult{}, fmt.Errorf("changepoint: value is %v: must be finite", value)
	}
	if err := checkFinite(baseline); err != nil {
		return ThresholdResult{}, fmt.Errorf("baseline: %w", err)
	}
	if opts.Window > 0 && len(baseline) > opts.Window {
		baseline = baseline[len(baseline)-opts.Window:]
	}
	minSamples := opts.MinSamples
	if minSamples == 0 {
		minSamples = 2
		if opts.Test == Percentage {
			minSamples = 1
		}
	}
	res := ThresholdResult{Value: value, Samples: len(baseline), LowerLimit: math.Inf(-1), UpperLimit: math.Inf(1)}
	if len(baseline) < minSamples || len(baseline) == 0 {
		res.Skipped = true
		return res, nil
	}
	switch opts.Test {
	case Percentage:
		res.Center = describe(baseline).mean
		c := math.Abs(res.Center)
		if opts.Lower > 0 {
			res.LowerLimit = res.Center - c*opts.Lower
		}
		if opts.Upper > 0 {
			res.UpperLimit = res.Center + c*opts.Upper
		}
	case ZScore, TTest:
		st := describe(baseline)
		res.Center = st.mean
		sd := sampleStddev(st)
		q := stats.NormalQuantile
		if opts.Test == TTest {
			if st.n < 2 {
				res.Skipped = true
				return res, nil
			}
			df := float64(st.n - 1)
			q = func(p float64) float64 { return stats.StudentQuantile(p, df) }
		}
		if opts.Lower > 0 {
			res.LowerLimit = st.mean - q(opts.Lower)*sd
		}
		if opts.Upper > 0 {
			res.UpperLimit = st.mean + q(opts.Upper)*sd
		}
	case IQR:
		sorted := slices.Clone(baseline)
		slices.Sort(sorted)
		q1, med, q3 := stats.Quantile(sorted, 0.25), stats.Quantile(sorted, 0.5), stats.Quantile(sorted, 0.75)
		res.Center = med
		if opts.Lower > 0 {
			res.LowerLimit = med - opts.Lower*(q3-q1)
		}
		if opts.Upper > 0 {
			res.UpperLimit = med + opts.Upper*(q3-q1)
		}
	}
	res.Alert = value < res.LowerLimit || value > res.UpperLimit
	return res, nil
}

// sampleStddev converts a population stddev to the sample one (n−1).
func sampleStddev(st segmentStats) float64 {
	if st.n < 2 {
		return 0
	}
	return st.stddev * math.Sqrt(float64(st.n)/float64(st.n-1))
}
