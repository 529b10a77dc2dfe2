package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/workload"
)

// catalogRun is one engine's run of the whole catalog, shared by the tests
// that check it (TestRealCatalog, TestRealCatalogCounters), so that -run Real
// runs it once per engine and -run 'Real.*Counter' still runs it.
type catalogRun struct {
	once          sync.Once
	res           Result
	compact, full *results.Document
	steps         []string
	// progress is the last progress document the agent wrote.
	progress []byte
}

var (
	catalogRunsMu sync.Mutex
	catalogRuns   = map[agentapi.Engine]*catalogRun{}
)

// realCatalogRun runs the 42-step catalog (the 32 reported steps and the
// .pre steps), a custom Lua step and TPC-C on e, once per test binary. A
// run that could not produce its documents fails every test asking for it.
func realCatalogRun(t *testing.T, e agentapi.Engine) *catalogRun {
	t.Helper()
	catalogRunsMu.Lock()
	cr, ok := catalogRuns[e]
	if !ok {
		cr = &catalogRun{}
		catalogRuns[e] = cr
	}
	catalogRunsMu.Unlock()
	cr.once.Do(func() {
		dir, err := os.MkdirTemp("", "dbbench-catalog-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		script := filepath.Join(dir, "custom_count.lua")
		if err := os.WriteFile(script, []byte(customLua), 0o644); err != nil {
			t.Fatal(err)
		}
		var steps []string
		for _, s := range workload.Extended() {
			steps = append(steps, s.Name)
		}
		steps = append(steps, "my-count", workload.TPCCStep)
		p := realPlan(e, filepath.Join(dir, "out"), steps...)
		// One thread count: what the catalog checks is each step's
		// command, output and counters, which a second count repeats at
		// twice the time (realPlan's two counts are for the other tests).
		p.Workload.Threads = []int{2}
		p.Workload.Custom = []agentapi.CustomStep{{Name: "my-count", Script: script, DurationSeconds: 2}}
		p.Workload.TPCC = &agentapi.TPCC{Warehouses: 1, Tables: 1, DurationSeconds: 3, Threads: []int{2}, Isolation: "RC", UseForeignKeys: true}
		// An extra counter each engine has, one none has.
		extra := map[agentapi.Engine]string{agentapi.Postgres: "pg_stat_database.conflicts"}[e]
		if extra == "" {
			extra = "innodb_pages_written"
		}
		p.Workload.ExtraCounters = []string{extra, "no_such_counter"}
		cr.res, cr.compact, cr.full = runReal(t, p, realPassword)
		cr.steps = steps
		cr.progress, _ = os.ReadFile(filepath.Join(p.Results.Dir, agentapi.ResultKeyProgress))
	})
	if cr.full == nil {
		t.Fatalf("%s: the catalog run produced no documents (see the first test that ran it)", e)
	}
	return cr
}

// counterNames are, per engine, the counters the checks read: log bytes,
// physical page reads, logical page reads, rows inserted.
type counterNames struct{ log, physReads, logReads, inserted, extra string }

func countersFor(e agentapi.Engine) counterNames {
	if e == agentapi.Postgres {
		return counterNames{"pg_stat_wal.wal_bytes", "pg_stat_database.blks_read", "pg_stat_database.blks_hit",
			"pg_stat_database.tup_inserted", "pg_stat_database.conflicts"}
	}
	n := counterNames{"Innodb_os_log_written", "Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests",
		"Innodb_rows_inserted", "Innodb_pages_written"}
	if e == agentapi.MariaDB {
		// MariaDB (10.11 at least) has no Innodb_rows_*: the handler
		// calls count the rows (temporary tables' included).
		n.inserted = "Handler_write"
	}
	return n
}

// TestRealCatalogCounters checks the engine counters of every step of the
// catalog run: present, per the hardware metrics' operations, and
// plausible — writes log bytes, cached reads hardly read from disk, TPC-C's
// figures per transaction in the range its mix implies.
func TestRealCatalogCounters(t *testing.T) {
	tier.Core(t)
	needRealDB(t)
	for _, e := range realEngines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			cr := realCatalogRun(t, e)
			if cr.res.ExitCode != agentapi.ExitOK {
				t.Fatalf("exit %d: %v", cr.res.ExitCode, cr.res.Err)
			}
			n := countersFor(e)
			// Write steps whose window logged nothing. PostgreSQL's backends
			// flush their WAL statistics (pg_stat_wal) on their own schedule
			// and at exit, which a loaded machine can push past the window's
			// end (the agent waits 5 s for them): one such window per run is
			// tolerated there; none on MySQL and MariaDB, whose counters are
			// global and immediate.
			var unlogged []string
			writes := 0
			for i, s := range cr.full.Steps {
				c := s.Counters
				if c == nil {
					t.Errorf("%s@%d: no counters", s.Step, s.Threads)
					continue
				}
				t.Logf("%s@%d: %.0f ops over %.2f s; log %.1f B/op, phys reads %.4f/op, logical reads %.2f/op, inserted %.3f/op",
					s.Step, s.Threads, c.Operations, c.Seconds, c.PerOp[n.log], c.PerOp[n.physReads], c.PerOp[n.logReads], c.PerOp[n.inserted])
				// Same window and operations as the hardware metrics.
				if h := s.Hardware; h == nil || c.OpsPerSecond != h.OpsPerSecond || c.OpsBasis != h.OpsBasis {
					t.Errorf("%s@%d: counters per %v/s (%s), hardware %+v", s.Step, s.Threads, c.OpsPerSecond, c.OpsBasis, h)
				}
				if !(c.Seconds > 1) || !(c.Operations > 0) || len(c.PerOp) < 15 || len(c.Delta) != len(c.PerOp) {
					t.Errorf("%s@%d: window %.2f s, %v operations, %d per-op values, %d deltas", s.Step, s.Threads, c.Seconds, c.Operations, len(c.PerOp), len(c.Delta))
				}
				if _, ok := c.PerOp[n.extra]; !ok || strings.Join(c.Missing, ",") != "no_such_counter" {
					t.Errorf("%s@%d: extra %s: per op %v; missing %v", s.Step, s.Threads, n.extra, c.PerOp, c.Missing)
				}
				if cc := cr.compact.Steps[i].Counters; cc == nil || cc.Delta != nil || len(cc.PerOp) != len(c.PerOp) {
					t.Errorf("%s@%d: compact counters %+v", s.Step, s.Threads, cc)
				}
				wantSource := "SHOW GLOBAL STATUS"
				if e == agentapi.Postgres {
					wantSource = "pg_stat_database,pg_stat_wal,pg_stat_bgwriter" // PostgreSQL 15 (Debian 12)
				}
				if !strings.HasPrefix(c.Source, wantSource) {
					t.Errorf("%s@%d: source %q, want %q...", s.Step, s.Threads, c.Source, wantSource)
				}
				g, _ := workload.GroupOf(s.Step)
				switch {
				case s.Step == workload.TPCCStep:
					// Per TPC-C transaction (the divisor is queries): 45 %
					// new orders insert an order, a new order and ~10 order
					// lines each, 43 % payments a history row.
					perTxn := func(name string) float64 { return c.PerOp[name] * s.SteadyQPS / s.SteadyTPS }
					if v := perTxn(n.inserted); !(v > 1 && v < 30) {
						t.Errorf("tpcc: %s %.2f per transaction, want 1..30", n.inserted, v)
					}
					if v := perTxn(n.log); !(v > 100) {
						t.Errorf("tpcc: %s %.1f bytes per transaction", n.log, v)
					}
					if e == agentapi.Postgres {
						if v := perTxn("pg_stat_database.xact_commit"); !(v > 0.5 && v < 3) {
							t.Errorf("tpcc: %.2f commits per transaction", v)
						}
					}
				case g == workload.GroupWrite && s.Step == "delete" && s.Threads != cr.full.Steps[0].Threads:
					// delete removes rows without putting them back: the
					// test's 2000-row table can be empty by the next thread
					// count, whose deletes then change (and log) nothing.
				case g == workload.GroupWrite:
					writes++
					if !(c.PerOp[n.log] > 0) {
						unlogged = append(unlogged, fmt.Sprintf("%s@%d", s.Step, s.Threads))
					}
				case s.Step != "my-count":
					// 2000 rows, cached since the load: (almost) no reads
					// from disk for the page requests.
					phys, logical := c.PerOp[n.physReads], c.PerOp[n.logReads]
					if !(logical > 0) || phys > 0.01*logical {
						t.Errorf("%s@%d: %s %.4f per op for %s %.2f: a cached read step reads from disk", s.Step, s.Threads, n.physReads, phys, n.logReads, logical)
					}
				}
			}
			allowed := 0
			if e == agentapi.Postgres {
				allowed = 1
			}
			if writes == 0 || len(unlogged) > allowed {
				t.Errorf("write steps whose window logged 0 bytes per op: %v (of %d write steps; %d tolerated)", unlogged, writes, allowed)
			}
		})
	}
}
