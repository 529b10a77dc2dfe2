package benchmarkrun

import dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"

// Reasons of the events about a BenchmarkRun (with the condition reasons
// of the API package where an event announces a condition: Regressed, PreflightFailed,
// UploadPending, UploadFailed).
const (
	EventRunStarted    = "RunStarted"
	EventRunSucceeded  = "RunSucceeded"
	EventRunFailed     = "RunFailed"
	EventCellRetried   = "CellRetried"
	EventCellSucceeded = "CellSucceeded"
	EventCellFailed    = "CellFailed"
	// EventStepsInvalid: a cell succeeded with step results the quality
	// gate marked invalid (status.cells[].quality), a Warning.
	EventStepsInvalid = "StepsInvalid"
	// EventTargetReady: a templated cell's object reported its ready
	// condition; the cell's first attempt starts.
	EventTargetReady          = "TargetReady"
	EventUploadRetryRequested = "UploadRetryRequested"
	// EventRoundAdded: workload.precision's target was not met yet, so
	// another round of every combination was added.
	EventRoundAdded = "RoundAdded"
	// EventGoalOutOfReach: spec.goal's prediction says the design falls
	// short and onOutOfReach is Run (with Fail the run fails with the
	// condition reason of the same name).
	EventGoalOutOfReach = dbbenchv1alpha1.ReasonGoalOutOfReach
	// EventBisectionCreated: a Regressed=True verdict created the
	// bisection spec.regression.bisect asks for.
	EventBisectionCreated = "BisectionCreated"
	// EventBisectionNotCreated: spec.regression.bisect could not create
	// one (status.regression.bisectionMessage says why).
	EventBisectionNotCreated = "BisectionNotCreated"
)
