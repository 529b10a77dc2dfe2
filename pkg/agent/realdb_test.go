package agent

// Tests against real database servers. They run only with DBBENCH_REAL_DB=1:
//
//	DBBENCH_REAL_DB=1 go test ./pkg/agent -run Real -v -timeout 15m
//
// TestMain then starts MariaDB, PostgreSQL and MySQL with hack/dbservers.sh
// (on 127.0.0.1, free ports, a private temporary data root; MySQL 9.7 runs
// from a Debian sid root built once in the user's cache) and stops them at
// the end. With DBBENCH_KEEP_DB=1 it uses the script's fixed ports and
// default root instead, reuses servers already running there and leaves them
// running. DBBENCH_REAL_DB_ENGINES narrows the engines ("mariadb postgres
// mysql" by default).

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbbench/dbbench/internal/testutil/dbservers"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/workload"
)

const (
	realUser     = "dbbench"
	realPassword = "dbbench-pw"
)

// realPorts are hack/dbservers.sh's fixed ports, used with DBBENCH_KEEP_DB=1
// (servers left running and reused across runs); otherwise TestMain starts
// servers of its own on free ports.
var realPorts = map[agentapi.Engine]int{agentapi.MariaDB: 33306, agentapi.Postgres: 35432, agentapi.MySQL: 34306}

func realEngines() []agentapi.Engine {
	s := os.Getenv("DBBENCH_REAL_DB_ENGINES")
	if s == "" {
		s = "mariadb postgres mysql"
	}
	var out []agentapi.Engine
	for _, f := range strings.Fields(s) {
		out = append(out, agentapi.Engine(f))
	}
	return out
}

// repoRoot is the checkout's root, from this package's directory.
var repoRoot = filepath.Join("..", "..")

func TestMain(m *testing.M) {
	os.Exit(func() int {
		if os.Getenv("DBBENCH_REAL_DB") != "1" {
			return m.Run()
		}
		// The TPC-C step loads a tenth of the specification's data set.
		os.Setenv(EnvTPCCDataDivisor, "10")
		// The engines' catalog runs are parallel subtests that mostly wait on
		// sysbench's clock: run all of them at once even when -parallel
		// (GOMAXPROCS by default: 2 here) is lower, unless it was given.
		flag.Parse()
		explicit := false
		flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
		if n := len(realEngines()); !explicit && n > runtime.GOMAXPROCS(0) {
			_ = flag.Set("test.parallel", strconv.Itoa(n))
		}
		keep := os.Getenv("DBBENCH_KEEP_DB") == "1"
		if !keep {
			// Servers of our own: a private data root and free ports, so a
			// concurrent run on the same machine (another checkout, another
			// engineer) neither drops our tables nor stops our servers.
			root, err := os.MkdirTemp("", "dbbench-dbservers-")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			defer os.RemoveAll(root)
			_ = os.Chmod(root, 0o755) // PostgreSQL runs as its own user
			os.Setenv("DBBENCH_DB_ROOT", root)
			for _, e := range realEngines() {
				port, err := dbservers.FreePort()
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					return 1
				}
				realPorts[e] = port
				os.Setenv(dbservers.PortEnv[e], strconv.Itoa(port))
			}
		}
		for _, e := range realEngines() {
			if _, ok := dbservers.PortEnv[e]; !ok {
				fmt.Fprintf(os.Stderr, "DBBENCH_REAL_DB_ENGINES: unknown engine %q\n", e)
				return 1
			}
			if err := dbservers.Script(repoRoot, "start", e, nil); err != nil {
				fmt.Fprintf(os.Stderr, "starting %s: %v\n", e, err)
				return 1
			}
			if !keep {
				defer func() { _ = dbservers.Script(repoRoot, "stop", e, nil) }() // best effort at exit
			}
		}
		return m.Run()
	}())
}

func needRealDB(t *testing.T) {
	t.Helper()
	if os.Getenv("DBBENCH_REAL_DB") != "1" {
		t.Skip("set DBBENCH_REAL_DB=1 to run against real MariaDB, PostgreSQL and MySQL (hack/dbservers.sh)")
	}
}

// realPlan is a tiny cell: 1 table x 2000 rows, 2-s steps (1-s runs may end
// before sysbench's first interval line), threads 1 and 2.
func realPlan(e agentapi.Engine, dir string, steps ...string) agentapi.Task {
	return agentapi.Task{
		APIVersion: agentapi.APIVersion,
		Run:        agentapi.RunRef{Name: "realdb", Suite: "extended"},
		Cell:       agentapi.Cell{Name: string(e) + "-test", Database: string(e), Engine: e, Version: "debian", Config: "test", Attempt: 1},
		Server:     agentapi.Server{Engine: e, Port: realPorts[e], Database: "sbtest", ReadyTimeoutSeconds: 20},
		Workload: agentapi.Workload{Steps: steps, Tables: 1, TableSize: 2000, ReadSeconds: 2, WriteSeconds: 2,
			Threads: []int{1, 2}, PreparedStatements: true, FlushWaitSeconds: 3},
		Results: agentapi.Results{Dir: dir},
	}
}

