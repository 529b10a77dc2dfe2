// Package agent is dbbench's benchmark agent: it runs one cell — one database
// server, one fresh data load, the plan's steps in order, once per thread
// count — with sysbench, and reports progress and results as it goes.
//
// In a cluster it runs in the cell's client pod (plan from $DBBENCH_PLAN,
// credentials from the environment, reports to the cell's results ConfigMap);
// in local mode (cmd/agent `local`) it runs against a server already listening
// and writes the same documents to a directory.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/workload"
)

// Agent runs one cell.
type Agent struct {
	Plan     agentapi.Task
	Host     string
	User     string
	Password string
	// AdminUser and AdminPassword are an optional maintenance account (the
	// flush); see agentapi.EnvAdminUser.
	AdminUser     string
	AdminPassword string

	// SysbenchBinary is the sysbench executable ("sysbench" from PATH).
	SysbenchBinary string
	// Sink receives progress and the compact document; if it also implements
	// FullSink it receives the full form too.
	Sink ResultSink
	// ProgressInterval is the minimum time between progress-only writes
	// (default 5 s).
	ProgressInterval time.Duration
	// Collector measures hardware metrics per step; nil for none.
	Collector Collector
	// Profiler samples the server in the profiled passes
	// (workload.profile); nil records why there is no profile. A
	// PerfProfiler without Targets samples the local server (local mode).
	Profiler Profiler
	// CollectorScope describes where Collector samples.
	CollectorScope string
	// ClientOnDBNode is true when sysbench runs on the database's host (local
	// mode), so node-wide CPU includes the client's.
	ClientOnDBNode bool
	// Log receives human-readable progress.
	Log io.Writer
	// NodeName and PodName are recorded as provenance.
	NodeName, PodName string
	// Version is the agent's version, recorded as provenance.
	Version string
	// Outbox attaches the gzip'd full document and agent log to the final
	// write when the sink takes attachments (see agentapi.EnvOutbox).
	Outbox bool
	// ResultBudget bounds the results ConfigMap's values for the final
	// write with the outbox (default agentapi.ResultBudgetBytes).
	ResultBudget int
	// LogBufferBytes bounds the log kept for the outbox (default
	// DefaultLogBufferBytes).
	LogBufferBytes int
	// ServerConfig is the config variant's text, verified against the
	// server before the load (verify.go); "" verifies nothing.
	ServerConfig string

	// ownCreated is true while the agent's own database on an external
	// target exists (external.go).
	ownCreated bool

	logBuf   *logBuffer
	doc      results.Document
	ext      CellExtension
	progress agentapi.Progress
	reporter *Reporter
	sb       *Sysbench
	// stopFiles counts the stop files of adaptive runs (adaptive.go).
	stopFiles int
	srv       *Server
}

// FullSink is a ResultSink that also keeps the full form (per-second
// series), e.g. a directory or object storage.
type FullSink interface {
	WriteFull(ctx context.Context, full []byte) error
}

// Result is how a run ended.
type Result struct {
	ExitCode int
	Err      error
	// Document is the final full-form document.
	Document *results.Document
}

