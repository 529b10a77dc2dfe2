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
	// DefaultMinMagnitude is dbbench's default minimum relative change, 3 %.
	// Otava's default is 0 and Nyrkiö's is 5 %. A 5 % regression must be
	// reported even when noise makes it measure 4.8 %, so the filter has to sit
	// below 5 %; and it has to sit above most of the p < 0.001 shifts that
	// the search for the best split finds in pure noise (up to 3.4 % on 1 %
	// noise in our tests). See docs/changepoints.md.
	DefaultMinMagnitude = 0.03
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
	// 0 disables the filter (Otava's default). Must be in [0, +Inf).
	// Default 0.03 (3 %).
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
// a 3 % minimum magnitude, a minimum segment length of 3 runs and robustness
// to one outlier run.
func DefaultOptions() Options {
	return Options{
		WindowLen:        DefaultWindowLen,
		MaxPValue:        DefaultMaxPValue,
		MinMagnitude:     DefaultMinMagnitude,
		MinSegmentLength: DefaultMinSegmentLength,
		MaxOutliers:      DefaultMaxOutliers,
	}
}

// OtavaOptions returns the settings that reproduce Apache Otava's defaults
// (window 50, max p-value 0.001, no magnitude filter, no minimum segment, no
// outlier check), so
// that results can be cross-checked with `otava analyze`.
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
