package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AckResolution says what a BenchmarkAck decides about a change.
// +kubebuilder:validation:Enum=Acknowledged;Invalid
type AckResolution string

const (
	// AckAcknowledged: the change is real and known (a bug filed, a
	// bisection running, the accepted cost of a feature).
	AckAcknowledged AckResolution = "Acknowledged"
	// AckInvalid: the change is not real (noise, a broken node, a run
	// that measured something else).
	AckInvalid AckResolution = "Invalid"
)

// BenchmarkAckSpec acknowledges a change of a suite's performance: the
// change stays visible (status.regression.acknowledged of later runs, the
// suite's site) but later runs' verdicts no longer report it. The change
// is named by a run of its new level: the change point's first run
// (status.regression.regressed[].since), or the run whose verdict reported
// it. cell, step, threads and metric narrow it; left out, every one
// matches, so an ack naming only a run covers that run's whole verdict.
// Deleting the ack un-acknowledges the change.
// +kubebuilder:validation:XValidation:rule="self.suite == oldSelf.suite && self.run == oldSelf.run && has(self.cell) == has(oldSelf.cell) && (!has(self.cell) || self.cell == oldSelf.cell) && has(self.step) == has(oldSelf.step) && (!has(self.step) || self.step == oldSelf.step) && has(self.threads) == has(oldSelf.threads) && (!has(self.threads) || self.threads == oldSelf.threads) && has(self.metric) == has(oldSelf.metric) && (!has(self.metric) || self.metric == oldSelf.metric)",message="spec: suite, run, cell, step, threads and metric are immutable (they say which change is acknowledged); create another BenchmarkAck"
type BenchmarkAckSpec struct {
	// suite is the suite (spec.suite of its runs) the change belongs to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Suite string `json:"suite"`

	// run is a run of the changed level: the change point's first run,
	// or a later run whose verdict reported the change. An ack covers the
	// change whose new level this run is on, never a later change of the
	// series nor an earlier one.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Run string `json:"run"`

	// cell narrows the ack to one cell, by its name
	// (mariadb-11.4-base-r1) or its combination without the repeat
	// (mariadb-11.4-base).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Cell string `json:"cell,omitempty"`

	// step narrows the ack to one step (update-index).
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][-A-Za-z0-9_.=,]*$`
	// +optional
	Step string `json:"step,omitempty"`

	// threads narrows the ack to one thread count.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	Threads int32 `json:"threads,omitempty"`

	// metric narrows the ack to one metric of the verdict.
	// +optional
	Metric RegressionMetric `json:"metric,omitempty"`

	// resolution is Acknowledged (the change is real and known) or
	// Invalid (it is not a real change).
	// +kubebuilder:default=Acknowledged
	// +optional
	Resolution AckResolution `json:"resolution,omitempty"`

	// reason says why, for the people who read the verdicts and the site.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason"`

	// link is where the change is followed: a bug, a pull request.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[^ ]+$')",message="link: must be an http:// or https:// URL"
	// +optional
	Link string `json:"link,omitempty"`

	// bisection names the BenchmarkBisection that localizes the change.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Bisection string `json:"bisection,omitempty"`
}

// BenchmarkAckStatus is what the controller checked and published.
type BenchmarkAckStatus struct {
	// observedGeneration is the generation the status describes: 0 (the
	// default) until the controller has written a status, so that kstatus
	// and Argo CD read a new object as in progress.
	// +kubebuilder:default=0
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Accepted and Published.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// url is the ack's object in the suite's object store
	// (s3://bucket/<prefix>/<suite>/_acks/<name>.json).
	// +optional
	URL string `json:"url,omitempty"`

	// site is the suite's site, regenerated with the ack
	// (s3://bucket/<prefix>/<suite>/index.html).
	// +optional
	Site string `json:"site,omitempty"`
}

// BenchmarkAck acknowledges a change of a suite's performance, so that
// later verdicts do not report it again (kubectl dbbench ack).
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=back,categories=dbbench
// +kubebuilder:printcolumn:name="Suite",type=string,JSONPath=`.spec.suite`
// +kubebuilder:printcolumn:name="Run",type=string,JSONPath=`.spec.run`
// +kubebuilder:printcolumn:name="Step",type=string,JSONPath=`.spec.step`
// +kubebuilder:printcolumn:name="Threads",type=integer,JSONPath=`.spec.threads`
// +kubebuilder:printcolumn:name="Resolution",type=string,JSONPath=`.spec.resolution`
// +kubebuilder:printcolumn:name="Accepted",type=string,JSONPath=`.status.conditions[?(@.type=="Accepted")].reason`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.spec.reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BenchmarkAck struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec BenchmarkAckSpec `json:"spec"`
	// +kubebuilder:default={}
	Status BenchmarkAckStatus `json:"status,omitempty"`
}

// BenchmarkAckList is a list of BenchmarkAcks.
// +kubebuilder:object:root=true
type BenchmarkAckList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchmarkAck `json:"items"`
}

func init() {
	register(&BenchmarkAck{}, &BenchmarkAckList{})
}
