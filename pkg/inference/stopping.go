package inference

import (
	"cmp"
	"fmt"
	"math"
)

// Adaptive step duration (issue 26): when to end a step's measured time.
//
// Model (docs/noise.md, "Variance components"): a run's value is the mean
// of its T steady per-second samples, and its variance on the log scale is
//
//	Var y = σ²_node + σ²_run + σ²_w / T
//
// σ²_run being the between-run noise (a fresh server and load, the
// machine's state) that no step length removes, and σ²_w / T the error of
// the mean over T seconds, σ²_w the per-second series' long-run variance
// over its squared mean. More seconds only shrink the last term: once
// σ²_w / T is small beside σ²_run, a longer step buys almost nothing, and
// the seconds are better spent on another run (Kalibera & Jones 2013).
//
// The rule, after each steady second n (MinSeconds ≤ n):
//
//   - σ²_w is estimated by batch means (BatchMeans: no assumption on the
//     shape of the autocorrelation, a − 1 degrees of freedom) or the AR(1)
//     figure from the lag-1 autocorrelation, whichever is larger (batch
//     means run low while the batches are short: stopLongRun), and the
//     within-run relative half-width is h = t(level, df)·√(σ̂²_w / n) / x̄
//     (the t quantile makes a young estimate, with few batches, wide);
//   - Converged: h ≤ NoiseShare · z(level) · CV_run, i.e. the within-run
//     interval is at most NoiseShare (0.5 by default) of the interval a
//     single run's between-run noise gives. At 0.5 the mean's error adds
//     at most a quarter to the run's variance, about 12 % to its standard
//     deviation; every further second cuts that share by less;
//   - TargetReached: h ≤ TargetRelHalfWidth (the run's own interval is as
//     narrow as asked);
//   - MaxDuration: n ≥ MaxSeconds, whatever the estimates say.
//
// Stopping on the data makes the achieved interval slightly optimistic (a
// second whose batch variance happens to be small stops the step);
// TestSimAdaptiveStop measures how often the achieved half-width misses
// the target on AR(1) series.

// Stop reasons of a step (results.StepResult.StopReason).
const (
	// StopConverged: the within-run error is small beside the between-run
	// noise (NoiseShare of it).
	StopConverged = "Converged"
	// StopTargetReached: the within-run relative half-width is at most the
	// target.
	StopTargetReached = "TargetReached"
	// StopMaxDuration: the configured maximum was reached.
	StopMaxDuration = "MaxDuration"
)

// DefaultNoiseShare is StopRule.NoiseShare when 0.
const DefaultNoiseShare = 0.5

// minStopSamples is the fewest steady samples the rule judges: four
// batches of two, so that the long-run variance has three degrees of
// freedom.
const minStopSamples = 8

// StopRule decides when an adaptive step has run long enough.
type StopRule struct {
	// MinSeconds steady seconds run before the rule may stop (at least
	// minStopSamples are judged whatever MinSeconds says).
	MinSeconds int
	// MaxSeconds steady seconds end the step whatever the estimates.
	MaxSeconds int
	// BetweenRunCV is the between-run noise as a coefficient of variation
	// (0.01 = 1 %); 0 leaves the Converged test out.
	BetweenRunCV float64
	// NoiseShare is the fraction of the between-run interval the within-run
	// one must reach (0: DefaultNoiseShare).
	NoiseShare float64
	// TargetRelHalfWidth is the within-run relative half-width to reach
	// (0.005 = ±0.5 %); 0 leaves the TargetReached test out.
	TargetRelHalfWidth float64
	// Level of the intervals; 0 means DefaultLevel (95 %).
	Level float64
}

// Validate checks the rule.
func (r StopRule) Validate() error {
	switch {
	case r.MinSeconds < 0:
		return fmt.Errorf("stop rule: minSeconds %d must not be negative: %w", r.MinSeconds, ErrInvalid)
	case r.MaxSeconds < 1 || r.MaxSeconds < r.MinSeconds:
		return fmt.Errorf("stop rule: maxSeconds %d must be at least 1 and at least minSeconds %d: %w", r.MaxSeconds, r.MinSeconds, ErrInvalid)
	case !(r.BetweenRunCV >= 0) || math.IsInf(r.BetweenRunCV, 0):
		return fmt.Errorf("stop rule: betweenRunCV %v must be finite and >= 0: %w", r.BetweenRunCV, ErrInvalid)
	case !(r.TargetRelHalfWidth >= 0) || math.IsInf(r.TargetRelHalfWidth, 0):
		return fmt.Errorf("stop rule: targetRelHalfWidth %v must be finite and >= 0: %w", r.TargetRelHalfWidth, ErrInvalid)
	case r.BetweenRunCV == 0 && r.TargetRelHalfWidth == 0:
		return fmt.Errorf("stop rule: one of betweenRunCV and targetRelHalfWidth is required: %w", ErrInvalid)
	case !(r.NoiseShare >= 0 && r.NoiseShare <= 1):
		return fmt.Errorf("stop rule: noiseShare %v must be in [0, 1]: %w", r.NoiseShare, ErrInvalid)
	case r.Level != 0 && !(r.Level > 0 && r.Level < 1):
		return fmt.Errorf("stop rule: level %v must be in (0, 1): %w", r.Level, ErrInvalid)
	}
	return nil
}

