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

	"github.com/dbbench/dbbench/pkg/plan"
	"github.com/dbbench/dbbench/pkg/sysbench"
	"github.com/dbbench/dbbench/pkg/workload"
)

// Agent runs one cell.
type Agent struct {
	Plan     plan.Plan
	Host     string
	User     string
	Password string

	// SysbenchBinary is the sysbench executable ("sysbench" from PATH).
	SysbenchBinary string
	// Sink receives progress and documents; Reporter rate-limits it.
	Sink ResultSink
	// ProgressInterval is the minimum time between progress-only writes
	// (default 5 s).
	ProgressInterval time.Duration
	// Collector measures hardware metrics per step; nil for none.
	Collector Collector
	// CollectorScope describes where Collector samples ("node", "local host").
	CollectorScope string
	// Log receives human-readable progress and sysbench's output.
	Log io.Writer
	// NodeName and PodName are recorded as provenance.
	NodeName, PodName string
	// Version is the agent's version, recorded as provenance.
	Version string
	// Document builds the results document from the record; nil uses
	// DefaultDocument.
	Document func(*Record, *plan.Plan) ([]byte, error)

	rec      Record
	progress plan.Progress
	reporter *Reporter
	sb       *Sysbench
	srv      *Server
}

// Result is how a run ended.
type Result struct {
	ExitCode int
	Err      error
	Record   *Record
}

