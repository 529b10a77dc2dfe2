package specs

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
)

// TestOwnDatabaseName: the agent's database on an external target is a
// plain identifier within PostgreSQL's 63 bytes that the plan accepts, keeps
// the run UID's prefix and the end of the cell name (what differs between
// repeats), and differs between cells.
func TestOwnDatabaseName(t *testing.T) {
	cases := []struct {
		uid, cell, want string
	}{
		{"0123abcd-ef01-2345", "shop-external-default", "dbbench_0123abcd_shop_external_default"},
		{"0123ABCD-ef01", "shop-external-default-r2", "dbbench_0123abcd_shop_external_default_r2"},
		{"0123abcd", strings.Repeat("x", 50) + "-external-default-r12", ""},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		run := &dbbenchv1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "r", UID: types.UID(tc.uid)}}
		got := OwnDatabaseName(run, matrix.Cell{Name: tc.cell})
		if tc.want != "" && got != tc.want {
			t.Errorf("%s/%s: %q, want %q", tc.uid, tc.cell, got, tc.want)
		}
		if !agentapi.OwnDatabasePattern.MatchString(got) || len(got) > 63 {
			t.Errorf("%s/%s: %q (%d bytes) is not a valid own database name", tc.uid, tc.cell, got, len(got))
		}
		if !strings.HasSuffix(got, "_r12") && strings.HasSuffix(tc.cell, "-r12") {
			t.Errorf("%s: %q lost the repeat", tc.cell, got)
		}
		if seen[got] {
			t.Errorf("%q given to two cells", got)
		}
		seen[got] = true
	}
}

// TestPlanRefusesForeignDatabaseOnExternal: the agent drops server.database
// at the end, so on an external server the plan must name a dbbench one.
func TestPlanRefusesForeignDatabaseOnExternal(t *testing.T) {
	for _, tc := range []struct {
		db      string
		wantErr bool
	}{
		{"dbbench_0123abcd_shop", false},
		{"shop", true},
		{"dbbench_x; DROP DATABASE shop", true},
		{"DBBENCH_X", true},
	} {
		p := agentapi.Task{APIVersion: agentapi.APIVersion,
			Server:   agentapi.Server{Engine: agentapi.Postgres, Port: 5432, Database: tc.db, External: &agentapi.ExternalServer{Endpoint: "pg"}},
			Workload: agentapi.Workload{Steps: []string{"point-query"}, Tables: 1, TableSize: 1, ReadSeconds: 1, WriteSeconds: 1, Threads: []int{1}}}
		err := p.Validate()
		if got := err != nil && strings.Contains(err.Error(), "server.database"); got != tc.wantErr {
			t.Errorf("database %q: Validate() = %v, want a server.database error: %v", tc.db, err, tc.wantErr)
		}
	}
}
