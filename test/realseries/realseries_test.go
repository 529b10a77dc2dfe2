// Package realseries checks change-point detection on a series of real
// local runs: a real MariaDB on loopback, the agent in local mode run 12
// times, a slowdown injected half-way, and pkg/analysis's History and
// ChangePointRegressions asked to find it.
//
//	DBBENCH_REAL_DB=1 go test ./test/realseries -v
//
// TestMain starts MariaDB with hack/dbservers.sh in a private temporary data
// root on a free port (as pkg/agent's real-database tests do) and stops it
// at the end. About 2 minutes on 2 cores.
package realseries

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbbench/dbbench/internal/testutil/dbservers"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/agent"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/changepoint"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
)

const (
	suite  = "realseries"
	runs   = 12
	inject = 6 // the first run after the slowdown
	cell   = "mariadb-10.11-local"
	// The write step the knob slows down and a read step it should not.
	writeStep = "update-index"
	readStep  = "point-query"
	// injectSQL is the slowdown: binary-log group commit told to wait for
	// 2 other transactions, up to 10 ms (MariaDB's documented group-commit
	// knobs, both dynamic). With one client thread no other transaction
	// comes, so every commit waits the full 10 ms; reads commit nothing to
	// the binary log and do not wait.
	injectSQL = "SET GLOBAL binlog_commit_wait_count=2, binlog_commit_wait_usec=10000"
)

var (
	port int
	root string // DBBENCH_DB_ROOT
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		if os.Getenv("DBBENCH_REAL_DB") != "1" {
			return m.Run()
		}
		var err error
		root, err = os.MkdirTemp("", "dbbench-realseries-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(root)
		var stop func()
		port, stop, err = dbservers.Start(filepath.Join("..", ".."), agentapi.MariaDB, root)
		if err != nil {
			fmt.Fprintf(os.Stderr, "starting mariadb: %v\n", err)
			return 1
		}
		defer stop()
		if err := restartWithBinlog(); err != nil {
			fmt.Fprintf(os.Stderr, "restarting mariadb with the binary log: %v\n", err)
			return 1
		}
		return m.Run()
	}())
}

