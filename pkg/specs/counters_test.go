package specs

import (
	"slices"
	"strings"
	"testing"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// workload.counters.extra reaches the agent's plan as is (a copy), and the
// plan refuses a name that is not one.
func TestPlanExtraCounters(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spec    *dbbenchv1alpha1.CountersSpec
		want    []string
		wantErr string
	}{
		{"none", nil, nil, ""},
		{"extra", &dbbenchv1alpha1.CountersSpec{Extra: []string{"Innodb_pages_written", "pg_stat_io.autovacuum_worker.relation.hits"}},
			[]string{"Innodb_pages_written", "pg_stat_io.autovacuum_worker.relation.hits"}, ""},
		{"bad name", &dbbenchv1alpha1.CountersSpec{Extra: []string{"ok", "drop table"}}, []string{"ok", "drop table"},
			`workload.extraCounters[1]: "drop table" is not a counter name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, cell := testRun("mariadb", func(r *dbbenchv1alpha1.BenchmarkRun) { r.Spec.Workload.Counters = tc.spec })
			p := Plan(run, cell, 1, []string{"point-query"})
			if !slices.Equal(p.Workload.ExtraCounters, tc.want) {
				t.Errorf("extra counters %q, want %q", p.Workload.ExtraCounters, tc.want)
			}
			if tc.spec != nil && len(tc.spec.Extra) > 0 {
				p.Workload.ExtraCounters[0] = "changed"
				if tc.spec.Extra[0] == "changed" {
					t.Error("the plan shares the spec's slice")
				}
			}
			err := p.Validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Validate: %v, want %q", err, tc.wantErr)
			}
		})
	}
}
