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
)

// Reasons of the events about a BenchmarkRun (with the condition reasons
// above where an event announces a condition: Regressed, PreflightFailed,
// UploadPending, UploadFailed).
const (
	EventRunStarted           = "RunStarted"
	EventRunSucceeded         = "RunSucceeded"
	EventRunFailed            = "RunFailed"
	EventCellRetried          = "CellRetried"
	EventCellSucceeded        = "CellSucceeded"
	EventCellFailed           = "CellFailed"
	EventResultsUploaded      = "ResultsUploaded"
	EventUploadRetryRequested = "UploadRetryRequested"
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
