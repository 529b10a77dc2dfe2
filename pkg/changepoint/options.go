package changepoint

import (
	"fmt"
	"math"
)

// Default values of Options. See docs/changepoints.md for the reasoning.
const (
	// DefaultWindowLen is Otava's default sliding-window length.
	DefaultWindowLen = 50
	// DefaultMaxPValue is Otava's default significance level of the merge pass.
	DefaultMaxPValue = 0.001
	// DefaultMinMagnitude is dbbench's default absolute floor of the
	// magnitude filter, 1 %: a change point must move the mean by more than
	// this fraction, whatever the noise. Otava's default is 0 and Nyrkiö's is
	// 5 %. The filter that matters on noisy series is the noise-relative one
	// (DefaultNoiseMultiple); the floor only keeps sub-percent shifts of
	// very quiet series out of the report. It used to be a fixed 3 %, which
	// dropped a true 3 % shift whenever noise made it measure 2.9 %.
	DefaultMinMagnitude = 0.01
	// DefaultNoiseMultiple is dbbench's default noise-relative magnitude
	// filter: a change (or a drift's total change) must exceed 1.5 × the
	// series' noise CV. See docs/design.md, "Change points for nightly
	// suites", for the false-positive and detection rates behind it.
	DefaultNoiseMultiple = 1.5
	// DefaultMinSegmentLength is dbbench's default minimum number of runs on
	// each side of a change point, so that one or two outlier runs are not
	// reported as a change. Otava has no such limit (it behaves as 1).
	DefaultMinSegmentLength = 3
	// DefaultMaxOutliers is dbbench's default number of outlier runs a change
	// must survive: a change point is dropped if it stops being significant
	// once the single most favourable point is removed. Otava has none (0).
	DefaultMaxOutliers = 1
)

// Options configures E-divisive change-point detection. Start from
// DefaultOptions or OtavaOptions and change what you need: the zero value is
// not valid (WindowLen 0 is refused).
type Options struct {
	// WindowLen is the length of the sliding windows of the split pass. Each
	// window starts half a window after the previous one (or at the last change
	// point it found, whichever is later), so windows overlap. It must be at
	// least 2 and at least 2×MinSegmentLength. Default 50.
	WindowLen int

	// MaxPValue is the significance level a change point must reach in the
	// merge pass: points whose two-sided t-test p-value is not below it are
	// dropped. It must be in (0, 1]. Default 0.001.
	MaxPValue float64

	// FirstPassPValue is the relaxed significance level of the split pass that
	// collects "weak" change points. 0 derives it from MaxPValue the way Otava
	// does: 10×MaxPValue when MaxPValue < 0.05, 2×MaxPValue when it is < 0.5,
	// MaxPValue otherwise. If set, it must be in [MaxPValue, 1].
	FirstPassPValue float64

	// MinMagnitude is the smallest relative change a change point must show,
	// as a fraction: max(|after/before − 1|, |before/after − 1|) must exceed it.
	// 0 disables this floor (Otava's default). Must be in [0, +Inf).
	// Default 0.01 (1 %); NoiseMultiple adds a filter relative to the noise.
	MinMagnitude float64

	// MinSegmentLength is the smallest number of points allowed between two
	// change points, and before the first and after the last one. 1 reproduces
	// Otava; 2 or more keeps single outliers from being reported. Must be at
	// least 1 and greater than MaxOutliers. Default 3.
	MinSegmentLength int

	// MaxOutliers makes the merge pass drop change points that a few outlier
	// runs can explain: a point is kept only if it still has p < MaxPValue
	// after removing any MaxOutliers points that most favour the change (the largest values on the high side, the
	// smallest on the low side, split between the two sides in every way).
	// A segment of MinSegmentLength points that holds one outlier passes a
	// plain t-test, because the long neighbouring segment dominates the
	// pooled variance; this check catches it. 0 reproduces Otava. Must be at
	// least 0 and less than MinSegmentLength. Default 1.
	MaxOutliers int

	// NoiseCV is the run-to-run noise of the series as a coefficient of
	// variation (0.01 = 1 %), for the noise-relative magnitude filter. Supply
	// it when it is known better than one series can tell, e.g. from a
	// suite's A/A repeats (then use the night-to-night spread, which is
	// usually larger than the spread of repeats within one night). 0 means
	// estimate it from each series: the median absolute deviation of
	// successive differences, ×1.4826/√2, divided by the series' median;
	// robust to steps, outlier runs and a steady drift. Must be finite and
	// not negative. Used only when NoiseMultiple > 0.
	NoiseCV float64

	// NoiseMultiple sets the noise-relative magnitude filter: change points
	// and drifts must change the mean by more than NoiseMultiple × NoiseCV
	// (and more than MinMagnitude, the absolute floor). 0 disables it
	// (Otava). Must be finite and not negative. Default 1.5.
	NoiseMultiple float64

	// NewestRuns makes the newest runs first-class: a change in the last
	// MinSegmentLength−1 runs, which the E-divisive search cannot place
	// because of the minimum segment length, is found by a t-test of the
	// last k runs against the segment before them, and a last change point
	// that the minimum segment length pushed away from the end, or that
	// only a change in the newest runs made significant, is replaced by
	// the run where that change starts. Such a change is Suspected while
	// only the newest run shows it robustly, and Confirmed once the later
	// runs hold it (it survives the MaxOutliers check with at least two
	// runs). Every point this (or Drift) adds, moves or refreshes is
	// checked again against all the filters. Off in OtavaOptions. Default
	// true.
	NewestRuns bool

	// Drift reports a sustained slope as a Drift (start, end, slope per run,
	// p-value) instead of one or a staircase of change points: a run of
	// same-direction change points, or a segment without change points,
	// becomes a drift when a straight line fits it better than steps do
	// (BIC) and its OLS slope is significant at MaxPValue and large enough
	// for the magnitude filters. Off in OtavaOptions. Default true.
	Drift bool

	// OtavaCompat reproduces a detail of Otava's merge pass (0.8.0 and its
	// main branch as of 2026): after removing a weak change point it refreshes
	// the statistics of the next two points but not of the previous one, whose
	// right-hand segment just grew. Its later decisions, and the before/after
	// statistics it reports, can then use a segment that ends at a removed
	// point. With OtavaCompat false (the default) both neighbours are
	// refreshed, so every reported statistic describes the final segments;
	// on the cross-check corpus this changes the change points of 20 of 234
	// series. OtavaOptions sets it.
	OtavaCompat bool
}