// logf writes a log line to Log and keeps it for the outbox.
func (a *Agent) logf(format string, args ...any) {
	line := fmt.Sprintf("[%s] %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
	if a.logBuf != nil {
		_, _ = a.logBuf.Write([]byte(line))
	}
	if a.Log != nil {
		_, _ = io.WriteString(a.Log, line)
	}
}

// bindSteps binds each resolved step to its kind and checks it; on an error
// it names the step that failed.
func (a *Agent) bindSteps(resolved []RunStep) ([]step, string, error) {
	steps := make([]step, 0, len(resolved))
	for _, s := range resolved {
		st, err := a.bindStep(s)
		if err != nil {
			return nil, s.Name, err
		}
		if err := st.check(); err != nil {
			return nil, s.Name, err
		}
		steps = append(steps, st)
	}
	return steps, "", nil
}

// Run executes the plan. Every failure becomes an exit code (pkg/agentapi), a
// Failed progress and a Failed document that keeps every step measured
// before it.
func (a *Agent) Run(ctx context.Context) Result {
	p := &a.Plan
	a.logBuf = newLogBuffer(a.LogBufferBytes)
	a.initDocument()
	a.progress = agentapi.Progress{Attempt: p.Cell.Attempt, Phase: agentapi.PhaseConnecting, StepsTotal: p.Workload.ExpandedSteps()}
	if p.Preflight {
		a.progress.StepsTotal = 0
	}
	interval := a.ProgressInterval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	a.reporter = &Reporter{Sink: a.Sink, MinInterval: interval}

	if err := p.Validate(); err != nil {
		return a.fail(ctx, agentapi.ExitInvalidTask, agentapi.FailureBenchmark, "", err)
	}
	resolved, err := ResolveSteps(p)
	if err != nil {
		// The contract classes an unknown step as a benchmark failure.
		return a.fail(ctx, agentapi.ExitBenchmarkFailed, agentapi.FailureBenchmark, "", err)
	}
	steps, badStep, err := a.bindSteps(resolved)
	if err != nil {
		return a.fail(ctx, agentapi.ExitBenchmarkFailed, agentapi.FailureBenchmark, badStep, err)
	}

	scripts, err := os.MkdirTemp("", "dbbench-lua-")
	if err != nil {
		return a.fail(ctx, agentapi.ExitBenchmarkFailed, agentapi.FailureInfrastructure, "", err)
	}
	defer os.RemoveAll(scripts)
	if err := ExtractScripts(scripts); err != nil {
		return a.fail(ctx, agentapi.ExitBenchmarkFailed, agentapi.FailureInfrastructure, "", fmt.Errorf("writing Lua scripts: %w", err))
	}
	a.sb = &Sysbench{
		Binary: a.SysbenchBinary, ScriptsDir: scripts, Engine: p.Server.Engine,
		Host: a.Host, Port: p.Server.Port, Database: p.Server.Database, User: a.User, Password: a.Password,
	}
	if err := a.sb.DetectVersion(ctx); err != nil {
		return a.fail(ctx, agentapi.ExitBenchmarkFailed, agentapi.FailureBenchmark, "", err)
	}
	a.doc.Provenance.SysbenchVersion = a.sb.Version.String()
	a.reportProgress(ctx, true)
	// Wait for the server at the SQL level.
	a.srv = &Server{Engine: p.Server.Engine, Host: a.Host, Port: p.Server.Port, Database: p.Server.Database, User: a.User, Password: a.Password,
		AdminUser: a.AdminUser, AdminPassword: a.AdminPassword}
	if a.external() {
		// The agent's own database does not exist yet: wait for the
		// server through the user's connect database.
		a.srv.Database = p.Server.External.ConnectDatabase
		a.srv.AdminUser, a.srv.AdminPassword = "", ""
	}
	defer a.srv.Close()
	timeout := time.Duration(p.Server.ReadyTimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	a.logf("waiting up to %s for %s at %s:%d", timeout, p.Server.Engine, a.Host, p.Server.Port)
	if err := a.srv.WaitReady(ctx, timeout); err != nil {
		var ce *ConnectError
		if errors.As(err, &ce) && !ce.Retryable() {
			return a.fail(ctx, agentapi.ExitBenchmarkFailed, agentapi.FailureBenchmark, "", err)
		}
		return a.fail(ctx, agentapi.ExitServerUnreachable, agentapi.FailureInfrastructure, "", err)
	}
	a.doc.StartedAt = time.Now().UTC()
	if err := a.serverProvenance(ctx); err != nil {
		return a.fail(ctx, agentapi.ExitServerUnreachable, agentapi.FailureInfrastructure, "", fmt.Errorf("reading server provenance: %w", err))
	}
	if r, failed := a.checkConfig(ctx); failed {
		return r
	}
	if p.Preflight {
		// The pre-flight asks only whether the server starts with the
		// variant's settings; the document records the check.
		a.logf("pre-flight: the server answers with the config variant's settings; no load, no steps")
		return a.done(ctx)
	}

	if a.external() {
		if err := a.createOwnDatabase(ctx); err != nil {
			return a.fail(ctx, agentapi.ExitBenchmarkFailed, agentapi.FailureBenchmark, "load", err)
		}
	}

	// Load the sbtest tables when any step uses them.
	needLoad := false
	for _, st := range steps {
		needLoad = needLoad || st.usesSbtest()
	}
	if needLoad {
		a.progress.Phase = agentapi.PhaseLoading
		a.reportProgress(ctx, true)
		if err := a.load(ctx); err != nil {
			return a.fail(ctx, agentapi.ExitBenchmarkFailed, agentapi.FailureBenchmark, "load", err)
		}
	}

	a.progress.Phase = agentapi.PhaseRunning
	for _, st := range steps {
		s := st.spec()
		if err := st.prepare(ctx); err != nil {
			return a.fail(ctx, agentapi.ExitBenchmarkFailed, agentapi.FailureBenchmark, s.Name, err)
		}
		for _, th := range s.Threads {
			// The closed-loop run, then its fixed-rate variants, which
			// need its throughput.
			closed, r, failed := a.measureRun(ctx, st, th, nil)
			if failed {
				return r
			}
			for _, rate := range a.rateRuns(s, closed) {
				if _, r, failed := a.measureRun(ctx, st, th, &rate); failed {
					return r
				}
			}
		}
		if err := st.finish(ctx); err != nil {
			return a.fail(ctx, agentapi.ExitBenchmarkFailed, agentapi.FailureBenchmark, s.Name, err)
		}
	}
	// After every measurement, so none is skewed by the profiler.
	a.profilePasses(ctx, steps)
	return a.done(ctx)
}

// done records and reports the cell's success.
func (a *Agent) done(ctx context.Context) Result {
	a.dropOwnDatabase(ctx)
	a.progress.Phase = agentapi.PhaseDone
	a.progress.Step, a.progress.Threads = "", 0
	now := time.Now().UTC()
	a.doc.FinishedAt = &now
	a.doc.Status = results.Status{Outcome: results.OutcomeSucceeded}
	err := a.reportFinal(ctx)
	return Result{ExitCode: agentapi.ExitOK, Err: err, Document: &a.doc}
}

// measureRun runs one measured run of st at threads (rate: its fixed-rate
// variant, nil for the closed loop), records it and reports progress.
// failed is true when the cell must stop; r is then the cell's result.
func (a *Agent) measureRun(ctx context.Context, st step, th int, rate *rateRun) (res results.StepResult, r Result, failed bool) {
	s := st.spec()
	name := s.Name
	if rate != nil {
		name = rate.name(s.Name)
	}
	if ctx.Err() != nil {
		return res, a.fail(ctx, agentapi.ExitBenchmarkFailed, agentapi.FailureInfrastructure, s.Name, fmt.Errorf("interrupted: %w", ctx.Err())), true
	}
	a.progress.Step, a.progress.Threads = name, th
	a.reportProgress(ctx, false)
	res = a.gatedRun(ctx, st, th, rate)
	a.progress.StepsDone++
	a.doc.Steps = append(a.doc.Steps, res)
	if res.Rate != nil && res.Rate.QueueOverflow {
		// The rate was more than the server could keep up with: a finding
		// about this run, not a broken benchmark (docs/reports.md).
		a.logf("step %s threads=%d: sysbench's event queue overflowed; recorded, the cell goes on", name, th)
		a.reportProgress(ctx, true)
		return res, r, false
	}
	if res.Error != "" {
		return res, a.fail(ctx, agentapi.ExitBenchmarkFailed, agentapi.FailureBenchmark, s.Name, fmt.Errorf("step %s, %d threads: %s", name, th, res.Error)), true
	}
	a.reportProgress(ctx, true)
	return res, r, false
}

func (a *Agent) initDocument() {
	p := &a.Plan
	version := p.Cell.Version
	a.doc = results.Document{
		SchemaVersion: results.SchemaV1,
		Form:          results.FormFull,
		Run:           results.Run{Name: p.Run.Name, Namespace: p.Run.Namespace, UID: p.Run.UID, Suite: p.Run.Suite},
		Cell: results.Cell{Name: p.Cell.Name, Database: p.Cell.Database, Engine: string(p.Server.Engine), Version: version,
			Config: p.Cell.Config, Repeat: p.Cell.Repeat, Attempt: max(p.Cell.Attempt, 1), Block: p.Cell.Block},
		StartedAt: time.Now().UTC(),
		Status:    results.Status{Outcome: results.OutcomeRunning},
		Steps:     []results.StepResult{},
	}
	if a.doc.Run.Name == "" {
		a.doc.Run.Name = "unnamed"
	}
	if a.doc.Cell.Name == "" {
		a.doc.Cell.Name = "unnamed"
	}
	if a.doc.Cell.Engine == "" {
		a.doc.Cell.Engine = string(p.Cell.Engine)
	}
	pv := &a.doc.Provenance
	pv.Image = p.Cell.Image
	pv.DBBenchVersion = a.Version
	h := hostInfo()
	h.NodeName = a.NodeName
	if h.NodeName == "" {
		h.NodeName, _ = os.Hostname()
	}
	if a.ClientOnDBNode {
		pv.DatabaseNode = h
	}
	pv.ClientNode = &h
	a.ext.MetricsScope = a.CollectorScope
	if a.external() {
		a.initExternal()
	}
}

// fail records the failure, reports it and returns the exit code.
func (a *Agent) fail(ctx context.Context, code int, class agentapi.FailureClass, step string, err error) Result {
	a.logf("FAILED: %v", err)
	a.dropOwnDatabase(ctx)
	now := time.Now().UTC()
	a.doc.FinishedAt = &now
	if a.doc.FinishedAt.Before(a.doc.StartedAt) {
		a.doc.StartedAt = now
	}
	a.doc.Status = results.Status{Outcome: results.OutcomeFailed, FailureClass: results.FailureClass(class), Error: err.Error(), FailedStep: step}
	a.ext.FailureExitCode = code
	a.progress.Phase = agentapi.PhaseFailed
	a.progress.Error = err.Error()
	a.progress.FailureClass = class
	// The context may be what failed; reporting must still happen.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if rerr := a.reportFinal(rctx); rerr != nil {
		a.logf("reporting the failure: %v", rerr)
	}
	return Result{ExitCode: code, Err: err, Document: &a.doc}
}

// reportProgress is report where a failed write need not stop the cell:
// report logs it, and the next write (after every step, and the final one,
// whose error does end the run) carries the same state.
func (a *Agent) reportProgress(ctx context.Context, force bool) {
	_ = a.report(ctx, force)
}

// report writes progress, and the documents when force is set (a step
// finished, the phase changed, the end).
func (a *Agent) report(ctx context.Context, force bool) error {
	if a.reporter == nil || a.reporter.Sink == nil {
		return nil
	}
	var compact []byte
	// In local mode the version under test is the server's, unknown until
	// it answers; until then there is no document to record, only progress.
	if force && a.doc.Cell.Version != "" {
		setExt(&a.doc.Extensions, a.ext)
		full, err := results.Marshal(&a.doc)
		if err != nil {
			a.logf("results document invalid: %v", err)
		} else if fs, ok := a.Sink.(FullSink); ok {
			if err := fs.WriteFull(ctx, full); err != nil {
				a.logf("writing full results: %v", err)
			}
		}
		if err == nil {
			_, compact, err = results.Compact(&a.doc, results.CompactOptions{})
			if err != nil {
				a.logf("compact results document: %v", err)
			}
		}
	}
	err := a.reporter.Report(ctx, a.progress, compact, force)
	if err != nil {
		a.logf("writing results: %v", err)
	}
	return err
}

// reportFinal writes the final progress and documents. With the outbox
// (Outbox and a sink that takes attachments) the write also
// carries the gzip'd full document and agent log, within the budget: the
// log is left out first, then the full document, and the documents say so
// (extension dbbench.io/agent, outboxDropped).
func (a *Agent) reportFinal(ctx context.Context) error {
	if a.reporter == nil || a.reporter.Sink == nil {
		return nil
	}
	if _, ok := a.Sink.(OutboxSink); !ok || !a.Outbox {
		return a.report(ctx, true)
	}
	budget := a.ResultBudget
	if budget <= 0 {
		budget = agentapi.ResultBudgetBytes
	}
	// progress.json as the reporter will write it (UpdatedAt included),
	// with room to spare.
	pr := a.progress
	pr.UpdatedAt = time.Now().UTC().Format(time.RFC3339)
	pb, _ := json.Marshal(pr)
	fixed := len(pb) + 256
	var logGz []byte
	if a.logBuf != nil {
		if l := a.logBuf.Bytes(); len(l) > 0 {
			logGz = gzipBytes(l)
		}
	}
	pack, err := packOutbox(budget, fixed, logGz, func(notes []string) ([]byte, []byte, error) {
		a.ext.OutboxDropped = notes
		setExt(&a.doc.Extensions, a.ext)
		full, err := results.Marshal(&a.doc)
		if err != nil {
			return nil, nil, err
		}
		_, compact, err := results.Compact(&a.doc, results.CompactOptions{})
		if err != nil {
			return nil, nil, err
		}
		return compact, gzipBytes(full), nil
	})
	if err != nil {
		a.logf("results document invalid: %v", err)
		return a.report(ctx, true)
	}
	for _, n := range pack.notes {
		a.logf("outbox: %s", n)
	}
	if fs, ok := a.Sink.(FullSink); ok {
		if full, err := results.Marshal(&a.doc); err == nil {
			if err := fs.WriteFull(ctx, full); err != nil {
				a.logf("writing full results: %v", err)
			}
		}
	}
	blobs := pack.blobs
	if blobs == nil {
		blobs = map[string][]byte{}
	}
	err = a.reporter.ReportFinal(ctx, a.progress, pack.compact, blobs)
	if err != nil {
		a.logf("writing results: %v", err)
	}
	return err
}

func hostInfo() results.Host {
	h := results.Host{}
	h.CPUModel, h.CPUs = cpuInfo()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				h.MemoryBytes = kb * 1024
			}
		}
	}
	return h
}

