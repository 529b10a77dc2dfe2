package agent

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
)

// userDatabase is "the user's data" on the external target: a database the
// agent connects to first, holding a table named like sysbench's (sbtest1),
// whose rows must survive the cell.
const (
	userDatabase = "userdata"
	userRows     = 3
)

// realServer opens the test servers as the test's superuser on database db.
func realServer(t *testing.T, e agentapi.Engine, db string) *Server {
	t.Helper()
	s := &Server{Engine: e, Host: "127.0.0.1", Port: realPorts[e], Database: db, User: realUser, Password: realPassword}
	if err := s.WaitReady(context.Background(), 20*time.Second); err != nil {
		t.Fatalf("%s: %v", e, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustExec(t *testing.T, db *sql.DB, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// seedUserData (re)creates the user's database with sbtest1 holding
// userRows sentinel rows.
func seedUserData(t *testing.T, e agentapi.Engine) {
	t.Helper()
	if e == agentapi.Postgres {
		admin := realServer(t, e, "postgres")
		mustExec(t, admin.db, "DROP DATABASE IF EXISTS "+userDatabase+" WITH (FORCE)", "CREATE DATABASE "+userDatabase)
		user := realServer(t, e, userDatabase)
		mustExec(t, user.db, "CREATE TABLE sbtest1 (id int PRIMARY KEY, note text)",
			"INSERT INTO sbtest1 VALUES (1, 'keep'), (2, 'keep'), (3, 'keep')")
		return
	}
	admin := realServer(t, e, "")
	mustExec(t, admin.db, "DROP DATABASE IF EXISTS "+userDatabase, "CREATE DATABASE "+userDatabase,
		"CREATE TABLE "+userDatabase+".sbtest1 (id int PRIMARY KEY, note varchar(16))",
		"INSERT INTO "+userDatabase+".sbtest1 VALUES (1, 'keep'), (2, 'keep'), (3, 'keep')")
}

// userRowsKept counts the user's sentinel rows that are still as seeded.
func userRowsKept(t *testing.T, e agentapi.Engine) int {
	t.Helper()
	s := realServer(t, e, userDatabase)
	var n int
	if err := s.db.QueryRow("SELECT COUNT(*) FROM sbtest1 WHERE note = 'keep'").Scan(&n); err != nil {
		t.Fatalf("reading the user's table: %v", err)
	}
	return n
}

// databaseExists asks the server whether a database of that name exists.
func databaseExists(t *testing.T, e agentapi.Engine, name string) bool {
	t.Helper()
	q := "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?"
	db := ""
	if e == agentapi.Postgres {
		q, db = "SELECT COUNT(*) FROM pg_database WHERE datname = $1", "postgres"
	}
	s := realServer(t, e, db)
	var n int
	if err := s.db.QueryRow(q, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// TestRealExternal runs cells against the test servers as external targets:
// the agent creates its own database, loads and runs in it and drops it, on
// success and when the cell is cut short, and the user's table of the same
// name as sysbench's, in the database the agent connects to, is untouched.
func TestRealExternal(t *testing.T) {
	tier.Core(t)
	needRealDB(t)
	cases := []externalCase{
		{name: "succeeds", timeout: 5 * time.Minute, seconds: 2, wantOK: true},
		// Cut during a 60-s step: the drop still runs (its own context).
		{name: "cancelled", timeout: 10 * time.Second, seconds: 60, wantOK: false},
	}
	for _, e := range []agentapi.Engine{agentapi.MariaDB, agentapi.Postgres} {
		if !hasEngine(e) {
			continue
		}
		// The engines at once (their own servers and databases), each
		// engine's cases in turn: 20 s of the core tier instead of 40.
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			externalCases(t, e, cases)
		})
	}
}

type externalCase struct {
	name    string
	timeout time.Duration
	seconds int
	wantOK  bool
}

func externalCases(t *testing.T, e agentapi.Engine, cases []externalCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seedUserData(t, e)
			p := realPlan(e, t.TempDir(), "point-query")
			p.Cell.Version = "external"
			p.Workload.ReadSeconds, p.Workload.WriteSeconds, p.Workload.Threads = tc.seconds, tc.seconds, []int{1}
			own := "dbbench_0123abcd_" + string(e) + "_external_default"
			p.Server.Database = own
			p.Server.External = &agentapi.ExternalServer{Endpoint: "127.0.0.1", ConnectDatabase: userDatabase}
			a := &Agent{Plan: p, Host: "127.0.0.1", User: realUser, Password: realPassword, Version: "test"}
			res, compact, _ := runRealAgent(t, a, tc.timeout, false)

			if ok := res.ExitCode == agentapi.ExitOK; ok != tc.wantOK {
				t.Fatalf("exit %d (%v), want success %v", res.ExitCode, res.Err, tc.wantOK)
			}
			ext := compact.Provenance.External
			if ext == nil {
				t.Fatal("provenance.external is missing")
			}
			if ext.Database != own || !ext.Dropped || ext.DropError != "" {
				t.Errorf("provenance.external = %+v, want database %s dropped", ext, own)
			}
			if len(ext.NotGuaranteed) != len(results.ExternalCaveats()) {
				t.Errorf("notGuaranteed = %v, want %v", ext.NotGuaranteed, results.ExternalCaveats())
			}
			if compact.Provenance.ServerVersion == "" {
				t.Error("provenance.serverVersion is empty: the server's own version must be recorded")
			}
			if tc.wantOK && len(compact.Steps) == 0 {
				t.Error("no steps recorded")
			}
			if databaseExists(t, e, own) {
				t.Errorf("database %s is still on the server", own)
			}
			if n := userRowsKept(t, e); n != userRows {
				t.Errorf("the user's %s.sbtest1 has %d of its %d rows", userDatabase, n, userRows)
			}
		})
	}
}

func hasEngine(e agentapi.Engine) bool {
	for _, x := range realEngines() {
		if x == e {
			return true
		}
	}
	return false
}
