package v1alpha1

import "strconv"

// DefaultBisectionMaxPValue and DefaultBisectionConfidence are the
// bisection's own defaults, when neither its spec nor the referenced run
// sets them.
const (
	DefaultBisectionMaxPValue  = 0.05
	DefaultBisectionConfidence = 0.9
	DefaultBisectionMinMagPct  = 5
)

// ConfidenceLevel is confidence as a number, DefaultBisectionConfidence
// when empty (or, against the schema, unreadable).
func (s *BenchmarkBisectionSpec) ConfidenceLevel() float64 {
	return decimalOr(s.Confidence, DefaultBisectionConfidence)
}

// decimalOr parses a decimal in (0, 1), def when empty or out of range.
func decimalOr(v string, def float64) float64 {
	p, err := strconv.ParseFloat(v, 64)
	if v == "" || err != nil || !(p > 0 && p < 1) {
		return def
	}
	return p
}

// SignificanceLevel is maxPValue as a number, DefaultBisectionMaxPValue
// when empty (or, against the schema, unreadable).
func (s *BenchmarkBisectionSpec) SignificanceLevel() float64 {
	return decimalOr(s.MaxPValue, DefaultBisectionMaxPValue)
}

// The search limits' defaults (their CRD markers say the same, on the
// bisection and on a run's regression.bisect alike).
const (
	DefaultBisectionParallelism    = 1
	DefaultBisectionRepeats        = 2
	DefaultBisectionMaxCells       = 100
	DefaultBisectionExplainSeconds = 15
)

// positiveOr is v, def when v is not positive (unset).
func positiveOr(v, def int32) int32 {
	if v < 1 {
		return def
	}
	return v
}

// MinMagnitude is minMagnitudePercent as a fraction (5 → 0.05).
func (r *BisectionRule) MinMagnitude() float64 { return float64(r.MinMagnitudePercent) / 100 }

// CandidatesPerRound is parallelism (default 1).
func (s *BenchmarkBisectionSpec) CandidatesPerRound() int32 {
	return positiveOr(s.Parallelism, DefaultBisectionParallelism)
}

// CellsPerPoint is repeats (default 2).
func (s *BenchmarkBisectionSpec) CellsPerPoint() int32 {
	return positiveOr(s.Repeats, DefaultBisectionRepeats)
}

// CellBudget is maxCells (default 100).
func (s *BenchmarkBisectionSpec) CellBudget() int32 {
	return positiveOr(s.MaxCells, DefaultBisectionMaxCells)
}

// CandidatesPerRound is the bisection's parallelism this creates (default 1).
func (r *RegressionBisect) CandidatesPerRound() int32 {
	return positiveOr(r.Parallelism, DefaultBisectionParallelism)
}

// CellsPerPoint is the bisection's repeats this creates (default 2).
func (r *RegressionBisect) CellsPerPoint() int32 {
	return positiveOr(r.Repeats, DefaultBisectionRepeats)
}

// CellBudget is the bisection's maxCells this creates (default 100).
func (r *RegressionBisect) CellBudget() int32 {
	return positiveOr(r.MaxCells, DefaultBisectionMaxCells)
}

// ProfileSeconds is seconds sampled per profiled pass (default 15).
func (e *BisectionExplainSpec) ProfileSeconds() int32 {
	return positiveOr(e.Seconds, DefaultBisectionExplainSeconds)
}