func cpuInfo() (string, int) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "", 0
	}
	model, n := "", 0
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "processor":
			n++
		case "model name":
			if model == "" {
				model = strings.TrimSpace(v)
			}
		}
	}
	return model, n
}

func (a *Agent) serverProvenance(ctx context.Context) error {
	v, err := a.srv.Version(ctx)
	if err != nil {
		return err
	}
	vars, err := a.srv.Variables(ctx)
	if err != nil {
		return err
	}
	pv := &a.doc.Provenance
	pv.ServerVersion, pv.ServerSettings, pv.ServerSettingsSHA256 = v, vars, results.SettingsDigest(vars)
	if a.doc.Cell.Version == "" {
		a.doc.Cell.Version = v
	}
	a.logf("server %s, %d settings (%s), sysbench %s", v, len(vars), pv.ServerSettingsSHA256[:19], a.sb.Version)
	return nil
}

// commonArgs are the options every sysbench invocation of the cell gets.
func (a *Agent) commonArgs() []string {
	wl := a.Plan.Workload
	ps := "disable"
	if wl.PreparedStatements {
		ps = "auto"
	}
	return []string{
		"--tables=" + strconv.Itoa(wl.Tables),
		"--table-size=" + strconv.FormatInt(wl.TableSize, 10),
		"--rand-type=uniform",
		"--db-ps-mode=" + ps,
	}
}

