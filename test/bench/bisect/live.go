package main

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbbench/dbbench/internal/benchutil"
	"github.com/dbbench/dbbench/internal/testutil/cgroup"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/bisect"
)

// liveSource runs cells on the real server and logs them.
type liveSource struct {
	c     config
	srv   *benchutil.Server
	spec  benchutil.Cell
	busy  *busyLoop
	log   *logWriter
	began time.Time
}

func (l *liveSource) round(_ context.Context, b *bisection, ri int, r bisect.Round) error {
	busy := b.busyIn(ri)
	if err := l.busy.set(busy); err != nil {
		return err
	}
	return l.log.round(b, ri, r)
}

func (l *liveSource) cell(ctx context.Context, b *bisection, ri int, ref cellRef) (map[bisect.Key]float64, string, error) {
	scale := b.scale(ref.point)
	out := filepath.Join(l.srv.Work, fmt.Sprintf("b%03d-r%02d-p%02d-%d", b.index, ri, ref.point, ref.repeat))
	res, err := l.srv.Run(ctx, l.spec, l.c.Quota*float64(scale)/100, out)
	_ = os.RemoveAll(out) // best effort: only the QPS are kept
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	values, failed := map[bisect.Key]float64{}, ""
	if err != nil {
		failed = err.Error()
	} else {
		for _, s := range res.Doc.Steps {
			values[bisect.Key{Step: s.Step, Threads: s.Threads, Metric: analysis.MetricThroughput}] = s.SteadyQPS
		}
	}
	rec, err := l.log.cell(b, ri, ref, values, failed, res.Wall, res.Throttled)
	if err != nil {
		return nil, "", err
	}
	var qps []string
	for _, k := range slices.Sorted(maps.Keys(rec.QPS)) {
		qps = append(qps, fmt.Sprintf("%s %.1f", k, rec.QPS[k]))
	}
	busy := ""
	if b.busyIn(ri) {
		busy = " busy"
	}
	logf("  b%d r%d p%d.%d quota %3d %%%s, throttled %.0f %%, %.1f s, load %.1f: %s%s", b.index, ri, ref.point, ref.repeat, scale, busy,
		100*res.Throttled, res.Wall, orNaN(rec.Load1), strings.Join(qps, ", "), rec.Error)
	if failed != "" {
		return nil, rec.Error, nil
	}
	return values, "", nil
}

// load1 is the machine's 1-minute load average (NaN if unreadable).
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return math.NaN()
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// busyLoop is the load a null bisection changes between rounds: n shell
// busy loops, in the group config.BusyIn names (nil: the machine's default
// weight).
type busyLoop struct {
	n     int
	group *cgroup.Group
	procs []*exec.Cmd
}

func newBusyLoop(srv *benchutil.Server, c config) (*busyLoop, error) {
	b := &busyLoop{n: c.Busy}
	switch c.BusyIn {
	case "server":
		b.group = srv.Group
	case "client":
		b.group = srv.Client
	case "max":
		g, err := srv.NewGroup(fmt.Sprintf("dbbench-bisect-%d-busy", os.Getpid()))
		if err != nil {
			return nil, err
		}
		b.group = g
	}
	return b, nil
}

// set starts the loops (on) or stops them; a no-op when they already are.
func (b *busyLoop) set(on bool) error {
	if on && len(b.procs) == 0 {
		for range b.n {
			cmd := exec.Command("sh", "-c", "while :; do :; done")
			// They die with the benchmark, however it ends.
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			if err := cmd.Start(); err != nil {
				return err
			}
			b.procs = append(b.procs, cmd)
			if b.group != nil {
				if err := b.group.Add(cmd.Process.Pid); err != nil {
					return err
				}
			}
		}
	}
	if !on {
		b.stop()
	}
	return nil
}

// stop stops the loops.
func (b *busyLoop) stop() {
	for _, p := range b.procs {
		_ = p.Process.Kill() // ours, started by set
		_ = p.Wait()
	}
	b.procs = nil
}
