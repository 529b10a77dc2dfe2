package v1alpha1

// The history limits' defaults (their CRD markers say the same).
const (
	DefaultSuccessfulRunsHistoryLimit = 3
	DefaultFailedRunsHistoryLimit     = 1
)

// IsSuspended reports whether suspend is set (default false).
func (s *BenchmarkScheduleSpec) IsSuspended() bool { return s.Suspend != nil && *s.Suspend }

// SucceededToKeep is successfulRunsHistoryLimit (default 3; 0 keeps none).
func (s *BenchmarkScheduleSpec) SucceededToKeep() int32 {
	if s.SuccessfulRunsHistoryLimit == nil {
		return DefaultSuccessfulRunsHistoryLimit
	}
	return *s.SuccessfulRunsHistoryLimit
}

// FailedToKeep is failedRunsHistoryLimit (default 1; 0 keeps none).
func (s *BenchmarkScheduleSpec) FailedToKeep() int32 {
	if s.FailedRunsHistoryLimit == nil {
		return DefaultFailedRunsHistoryLimit
	}
	return *s.FailedRunsHistoryLimit
}