func (a *Agent) sbtestTables() []string {
	out := make([]string, a.Plan.Workload.Tables)
	for i := range out {
		out[i] = "sbtest" + strconv.Itoa(i+1)
	}
	return out
}

// load drops and re-creates the sbtest tables with stock sysbench prepare (one
// thread, rows in id order, index on k after the load), runs a warm-up read
// step and the engine flush.
func (a *Agent) load(ctx context.Context) error {
	wl := a.Plan.Workload
	start := time.Now()
	args := a.commonArgs()
	a.logf("load: dropping old tables")
	if inv := a.sb.Run(ctx, "oltp_read_only", args, "cleanup", nil); inv.Err != nil {
		return fmt.Errorf("dropping old sbtest tables: %w", inv.Err)
	}
	a.logf("load: %d table(s) x %d rows", wl.Tables, wl.TableSize)
	inv := a.sb.Run(ctx, "oltp_read_only", append(args, "--threads=1"), "prepare", nil)
	if inv.Err != nil {
		return fmt.Errorf("loading data: %w", inv.Err)
	}
	rows := int64(wl.Tables) * wl.TableSize
	ld := &results.Load{InsertSeconds: inv.Elapsed.Seconds(), Tables: wl.Tables, RowsPerTable: wl.TableSize, Rows: rows,
		Commands: [][]string{inv.Command}}
	if ld.InsertSeconds > 0 {
		ld.InsertsPerSecond = float64(rows) / ld.InsertSeconds
	}
	ld.Seconds = time.Since(start).Seconds()
	a.doc.Load = ld
	a.logf("load: %d rows in %.1f s (%.0f inserts/s, index included)", rows, ld.InsertSeconds, ld.InsertsPerSecond)
	a.reportProgress(ctx, true)
	// Warm-up read step, recorded in the extension, not as a reported step.
	warm := RunStep{Name: warmStepName, Kind: KindCatalog, Script: "oltp_read_only", Args: []string{"--range-size=100"},
		Seconds: wl.ReadSeconds, Catalog: workload.Step{Group: workload.GroupRangeAgg}}
	th := 1
	if len(wl.Threads) > 0 {
		th = wl.Threads[0]
	}
	w := a.runStep(ctx, &catalogStep{a: a, s: warm}, th, nil)
	a.ext.Warmup = &w
	if w.Error != "" {
		return fmt.Errorf("warm-up read step: %s", w.Error)
	}
	if err := a.flush(ctx); err != nil {
		return fmt.Errorf("post-load flush: %w", err)
	}
	if n := len(a.ext.Flushes); n > 0 {
		fs := a.ext.Flushes[n-1].Seconds
		ld.FlushSeconds = &fs
	}
	ld.Seconds = time.Since(start).Seconds()
	return nil
}

// flush runs the engine flush with the plan's wait cap.
func (a *Agent) flush(ctx context.Context) error {
	if a.external() {
		// The flush sets global variables (MySQL, MariaDB) or checkpoints
		// the whole cluster (PostgreSQL): not ours to do on a server
		// others use (results.CaveatNoFlush).
		a.logf("flush: skipped on an external server")
		return nil
	}
	wl := a.Plan.Workload
	wait := time.Duration(wl.FlushWaitSeconds) * time.Second
	if wl.FlushWaitSeconds <= 0 {
		rows := float64(wl.Tables) * float64(wl.TableSize)
		wait = time.Duration(math.Min(1200, 60+rows/1e6) * float64(time.Second))
	}
	a.logf("flush: up to %s", wait)
	fr, err := a.srv.Flush(ctx, a.sbtestTables(), wait)
	if err != nil {
		return err
	}
	a.ext.Flushes = append(a.ext.Flushes, fr)
	a.logf("flush: %s in %.1f s (dirty %.2f%% -> %.2f%%)", fr.Method, fr.Seconds, fr.DirtyPctBefore, fr.DirtyPctAfter)
	return nil
}
