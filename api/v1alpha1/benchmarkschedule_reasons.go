package v1alpha1

// Condition types and reasons of a BenchmarkSchedule.
const (
	// ScheduleConditionReady is True while the schedule parses and runs are
	// being created on time; False (reason InvalidSchedule, InvalidTimeZone
	// or Suspended) when no run will be created.
	ScheduleConditionReady = "Ready"

	ScheduleReasonScheduled       = "Scheduled"
	ScheduleReasonSuspended       = "Suspended"
	ScheduleReasonInvalidSchedule = "InvalidSchedule"
	ScheduleReasonInvalidTimeZone = "InvalidTimeZone"
)
