package results

import (
	"math"
	"slices"
	"time"

	"github.com/dbbench/dbbench/pkg/stats"
)

// The quality gate: whether a step result is a value. A step's throughput
// is the mean of its steady per-second samples; the gate checks that the
// samples are there, that the client saw the server work through the
// window, and that the series and sysbench's final report describe the
// same run. A result that fails is kept in the document, flagged (Quality),
// and never used as a normal value: reports show it as invalid, verdicts
// leave it out and say so. docs/agent.md ("Quality gates") gives the
// reasons for each threshold.

// QualityReason names a rule a step result failed. The values are stable:
// reports, status and other tools match them.
type QualityReason string

const (
	// QualityTooFewSteadySamples: fewer steady samples than the window's
	// seconds call for (MinSteadySampleShare): sysbench reported too few of
	// the seconds the step ran.
	QualityTooFewSteadySamples QualityReason = "TooFewSteadySamples"
	// QualityStalled: the client saw no work done for StallSeconds, at
	// least the stall limit (StallFloorSeconds, StallShare of the window).
	QualityStalled QualityReason = "Stalled"
	// QualitySteadyFinalMismatch: sysbench's final report and its own
	// per-second series disagree about the run's throughput by more than
	// the series' noise explains (MismatchFloor, MismatchSigmas).
	QualitySteadyFinalMismatch QualityReason = "SteadyFinalMismatch"
)

// QualityReasons are every reason, in the order Quality lists them.
var QualityReasons = []QualityReason{QualityTooFewSteadySamples, QualityStalled, QualitySteadyFinalMismatch}

// The thresholds of the quality gate (docs/agent.md says why each is what
// it is).
const (
	// MinSteadySampleShare: a step needs steady samples for at least this
	// share of the seconds of its measured window, and at least one.
	MinSteadySampleShare = 0.8
	// StallFloorSeconds and StallShare: a step is Stalled when its stall
	// seconds reach StallFloorSeconds or StallShare of the measured
	// window, whichever is more. A stop of s seconds lowers the window's
	// mean by s / window: StallShare is the smallest change the regression
	// verdicts report by default (5 %), the floor keeps one late report
	// of a short step from counting.
	StallFloorSeconds = 2.0
	StallShare        = 0.05
	// StoppedFraction: a reported sample below this fraction of the
	// step's median throughput (or of its final report's, when higher) is
	// a second in which the server did (nearly) nothing; a checkpoint's
	// dip to half the median is not one.
	StoppedFraction = 0.05
	// MinStallRate: stopped samples count only when that reference rate
	// is at least this many operations per second. Below it a second without
	// a completed query is the granularity of slow queries (a full scan
	// takes seconds), not a stop.
	MinStallRate = 20.0
	// LatencyStallRatio: one query that took at least this multiple of the
	// step's 95th percentile waited through a stop: its latency counts as
	// stall seconds.
	LatencyStallRatio = 20.0
	// LateReportFactor: a report that covers more than this many
	// intervals came late; the seconds beyond its first interval were
	// not reported, because sysbench's reporting thread did not run.
	LateReportFactor = 1.5
	// MismatchFloor and MismatchSigmas: the final report's rate may differ
	// from the series' whole-run rate by MismatchFloor, or MismatchSigmas
	// standard errors of the series' mean if that is more.
	MismatchFloor  = 0.10
	MismatchSigmas = 3.0
)

