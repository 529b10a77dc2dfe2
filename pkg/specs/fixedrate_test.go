package specs

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
)

// workload.fixedRate reaches the agent's plan as is.
func TestPlanFixedRate(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec *dbbenchv1alpha1.FixedRateSpec
		want *agentapi.FixedRate
	}{
		{"absent", nil, nil},
		{"fractions, rates and steps", &dbbenchv1alpha1.FixedRateSpec{FractionsOfPeak: []string{"0.5", "0.9"}, Rates: []int32{250}, Steps: []string{"point-query"}},
			&agentapi.FixedRate{FractionsOfPeak: []string{"0.5", "0.9"}, Rates: []int{250}, Steps: []string{"point-query"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, cell := testRun("mariadb", func(r *dbbenchv1alpha1.BenchmarkRun) { r.Spec.Workload.FixedRate = tc.spec })
			p := Plan(run, cell, 1, []string{"point-query"})
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, p.Workload.FixedRate); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
