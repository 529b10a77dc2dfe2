package v1alpha1

// ProfileSpec asks for on-CPU profiles of the database server: after every
// measured run of the cell, one more, unmeasured run of each chosen step
// with perf sampling the server's processes (software cpu-clock events with
// call graphs) from the collector sidecar. The folded stacks are stored
// with the step's result (steps[].profile) for `kubectl dbbench explain`.
// The measured figures never come from a profiled run.
//
// Profiling needs privileges the benchmark otherwise does not: the
// collector sidecar then runs as root with CAP_PERFMON and CAP_SYS_PTRACE
// (to open perf events on the server's processes and read their binaries
// through /proc), which the baseline and restricted Pod Security Standards
// refuse: the run's namespace must allow privileged pods. Off by default;
// docs/explain.md describes the trade-off.
type ProfileSpec struct {
	// steps are the steps to profile (names as in steps).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=64
	// +listType=set
	Steps []string `json:"steps"`

	// threads is the thread count of the profiled runs; it must be one the
	// step is measured at, whose result the profile joins. Default: the
	// step's largest.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	// +optional
	Threads int32 `json:"threads,omitempty"`

	// seconds are sampled per profiled run, after the workload's warm-up.
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600
	// +optional
	Seconds int32 `json:"seconds,omitempty"`

	// frequencyHz is the sampling rate per CPU (99 keeps clear of timer
	// ticks; perf's own default, 4000, costs far more).
	// +kubebuilder:default=99
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +optional
	FrequencyHz int32 `json:"frequencyHz,omitempty"`
}