func (r StopRule) level() float64 { return cmp.Or(r.Level, DefaultLevel) }

// ConvergedHalfWidth is the relative half-width at which the Converged test
// passes (0 without BetweenRunCV).
func (r StopRule) ConvergedHalfWidth() float64 {
	if r.BetweenRunCV == 0 {
		return 0
	}
	return cmp.Or(r.NoiseShare, DefaultNoiseShare) * tQuantile((1+r.level())/2, math.Inf(1)) * r.BetweenRunCV
}

// StopDecision is the rule's answer after a steady second.
type StopDecision struct {
	// Stop ends the step; Reason says why ("" while it goes on).
	Stop   bool
	Reason string
	// Seconds is the number of steady samples judged.
	Seconds int
	// RelHalfWidth is the within-run relative half-width (NaN before
	// there are enough samples), DF its degrees of freedom.
	RelHalfWidth float64
	DF           int
}

// stopLongRun is the larger of the batch-means and AR(1) estimates of the
// long-run variance, with the smaller of their degrees of freedom. Batch
// means catch slow waves but, early in a step, its batches of ⌊√n⌋
// samples are too short to hold a correlation of a few seconds and it
// runs low (on an AR(1) series of φ 0.7, 30 samples: batches of 5 hold
// about half); the AR(1) figure holds that part. Taking the larger keeps
// both from stopping a step early.
func stopLongRun(xs []float64) (LongRun, error) {
	bm, err := BatchMeans(xs)
	if err != nil {
		return LongRun{}, err
	}
	m, v := meanVar(xs)
	var lag, ss float64
	for i := range xs {
		ss += (xs[i] - m) * (xs[i] - m)
		if i > 0 {
			lag += (xs[i-1] - m) * (xs[i] - m)
		}
	}
	r := 0.0
	if ss > 0 {
		r = math.Min(lag/ss, 0.99)
	}
	ar, err := AR1LongRun(v, r, len(xs))
	if err != nil {
		return LongRun{}, err
	}
	if ar.Variance > bm.Variance {
		return LongRun{Variance: ar.Variance, DF: min(ar.DF, bm.DF), Method: MethodAR1}, nil
	}
	return bm, nil
}

// Decide judges the steady per-second samples seen so far (throughput, in
// order, warm-up left out). It never stops before MinSeconds samples (nor
// before minStopSamples, unless MaxSeconds is reached) and always stops at
// MaxSeconds.
func (r StopRule) Decide(steady []float64) (StopDecision, error) {
	if err := r.Validate(); err != nil {
		return StopDecision{}, err
	}
	n := len(steady)
	d := StopDecision{Seconds: n, RelHalfWidth: math.NaN()}
	if n >= minStopSamples {
		lr, err := stopLongRun(steady)
		if err != nil {
			return StopDecision{}, err
		}
		mean, _ := meanVar(steady)
		if mean > 0 {
			d.DF = lr.DF
			d.RelHalfWidth = tQuantile((1+r.level())/2, float64(lr.DF)) * math.Sqrt(lr.Variance/float64(n)) / mean
		}
	}
	switch {
	case n >= r.MaxSeconds:
		d.Stop, d.Reason = true, StopMaxDuration
	case n < r.MinSeconds || math.IsNaN(d.RelHalfWidth):
	case r.TargetRelHalfWidth > 0 && d.RelHalfWidth <= r.TargetRelHalfWidth:
		d.Stop, d.Reason = true, StopTargetReached
	case r.BetweenRunCV > 0 && d.RelHalfWidth <= r.ConvergedHalfWidth():
		d.Stop, d.Reason = true, StopConverged
	}
	return d, nil
}
