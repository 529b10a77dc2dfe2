package v1alpha1

import (
	"cmp"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Accessors for optional fields whose zero value is meaningful (and so are
// pointers in Go). They return the schema default when the field is unset,
// which only happens for objects that did not pass through the API server.

// Warmup returns the workload' warm-up seconds (default 10).
func (w *WorkloadSpec) Warmup() int32 {
	if w.WarmupSeconds == nil {
		return 10
	}
	return *w.WarmupSeconds
}

// PreparedStatementsOn reports whether the client uses server-side
// prepared statements (default true).
func (w *WorkloadSpec) PreparedStatementsOn() bool {
	return w.PreparedStatements == nil || *w.PreparedStatements
}

// RepeatsPerCell is repeats (default 1).
func (w *WorkloadSpec) RepeatsPerCell() int32 { return positiveOr(w.Repeats, 1) }

// Exclusive reports whether a cell's database takes its node alone
// (exclusiveNodes, default true).
func (p *PlacementSpec) Exclusive() bool { return p.ExclusiveNodes == nil || *p.ExclusiveNodes }

// ParallelCells is maxParallelCells (default 1).
func (p *PlacementSpec) ParallelCells() int32 { return positiveOr(p.MaxParallelCells, 1) }

// The credentials Secret's keys by default (the CRD markers say the same).
const (
	DefaultCredentialsUserKey     = "username"
	DefaultCredentialsPasswordKey = "password"
)

// UserKeyOrDefault is userKey (default "username").
func (r *CredentialsSecretRef) UserKeyOrDefault() string {
	return cmp.Or(r.UserKey, DefaultCredentialsUserKey)
}

// PasswordKeyOrDefault is passwordKey (default "password").
func (r *CredentialsSecretRef) PasswordKeyOrDefault() string {
	return cmp.Or(r.PasswordKey, DefaultCredentialsPasswordKey)
}

// RetriesPerRun returns the run's retry budget (default 10).
func (r *RetrySpec) RetriesPerRun() int32 {
	if r.MaxRetriesPerRun == nil {
		return 10
	}
	return *r.MaxRetriesPerRun
}

// AttemptsPerCell returns the attempts a cell may make (default 3).
func (r *RetrySpec) AttemptsPerCell() int32 {
	if r.MaxAttemptsPerCell < 1 {
		return 3
	}
	return r.MaxAttemptsPerCell
}

// IsEnabled reports whether the run-level results ConfigMap is written
// (default true).
func (c *ConfigMapOutput) IsEnabled() bool { return c.Enabled == nil || *c.Enabled }

// DatabaseReadyTimeout returns timeouts.databaseReady (default 10m).
func (t *TimeoutsSpec) DatabaseReadyTimeout() time.Duration {
	if t.DatabaseReady == nil {
		return 10 * time.Minute
	}
	return t.DatabaseReady.Duration
}

// Default significance levels of the regression verdict.
const (
	DefaultRunMaxPValue          = 0.05
	DefaultChangePointsMaxPValue = 0.001
)

// SignificanceLevel is maxPValue as a number, or the default of the
// baseline kind when it is empty (or, against the schema, unreadable).
func (r *RegressionSpec) SignificanceLevel() float64 {
	def := DefaultRunMaxPValue
	if r.Against == RegressAgainstChangePoints {
		def = DefaultChangePointsMaxPValue
	}
	return decimalOr(r.MaxPValue, def)
}

// Target returns targetPercent as a number; an unreadable string (which
// the schema refuses) gives 0, which no half-width reaches.
func (p *PrecisionSpec) Target() float64 {
	if p.TargetPercent.Type == intstr.Int {
		return float64(p.TargetPercent.IntVal)
	}
	v, err := strconv.ParseFloat(p.TargetPercent.StrVal, 64)
	if err != nil {
		return 0
	}
	return v
}

// DefaultAdaptiveMinSeconds is adaptive.minSeconds' default (its CRD
// marker says the same).
const DefaultAdaptiveMinSeconds = 30

// Min returns adaptive.minSeconds (default DefaultAdaptiveMinSeconds).
func (a *AdaptiveSpec) Min() int32 {
	if a.MinSeconds < 1 {
		return DefaultAdaptiveMinSeconds
	}
	return a.MinSeconds
}

// BetweenRunCV returns betweenRunCVPercent as a number in percent, 0 when
// unset (or, against the schema, unreadable).
func (a *AdaptiveSpec) BetweenRunCV() float64 { return percentOf(a.BetweenRunCVPercent) }

// TargetHalfWidth returns targetHalfWidthPercent as a number in percent, 0
// when unset (or, against the schema, unreadable).
func (a *AdaptiveSpec) TargetHalfWidth() float64 { return percentOf(a.TargetHalfWidthPercent) }

func percentOf(v *intstr.IntOrString) float64 {
	if v == nil {
		return 0
	}
	if v.Type == intstr.Int {
		return float64(v.IntVal)
	}
	f, err := strconv.ParseFloat(v.StrVal, 64)
	if err != nil || !(f > 0 && f <= 100) {
		return 0
	}
	return f
}

// Min returns minRepeats (default 2), never above maxRepeats.
func (p *PrecisionSpec) Min() int32 {
	n := p.MinRepeats
	if n < 2 {
		n = 2
	}
	return min(n, max(p.MaxRepeats, 2))
}

// Max returns maxRepeats, at least Min's floor of 2.
func (p *PrecisionSpec) Max() int32 { return max(p.MaxRepeats, 2) }

// IsEnabled reports whether the run makes a pre-flight (the default).
func (p *PreflightSpec) IsEnabled() bool { return p.Enabled == nil || *p.Enabled }

// MinMagnitude is minMagnitudePercent as a fraction (5 → 0.05).
func (r *RegressionSpec) MinMagnitude() float64 { return float64(r.MinMagnitudePercent) / 100 }

// DefaultLastRuns is lastRuns' default (its CRD marker says the same).
const DefaultLastRuns = 30

// LastRunsOrDefault is lastRuns, DefaultLastRuns when unset (a spec
// written without the API server's defaulting, such as a unit test's).
func (r *RegressionSpec) LastRunsOrDefault() int {
	if r.LastRuns < 2 {
		return DefaultLastRuns
	}
	return int(r.LastRuns)
}

// Detect is goal.detectPercent as a number in percent, 0 when unset.
func (g *GoalSpec) Detect() float64 { return percentOf(g.DetectPercent) }

// HalfWidth is goal.halfWidthPercent as a number in percent, 0 when unset.
func (g *GoalSpec) HalfWidth() float64 { return percentOf(g.HalfWidthPercent) }

// DefaultGoalPowerPercent is goal.powerPercent's default.
const DefaultGoalPowerPercent = 90

// Power is goal.powerPercent as a probability (default 0.9).
func (g *GoalSpec) Power() float64 {
	if g.PowerPercent <= 0 {
		return DefaultGoalPowerPercent / 100.0
	}
	return float64(g.PowerPercent) / 100
}

// FailsOutOfReach says a design predicted to fall short fails the run
// (onOutOfReach: Fail, the default).
func (g *GoalSpec) FailsOutOfReach() bool { return g.OnOutOfReach != GoalRun }

// Finished reports whether the run reached a terminal condition: Succeeded
// or Failed is True. A finished run's cells and verdict do not change; its
// upload and site may still be under way.
func (s *BenchmarkRunStatus) Finished() bool {
	return meta.IsStatusConditionTrue(s.Conditions, ConditionSucceeded) ||
		meta.IsStatusConditionTrue(s.Conditions, ConditionFailed)
}
