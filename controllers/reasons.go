package controllers

// Reasons of the events the controllers record, declared once. The reasons
// of conditions (and of status.cells[].reason) are API and live in the API
// package, one file per kind (api/v1alpha1/*_reasons.go); label, annotation
// and finalizer keys in api/v1alpha1/labels.go. See docs/design.md,
// "Reasons, keys and labels".

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
	EventResultsUploaded      = "ResultsUploaded"
	EventUploadRetryRequested = "UploadRetryRequested"
	// EventSitePublishFailed: the suite's site could not be regenerated
	// after the run's upload (the run's results are uploaded; the next
	// run, an ack or kubectl dbbench site --publish regenerates it).
	EventSitePublishFailed = "SitePublishFailed"
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

// Reasons of the events about a BenchmarkSchedule.
const (
	EventRunCreated         = "RunCreated"
	EventRunDeleted         = "RunDeleted"
	EventRunReplaced        = "RunReplaced"
	EventRunSkipped         = "RunSkipped"
	EventMissedSchedule     = "MissedSchedule"
	EventTooManyMissedTimes = "TooManyMissedTimes"
)

// Reasons of the events about a BenchmarkBisection (the Localized
// condition's reasons are in the API package).
const (
	EventRoundCreated       = "RoundCreated"
	EventEndpointsChecked   = "EndpointsChecked"
	EventEnvironmentChanged = "EnvironmentChanged"
	// EventBisectionExplained announces a change of the Explained
	// condition, named after it.
	EventBisectionExplained = dbbenchv1alpha1.BisectionConditionExplained
	// EventBisectionLocalized and EventBisectionNotLocalized announce the
	// bisection's end, named after the phase it ends in.
	EventBisectionLocalized    = string(dbbenchv1alpha1.BisectionLocalized)
	EventBisectionNotLocalized = string(dbbenchv1alpha1.BisectionNotLocalized)
)

// Reasons of the events about a BenchmarkAck (with the Published
// condition's reasons).
const (
	EventAckPublished   = "AckPublished"
	EventAckUnpublished = "AckUnpublished"
)
