package v1alpha1

// Condition types and reasons of a BenchmarkAck.
const (
	// AckConditionAccepted is True when the suite has the run, and the run
	// the cell, step and thread count the ack names; False (reason
	// SuiteNotFound, RunNotFound, CellNotFound, StepNotFound,
	// ThreadsNotFound) naming what is missing. An ack that is not
	// accepted covers nothing.
	AckConditionAccepted = "Accepted"
	// AckConditionPublished is True when the ack is in the suite's object
	// store (status.url) and the suite's site was regenerated with it;
	// False with reason NoObjectStore when no run or schedule of the
	// suite in the namespace uploads to one, PublishFailed when the store
	// refused or could not be reached (retried), Conflict when an ack of
	// the same name from another namespace holds the key.
	AckConditionPublished = "Published"

	AckReasonAccepted        = "Accepted"
	AckReasonSuiteNotFound   = "SuiteNotFound"
	AckReasonRunNotFound     = "RunNotFound"
	AckReasonCellNotFound    = "CellNotFound"
	AckReasonStepNotFound    = "StepNotFound"
	AckReasonThreadsNotFound = "ThreadsNotFound"
	// AckReasonHistoryUnreadable: the suite's runs could not be read to
	// check the ack (Accepted Unknown; retried).
	AckReasonHistoryUnreadable = "HistoryUnreadable"
	AckReasonPublished         = "Published"
	AckReasonNoObjectStore     = "NoObjectStore"
	AckReasonPublishFailed     = "PublishFailed"
	AckReasonConflict          = "Conflict"
)