func (a *Agent) logf(format string, args ...any) {
	if a.Log == nil {
		return
	}
	fmt.Fprintf(a.Log, "[%s] %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// Run executes the plan. It never panics on bad input: every failure becomes
// an exit code (pkg/plan), a Failed progress and a failure in the document.
func (a *Agent) Run(ctx context.Context) Result {
	p := &a.Plan
	a.rec = Record{Run: p.Run, Cell: p.Cell, StartedAt: time.Now().UTC()}
	a.progress = plan.Progress{Attempt: p.Cell.Attempt, Phase: plan.PhaseConnecting, StepsTotal: p.Workload.ExpandedSteps()}
	interval := a.ProgressInterval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	a.reporter = &Reporter{Sink: a.Sink, MinInterval: interval}
	a.fillHostProvenance()

	if err := p.Validate(); err != nil {
		return a.fail(ctx, plan.ExitInvalidPlan, plan.FailureBenchmark, "", 0, err)
	}
	steps, err := ResolveSteps(p)
	if err != nil {
		// The contract classes an unknown step as a benchmark failure.
		return a.fail(ctx, plan.ExitBenchmarkFailed, plan.FailureBenchmark, "", 0, err)
	}

	scripts, err := os.MkdirTemp("", "dbbench-lua-")
	if err != nil {
		return a.fail(ctx, plan.ExitBenchmarkFailed, plan.FailureInfrastructure, "", 0, err)
	}
	defer os.RemoveAll(scripts)
	if err := ExtractScripts(scripts); err != nil {
		return a.fail(ctx, plan.ExitBenchmarkFailed, plan.FailureInfrastructure, "", 0, fmt.Errorf("writing Lua scripts: %w", err))
	}
	a.sb = &Sysbench{
		Binary: a.SysbenchBinary, ScriptsDir: scripts, Engine: p.Server.Engine,
		Host: a.Host, Port: p.Server.Port, Database: p.Server.Database, User: a.User, Password: a.Password,
	}
	if err := a.sb.DetectVersion(ctx); err != nil {
		return a.fail(ctx, plan.ExitBenchmarkFailed, plan.FailureBenchmark, "", 0, err)
	}
	a.rec.Provenance.SysbenchVersion = a.sb.Version.Raw
	a.report(ctx, true)

	// Wait for the server at the SQL level.
	a.srv = &Server{Engine: p.Server.Engine, Host: a.Host, Port: p.Server.Port, Database: p.Server.Database, User: a.User, Password: a.Password}
	defer a.srv.Close()
	timeout := time.Duration(p.Server.ReadyTimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	a.logf("waiting up to %s for %s at %s:%d", timeout, p.Server.Engine, a.Host, p.Server.Port)
	if err := a.srv.WaitReady(ctx, timeout); err != nil {
		var ce *ConnectError
		if errors.As(err, &ce) && !ce.Retryable() {
			return a.fail(ctx, plan.ExitBenchmarkFailed, plan.FailureBenchmark, "", 0, err)
		}
		return a.fail(ctx, plan.ExitServerUnreachable, plan.FailureInfrastructure, "", 0, err)
	}
	if err := a.serverProvenance(ctx); err != nil {
		return a.fail(ctx, plan.ExitServerUnreachable, plan.FailureInfrastructure, "", 0, fmt.Errorf("reading server provenance: %w", err))
	}

	// Load the sbtest tables when any step uses them.
	needLoad := false
	for _, s := range steps {
		if s.Kind != KindTPCC {
			needLoad = true
		}
	}
	if needLoad {
		a.progress.Phase = plan.PhaseLoading
		a.report(ctx, true)
		if err := a.load(ctx); err != nil {
			return a.fail(ctx, plan.ExitBenchmarkFailed, plan.FailureBenchmark, "load", 0, err)
		}
	}

	a.progress.Phase = plan.PhaseRunning
	tpccLoaded := false
	for _, s := range steps {
		if s.Kind == KindTPCC && !tpccLoaded {
			if err := a.loadTPCC(ctx, s); err != nil {
				return a.fail(ctx, plan.ExitBenchmarkFailed, plan.FailureBenchmark, s.Name, 0, err)
			}
			tpccLoaded = true
		}
		for _, th := range s.Threads {
			a.progress.Step, a.progress.Threads = s.Name, th
			a.report(ctx, false)
			rec := a.runStep(ctx, s, th)
			a.rec.Steps = append(a.rec.Steps, rec)
			a.progress.StepsDone++
			if rec.Error != "" {
				return a.fail(ctx, plan.ExitBenchmarkFailed, plan.FailureBenchmark, s.Name, th, errors.New(rec.Error))
			}
			a.report(ctx, true)
		}
		if s.Kind == KindCatalog && s.Catalog.FlushAfter {
			if _, err := a.flush(ctx); err != nil {
				return a.fail(ctx, plan.ExitBenchmarkFailed, plan.FailureBenchmark, s.Name, 0, fmt.Errorf("flush after %s: %w", s.Name, err))
			}
		}
	}
	a.progress.Phase = plan.PhaseDone
	a.progress.Step, a.progress.Threads = "", 0
	a.rec.FinishedAt = time.Now().UTC()
	err = a.report(ctx, true)
	return Result{ExitCode: plan.ExitOK, Err: err, Record: &a.rec}
}

// fail records the failure, reports it and returns the exit code.
func (a *Agent) fail(ctx context.Context, code int, class plan.FailureClass, step string, threads int, err error) Result {
	a.logf("FAILED: %v", err)
	a.rec.Failure = &Failure{Class: class, ExitCode: code, Step: step, Threads: threads, Message: err.Error()}
	a.rec.FinishedAt = time.Now().UTC()
	a.progress.Phase = plan.PhaseFailed
	a.progress.Error = err.Error()
	a.progress.FailureClass = class
	// The context may be what failed; reporting must still happen.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if rerr := a.report(rctx, true); rerr != nil {
		a.logf("reporting the failure: %v", rerr)
	}
	return Result{ExitCode: code, Err: err, Record: &a.rec}
}

// report writes progress, and the document when force is set (a step
// finished, the phase changed, the end).
func (a *Agent) report(ctx context.Context, force bool) error {
	if a.reporter == nil || a.reporter.Sink == nil {
		return nil
	}
	var doc []byte
	if force {
		build := a.Document
		if build == nil {
			build = DefaultDocument
		}
		var err error
		doc, err = build(&a.rec, &a.Plan)
		if err != nil {
			a.logf("building the results document: %v", err)
			doc = nil
		}
	}
	err := a.reporter.Report(ctx, a.progress, doc, force)
	if err != nil {
		a.logf("writing results: %v", err)
	}
	return err
}

// DefaultDocument serialises the record as JSON.
func DefaultDocument(r *Record, _ *plan.Plan) ([]byte, error) {
	return json.MarshalIndent(r, "", " ")
}

func (a *Agent) fillHostProvenance() {
	pv := &a.rec.Provenance
	pv.Node, pv.Pod, pv.AgentVersion = a.NodeName, a.PodName, a.Version
	pv.Hostname, _ = os.Hostname()
	pv.CPUModel, pv.CPUs = cpuInfo()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		pv.Kernel = strings.TrimSpace(string(b))
	}
	pv.MetricsScope = a.CollectorScope
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
	vars, dig, err := a.srv.Variables(ctx)
	if err != nil {
		return err
	}
	a.rec.Provenance.ServerVersion, a.rec.Provenance.Variables, a.rec.Provenance.VariablesDigest = v, vars, dig
	a.logf("server %s, %d variables (%s), sysbench %s", v, len(vars), dig[:19], a.sb.Version)
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
	lr := &LoadRecord{Command: inv.Command, Seconds: inv.Elapsed.Seconds(), Rows: rows}
	if lr.Seconds > 0 {
		lr.InsertsPerSec = float64(rows) / lr.Seconds
	}
	a.rec.Load = lr
	a.logf("load: %d rows in %.1f s (%.0f inserts/s)", rows, lr.Seconds, lr.InsertsPerSec)
	a.report(ctx, true)

	// Warm-up read step, recorded but not reported (".warm").
	warm := RunStep{Name: "read-only.warm", Kind: KindCatalog, Script: "oltp_read_only", Args: []string{"--range-size=100"},
		Seconds: wl.ReadSeconds, Catalog: workload.Step{Group: workload.GroupRangeAgg}}
	th := 1
	if len(wl.Threads) > 0 {
		th = wl.Threads[0]
	}
	w := a.runStep(ctx, warm, th)
	lr.Warmup = &w
	if w.Error != "" {
		return fmt.Errorf("warm-up read step: %s", w.Error)
	}
	fr, err := a.flush(ctx)
	if err != nil {
		return fmt.Errorf("post-load flush: %w", err)
	}
	lr.Flush = &fr
	return nil
}

// flush runs the engine flush with the plan's wait cap.
func (a *Agent) flush(ctx context.Context) (FlushReport, error) {
	wl := a.Plan.Workload
	wait := time.Duration(wl.FlushWaitSeconds) * time.Second
	if wl.FlushWaitSeconds <= 0 {
		rows := float64(wl.Tables) * float64(wl.TableSize)
		wait = time.Duration(math.Min(1200, 60+rows/1e6) * float64(time.Second))
	}
	a.logf("flush: up to %s", wait)
	fr, err := a.srv.Flush(ctx, a.sbtestTables(), wait)
	if err == nil {
		a.logf("flush: %s in %.1f s (dirty %.2f%% -> %.2f%%)", fr.Method, fr.Seconds, fr.DirtyPctBefore, fr.DirtyPctAfter)
	}
	return fr, err
}

// loadTPCC drops and loads the TPC-C tables.
func (a *Agent) loadTPCC(ctx context.Context, s RunStep) error {
	a.progress.Phase = plan.PhaseLoading
	a.progress.Step = s.Name
	a.report(ctx, true)
	defer func() { a.progress.Phase = plan.PhaseRunning }()
	t := tpccConfig(a.Plan.Workload)
	if inv := a.sb.Run(ctx, s.Script, s.Args, "cleanup", nil); inv.Err != nil {
		return fmt.Errorf("dropping old TPC-C tables: %w", inv.Err)
	}
	threads := t.Warehouses * t.Tables
	if threads > 8 {
		threads = 8
	}
	a.logf("tpcc load: %d warehouse(s) x %d set(s), %d thread(s)", t.Warehouses, t.Tables, threads)
	inv := a.sb.Run(ctx, s.Script, append(append([]string{}, s.Args...), "--threads="+strconv.Itoa(threads)), "prepare", nil)
	if inv.Err != nil {
		return fmt.Errorf("loading TPC-C data: %w", inv.Err)
	}
	// Rows per warehouse at divisor 1: stock 100k, customer+history 60k,
	// orders 30k, order lines ~300k, new orders 9k; items 100k per set.
	lr := &LoadRecord{Command: inv.Command, Seconds: inv.Elapsed.Seconds(),
		Rows: int64(t.Tables) * (100_000 + int64(t.Warehouses)*499_000)}
	if d, err := strconv.Atoi(os.Getenv(EnvTPCCDataDivisor)); err == nil && d > 1 {
		lr.Rows /= int64(d)
	}
	if lr.Seconds > 0 {
		lr.InsertsPerSec = float64(lr.Rows) / lr.Seconds
	}
	a.rec.TPCCLoad = lr
	a.logf("tpcc load: %.1f s", lr.Seconds)
	return nil
}

// runStep runs one (step, threads) pair and never returns an error: a failure
// is the record's Error, the measurements that exist are kept.
func (a *Agent) runStep(ctx context.Context, s RunStep, threads int) StepRecord {
	wl := a.Plan.Workload
	warm := wl.WarmupSeconds
	rec := StepRecord{Step: s.Name, Kind: s.Kind, Script: s.Script, Threads: threads, Seconds: s.Seconds, WarmupSeconds: warm,
		Group: string(s.Catalog.Group), Started: time.Now().UTC()}
	args := a.commonArgs()
	if s.Kind == KindTPCC {
		args = args[2:] // --tables/--table-size mean other things to tpcc.lua
	}
	args = append(args,
		"--threads="+strconv.Itoa(threads),
		"--time="+strconv.Itoa(s.Seconds+warm),
		"--events=0",
		"--report-interval=1",
		"--percentile=95",
	)
	args = append(args, s.Args...)

	if s.Kind == KindCatalog && s.Catalog.RowsPerSecond {
		n, err := a.srv.CountRows(ctx, wl.Tables)
		if err != nil {
			rec.Error = err.Error()
			rec.Ended = time.Now().UTC()
			return rec
		}
		rec.RowsPerScan = n
	}
	var ordersBefore int64
	if s.Kind == KindTPCC {
		n, err := a.srv.SumNextOrderID(ctx, tpccConfig(wl).Tables)
		if err != nil {
			rec.Error = err.Error()
			rec.Ended = time.Now().UTC()
			return rec
		}
		ordersBefore = n
	}

	// Hardware metrics: start when the warm-up is over, stop at the end.
	hwDone := make(chan HWSample, 1)
	hwCtx, hwCancel := context.WithCancel(ctx)
	if a.Collector != nil {
		go func() {
			select {
			case <-hwCtx.Done():
				hwDone <- HWSample{}
				return
			case <-time.After(time.Duration(warm) * time.Second):
			}
			if err := a.Collector.Start(hwCtx); err != nil {
				a.logf("hw collector start: %v", err)
				hwDone <- HWSample{}
				return
			}
			<-hwCtx.Done()
			sctx, c := context.WithTimeout(context.Background(), 10*time.Second)
			defer c()
			smp, err := a.Collector.Stop(sctx)
			if err != nil {
				a.logf("hw collector stop: %v", err)
			}
			hwDone <- smp
		}()
	}

	a.logf("step %s threads=%d: %ds + %ds warm-up", s.Name, threads, s.Seconds, warm)
	inv := a.sb.Run(ctx, s.Script, args, "run", nil)
	hwCancel()
	var hw HWSample
	if a.Collector != nil {
		hw = <-hwDone
	}
	rec.Ended = time.Now().UTC()
	rec.Command = inv.Command
	if out := inv.Parsed; out != nil {
		for _, iv := range out.Intervals {
			rec.Intervals = append(rec.Intervals, Sample{Second: iv.Second, TPS: iv.TPS, QPS: iv.QPS, LatencyMs: iv.LatencyMs, ErrPerSec: iv.ErrorsPerSec})
		}
		if f := out.Final; f != nil {
			rec.TPS = f.EventsPerSec
			if f.SQL != nil {
				rec.QPS, rec.TPS = f.SQL.QueriesPerSec, f.SQL.TransactionsPerSec
				rec.Queries, rec.Transactions = f.SQL.Queries, f.SQL.Transactions
				rec.IgnoredErrors, rec.Reconnects = f.SQL.IgnoredErrors, f.SQL.Reconnects
			}
			rec.LatencyAvgMs, rec.LatencyMaxMs = f.Latency.AvgMs, f.Latency.MaxMs
			rec.LatencyP95Ms, _ = f.Latency.Get(95)
		}
		if st, err := out.SteadyState(float64(warm)); err == nil {
			rec.SteadyQPS, rec.SteadyTPS = st.QPS, st.TPS
		} else if inv.Err == nil {
			rec.Error = fmt.Sprintf("steady-state throughput: %v", err)
		}
	}
	if inv.Err != nil {
		rec.Error = inv.Err.Error()
		return rec
	}
	if inv.Parsed == nil || inv.Parsed.Final == nil {
		rec.Error = "sysbench printed no final report: " + tail(inv.Output, 8)
		return rec
	}
	if rec.RowsPerScan > 0 {
		rec.RowsPerSec = rec.SteadyQPS * rec.RowsPerScan
	}
	if s.Kind == KindTPCC {
		after, err := a.srv.SumNextOrderID(ctx, tpccConfig(wl).Tables)
		if err == nil {
			if secs := rec.Ended.Sub(rec.Started).Seconds(); secs > 0 {
				rec.NewOrdersPerMin = float64(after-ordersBefore) / secs * 60
			}
		}
	}
	if a.Collector != nil && hw.Seconds > 0 {
		q := rec.SteadyQPS
		if rec.RowsPerSec > 0 {
			q = rec.RowsPerSec
		}
		rec.HW = PerOp(hw, q, a.CollectorScope)
	}
	if rec.SteadyQPS <= 0 && rec.SteadyTPS <= 0 {
		rec.Error = "step reported zero throughput"
	}
	a.logf("step %s threads=%d: %.1f QPS (steady %.1f), %.1f TPS", s.Name, threads, rec.QPS, rec.SteadyQPS, rec.TPS)
	return rec
}

// interval fields used above come from pkg/sysbench.
var _ = sysbench.Interval{}
