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
