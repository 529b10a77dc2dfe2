package agent

// Config-variant verification against real servers (DBBENCH_REAL_DB=1):
//
//	DBBENCH_REAL_DB=1 go test ./pkg/agent -run 'Real.*Config' -v -timeout 20m

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbbench/dbbench/internal/testutil/dbservers"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
)

// serverConfigFile is the file hack/dbservers.sh wrote for the engine's
// server and the server read at start-up.
func serverConfigFile(e agentapi.Engine) string {
	root := os.Getenv("DBBENCH_DB_ROOT")
	if root == "" {
		root = "/tmp/dbbench-dbservers"
	}
	if e == agentapi.Postgres {
		return filepath.Join(root, "postgres", "data", "postgresql.conf")
	}
	return filepath.Join(root, string(e), "my.cnf")
}

// TestRealConfigApplied verifies, on each engine, the very file the test
// server was started with (hack/dbservers.sh's my.cnf or postgresql.conf):
// every setting it makes must be verified or explained as unverifiable,
// none may be reported not in effect, and the cell runs.
func TestRealConfigApplied(t *testing.T) {
	tier.Core(t)
	needRealDB(t)
	// Settings each server's file makes that the server reports.
	mustVerify := map[agentapi.Engine][]string{
		agentapi.MariaDB:  {"innodb_buffer_pool_size", "max_connections", "skip_name_resolve", "datadir", "performance_schema"},
		agentapi.MySQL:    {"innodb_buffer_pool_size", "max_connections", "skip_name_resolve", "datadir", "log_bin", "innodb_redo_log_capacity"},
		agentapi.Postgres: {"shared_buffers", "max_connections", "synchronous_commit", "max_wal_size", "listen_addresses"},
	}
	for _, e := range realEngines() {
		t.Run(string(e), func(t *testing.T) {
			text, err := os.ReadFile(serverConfigFile(e))
			if err != nil {
				t.Fatalf("the test server's config: %v", err)
			}
			p := realPlan(e, t.TempDir(), "point-query")
			p.Workload.Threads = []int{1}
			res, compact, full := runRealConfig(t, p, string(text))
			if res.ExitCode != agentapi.ExitOK {
				t.Fatalf("exit %d: %v", res.ExitCode, res.Err)
			}
			for _, d := range []*results.Document{compact, full} {
				cc := d.Provenance.ConfigCheck
				if cc == nil || d.Provenance.ConfigText != string(text) {
					t.Fatalf("%s form: config check %v, config text recorded: %v", d.Form, cc, d.Provenance.ConfigText != "")
				}
				if len(cc.NotApplied) > 0 {
					t.Errorf("%s form: settings reported not in effect: %+v", d.Form, cc.NotApplied)
				}
				verified := map[string]results.ConfigSetting{}
				for _, s := range cc.Verified {
					verified[s.Name] = s
				}
				for _, name := range mustVerify[e] {
					if s, ok := verified[name]; !ok || s.Effective == "" {
						t.Errorf("%s form: %s not verified (verified: %+v; unverified: %+v)", d.Form, name, cc.Verified, cc.Unverified)
					}
				}
				for _, s := range cc.Unverified {
					if s.Reason == "" {
						t.Errorf("%s form: %s unverified without a reason", d.Form, s.Name)
					}
				}
			}
			if e != agentapi.Postgres {
				// user= is a start-up option without a variable.
				if !hasSetting(full.Provenance.ConfigCheck.Unverified, "user") {
					t.Errorf("user not listed as unverified: %+v", full.Provenance.ConfigCheck.Unverified)
				}
				// 256M is compared as bytes.
				if s := find(full.Provenance.ConfigCheck.Verified, "innodb_buffer_pool_size"); s.Normalized != "268435456" {
					t.Errorf("innodb_buffer_pool_size: %+v", s)
				}
			} else if s := find(full.Provenance.ConfigCheck.Verified, "shared_buffers"); s.Normalized != "32768×8kB" || s.Effective != "32768×8kB" {
				t.Errorf("shared_buffers 256MB in 8 kB pages: %+v", s)
			}
			if full.Load == nil || len(full.Steps) != 1 {
				t.Errorf("the cell did not run: load %v, %d steps", full.Load, len(full.Steps))
			}
		})
	}
}