// DefaultOptions returns dbbench's defaults: Otava's window and p-value, plus
// a magnitude filter of 1.5 × the series' noise (at least 1 %), a minimum
// segment length of 3 runs, robustness to one outlier run, tests of the
// newest runs and drift detection.
func DefaultOptions() Options {
	return Options{
		WindowLen:        DefaultWindowLen,
		MaxPValue:        DefaultMaxPValue,
		MinMagnitude:     DefaultMinMagnitude,
		MinSegmentLength: DefaultMinSegmentLength,
		MaxOutliers:      DefaultMaxOutliers,
		NoiseMultiple:    DefaultNoiseMultiple,
		NewestRuns:       true,
		Drift:            true,
	}
}

// OtavaOptions returns the settings that reproduce Apache Otava's defaults
// (window 50, max p-value 0.001, no magnitude filter, no minimum segment, no
// outlier check, no newest-run test, no drift), so that results can be
// cross-checked with `otava analyze`.
func OtavaOptions() Options {
	return Options{
		WindowLen:        DefaultWindowLen,
		MaxPValue:        DefaultMaxPValue,
		MinMagnitude:     0,
		MinSegmentLength: 1,
		OtavaCompat:      true,
	}
}

// Validate reports the first invalid field, naming it.
func (o Options) Validate() error {
	switch {
	case o.WindowLen < 2:
		return fmt.Errorf("changepoint: Options.WindowLen is %d: must be at least 2", o.WindowLen)
	case o.MinSegmentLength < 1:
		return fmt.Errorf("changepoint: Options.MinSegmentLength is %d: must be at least 1", o.MinSegmentLength)
	case o.MaxOutliers < 0:
		return fmt.Errorf("changepoint: Options.MaxOutliers is %d: must not be negative", o.MaxOutliers)
	case o.MaxOutliers >= o.MinSegmentLength:
		return fmt.Errorf("changepoint: Options.MaxOutliers is %d: must be less than MinSegmentLength (%d)",
			o.MaxOutliers, o.MinSegmentLength)
	case o.WindowLen < 2*o.MinSegmentLength:
		return fmt.Errorf("changepoint: Options.WindowLen is %d: must be at least 2×MinSegmentLength (%d)",
			o.WindowLen, 2*o.MinSegmentLength)
	case math.IsNaN(o.MaxPValue) || o.MaxPValue <= 0 || o.MaxPValue > 1:
		return fmt.Errorf("changepoint: Options.MaxPValue is %v: must be in (0, 1]", o.MaxPValue)
	case math.IsNaN(o.FirstPassPValue) || o.FirstPassPValue < 0 || o.FirstPassPValue > 1:
		return fmt.Errorf("changepoint: Options.FirstPassPValue is %v: must be 0 (derive from MaxPValue) or in [MaxPValue, 1]", o.FirstPassPValue)
	case o.FirstPassPValue != 0 && o.FirstPassPValue < o.MaxPValue:
		return fmt.Errorf("changepoint: Options.FirstPassPValue is %v: must not be below MaxPValue (%v)", o.FirstPassPValue, o.MaxPValue)
	case math.IsNaN(o.MinMagnitude) || o.MinMagnitude < 0:
		return fmt.Errorf("changepoint: Options.MinMagnitude is %v: must be 0 or more", o.MinMagnitude)
	case math.IsNaN(o.NoiseCV) || math.IsInf(o.NoiseCV, 0) || o.NoiseCV < 0:
		return fmt.Errorf("changepoint: Options.NoiseCV is %v: must be finite and 0 (estimate) or more", o.NoiseCV)
	case math.IsNaN(o.NoiseMultiple) || math.IsInf(o.NoiseMultiple, 0) || o.NoiseMultiple < 0:
		return fmt.Errorf("changepoint: Options.NoiseMultiple is %v: must be finite and 0 (off) or more", o.NoiseMultiple)
	}
	return nil
}

// firstPassPValue returns the split-pass significance level.
func (o Options) firstPassPValue() float64 {
	if o.FirstPassPValue != 0 {
		return o.FirstPassPValue
	}
	switch {
	case o.MaxPValue < 0.05:
		return o.MaxPValue * 10
	case o.MaxPValue < 0.5:
		return o.MaxPValue * 2
	default:
		return o.MaxPValue
	}
}
