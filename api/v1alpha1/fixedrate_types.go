package v1alpha1

// FixedRateSpec asks for fixed-rate (open-loop) runs. Closed-loop runs, the
// default, start each client's next transaction when its last one ends, so
// a slower server simply gets less work and its queueing never shows; a
// fixed-rate run generates transactions at the target rate whatever the
// server does (sysbench --rate, Poisson arrivals) and times each from when it
// was generated, so response time at a given load can be compared across
// versions. Each fixed-rate run is recorded as its own step,
// "<step>@<fraction>peak" or "<step>@<rate>tps", with the step's duration
// and warm-up.
// +kubebuilder:validation:XValidation:rule="(has(self.fractionsOfPeak) && size(self.fractionsOfPeak) > 0) || (has(self.rates) && size(self.rates) > 0)",message="fixedRate: set fractionsOfPeak or rates"
type FixedRateSpec struct {
	// fractionsOfPeak are targets relative to the closed-loop run just
	// before, in the same cell at the same thread count: "0.5" runs at half
	// the transactions per second it measured. Decimal strings in (0, 1].
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:Pattern=`^(0?\.[0-9]*[1-9][0-9]*|1(\.0+)?)$`
	// +kubebuilder:validation:items:MaxLength=8
	// +listType=set
	// +optional
	FractionsOfPeak []string `json:"fractionsOfPeak,omitempty"`

	// rates are absolute targets in sysbench events (transactions) per
	// second, the same for every cell, so cells are compared at equal load.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=1000000
	// +listType=set
	// +optional
	Rates []int32 `json:"rates,omitempty"`

	// steps limits the fixed-rate runs to these steps (names as in steps);
	// empty means every step.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=64
	// +listType=set
	// +optional
	Steps []string `json:"steps,omitempty"`
}
