package v1alpha1

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// The accessors of defaulted fields: one place for each default and each
// conversion (issue 25).
func TestDefaultedFieldAccessors(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  float64
		want float64
	}{
		{"maxPValue empty against a run", (&RegressionSpec{}).SignificanceLevel(), DefaultRunMaxPValue},
		{"maxPValue empty against change points", (&RegressionSpec{Against: RegressAgainstChangePoints}).SignificanceLevel(), DefaultChangePointsMaxPValue},
		{"maxPValue given", (&RegressionSpec{MaxPValue: "0.01"}).SignificanceLevel(), 0.01},
		{"maxPValue out of range", (&RegressionSpec{MaxPValue: "1.5"}).SignificanceLevel(), DefaultRunMaxPValue},
		{"minMagnitude", (&RegressionSpec{MinMagnitudePercent: 7}).MinMagnitude(), 0.07},
		{"lastRuns unset", float64((&RegressionSpec{}).LastRunsOrDefault()), DefaultLastRuns},
		{"lastRuns given", float64((&RegressionSpec{LastRuns: 12}).LastRunsOrDefault()), 12},
		{"bisection confidence empty", (&BenchmarkBisectionSpec{}).ConfidenceLevel(), DefaultBisectionConfidence},
		{"bisection confidence given", (&BenchmarkBisectionSpec{Confidence: "0.95"}).ConfidenceLevel(), 0.95},
		{"bisection maxPValue empty", (&BenchmarkBisectionSpec{}).SignificanceLevel(), DefaultBisectionMaxPValue},
		{"bisection maxPValue given", (&BenchmarkBisectionSpec{MaxPValue: ".1"}).SignificanceLevel(), 0.1},
		{"adaptive minSeconds unset", float64((&AdaptiveSpec{}).Min()), DefaultAdaptiveMinSeconds},
		{"adaptive minSeconds given", float64((&AdaptiveSpec{MinSeconds: 5}).Min()), 5},
		{"adaptive CV unset", (&AdaptiveSpec{}).BetweenRunCV(), 0},
		{"adaptive CV whole", (&AdaptiveSpec{BetweenRunCVPercent: ptr(intstr.FromInt32(2))}).BetweenRunCV(), 2},
		{"adaptive target decimal", (&AdaptiveSpec{TargetHalfWidthPercent: ptr(intstr.FromString("0.5"))}).TargetHalfWidth(), 0.5},
		{"adaptive target unreadable", (&AdaptiveSpec{TargetHalfWidthPercent: ptr(intstr.FromString("1%"))}).TargetHalfWidth(), 0},
		{"bisection parallelism unset", float64((&BenchmarkBisectionSpec{}).CandidatesPerRound()), DefaultBisectionParallelism},
		{"bisection repeats unset", float64((&BenchmarkBisectionSpec{}).CellsPerPoint()), DefaultBisectionRepeats},
		{"bisection repeats given", float64((&BenchmarkBisectionSpec{Repeats: 1}).CellsPerPoint()), 1},
		{"bisection maxCells unset", float64((&BenchmarkBisectionSpec{}).CellBudget()), DefaultBisectionMaxCells},
		{"regression.bisect repeats unset", float64((&RegressionBisect{}).CellsPerPoint()), DefaultBisectionRepeats},
		{"regression.bisect maxCells unset", float64((&RegressionBisect{}).CellBudget()), DefaultBisectionMaxCells},
		{"regression.bisect parallelism given", float64((&RegressionBisect{Parallelism: 3}).CandidatesPerRound()), 3},
		{"explain seconds unset", float64((&BisectionExplainSpec{}).ProfileSeconds()), DefaultBisectionExplainSeconds},
		{"profile seconds unset", float64((&ProfileSpec{}).SampledSeconds()), DefaultProfileSeconds},
		{"profile frequency given", float64((&ProfileSpec{FrequencyHz: 49}).SamplingHz()), 49},
		{"workload repeats unset", float64((&WorkloadSpec{}).RepeatsPerCell()), 1},
		{"maxParallelCells unset", float64((&PlacementSpec{}).ParallelCells()), 1},
		{"history of successes unset", float64((&BenchmarkScheduleSpec{}).SucceededToKeep()), DefaultSuccessfulRunsHistoryLimit},
		{"history of failures zero", float64((&BenchmarkScheduleSpec{FailedRunsHistoryLimit: ptr(int32(0))}).FailedToKeep()), 0},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// The defaulted booleans and names, unset and set against their default.
func TestDefaultedFlagAccessors(t *testing.T) {
	no, yes := ptr(false), ptr(true)
	for _, tc := range []struct {
		name      string
		got, want bool
	}{
		{"preparedStatements unset", (&WorkloadSpec{}).PreparedStatementsOn(), true},
		{"preparedStatements off", (&WorkloadSpec{PreparedStatements: no}).PreparedStatementsOn(), false},
		{"exclusiveNodes unset", (&PlacementSpec{}).Exclusive(), true},
		{"exclusiveNodes off", (&PlacementSpec{ExclusiveNodes: no}).Exclusive(), false},
		{"suspend unset", (&BenchmarkScheduleSpec{}).IsSuspended(), false},
		{"suspend on", (&BenchmarkScheduleSpec{Suspend: yes}).IsSuspended(), true},
		{"ack resolution unset", (&BenchmarkAckSpec{}).ResolutionOrDefault() == AckAcknowledged, true},
		{"credentials user key unset", (&CredentialsSecretRef{}).UserKeyOrDefault() == DefaultCredentialsUserKey, true},
		{"credentials password key given", (&CredentialsSecretRef{PasswordKey: "pw"}).PasswordKeyOrDefault() == "pw", true},
		{"ack resolution Invalid", (&BenchmarkAckSpec{Resolution: AckInvalid}).ResolutionOrDefault() == AckInvalid, true},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