// Quality is the quality gate's verdict on one step result. Absent from a
// result (older agents, imported studies), the result was not checked and
// counts as valid.
type Quality struct {
	// Valid is false when any rule failed: the result's figures stay in
	// the document but are not a value.
	Valid bool `json:"valid"`
	// Reasons are the rules that failed, in QualityReasons order.
	Reasons []QualityReason `json:"reasons,omitempty"`
	// WindowSeconds is the measured window the rules judged: the requested
	// time after the warm-up.
	WindowSeconds float64 `json:"windowSeconds"`
	// MinSteadySamples is the fewest steady samples the window needs; the
	// result's SteadySamples is what it had.
	MinSteadySamples int `json:"minSteadySamples"`
	// StallSeconds is the longest evidence of a stop: the seconds of the
	// window in which the client saw no work done (reported below
	// StoppedFraction of the median, or not reported at all), or the
	// longest query when it took LatencyStallRatio × the p95 or more.
	// StallLimitSeconds is the limit it is held to.
	StallSeconds      float64 `json:"stallSeconds"`
	StallLimitSeconds float64 `json:"stallLimitSeconds"`
	// UnreportedSeconds are the seconds of the window no report covered
	// (late reports, a missing tail): sysbench's reporting thread, which
	// does not wait for the server, did not run, so the client itself was
	// starved. They are part of StallSeconds.
	UnreportedSeconds float64 `json:"unreportedSeconds,omitempty"`
	// SeriesRate is the series' whole-run rate (every sample, warm-up
	// included, weighted by its length), in the unit of the final report's
	// rate it is compared with (queries/s, or events/s without queries);
	// FinalMismatch is |final − series| / the larger of the two, and
	// MismatchTolerance its limit. Absent with fewer than two samples.
	SeriesRate        float64 `json:"seriesRate,omitempty"`
	FinalMismatch     float64 `json:"finalMismatch,omitempty"`
	MismatchTolerance float64 `json:"mismatchTolerance,omitempty"`
	// Attempts counts the runs of this step and thread count: 2 when the
	// agent re-ran it; Replaced is the run the re-run replaced.
	Attempts int          `json:"attempts"`
	Replaced *ReplacedRun `json:"replaced,omitempty"`
	// NotRerun says why an invalid result was not re-run.
	NotRerun string `json:"notRerun,omitempty"`
}

// ReplacedRun is an invalid run of a step that a re-run replaced: its
// figures and its verdict, so that what was discarded stays on record.
type ReplacedRun struct {
	StartedAt     *time.Time `json:"startedAt,omitempty"`
	SteadyQPS     float64    `json:"steadyQps"`
	SteadySamples int        `json:"steadySamples"`
	FinalQPS      float64    `json:"finalQps"`
	LatencyMaxMs  float64    `json:"latencyMaxMs"`
	// Reasons and StallSeconds are the replaced run's Quality's.
	Reasons      []QualityReason `json:"reasons"`
	StallSeconds float64         `json:"stallSeconds"`
}

// Invalid reports whether the quality gate marked the result invalid. A
// result without a verdict is not.
func (s *StepResult) Invalid() bool { return s.Quality != nil && !s.Quality.Valid }

// Replacement records s, an invalid run, as the run its re-run replaced.
func (s *StepResult) Replacement() *ReplacedRun {
	r := &ReplacedRun{StartedAt: s.StartedAt, SteadyQPS: s.SteadyQPS, SteadySamples: s.SteadySamples,
		FinalQPS: s.FinalQPS, LatencyMaxMs: s.LatencyMaxMs}
	if q := s.Quality; q != nil {
		r.Reasons, r.StallSeconds = q.Reasons, q.StallSeconds
	}
	r.Reasons = append([]QualityReason{}, r.Reasons...) // [] rather than null
	return r
}