// ignoredVariants are variants that each server reads but does not run with
// in full. Each server is started with the variant's text ahead of
// hack/dbservers.sh's own settings (DBBENCH_DB_EXTRA_CONFIG), so:
//
//   - MariaDB and MySQL: max_connections=77 is overridden by the script's
//     max_connections=200 later in the option file. Later options win
//     silently, as they do in a cluster when the database's args or a later
//     conf.d file override the variant's drop-in. The [mysqld-5.0] section
//     is read by no server of these versions, and loose- makes the server
//     skip the misspelt option with only a warning: both are reported as
//     unverified, not guessed at.
//   - PostgreSQL: max_connections = 77 is overridden by the script's
//     max_connections = 200 later in postgresql.conf (the last assignment
//     wins, silently).
var ignoredVariants = map[agentapi.Engine]struct {
	text       string
	verified   string // a setting of the variant that does apply
	unverified []string
}{
	agentapi.MariaDB: {
		text:     "[mariadbd]\nthread_cache_size=33\nmax_connections=77\nloose-innodb_bufer_pool_size=64M\n[mysqld-5.0]\ntable_open_cache=123\n",
		verified: "thread_cache_size", unverified: []string{"innodb_bufer_pool_size", "table_open_cache"},
	},
	agentapi.MySQL: {
		text:     "[mysqld]\nthread_cache_size=33\nmax_connections=77\nloose-innodb_bufer_pool_size=64M\n[mysqld-5.0]\ntable_open_cache=123\n",
		verified: "thread_cache_size", unverified: []string{"innodb_bufer_pool_size", "table_open_cache"},
	},
	agentapi.Postgres: {
		text:     "work_mem = 8MB\nmax_connections = 77\n",
		verified: "work_mem",
	},
}

// TestRealConfigIgnored starts a server per engine with a variant it partly
// ignores (see ignoredVariants) and checks that the cell fails before the
// load, as a benchmark failure that names the setting, the requested and the
// effective values, with the verified and unverified settings recorded.
func TestRealConfigIgnored(t *testing.T) {
	tier.Core(t)
	needRealDB(t)
	for _, e := range realEngines() {
		t.Run(string(e), func(t *testing.T) {
			v := ignoredVariants[e]
			port := startServerWithConfig(t, e, v.text)
			p := realPlan(e, t.TempDir(), "point-query")
			p.Server.Port = port
			p.Server.ReadyTimeoutSeconds = 60
			res, compact, full := runRealConfig(t, p, v.text)
			if res.ExitCode != agentapi.ExitConfigNotApplied {
				t.Fatalf("exit %d, want %d (ExitConfigNotApplied): %v", res.ExitCode, agentapi.ExitConfigNotApplied, res.Err)
			}
			st := compact.Status
			if st.Outcome != results.OutcomeFailed || st.FailureClass != results.FailureBenchmark {
				t.Errorf("status %+v", st)
			}
			// The message names the setting, what was asked and what runs.
			for _, want := range []string{"max_connections", "requested 77", "effective 200"} {
				if !strings.Contains(st.Error, want) {
					t.Errorf("error %q does not say %q", st.Error, want)
				}
			}
			cc := full.Provenance.ConfigCheck
			if cc == nil {
				t.Fatal("no config check recorded")
			}
			if len(cc.NotApplied) != 1 || cc.NotApplied[0].Name != "max_connections" || cc.NotApplied[0].Requested != "77" ||
				cc.NotApplied[0].Effective != "200" || cc.NotApplied[0].Line == 0 {
				t.Errorf("not applied: %+v", cc.NotApplied)
			}
			if s := find(cc.Verified, v.verified); s.Name == "" {
				t.Errorf("%s not verified: %+v", v.verified, cc.Verified)
			}
			for _, name := range v.unverified {
				if !hasSetting(cc.Unverified, name) {
					t.Errorf("%s not listed as unverified: %+v", name, cc.Unverified)
				}
			}
			if full.Load != nil || len(full.Steps) != 0 {
				t.Errorf("the cell loaded or ran after the check failed: load %v, %d steps", full.Load, len(full.Steps))
			}
			raw, err := os.ReadFile(filepath.Join(p.Results.Dir, agentapi.ResultKeyProgress))
			var prog agentapi.Progress
			if err == nil {
				err = json.Unmarshal(raw, &prog)
			}
			if err != nil || prog.Reason != agentapi.FailureConfigNotApplied || prog.FailureClass != agentapi.FailureBenchmark {
				t.Errorf("progress %s (%v): want reason %s, class %s", raw, err, agentapi.FailureConfigNotApplied, agentapi.FailureBenchmark)
			}
		})
	}
}

