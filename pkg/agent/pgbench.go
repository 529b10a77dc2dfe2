package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/pgbench"
	"github.com/dbbench/dbbench/pkg/results"
)

// pgbenchStep is a pgbench built-in script (RunStep.Script: tpcb-like,
// select-only) run by PostgreSQL's pgbench on its own tables, which
// prepare loads once per cell (pgbench -i). Its runs are read into
// sysbench's shape (pkg/pgbench), so steady state, quality gate, hardware
// and reports are a sysbench step's. Not supported: adaptive length (pgbench
// cannot be told to stop early and still report) and fixed-rate runs (its
// --rate reports schedule lag, not sysbench's queue).
type pgbenchStep struct {
	a *Agent
	s RunStep
}

func (p *pgbenchStep) spec() RunStep                    { return p.s }
func (p *pgbenchStep) usesSbtest() bool                 { return false }
func (p *pgbenchStep) baseArgs() []string               { return nil }
func (p *pgbenchStep) hooks() []windowHook              { return nil }
func (p *pgbenchStep) finish(ctx context.Context) error { return nil }

// check refuses a pgbench step on another engine than PostgreSQL.
func (p *pgbenchStep) check() error {
	if e := p.a.Plan.Server.Engine; e != agentapi.Postgres {
		return fmt.Errorf("step %s: pgbench runs against PostgreSQL, not %s", p.s.Name, e)
	}
	return nil
}

// prepare loads pgbench's tables once per cell.
func (p *pgbenchStep) prepare(ctx context.Context) error {
	if p.a.ext.PgbenchLoad != nil {
		return nil
	}
	a := p.a
	a.progress.Phase = agentapi.PhaseLoading
	a.progress.Step = p.s.Name
	a.reportProgress(ctx, true)
	defer func() { a.progress.Phase = agentapi.PhaseRunning }()
	scale := pgbenchScale(a.Plan.Workload)
	inv := a.pgbenchRun(ctx, []string{"-i", "-q", "-s", strconv.Itoa(scale)})
	if inv.Err != nil {
		return fmt.Errorf("loading pgbench's tables (scale %d): %w", scale, inv.Err)
	}
	rows := int64(scale) * 100_000
	a.ext.PgbenchLoad = &results.Load{Seconds: inv.Elapsed.Seconds(), InsertSeconds: inv.Elapsed.Seconds(), Tables: 4, Rows: rows,
		Commands: [][]string{inv.Command}}
	if s := inv.Elapsed.Seconds(); s > 0 {
		a.ext.PgbenchLoad.InsertsPerSecond = float64(rows) / s
	}
	a.logf("pgbench load: scale %d (%d accounts) in %.1f s", scale, rows, inv.Elapsed.Seconds())
	return nil
}

// run is one measured run: threads clients (one pgbench thread each) for
// seconds, a progress line a second, and per-second aggregated logs in a
// scratch directory, which give the latency extremes the summary lacks.
func (p *pgbenchStep) run(ctx context.Context, threads, seconds int) *Invocation {
	dir, err := os.MkdirTemp("", "dbbench-pgbench-")
	if err != nil {
		return &Invocation{Err: err}
	}
	defer os.RemoveAll(dir)
	n := strconv.Itoa(threads)
	inv := p.a.pgbenchRun(ctx, []string{"-b", p.s.Script, "-c", n, "-j", n, "-T", strconv.Itoa(seconds), "-P", "1", "-n",
		"--log", "--aggregate-interval=1", "--log-prefix=" + filepath.Join(dir, "agg")})
	if inv.Err != nil {
		return inv
	}
	out, err := pgbench.ParseString(inv.Output)
	switch {
	case err != nil:
		inv.Err = err
	case out.Summary == nil:
		inv.Err = fmt.Errorf("pgbench printed no summary: %s", tail(inv.Output, 8))
	default:
		if out.Summary.Extremes, err = readAggregateLogs(dir); err != nil {
			inv.Err = err
			return inv
		}
		inv.Parsed = out.Sysbench(0)
	}
	return inv
}

// readAggregateLogs reads every pgbench thread's aggregated log in dir.
func readAggregateLogs(dir string) (*pgbench.Extremes, error) {
	files, err := filepath.Glob(filepath.Join(dir, "agg.*"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("pgbench wrote no aggregated log in %s (%v)", dir, err)
	}
	e := &pgbench.Extremes{}
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		err = e.ReadAggregateLog(r)
		r.Close()
		if err != nil {
			return nil, err
		}
	}
	return e, nil
}

func pgbenchScale(w agentapi.Workload) int {
	if w.Pgbench != nil && w.Pgbench.Scale > 0 {
		return w.Pgbench.Scale
	}
	return agentapi.DefaultPgbenchScale
}

// errNoPgbench: no pgbench binary on PATH or in Debian's PostgreSQL
// directories.
var errNoPgbench = errors.New("pgbench binary not found (Debian ships it in postgresql-<major>)")

// pgbenchBinary finds pgbench: PATH first, then Debian's
// /usr/lib/postgresql/<major>/bin.
func pgbenchBinary() (string, error) {
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p, nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	if len(found) > 0 {
		return found[len(found)-1], nil
	}
	return "", errNoPgbench
}

// pgbenchRun runs pgbench against the agent's server with args before the
// database name; the password goes in the environment, never the argv.
func (a *Agent) pgbenchRun(ctx context.Context, args []string) *Invocation {
	inv := &Invocation{}
	bin, err := pgbenchBinary()
	if err != nil {
		inv.Err = err
		return inv
	}
	s := a.sb
	full := append([]string{"-h", s.Host, "-p", strconv.Itoa(s.Port), "-U", s.User}, args...)
	full = append(full, s.Database)
	inv.Command = append([]string{filepath.Base(bin)}, full...)
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+s.Password, "PGSSLMODE=disable")
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	b, err := cmd.CombinedOutput()
	inv.Elapsed, inv.Output = time.Since(start), string(b)
	if err != nil {
		inv.Err = fmt.Errorf("%s: %w: %s", filepath.Base(bin), err, tail(inv.Output, 8))
	}
	return inv
}
