package bisect

import (
	"fmt"

	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/regression"
)

// DefaultConfidence is Rule.Confidence when unset.
const DefaultConfidence = 0.9

// Rule is the decision rule: the regression verdict's own definition of
// "worse" (magnitude, magnitude rule, correction; the metrics are the
// keys'), its significance level, and the confidence a localization needs.
type Rule struct {
	// Magnitude is the smallest change that counts (0.05 = 5 %).
	Magnitude float64
	// MagnitudeRule is how the magnitude enters the tests, as in the
	// verdict (regression.MagnitudeRule); "" is Tested.
	MagnitudeRule regression.MagnitudeRule
	// MaxPValue is the significance level of each point's one-sided
	// tests after Correction over the judged keys.
	MaxPValue float64
	// Correction is the multiple-comparison procedure over a point's
	// keys; "" is Holm.
	Correction inference.Correction
	// Confidence is the posterior probability, under the model (Posterior),
	// that the named build is the first bad one, which Localized needs;
	// 0 is DefaultConfidence.
	Confidence float64
}

// Validate checks the rule's ranges.
func (r Rule) Validate() error {
	if !(r.Magnitude >= 0 && r.Magnitude < 1) {
		return fmt.Errorf("magnitude %v: must be in [0, 1)", r.Magnitude)
	}
	if !(r.MaxPValue > 0 && r.MaxPValue < 1) {
		return fmt.Errorf("maxPValue %v: must be in (0, 1)", r.MaxPValue)
	}
	if err := r.MagnitudeRule.Validate(); err != nil {
		return err
	}
	if err := r.Correction.Validate(); err != nil {
		return err
	}
	if !(r.Confidence >= 0 && r.Confidence < 1) {
		return fmt.Errorf("confidence %v: must be in [0, 1)", r.Confidence)
	}
	return nil
}

func (r Rule) confidence() float64 {
	if r.Confidence == 0 {
		return DefaultConfidence
	}
	return r.Confidence
}

func (r Rule) correction() inference.Correction {
	if r.Correction == "" {
		return inference.DefaultCorrection
	}
	return r.Correction
}

// worse is the rule's test of "b is worse than a" on key k from the
// model's contrast d = score(b) − score(a) (negative when b is worse),
// its standard error and df: the one-sided p-value before the correction
// and the measured change in the metric's own terms (100 × (b/a − 1)).
// df 0 means the runs left no degrees of freedom for the noise: then p is
// 0 when the estimate is worse by the magnitude, else 1 (the magnitude
// alone decides, untested).
func (r Rule) worse(k Key, d, se, df float64) (p, changePercent float64, tested bool) {
	m := k.MetricOrDefault()
	changePercent = changeOf(m, d)
	if df > 0 {
		t, err := inference.SlowdownOfEstimate(d, se, df, r.MagnitudeRule.TestMagnitude(m, r.Magnitude))
		if err == nil {
			return t.P, changePercent, true
		}
	}
	if m.Worse(changePercent, r.Magnitude) {
		return 0, changePercent, false
	}
	return 1, changePercent, false
}

// regressed decides one tested key after the correction.
func (r Rule) regressed(k Key, adjustedP, changePercent float64, tested bool) bool {
	m := k.MetricOrDefault()
	if !tested {
		return m.Worse(changePercent, r.Magnitude)
	}
	return r.MagnitudeRule.Regressed(m, adjustedP, r.MaxPValue, changePercent, r.Magnitude)
}

// cleared is the rule's test of "b is not worse than a by the magnitude"
// on key k: the contrast is significantly better than the magnitude's
// boundary (one-sided, at MaxPValue), or, untested, its estimate is
// within the magnitude. The endpoints are called not reproduced only when
// every key is cleared; anything between asks for more runs.
func (r Rule) cleared(k Key, d, se, df float64) bool {
	m := k.MetricOrDefault()
	if df > 0 {
		// The rate's magnitude, as MagnitudeTested tests it.
		t, err := inference.SlowdownOfEstimate(d, se, df, regression.MagnitudeTested.TestMagnitude(m, r.Magnitude))
		if err == nil {
			return 1-t.P < r.MaxPValue
		}
	}
	return !m.Worse(changeOf(m, d), r.Magnitude)
}