// restartWithBinlog restarts the server hack/dbservers.sh started, with the
// same configuration file plus the binary log (log_bin is not dynamic), so
// that the binlog group-commit knobs exist. The new server writes the same
// pid file, so hack/dbservers.sh stop still stops it.
func restartWithBinlog() error {
	dir := filepath.Join(root, "mariadb")
	pidFile := filepath.Join(dir, "mysqld.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("%s: %w", pidFile, err)
	}
	if err := exec.Command("kill", strconv.Itoa(pid)).Run(); err != nil {
		return err
	}
	for deadline := time.Now().Add(60 * time.Second); exec.Command("kill", "-0", strconv.Itoa(pid)).Run() == nil; {
		if time.Now().After(deadline) {
			return fmt.Errorf("mariadbd (pid %d) did not stop", pid)
		}
		time.Sleep(200 * time.Millisecond)
	}
	log, err := os.OpenFile(filepath.Join(dir, "error.log"), os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command("mariadbd", "--defaults-file="+filepath.Join(dir, "my.cnf"),
		"--log-bin="+filepath.Join(dir, "data", "binlog"), "--server-id=1", "--sync-binlog=0")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlives nothing: dbservers.sh stop kills it
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }() // reaps the server; dbservers.sh stop ends it
	sock := filepath.Join(dir, "mysqld.sock")
	for deadline := time.Now().Add(60 * time.Second); ; {
		if exec.Command("mariadb", "--socket="+sock, "-uroot", "-e", "SELECT 1").Run() == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mariadbd with --log-bin did not answer within 60 s (see %s/error.log)", dir)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// sql runs statements as root over the server's socket.
func sql(t *testing.T, stmt string) string {
	t.Helper()
	out, err := exec.Command("mariadb", "--socket="+filepath.Join(root, "mariadb", "mysqld.sock"), "-uroot", "-N", "-B", "-e", stmt).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", stmt, err, out)
	}
	return strings.TrimSpace(string(out))
}

// runAgent runs one cell in local mode (agent.LocalOptions, as
// `dbbench-agent local` builds it) and returns its full document.
func runAgent(t *testing.T, i int, pwFile string) *results.Document {
	t.Helper()
	out := filepath.Join(t.TempDir(), fmt.Sprintf("run-%02d", i))
	o := agent.LocalOptions{Engine: "mariadb", Host: "127.0.0.1", Port: port, User: dbservers.User, PasswordFile: pwFile, Database: dbservers.Database,
		Steps: writeStep + "," + readStep, Out: out, ReadyTimeout: 20}
	if err := o.Workload.Parse("--tables=1", "--table-size=1000", "--read-seconds=3", "--write-seconds=3", "--warmup-seconds=0",
		"--threads=1", "--ps=true", "--flush-wait=1"); err != nil {
		t.Fatal(err)
	}
	p, pw, err := o.Build()
	if err != nil {
		t.Fatal(err)
	}
	p.Run.Name, p.Run.Suite = fmt.Sprintf("%s-%02d", suite, i), suite
	p.Cell.Name, p.Cell.Database, p.Cell.Version, p.Cell.Config = cell, "mariadb", "10.11", "local"
	var log bytes.Buffer
	a := &agent.Agent{Plan: *p, Host: o.Host, User: o.User, Password: pw, Sink: agent.DirSink{Dir: out},
		Log: &log, Version: "realseries", ClientOnDBNode: true}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if res := a.Run(ctx); res.ExitCode != 0 {
		t.Fatalf("run %d: agent exit %d: %v\n%s", i, res.ExitCode, res.Err, log.String())
	}
	data, err := os.ReadFile(filepath.Join(out, agent.FullDocumentFile))
	if err != nil {
		t.Fatal(err)
	}
	d, err := results.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func qpsOf(d *results.Document, step string) float64 {
	for _, s := range d.Steps {
		if s.Step == step && s.Error == "" {
			return s.SteadyQPS
		}
	}
	return math.NaN()
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// TestChangePointOnRealRuns: 12 local runs of update-index and point-query
// (3 s each, 1 thread, 1 table of 1000 rows); the first 6 with the test
// server's settings (hack/dbservers.sh's, plus the binary log), the last 6
// after injectSQL. History and ChangePointRegressions must find the drop of
// the write step at run 6 (± 1).
func TestChangePointOnRealRuns(t *testing.T) {
	tier.Long(t)
	if os.Getenv("DBBENCH_REAL_DB") != "1" {
		t.Skip("set DBBENCH_REAL_DB=1 to run against a real MariaDB (hack/dbservers.sh)")
	}
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte(dbservers.Password), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("server %s, innodb_flush_log_at_trx_commit=%s, log_bin=%s",
		sql(t, "SELECT VERSION()"), sql(t, "SELECT @@innodb_flush_log_at_trx_commit"), sql(t, "SELECT @@log_bin"))
	t.Logf("binlog_commit_wait_count=%s, binlog_commit_wait_usec=%s, sync_binlog=%s",
		sql(t, "SELECT @@binlog_commit_wait_count"), sql(t, "SELECT @@binlog_commit_wait_usec"), sql(t, "SELECT @@sync_binlog"))

	var hist []analysis.HistoryRun
	var manifests []*results.Manifest
	var writes, reads []float64
	start := time.Now()
	for i := 0; i < runs; i++ {
		if i == inject {
			sql(t, injectSQL)
			t.Logf("injected from run %d on: %s", i, injectSQL)
		}
		d := runAgent(t, i, pwFile)
		ds, err := analysis.FromDocuments(d.Run.Name, []*results.Document{d})
		if err != nil {
			t.Fatal(err)
		}
		hist = append(hist, analysis.HistoryRun{Name: d.Run.Name, Time: d.StartedAt, Data: ds})
		at := d.StartedAt
		if d.FinishedAt != nil {
			at = *d.FinishedAt
		}
		m := &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: d.Run, UpdatedAt: at, Baseline: cell}
		m.Upsert(results.NewManifestCell(d, "Succeeded", "", ""))
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, m)
		writes = append(writes, qpsOf(d, writeStep))
		reads = append(reads, qpsOf(d, readStep))
		t.Logf("run %2d  %s %8.1f  %s %8.1f  (%.0f s so far)", i, writeStep, writes[i], readStep, reads[i], time.Since(start).Seconds())
	}
	for i := range writes {
		if math.IsNaN(writes[i]) || math.IsNaN(reads[i]) {
			t.Fatalf("run %d lacks a step: %s %v, %s %v", i, writeStep, writes[i], readStep, reads[i])
		}
	}

	// The knob must cost at least 10 % here, or the test proves nothing.
	before, after := mean(writes[:inject]), mean(writes[inject:])
	cost := 100 * (1 - after/before)
	t.Logf("%s: mean %.1f QPS before, %.1f after: %.1f %% slower", writeStep, before, after, cost)
	t.Logf("%s: mean %.1f QPS before, %.1f after (%+.1f %%)", readStep, mean(reads[:inject]), mean(reads[inject:]),
		100*(mean(reads[inject:])/mean(reads[:inject])-1))
	if cost < 10 {
		t.Fatalf("the knob cost only %.1f %% of %s on this machine (want >= 10 %%): series %v", cost, writeStep, writes)
	}

	h, err := analysis.History(hist, analysis.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := analysis.WriteTables(&text, analysis.FormatTable, h.Tables()); err != nil {
		t.Fatal(err)
	}
	t.Logf("history:\n%s", text.String())
	found := map[string][]analysis.HistoryChange{}
	for _, s := range h.Series {
		if s.Threads != 1 || len(s.Values) != runs {
			t.Errorf("series %s/%s@%d has %d values, want %d", s.Combination, s.Step, s.Threads, len(s.Values), runs)
		}
		found[s.Step] = s.ChangePoints
		for _, cp := range s.ChangePoints {
			t.Logf("change point: %s at run %d (%s): %.1f -> %.1f QPS (%+.1f %%, p=%.2g)", s.Step, cp.Index, cp.Run, cp.MeanBefore, cp.MeanAfter, cp.ChangePercent, cp.PValue)
		}
	}
	hit := false
	for _, cp := range found[writeStep] {
		if cp.Index >= inject-1 && cp.Index <= inject+1 && cp.MeanAfter < cp.MeanBefore && cp.ChangePercent <= -10 {
			hit = true
		}
	}
	if !hit {
		t.Errorf("History found no drop of %s at run %d±1; change points %+v; series %v", writeStep, inject, found[writeStep], writes)
	}
	// point-query is not asserted: see docs/reports.md ("Change points on a
	// series of real runs"). On this shared 2-core machine a 3-s read step
	// at 1 thread moves by tens of percent with the other jobs' load, in
	// either direction, whatever the knob does.
	if len(found[readStep]) > 0 {
		t.Logf("note: %s (not affected by the knob) has %d change point(s): the machine's load moved it", readStep, len(found[readStep]))
	}

	// The controller's verdict path: change points over the manifests, the
	// last run being judged.
	cpo := changepoint.DefaultOptions()
	regs, err := regression.ChangePointRegressions(manifests, cpo)
	if err != nil {
		t.Fatal(err)
	}
	regWrite := false
	for _, r := range regs {
		t.Logf("ChangePointRegressions: %s", r)
		if r.Cell == cell && r.Step == writeStep && r.Threads == 1 && r.ChangePercent <= -10 {
			regWrite = true
		}
	}
	if !regWrite {
		t.Errorf("ChangePointRegressions did not report %s@1 of %s: %v", writeStep, cell, regs)
	}
	// The regression is in effect "now" only after the injection: judged at
	// the last default run, nothing of the write step regressed.
	early, err := regression.ChangePointRegressions(manifests[:inject], cpo)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range early {
		if r.Step == writeStep {
			t.Errorf("before the injection ChangePointRegressions already reports %s", r)
		}
	}
	t.Logf("series (QPS, runs 0-%d; knob from run %d):\n%s: %s\n%s: %s", runs-1, inject,
		writeStep, fmtSeries(writes), readStep, fmtSeries(reads))
}

func fmtSeries(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strings.Join(s, " ")
}