// customLua is a user script, run like a catalog step.
const customLua = `
function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
end
function thread_done() con:disconnect() end
function event()
   local id = sysbench.rand.uniform(1, sysbench.opt.table_size)
   con:query(string.format("SELECT COUNT(*) FROM sbtest1 WHERE id BETWEEN %d AND %d", id, id + 9))
end
sysbench.cmdline.options = {
   table_size = {"rows", 1000},
   tables = {"tables", 1},
}
`

func runReal(t *testing.T, p agentapi.Task, password string) (Result, *results.Document, *results.Document) {
	t.Helper()
	a := &Agent{Plan: p, Host: "127.0.0.1", User: realUser, Password: password,
		Collector: &ProcCollector{}, CollectorScope: "test host", ClientOnDBNode: true, Version: "test"}
	return runRealAgent(t, a, 12*time.Minute, false)
}

// runRealAgent runs a, writing to its plan's results directory, and returns
// its result and the compact and full documents it wrote, each validated
// against the schema. The agent's log is shown with logAlways, else when the
// test or the run has failed.
func runRealAgent(t *testing.T, a *Agent, timeout time.Duration, logAlways bool) (Result, *results.Document, *results.Document) {
	t.Helper()
	var log strings.Builder
	a.Log, a.Sink = &log, DirSink{Dir: a.Plan.Results.Dir}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res := a.Run(ctx)
	if logAlways || t.Failed() || res.ExitCode != 0 {
		t.Logf("agent log:\n%s", log.String())
	}
	compact, err := os.ReadFile(filepath.Join(a.Plan.Results.Dir, agentapi.ResultKeyDocument))
	if err != nil {
		t.Fatalf("no compact document: %v", err)
	}
	full, err := os.ReadFile(filepath.Join(a.Plan.Results.Dir, FullDocumentFile))
	if err != nil {
		t.Fatalf("no full document: %v", err)
	}
	return res, validateDocument(t, compact), validateDocument(t, full)
}

// TestRealCatalog runs the whole 42-step catalog (the 32 reported steps and
// the .pre steps), TPC-C and a custom Lua step on each engine, at 2 threads.
func TestRealCatalog(t *testing.T) {
	tier.Core(t)
	needRealDB(t)
	for _, e := range realEngines() {
		t.Run(string(e), func(t *testing.T) {
			t.Parallel()
			cr := realCatalogRun(t, e)
			res, compact, full, steps := cr.res, cr.compact, cr.full, cr.steps
			if res.ExitCode != agentapi.ExitOK {
				t.Fatalf("exit %d: %v", res.ExitCode, res.Err)
			}
			if compact.Status.Outcome != results.OutcomeSucceeded || compact.Form != results.FormCompact || full.Form != results.FormFull {
				t.Errorf("status %+v, forms %s/%s", compact.Status, compact.Form, full.Form)
			}
			want := len(steps) // every step, TPC-C included, at 2 threads
			if len(full.Steps) != want {
				t.Errorf("%d step results, want %d", len(full.Steps), want)
			}
			for _, s := range full.Steps {
				if !(s.SteadyQPS > 0) || !(s.FinalQPS > 0) || s.Error != "" {
					t.Errorf("%s@%d: steady %.1f final %.1f QPS, error %q", s.Step, s.Threads, s.SteadyQPS, s.FinalQPS, s.Error)
				}
				if s.Series == nil || len(s.Series.QPS) == 0 || len(s.Command) == 0 || s.Hardware == nil {
					t.Errorf("%s@%d: missing series, command or hardware", s.Step, s.Threads)
				} else if h := s.Hardware; h.CPUPerOp == nil || h.ContextSwitchesPerOp == nil || h.ReadsPerOp == nil ||
					h.ReadKBPerOp == nil || h.WriteKBPerOp == nil || !(h.OpsPerSecond > 0) || h.Samples == 0 {
					// cpu/o, cs/o, r/o, rKB/o, wKB/o and o/s, as methodology §4
					// defines them, for every step (the server's own CPU needs
					// its cgroup or pod: see the collector's tests).
					t.Errorf("%s@%d: hardware metrics missing: %+v", s.Step, s.Threads, h)
				}
				if strings.Contains(strings.Join(s.Command, " "), realPassword) {
					t.Errorf("%s@%d: password in the command line", s.Step, s.Threads)
				}
				if s.Step == "scan" && (s.RowsPerSecond == nil || *s.RowsPerSecond < s.SteadyQPS*1000 ||
					s.Hardware == nil || s.Hardware.OpsBasis != opsBasisRowsPerSecond) {
					t.Errorf("scan: rowsPerSecond %v for %.1f scans/s of 2000 rows, hardware %+v", s.RowsPerSecond, s.SteadyQPS, s.Hardware)
				}
				// What each kind adds through its hooks, in the step's agent extension.
				var ext StepExtension
				if err := json.Unmarshal(s.Extensions[ExtensionKey], &ext); err != nil {
					t.Errorf("%s@%d: agent extension: %v", s.Step, s.Threads, err)
				}
				wantKind := KindCatalog
				switch s.Step {
				case workload.TPCCStep:
					wantKind = KindTPCC
					if !(ext.NewOrdersPerMinute > 0) {
						t.Errorf("tpcc@%d: newOrdersPerMinute %v", s.Threads, ext.NewOrdersPerMinute)
					}
				case "my-count":
					wantKind = KindCustom
				}
				if ext.Kind != wantKind {
					t.Errorf("%s@%d: kind %q, want %q", s.Step, s.Threads, ext.Kind, wantKind)
				}
			}
			if l := full.Load; l == nil || l.Rows != 2000 || !(l.InsertsPerSecond > 0) || l.FlushSeconds == nil {
				t.Errorf("load: %+v", full.Load)
			}
			pv := full.Provenance
			if pv.ServerVersion == "" || len(pv.ServerSettings) < 50 || pv.ServerSettingsSHA256 == "" || pv.SysbenchVersion == "" ||
				pv.DatabaseNode.CPUs == 0 || pv.DatabaseNode.Kernel == "" {
				t.Errorf("provenance: version %q, %d settings, digest %q, sysbench %q, node %+v",
					pv.ServerVersion, len(pv.ServerSettings), pv.ServerSettingsSHA256, pv.SysbenchVersion, pv.DatabaseNode)
			}
			if _, ok := full.Extensions[ExtensionKey]; !ok {
				t.Error("no agent extension (warm-up, flushes)")
			}
			if prog := cr.progress; !strings.Contains(string(prog), `"Done"`) {
				t.Errorf("progress: %s", prog)
			}
		})
	}
}

