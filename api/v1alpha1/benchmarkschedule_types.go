package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConcurrencyPolicy says what a schedule does when a run is due while an
// earlier run of the same schedule is still active.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

const (
	// ConcurrencyAllow starts the new run next to the active ones.
	ConcurrencyAllow ConcurrencyPolicy = "Allow"
	// ConcurrencyForbid skips the due time while a run is active; the
	// skipped time still starts when the active run finishes within
	// startingDeadlineSeconds (no deadline: as soon as it finishes).
	ConcurrencyForbid ConcurrencyPolicy = "Forbid"
	// ConcurrencyReplace deletes the active runs and starts the new one.
	ConcurrencyReplace ConcurrencyPolicy = "Replace"
)

// BenchmarkScheduleSpec creates BenchmarkRuns from a template on a cron
// schedule, like a CronJob creates Jobs: for nightly regression suites.
type BenchmarkScheduleSpec struct {
	// schedule is a standard five-field cron expression (minute hour
	// day-of-month month day-of-week, e.g. "0 2 * * *" for 02:00 every day)
	// or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight,
	// @hourly. Times are in timeZone. The controller reports a schedule
	// that passes this check but does not parse (e.g. minute 61) in the
	// Ready condition.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="!self.contains('TZ=')",message="schedule: CRON_TZ and TZ are not supported here; set spec.timeZone"
	// +kubebuilder:validation:XValidation:rule="self.matches('^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[0-9A-Za-z*/,?-]+( +[0-9A-Za-z*/,?-]+){4})$')",message="schedule: must be five cron fields (minute hour day-of-month month day-of-week) or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly"
	Schedule string `json:"schedule"`

	// timeZone is the IANA time zone the schedule is read in, e.g.
	// "Europe/Berlin". The controller's local time zone (UTC in its
	// image) when empty. An unknown name is reported in the Ready condition.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9_+/-]*$`
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// suspend stops the creation of new runs; active runs continue. Times
	// that pass while suspended count as missed.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// concurrencyPolicy says what happens when a run is due while an
	// earlier one is active: Allow starts it anyway, Forbid skips it
	// (benchmarks sharing nodes would disturb each other), Replace deletes
	// the active runs first.
	// +kubebuilder:default=Forbid
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// startingDeadlineSeconds is how late a run may still start after its
	// time (controller down, Forbid with an active run); later times are
	// skipped and reported in a MissedSchedule event. No deadline when
	// empty: the most recent missed time starts as soon as it can.
	// +kubebuilder:validation:Minimum=0
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// successfulRunsHistoryLimit is how many succeeded runs are kept; older
	// ones are deleted with their children.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	SuccessfulRunsHistoryLimit *int32 `json:"successfulRunsHistoryLimit,omitempty"`

	// failedRunsHistoryLimit is how many failed runs are kept; older ones
	// are deleted with their children.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	FailedRunsHistoryLimit *int32 `json:"failedRunsHistoryLimit,omitempty"`

	// runTemplate is the BenchmarkRun every schedule time creates. Runs are
	// named <schedule>-<schedule time in Unix minutes>, carry the label
	// dbbench.io/schedule and, when runTemplate.spec.suite is empty, the
	// schedule's name as their suite.
	RunTemplate BenchmarkRunTemplate `json:"runTemplate"`
}

// BenchmarkRunTemplate is the run a schedule creates.
type BenchmarkRunTemplate struct {
	// metadata holds labels and annotations copied to every run.
	// +optional
	Metadata RunTemplateMetadata `json:"metadata,omitempty"`

	// spec is the BenchmarkRun spec of every run.
	Spec BenchmarkRunSpec `json:"spec"`
}

// RunTemplateMetadata is the part of a run's metadata a template may set.
type RunTemplateMetadata struct {
	// labels are added to every run.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations are added to every run.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// BenchmarkScheduleStatus is the observed state of a schedule.
type BenchmarkScheduleStatus struct {
	// observedGeneration is the generation the status describes: 0 (the
	// default) until the controller has written a status, so that kstatus
	// and Argo CD read a new object as in progress.
	// +kubebuilder:default=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// active references the runs of this schedule that have not finished.
	// +listType=atomic
	// +optional
	Active []corev1.ObjectReference `json:"active,omitempty"`

	// lastScheduleTime is the schedule time of the last run created.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// lastSuccessfulTime is when the last succeeded run finished.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// nextScheduleTime is the next schedule time after the last pass (the
	// Ready condition's message says it to people); absent while the
	// schedule is suspended or invalid. A time already due that waits for
	// an active run (concurrencyPolicy Forbid) is not the next one.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`
}

// BenchmarkSchedule creates BenchmarkRuns from a template on a cron
// schedule, keeping a bounded history of finished runs.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bs,categories=dbbench
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 54 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name: must be a DNS label of at most 54 characters (runs are named <schedule>-<Unix minutes> and take it as their suite)"
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=`.status.active[0].name`,description="The active run (the first, when several are)"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Last Schedule",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BenchmarkSchedule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the schedule and the run template.
	Spec BenchmarkScheduleSpec `json:"spec"`

	// status is the observed state.
	// +optional
	// +kubebuilder:default={}
	Status BenchmarkScheduleStatus `json:"status,omitempty"`
}

// BenchmarkScheduleList is a list of BenchmarkSchedules.
//
// +kubebuilder:object:root=true
type BenchmarkScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchmarkSchedule `json:"items"`
}

func init() {
	register(&BenchmarkSchedule{}, &BenchmarkScheduleList{})
}
