package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/workload"
)

// TestRealPgbench runs the two pgbench steps on the real PostgreSQL server:
// pgbench's tables loaded once (scale 1), each step at 1 and 2 clients
// with a steady value, a series, hardware figures and the pgbench command
// (without the password); on MariaDB the step is refused before any load.
func TestRealPgbench(t *testing.T) {
	tier.Core(t)
	needRealDB(t)
	if !hasEngine(agentapi.Postgres) {
		t.Skip("PostgreSQL is not among DBBENCH_REAL_DB_ENGINES")
	}
	p := realPlan(agentapi.Postgres, t.TempDir(), workload.PgbenchSelectStep, workload.PgbenchTPCBStep)
	p.Workload.Pgbench = &agentapi.Pgbench{Scale: 1}
	p.Workload.ReadSeconds, p.Workload.WriteSeconds, p.Workload.WarmupSeconds = 3, 3, 1
	a := &Agent{Plan: p, Host: "127.0.0.1", User: realUser, Password: realPassword,
		Collector: &ProcCollector{}, CollectorScope: "test host", ClientOnDBNode: true, Version: "test"}
	res, _, full := runRealAgent(t, a, 5*time.Minute, testing.Verbose())
	if res.ExitCode != agentapi.ExitOK {
		t.Fatalf("exit %d: %v", res.ExitCode, res.Err)
	}
	if len(full.Steps) != 4 {
		t.Fatalf("%d step results, want 2 steps × 2 thread counts", len(full.Steps))
	}
	for _, s := range full.Steps {
		if !(s.SteadyQPS > 0) || !(s.FinalTPS > 0) || s.Series == nil || len(s.Series.QPS) < 2 || s.Hardware == nil || s.Error != "" {
			t.Errorf("%s@%d: steady %.1f QPS, final %.1f TPS, series %v, hardware %v, error %q", s.Step, s.Threads, s.SteadyQPS, s.FinalTPS, s.Series, s.Hardware, s.Error)
		}
		cmd := strings.Join(s.Command, " ")
		if !strings.HasPrefix(cmd, "pgbench ") || strings.Contains(cmd, realPassword) {
			t.Errorf("%s@%d: command %q: want pgbench's, without the password", s.Step, s.Threads, cmd)
		}
		var ext StepExtension
		if err := json.Unmarshal(s.Extensions[ExtensionKey], &ext); err != nil || ext.Kind != KindPgbench {
			t.Errorf("%s@%d: extension kind %q (%v), want %s", s.Step, s.Threads, ext.Kind, err, KindPgbench)
		}
		if s.Step == workload.PgbenchTPCBStep && s.SteadyQPS < 6*s.SteadyTPS {
			t.Errorf("tpcb@%d: %.1f QPS for %.1f TPS: a TPC-B-like transaction is 7 statements", s.Threads, s.SteadyQPS, s.SteadyTPS)
		}
	}
	var cext CellExtension
	if err := json.Unmarshal(full.Extensions[ExtensionKey], &cext); err != nil || cext.PgbenchLoad == nil || cext.PgbenchLoad.Rows != 100_000 {
		t.Errorf("cell extension %+v (%v): want pgbench's load of 100,000 accounts", cext, err)
	}
	if full.Load != nil {
		t.Errorf("sbtest load %+v: no step uses sbtest", full.Load)
	}

	m := realPlan(agentapi.MariaDB, t.TempDir(), workload.PgbenchSelectStep)
	if hasEngine(agentapi.MariaDB) {
		res, compact, _ := runReal(t, m, realPassword)
		if res.ExitCode == agentapi.ExitOK || compact.Status.Outcome == results.OutcomeSucceeded || !strings.Contains(compact.Status.Error, "pgbench runs against PostgreSQL") {
			t.Errorf("pgbench on MariaDB: exit %d, status %+v: want it refused", res.ExitCode, compact.Status)
		}
	}
}
