package agentapi

import (
	"fmt"
	"slices"
	"strconv"
)

// FixedRate asks for open-loop runs: after a step's closed-loop run at a
// thread count, the same step at the same thread count with sysbench
// --rate, once per fraction of the throughput the closed-loop run measured
// and once per absolute rate (docs/reports.md, "Fixed-rate steps").
type FixedRate struct {
	// FractionsOfPeak are decimal fractions as the user wrote them ("0.5"),
	// each in (0, 1]; the result names keep the text.
	FractionsOfPeak []string `json:"fractionsOfPeak,omitempty"`
	// Rates are absolute targets in sysbench events (transactions) per
	// second.
	Rates []int `json:"rates,omitempty"`
	// Steps limits the runs to these steps of Workload.Steps; empty means
	// every step.
	Steps []string `json:"steps,omitempty"`
}

// ParseFraction reads one of FractionsOfPeak: a decimal number in (0, 1].
func ParseFraction(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0 && f <= 1) {
		return 0, fmt.Errorf("%q is not a fraction in (0, 1]", s)
	}
	return f, nil
}

// Applies reports whether step gets fixed-rate runs.
func (f *FixedRate) Applies(step string) bool {
	return f != nil && (len(f.Steps) == 0 || slices.Contains(f.Steps, step))
}

// Runs is the number of fixed-rate runs after each closed-loop run of a
// step it applies to.
func (f *FixedRate) Runs() int {
	if f == nil {
		return 0
	}
	return len(f.FractionsOfPeak) + len(f.Rates)
}

// validate names the first bad field of workload.fixedRate.
func (f *FixedRate) validate(steps []string, add func(string, ...any)) {
	if f == nil {
		return
	}
	if f.Runs() == 0 {
		add("workload.fixedRate: one of fractionsOfPeak or rates is required")
	}
	for i, s := range f.FractionsOfPeak {
		if _, err := ParseFraction(s); err != nil {
			add("workload.fixedRate.fractionsOfPeak[%d]: %v", i, err)
		}
	}
	for i, r := range f.Rates {
		if r < 1 {
			add("workload.fixedRate.rates[%d]: %d must be at least 1", i, r)
		}
	}
	for i, s := range f.Steps {
		if !slices.Contains(steps, s) {
			add("workload.fixedRate.steps[%d]: %q is not one of workload.steps", i, s)
		}
	}
}
