package benchmarkschedule

// Reasons of the events about a BenchmarkSchedule.
const (
	EventRunCreated         = "RunCreated"
	EventRunDeleted         = "RunDeleted"
	EventRunReplaced        = "RunReplaced"
	EventRunSkipped         = "RunSkipped"
	EventMissedSchedule     = "MissedSchedule"
	EventTooManyMissedTimes = "TooManyMissedTimes"
)
