package agent

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
)

// step is one resolved step of the plan bound to what its kind does beyond
// the run every step shares. Run loops over steps (check, prepare, one
// measured run per thread count, finish) and runStep measures each run the
// same way whatever the kind (measure.go); a kind says only what differs. A
// new kind implements step and is returned by bindStep (docs/design.md,
// "Adding a step kind").
type step interface {
	// spec is the resolved step: name, kind, script, options, duration,
	// thread counts.
	spec() RunStep
	// usesSbtest is true when the step reads the sbtest tables, which the
	// cell loads once, before its first step, when any step uses them.
	usesSbtest() bool
	// check validates what the step needs before any server is contacted,
	// so a bad plan fails in seconds; the error names the step.
	check() error
	// prepare runs before the step's first thread count, outside any
	// measurement (TPC-C loads its tables). Its error fails the cell as is.
	prepare(ctx context.Context) error
	// baseArgs are the sysbench options every run of the step starts with;
	// runStep appends the run's own (threads, time, reporting) and the
	// step's Args.
	baseArgs() []string
	// hooks observe the server around each measured run (a fresh set per
	// run): see windowHook.
	hooks() []windowHook
	// finish runs after the step's last thread count, outside any
	// measurement (the flush some catalog steps ask for). Its error fails
	// the cell as is.
	finish(ctx context.Context) error
}

// runner is a step whose kind runs its own client rather than sysbench
// (pgbench): run is one measured run of threads clients for seconds
// (warm-up included), its output in sysbench's shape (Invocation.Parsed).
// Such a step runs its configured length (no adaptive stop).
type runner interface {
	run(ctx context.Context, threads, seconds int) *Invocation
}

// windowHook reads the server around one measured run of a step. before runs
// just ahead of sysbench (before the warm-up, outside the collector's
// window); an error there is the run's error and sysbench does not run.
// after runs once sysbench ended and its output gave a result, before the
// hardware metrics are derived; it records into the run and cannot fail it.
type windowHook interface {
	before(ctx context.Context, r *stepRun) error
	after(ctx context.Context, r *stepRun)
}

// windowBounds is a windowHook that also reads the server at the measured
// window's own bounds, which before and after are not: windowStart when the
// warm-up ends (the collector's start; it runs while sysbench does, and is
// not called when the run ends first), windowEnd as soon as sysbench
// returned (before after; called for every run). Neither can fail the run.
type windowBounds interface {
	windowStart(ctx context.Context)
	windowEnd(ctx context.Context)
}

// stepRun is one measured run of a step at one thread count, as runStep
// builds it and the hooks read and extend it.
type stepRun struct {
	Step    RunStep
	Threads int
	// Started and Ended bound the whole run, warm-up and hooks' before
	// included; Ended is set when sysbench and the collector are done and
	// the windowBounds have read the window's end.
	Started, Ended time.Time
	Result         *results.StepResult
	Ext            *StepExtension
	// Ops and OpsBasis are the throughput the hardware metrics are
	// divided by (steady QPS unless a hook says otherwise).
	Ops      float64
	OpsBasis string
}

// Bases of results.Hardware.OpsBasis.
const (
	opsBasisSteadyQPS     = "steadyQps"
	opsBasisRowsPerSecond = "rowsPerSecond"
)

// bindStep binds a resolved step to its kind's behaviour.
func (a *Agent) bindStep(s RunStep) (step, error) {
	switch s.Kind {
	case KindCatalog:
		return &catalogStep{a: a, s: s}, nil
	case KindCustom:
		return &customStep{a: a, s: s}, nil
	case KindTPCC:
		return &tpccStep{a: a, s: s}, nil
	case KindPgbench:
		return &pgbenchStep{a: a, s: s}, nil
	}
	return nil, fmt.Errorf("step %s: unknown step kind %q", s.Name, s.Kind)
}

// catalogStep is a step of the catalog (pkg/workload): a stock sysbench
// script or one of ours, on the sbtest tables.
type catalogStep struct {
	a *Agent
	s RunStep
}

func (c *catalogStep) spec() RunStep                 { return c.s }
func (c *catalogStep) usesSbtest() bool              { return true }
func (c *catalogStep) check() error                  { return nil }
func (c *catalogStep) prepare(context.Context) error { return nil }
func (c *catalogStep) baseArgs() []string            { return c.a.commonArgs() }

func (c *catalogStep) hooks() []windowHook {
	if c.s.Catalog.RowsPerSecond {
		return []windowHook{&rowsPerScanHook{srv: c.a.srv, tables: c.a.Plan.Workload.Tables}}
	}
	return nil
}

func (c *catalogStep) finish(ctx context.Context) error {
	if !c.s.Catalog.FlushAfter {
		return nil
	}
	if err := c.a.flush(ctx); err != nil {
		return fmt.Errorf("flush after %s: %w", c.s.Name, err)
	}
	return nil
}

// rowsPerScanHook counts the sbtest rows before a scan step, so the step
// reports rows/s (steady QPS × rows per scan) and the hardware metrics are
// per row.
type rowsPerScanHook struct {
	srv    *Server
	tables int
}

func (h *rowsPerScanHook) before(ctx context.Context, r *stepRun) error {
	n, err := h.srv.CountRows(ctx, h.tables)
	if err != nil {
		return err
	}
	r.Ext.RowsPerScan = n
	return nil
}