// TestRealBadInput checks that bad input fails with a clear error, the right
// exit code, and that what was measured before is kept.
func TestRealBadInput(t *testing.T) {
	tier.Core(t)
	needRealDB(t)
	// Each engine reports its own error codes for these two.
	for _, e := range realEngines() {
		t.Run(string(e)+"/wrong password", func(t *testing.T) {
			p := realPlan(e, t.TempDir(), "point-query")
			res, doc, _ := runReal(t, p, "not-the-password")
			if res.ExitCode != agentapi.ExitBenchmarkFailed || !strings.Contains(doc.Status.Error, "rejected the credentials") {
				t.Errorf("exit %d, status %+v", res.ExitCode, doc.Status)
			}
		})
		t.Run(string(e)+"/unknown database", func(t *testing.T) {
			p := realPlan(e, t.TempDir(), "point-query")
			p.Server.Database = "no_such_db"
			res, doc, _ := runReal(t, p, realPassword)
			if res.ExitCode != agentapi.ExitBenchmarkFailed || !strings.Contains(doc.Status.Error, "no such database") {
				t.Errorf("exit %d, status %+v", res.ExitCode, doc.Status)
			}
		})
	}
	e := realEngines()[0]
	t.Run("unreachable server", func(t *testing.T) {
		p := realPlan(e, t.TempDir(), "point-query")
		p.Server.Port = 1 // nothing listens on 127.0.0.1:1
		p.Server.ReadyTimeoutSeconds = 3
		start := time.Now()
		res, doc, _ := runReal(t, p, realPassword)
		if res.ExitCode != agentapi.ExitServerUnreachable || !strings.Contains(doc.Status.Error, "refused connections") ||
			doc.Status.FailureClass != results.FailureInfrastructure {
			t.Errorf("exit %d, status %+v", res.ExitCode, doc.Status)
		}
		if d := time.Since(start); d < 2*time.Second || d > 30*time.Second {
			t.Errorf("gave up after %s; the deadline was 3 s", d)
		}
	})
	t.Run("lua syntax error keeps earlier steps", func(t *testing.T) {
		dir := t.TempDir()
		bad := filepath.Join(dir, "bad.lua")
		if err := os.WriteFile(bad, []byte("function event(\n  this is not lua\nend\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		p := realPlan(e, filepath.Join(dir, "out"), "point-query", "broken")
		p.Workload.Custom = []agentapi.CustomStep{{Name: "broken", Script: bad, DurationSeconds: 1}}
		res, doc, full := runReal(t, p, realPassword)
		if res.ExitCode != agentapi.ExitBenchmarkFailed || doc.Status.Outcome != results.OutcomeFailed ||
			doc.Status.FailedStep != "broken" || !strings.Contains(doc.Status.Error, "bad.lua") {
			t.Errorf("exit %d, status %+v", res.ExitCode, doc.Status)
		}
		var kept int
		for _, s := range full.Steps {
			if s.Step == "point-query" && s.SteadyQPS > 0 {
				kept++
			}
		}
		if kept != 2 {
			t.Errorf("point-query results kept: %d of 2 (steps: %d)", kept, len(full.Steps))
		}
	})
}