// runRealConfig is runReal with the variant's text given to the agent.
func runRealConfig(t *testing.T, p agentapi.Task, text string) (Result, *results.Document, *results.Document) {
	t.Helper()
	a := &Agent{Plan: p, Host: "127.0.0.1", User: realUser, Password: realPassword, Version: "test", ServerConfig: text}
	return runRealAgent(t, a, 5*time.Minute, true)
}

// startServerWithConfig starts a server of its own for the engine, on a free
// port and a private root, that reads text ahead of hack/dbservers.sh's
// settings; it is stopped when the test ends.
func startServerWithConfig(t *testing.T, e agentapi.Engine, text string) int {
	t.Helper()
	root, err := os.MkdirTemp("", "dbbench-cfg-")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(root, 0o755) // PostgreSQL runs as its own user
	extra := filepath.Join(root, "variant.conf")
	if err := os.WriteFile(extra, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := dbservers.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "DBBENCH_DB_ROOT="+root, dbservers.PortEnv[e]+"="+strconv.Itoa(port), "DBBENCH_DB_EXTRA_CONFIG="+extra)
	t.Cleanup(func() {
		_ = dbservers.Script(repoRoot, "stop", e, env)
		os.RemoveAll(root)
	})
	if err := dbservers.Script(repoRoot, "start", e, env); err != nil {
		t.Fatalf("starting %s with the variant: %v", e, err)
	}
	return port
}

func find(ss []results.ConfigSetting, name string) results.ConfigSetting {
	for _, s := range ss {
		if s.Name == name {
			return s
		}
	}
	return results.ConfigSetting{}
}

func hasSetting(ss []results.ConfigSetting, name string) bool { return find(ss, name).Name != "" }

// TestRealConfigPreflight runs the pre-flight of a pair (agentapi.Preflight) on
// each engine with the file its server was started with: the agent checks
// the variant against the server and ends Done without a load or a step,
// the check recorded in the document.
func TestRealConfigPreflight(t *testing.T) {
	tier.Core(t)
	needRealDB(t)
	for _, e := range realEngines() {
		t.Run(string(e), func(t *testing.T) {
			text, err := os.ReadFile(serverConfigFile(e))
			if err != nil {
				t.Fatalf("the test server's config: %v", err)
			}
			p := realPlan(e, t.TempDir(), "point-query")
			p.Preflight = true
			res, compact, full := runRealConfig(t, p, string(text))
			if res.ExitCode != agentapi.ExitOK {
				t.Fatalf("exit %d: %v", res.ExitCode, res.Err)
			}
			if compact.Status.Outcome != results.OutcomeSucceeded {
				t.Errorf("outcome %s, want Succeeded", compact.Status.Outcome)
			}
			if full.Load != nil || len(full.Steps) != 0 {
				t.Errorf("the pre-flight loaded or ran steps: load %v, %d steps", full.Load, len(full.Steps))
			}
			if cc := full.Provenance.ConfigCheck; cc == nil || len(cc.Verified) == 0 || len(cc.NotApplied) > 0 {
				t.Errorf("config check %+v, want verified settings and none not applied", cc)
			}
			raw, err := os.ReadFile(filepath.Join(p.Results.Dir, agentapi.ResultKeyProgress))
			var prog agentapi.Progress
			if err == nil {
				err = json.Unmarshal(raw, &prog)
			}
			if err != nil || prog.Phase != agentapi.PhaseDone || prog.StepsTotal != 0 {
				t.Errorf("progress %s (%v): want Done with no steps", raw, err)
			}
		})
	}
}
