package controllers

// Reasons of the conditions and events the controllers set, declared once.
// The ResultsUploaded condition's reasons are in run_upload.go, the cell
// failure reasons are dbbenchv1alpha1.FailureReason (failure_policy.go),
// and the BenchmarkSchedule's Ready reasons are in the API package.

// Reasons of a BenchmarkRun's Progressing, Succeeded and Failed conditions.
const (
	ReasonCellsRunning      = "CellsRunning"
	ReasonFinished          = "Finished"
	ReasonInvalidSpec       = "InvalidSpec"
	ReasonCellsFailed       = "CellsFailed"
	ReasonAllCellsSucceeded = "AllCellsSucceeded"
)

// Reasons of a BenchmarkRun's Regressed condition.
const (
	ReasonRegressed        = "Regressed"
	ReasonNoRegression     = "NoRegression"
	ReasonNoHistory        = "NoHistory"
	ReasonBaselineNotFound = "BaselineNotFound"
	ReasonAnalysisFailed   = "AnalysisFailed"
	// ReasonRegressionSuspected: only this run, the newest of a
	// ChangePoints history, shows a drop (changepoint.Suspected); the next
	// run confirms it or clears it. Not a regression yet, so one outlier run
	// does not fail a suite; this verdict is not revised when the next run
	// confirms it (that run's verdict says Regressed).
	ReasonRegressionSuspected = "RegressionSuspected"
	// ReasonRegressionAcknowledged: every pair that moved the wrong way is
	// covered by a BenchmarkAck (status.regression.acknowledged); the
	// condition is False.
	ReasonRegressionAcknowledged = "RegressionAcknowledged"
	// ReasonEnvironmentChanged: every reported pair coincides with a
	// change of the environment and no change of the build
	// (regressed[].environmentOnly); the condition is True (the figures
	// did move) and no bisection is started.
	ReasonEnvironmentChanged = "EnvironmentChanged"
)

// Reasons of the events about a BenchmarkRun (with the condition reasons
// above where an event announces a condition: Regressed, PreflightFailed,
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
	EventRoundCreated          = "RoundCreated"
	EventEndpointsChecked      = "EndpointsChecked"
	EventEnvironmentChanged    = "EnvironmentChanged"
	EventBisectionExplained    = "Explained"
	EventBisectionLocalized    = "Localized"
	EventBisectionNotLocalized = "NotLocalized"
)