func (h *rowsPerScanHook) after(_ context.Context, r *stepRun) {
	if r.Ext.RowsPerScan > 0 {
		rps := r.Result.SteadyQPS * r.Ext.RowsPerScan
		r.Result.RowsPerSecond = &rps
		r.Ops, r.OpsBasis = rps, opsBasisRowsPerSecond
	}
}

// customStep is a user's Lua script (workload.custom), run like a catalog
// step on the sbtest tables.
type customStep struct {
	a *Agent
	s RunStep
}

func (c *customStep) spec() RunStep    { return c.s }
func (c *customStep) usesSbtest() bool { return true }

func (c *customStep) check() error {
	if _, err := os.Stat(c.s.Script); err != nil {
		return fmt.Errorf("custom step %s: %w", c.s.Name, err)
	}
	return nil
}

func (c *customStep) prepare(context.Context) error  { return nil }
func (c *customStep) baseArgs() []string             { return c.a.commonArgs() }
func (c *customStep) hooks() []windowHook            { return nil }
func (c *customStep) finish(_ context.Context) error { return nil }

// tpccStep is TPC-C (lua/dbbench/tpcc.lua) on its own tables, loaded before
// its first run.
type tpccStep struct {
	a *Agent
	s RunStep
}

func (t *tpccStep) spec() RunStep    { return t.s }
func (t *tpccStep) usesSbtest() bool { return false }
func (t *tpccStep) check() error     { return nil }

// prepare loads the TPC-C tables, once per cell: a cell's TPC-C load is
// recorded (CellExtension.TPCCLoad) only when it succeeded.
func (t *tpccStep) prepare(ctx context.Context) error {
	if t.a.ext.TPCCLoad != nil {
		return nil
	}
	return t.a.loadTPCC(ctx, t.s)
}

// baseArgs leave out --tables and --table-size: they mean other things to
// tpcc.lua (table sets; RunStep.Args carries them).
func (t *tpccStep) baseArgs() []string { return t.a.commonArgs()[2:] }

func (t *tpccStep) hooks() []windowHook {
	return []windowHook{&newOrdersHook{srv: t.a.srv, tables: tpccConfig(t.a.Plan.Workload).Tables}}
}

func (t *tpccStep) finish(context.Context) error { return nil }

// newOrdersHook reads SUM(d_next_o_id) before and after a TPC-C run for its
// new orders per minute (NOTPM) over the whole run, warm-up included.
type newOrdersHook struct {
	srv    *Server
	tables int
	// ordersBefore is SUM(d_next_o_id) when the run started.
	ordersBefore int64
}

func (h *newOrdersHook) before(ctx context.Context, _ *stepRun) error {
	n, err := h.srv.SumNextOrderID(ctx, h.tables)
	if err != nil {
		return err
	}
	h.ordersBefore = n
	return nil
}

// after leaves NOTPM out when the counter cannot be read: the run's
// throughput stands without it.
func (h *newOrdersHook) after(ctx context.Context, r *stepRun) {
	after, err := h.srv.SumNextOrderID(ctx, h.tables)
	if err != nil {
		return
	}
	if secs := r.Ended.Sub(r.Started).Seconds(); secs > 0 {
		r.Ext.NewOrdersPerMinute = float64(after-h.ordersBefore) / secs * 60
	}
}

// loadTPCC drops and loads the TPC-C tables.
func (a *Agent) loadTPCC(ctx context.Context, s RunStep) error {
	a.progress.Phase = agentapi.PhaseLoading
	a.progress.Step = s.Name
	a.reportProgress(ctx, true)
	defer func() { a.progress.Phase = agentapi.PhaseRunning }()
	t := tpccConfig(a.Plan.Workload)
	if inv := a.sb.Run(ctx, s.Script, s.Args, "cleanup", nil); inv.Err != nil {
		return fmt.Errorf("dropping old TPC-C tables: %w", inv.Err)
	}
	threads := min(t.Warehouses*t.Tables, 8)
	a.logf("tpcc load: %d warehouse(s) x %d set(s), %d thread(s)", t.Warehouses, t.Tables, threads)
	inv := a.sb.Run(ctx, s.Script, append(append([]string{}, s.Args...), "--threads="+strconv.Itoa(threads)), "prepare", nil)
	if inv.Err != nil {
		return fmt.Errorf("loading TPC-C data: %w", inv.Err)
	}
	// Rows per warehouse at divisor 1: stock 100k, customer + history 60k,
	// orders 30k, order lines ~300k, new orders 9k; items 100k per set.
	rows := int64(t.Tables) * (100_000 + int64(t.Warehouses)*499_000)
	if d, err := strconv.Atoi(os.Getenv(EnvTPCCDataDivisor)); err == nil && d > 1 {
		rows /= int64(d)
	}
	ld := &results.Load{Seconds: inv.Elapsed.Seconds(), InsertSeconds: inv.Elapsed.Seconds(), Tables: 9 * t.Tables, Rows: rows,
		Commands: [][]string{inv.Command}}
	if ld.InsertSeconds > 0 {
		ld.InsertsPerSecond = float64(rows) / ld.InsertSeconds
	}
	a.ext.TPCCLoad = ld
	a.logf("tpcc load: ~%d rows in %.1f s", rows, ld.Seconds)
	return nil
}
