package v1alpha1

// Condition types and reasons of a BenchmarkSchedule.
const (
	// ScheduleConditionReady is True while the schedule parses: runs are
	// being created on time (reason Scheduled), or none as told (Suspended);
	// False with reason InvalidSchedule or InvalidTimeZone, Stalled True,
	// when the spec must change.
	ScheduleConditionReady = ConditionReady

	ScheduleReasonScheduled       = "Scheduled"
	ScheduleReasonSuspended       = "Suspended"
	ScheduleReasonInvalidSchedule = "InvalidSchedule"
	ScheduleReasonInvalidTimeZone = "InvalidTimeZone"
)
