package inference

import (
	"fmt"
	"math"
)

// MethodMean is the Student's t interval of one mean relative to itself
// (mean ± t(n−1)·s/√n, divided by the mean): the precision of a run that
// has no second combination to compare with.
const MethodMean Method = "mean"

// RatioSamples are the per-run values behind one compared ratio: mean(Other)
// over mean(Base) at one (step, threads). Name says which comparison it is
// (the compared combination, for messages). A nil Base means there is
// nothing to compare with (a run of one combination): the precision is
// then that of mean(Other) itself.
type RatioSamples struct {
	Key   Key       `json:"key"`
	Name  string    `json:"name"`
	Base  []float64 `json:"base,omitempty"`
	Other []float64 `json:"other"`
}

// HalfWidth is the precision reached by one compared ratio.
type HalfWidth struct {
	Key  Key    `json:"key"`
	Name string `json:"name"`
	// Percent is the interval's half-width in percent of the estimate,
	// taken on its wider side: 100·max(High − r, r − Low)/r for the
	// estimate r, so the interval lies within ±Percent % of r (Fieller's
	// interval is not symmetric). +Inf when it is unknown: a side with
	// fewer than two runs, or Fieller's confidence set unbounded.
	Percent float64 `json:"percent"`
	// Interval is the interval it was computed from (zero when a side had
	// fewer than two runs).
	Interval Interval `json:"interval"`
}

// RatioHalfWidths returns the half-width of every ratio's interval at
// level (0 means DefaultLevel), in the order given: Fieller's interval of
// mean(Other)/mean(Base) (RatioOfMeans's model: independent, normal runs,
// unequal variances), or, for a ratio without a Base, Student's t interval
// of mean(Other) relative to it. A side with fewer than two runs gives
// +Inf, not an error: more runs will fix it. Values that are negative,
// NaN or a base mean of 0 are errors.
func RatioHalfWidths(ratios []RatioSamples, level float64) ([]HalfWidth, error) {
	if level == 0 {
		level = DefaultLevel
	}
	if err := checkLevel(level); err != nil {
		return nil, err
	}
	out := make([]HalfWidth, len(ratios))
	for i, rs := range ratios {
		hw := HalfWidth{Key: rs.Key, Name: rs.Name, Percent: math.Inf(1)}
		var iv Interval
		var err error
		switch {
		case len(rs.Other) < 2 || (rs.Base != nil && len(rs.Base) < 2):
			// Unknown yet: checked below for invalid values only.
			if _, err := momentsOf("other", rs.Other, 0); err != nil {
				return nil, fmt.Errorf("%s %s@%d: %w", rs.Name, rs.Key.Step, rs.Key.Threads, err)
			}
			out[i] = hw
			continue
		case rs.Base == nil:
			iv, err = meanInterval(rs.Other, level)
		default:
			iv, err = FiellerRatio(rs.Base, rs.Other, level)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s@%d: %w", rs.Name, rs.Key.Step, rs.Key.Threads, err)
		}
		hw.Interval = iv
		if !iv.FiellerUnbounded && iv.Estimate > 0 {
			hw.Percent = 100 * math.Max(iv.High-iv.Estimate, iv.Estimate-iv.Low) / iv.Estimate
		}
		out[i] = hw
	}
	return out, nil
}

// meanInterval is mean ± t(n−1)·s/√n over the mean: an interval around 1.
func meanInterval(xs []float64, level float64) (Interval, error) {
	m, err := momentsOf("other", xs, 2)
	if err != nil {
		return Interval{}, err
	}
	if m.mean == 0 {
		return Interval{}, fmt.Errorf("other: mean is 0, a relative precision is undefined: %w", ErrInvalid)
	}
	df := float64(m.n - 1)
	h := tQuantile(1-(1-level)/2, df) * math.Sqrt(m.varMean) / m.mean
	return Interval{Estimate: 1, Low: 1 - h, High: 1 + h, Level: level, DF: df, Method: MethodMean, NA: m.n, NB: m.n, PRatioOne: 1}, nil
}

// PrecisionRule is the stopping rule of adaptive repeats: run rounds of
// every cell until every compared ratio's interval lies within
// ±TargetPercent % of its estimate, at least MinRepeats and at most
// MaxRepeats rounds.
//
// Stopping on the data (optional stopping) makes the final intervals
// slightly too narrow: a round whose sample variances happen to be small
// stops the run, one whose variances are large does not. The simulation
// TestSimAdaptiveCoverage measures the realised coverage; docs/noise.md
// quotes it.
type PrecisionRule struct {
	// TargetPercent is the half-width to reach, in percent (1 = ±1 %).
	TargetPercent float64
	// MinRepeats rounds run before the rule is consulted (at least 2: an
	// interval needs two runs a side). MaxRepeats bounds the rounds.
	MinRepeats int
	MaxRepeats int
	// Level of the intervals; 0 means DefaultLevel (95 %).
	Level float64
}

// Validate checks the rule's bounds.
func (r PrecisionRule) Validate() error {
	switch {
	case !(r.TargetPercent > 0) || math.IsInf(r.TargetPercent, 0):
		return fmt.Errorf("precision: targetPercent %v must be finite and > 0: %w", r.TargetPercent, ErrInvalid)
	case r.MinRepeats < 2:
		return fmt.Errorf("precision: minRepeats %d must be at least 2: %w", r.MinRepeats, ErrInvalid)
	case r.MaxRepeats < r.MinRepeats:
		return fmt.Errorf("precision: maxRepeats %d must be at least minRepeats %d: %w", r.MaxRepeats, r.MinRepeats, ErrInvalid)
	case r.Level != 0 && !(r.Level > 0 && r.Level < 1):
		return fmt.Errorf("precision: level %v must be in (0, 1): %w", r.Level, ErrInvalid)
	}
	return nil
}

// PrecisionDecision is the rule's answer after a round.
type PrecisionDecision struct {
	// HalfWidths of every compared ratio, in the order given.
	HalfWidths []HalfWidth
	// Worst is the largest half-width (percent; +Inf when one is unknown).
	Worst float64
	// Met: every half-width is at most the target.
	Met bool
	// Stop: run no more rounds — the target is met (after MinRepeats
	// rounds) or MaxRepeats rounds have run.
	Stop bool
}

// Decide applies the rule after rounds complete rounds whose per-run values
// are ratios (the values of every run so far, not only the last round's).
// Before MinRepeats rounds it never stops. No ratios at all is an error:
// there is nothing whose precision more rounds could improve.
func (r PrecisionRule) Decide(rounds int, ratios []RatioSamples) (PrecisionDecision, error) {
	if err := r.Validate(); err != nil {
		return PrecisionDecision{}, err
	}
	if len(ratios) == 0 {
		return PrecisionDecision{}, fmt.Errorf("precision: no ratios to judge: %w", ErrTooFew)
	}
	hws, err := RatioHalfWidths(ratios, r.Level)
	if err != nil {
		return PrecisionDecision{}, err
	}
	d := PrecisionDecision{HalfWidths: hws, Met: true}
	for _, h := range hws {
		d.Worst = math.Max(d.Worst, h.Percent)
		if !(h.Percent <= r.TargetPercent) {
			d.Met = false
		}
	}
	d.Stop = rounds >= r.MaxRepeats || (rounds >= r.MinRepeats && d.Met)
	return d, nil
}