// AssessStep applies the quality gate to a step result of the full form
// (it reads the per-second series, with its sample times) and returns the
// verdict, with Attempts 1. A result without a series is judged on its
// final report alone: it has no steady samples.
func AssessStep(s *StepResult) Quality {
	q := Quality{Attempts: 1}
	iv := 1.0
	var col []float64
	var ends []float64
	if se := s.Series; se != nil {
		if se.IntervalSeconds > 0 {
			iv = se.IntervalSeconds
		}
		col, ends = se.QPS, se.Ends()
	}
	final := s.FinalQPS
	if !(final > 0) && !anyPositive(col) && s.Series != nil {
		// No queries (a non-SQL script): its events are the operations.
		col, final = s.Series.TPS, s.FinalTPS
	}
	warm := s.WarmupSeconds
	q.WindowSeconds = math.Max(0, s.DurationSeconds-warm)
	if n := int(math.Floor(MinSteadySampleShare*q.WindowSeconds/iv + 1e-9)); n > 0 {
		q.MinSteadySamples = n
	}
	q.StallLimitSeconds = math.Max(StallFloorSeconds, StallShare*q.WindowSeconds)

	// The steady samples, what they cover and what they leave out.
	first := len(ends)
	for i := range ends {
		if startOf(ends, i) >= warm-1e-9 {
			first = i
			break
		}
	}
	steady := len(ends) - first
	var unreported, stopped float64
	for i := range ends {
		start := startOf(ends, i)
		if ends[i]-start > LateReportFactor*iv {
			unreported += overlap(start+iv, ends[i], warm)
		}
	}
	last := 0.0
	if len(ends) > 0 {
		last = ends[len(ends)-1]
	}
	if s.ElapsedSeconds != nil && *s.ElapsedSeconds-last > LateReportFactor*iv {
		unreported += overlap(last, *s.ElapsedSeconds, warm)
	}
	if steady > 0 {
		sorted := slices.Clone(col[first:])
		slices.Sort(sorted)
		// The rate a stopped second is measured against: the steady
		// median, or the final report's rate when that is higher (a
		// window stopped throughout has a median of zero).
		if ref := math.Max(stats.Quantile(sorted, 0.5), final); ref >= MinStallRate {
			for i := first; i < len(ends); i++ {
				if col[i] < StoppedFraction*ref {
					stopped += math.Min(ends[i]-startOf(ends, i), iv)
				}
			}
		}
	}
	q.UnreportedSeconds = round(unreported, 100)
	stall := unreported + stopped
	if p95 := s.LatencyP95Ms; p95 != nil && *p95 > 0 && s.LatencyMaxMs >= LatencyStallRatio**p95 {
		stall = math.Max(stall, s.LatencyMaxMs/1000)
	}
	q.StallSeconds = round(stall, 100)

	// The final report against the series over the same run.
	if len(ends) >= 2 {
		var sum, width float64
		for i := range ends {
			w := ends[i] - startOf(ends, i)
			sum += col[i] * w
			width += w
		}
		rate := sum / width
		q.SeriesRate = round(rate, 100)
		q.MismatchTolerance = round(math.Max(MismatchFloor, MismatchSigmas*cvOf(col)/math.Sqrt(float64(len(col)))), 1e4)
		if top := math.Max(rate, final); top > 0 {
			q.FinalMismatch = round(math.Abs(final-rate)/top, 1e4)
		}
	}

	if steady < q.MinSteadySamples {
		q.Reasons = append(q.Reasons, QualityTooFewSteadySamples)
	}
	if stall >= q.StallLimitSeconds {
		q.Reasons = append(q.Reasons, QualityStalled)
	}
	if q.FinalMismatch > q.MismatchTolerance {
		q.Reasons = append(q.Reasons, QualitySteadyFinalMismatch)
	}
	q.Valid = len(q.Reasons) == 0
	return q
}

// startOf is the start of sample i: the end of the one before it.
func startOf(ends []float64, i int) float64 {
	if i == 0 {
		return 0
	}
	return ends[i-1]
}

// overlap is the length of (from, to] after the warm-up.
func overlap(from, to, warm float64) float64 {
	return math.Max(0, to-math.Max(from, warm))
}

func anyPositive(xs []float64) bool {
	return slices.ContainsFunc(xs, func(x float64) bool { return x > 0 })
}

// cvOf is the population stddev over the mean (0 for a zero mean).
func cvOf(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		m += x / float64(len(xs))
	}
	if m == 0 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss/float64(len(xs))) / m
}

func round(x, scale float64) float64 { return math.Round(x*scale) / scale }
