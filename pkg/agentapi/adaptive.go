package agentapi

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// Adaptive asks for steps of adaptive duration (docs/agent.md, "Adaptive
// step duration"): every closed-loop measured run of a step ends once more
// seconds would no longer improve its value meaningfully — its mean's
// within-run interval is small beside the between-run noise, or as narrow
// as TargetHalfWidthPercent — never before MinSeconds steady seconds, and
// at the latest at the step's configured seconds (ReadSeconds,
// WriteSeconds, a custom step's or TPC-C's duration), which stay the
// maximum. Nil (the default) runs every step for its configured seconds,
// as the reference method does. Fixed-rate runs, the profiled pass and
// the load's warm-up read step always run their configured time.
type Adaptive struct {
	// MinSeconds steady seconds (after the warm-up) run before a step may
	// stop; a step whose configured seconds are fewer runs those.
	MinSeconds int `json:"minSeconds"`
	// BetweenRunCVPercent is the between-run noise of a run's value, a
	// coefficient of variation in percent (from `kubectl dbbench noise`,
	// the run level); 0 leaves the Converged test out.
	BetweenRunCVPercent float64 `json:"betweenRunCVPercent,omitempty"`
	// TargetHalfWidthPercent is the within-run 95 % half-width of a step's
	// mean to reach, in percent of it; 0 leaves the TargetReached test out.
	TargetHalfWidthPercent float64 `json:"targetHalfWidthPercent,omitempty"`
	// BetweenRunCVPercentAt overrides BetweenRunCVPercent per point, keyed
	// PointKey(step, threads): the suite's measured noise
	// (workload.adaptive.betweenRunCVFromSuite).
	BetweenRunCVPercentAt map[string]float64 `json:"betweenRunCVPercentAt,omitempty"`
}

// PointKey is the key of a (step, threads) in BetweenRunCVPercentAt.
func PointKey(step string, threads int) string { return fmt.Sprintf("%s@%d", step, threads) }

// BetweenRunCVPercentFor is the between-run CV a run of step at threads
// stops against.
func (a *Adaptive) BetweenRunCVPercentFor(step string, threads int) float64 {
	if v, ok := a.BetweenRunCVPercentAt[PointKey(step, threads)]; ok {
		return v
	}
	return a.BetweenRunCVPercent
}

// validate names the first bad field of workload.adaptive.
func (a *Adaptive) validate(add func(string, ...any)) {
	if a == nil {
		return
	}
	if a.MinSeconds < 1 {
		add("workload.adaptive.minSeconds: %d must be at least 1", a.MinSeconds)
	}
	pct := func(name string, v float64) {
		if math.IsNaN(v) || v < 0 || v > 100 {
			add("workload.adaptive.%s: %v must be in [0, 100]", name, v)
		}
	}
	pct("betweenRunCVPercent", a.BetweenRunCVPercent)
	pct("targetHalfWidthPercent", a.TargetHalfWidthPercent)
	for _, k := range slices.Sorted(maps.Keys(a.BetweenRunCVPercentAt)) {
		if v := a.BetweenRunCVPercentAt[k]; !(v > 0 && v <= 100) {
			add("workload.adaptive.betweenRunCVPercentAt[%s]: %v must be in (0, 100]", k, v)
		}
	}
	if !(a.BetweenRunCVPercent > 0) && !(a.TargetHalfWidthPercent > 0) {
		add("workload.adaptive: one of betweenRunCVPercent and targetHalfWidthPercent is required")
	}
}
