// Package benchutil is what the benchmarks that judge the product's
// decisions on a real server share (test/bench/verdicts, test/bench/bisect):
// a local MariaDB (hack/dbservers.sh) in a CPU cgroup of its own, whose CFS
// quota calibrates a slowdown the server cannot see, the client in a group
// of its own, and one cell = one `dbbench-agent local` run (its own data
// load, then the steps) at a given quota.
package benchutil

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dbbench/dbbench/internal/testutil/cgroup"
	"github.com/dbbench/dbbench/internal/testutil/dbservers"
	"github.com/dbbench/dbbench/pkg/agent"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
)

// Server is a local MariaDB in a CPU cgroup with a client group beside it.
type Server struct {
	// Work is the work directory (agent results, the server's data).
	Work string
	// Port is the server's loopback port.
	Port int
	// Group is the server's CPU cgroup, Client the agent's and sysbench's.
	Group, Client *cgroup.Group
	// Root is the checkout the server and the agent come from.
	Root     string
	agentBin string
	pwFile   string
	closers  []func()
	logf     func(format string, args ...any)
}

// Options start a Server.
type Options struct {
	// Name prefixes the cgroups and the work directory ("dbbench-verdicts").
	Name string
	// AgentBin is the dbbench-agent binary; "" builds ./cmd/agent.
	AgentBin string
	// Keep keeps the work directory.
	Keep bool
	// Logf logs what the setup does and what teardown could not undo.
	Logf func(format string, args ...any)
}

// Start starts the server: a work directory, the agent (built unless
// given), the server's and the client's groups at the highest CPU weight,
// MariaDB moved into its group. On an error what was set up is undone.
// Close undoes it all.
func Start(o Options) (s *Server, err error) {
	s = &Server{agentBin: o.AgentBin, logf: o.Logf}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	defer func() {
		if err != nil {
			s.Close()
			s = nil
		}
	}()
	if s.Root, err = dbservers.RepoRoot(); err != nil {
		return s, err
	}
	if s.Work, err = os.MkdirTemp("", o.Name+"-"); err != nil {
		return s, err
	}
	if o.Keep {
		s.logf("work directory: %s", s.Work)
	} else {
		work := s.Work
		s.closers = append(s.closers, func() { os.RemoveAll(work) })
	}
	if s.agentBin == "" {
		s.agentBin = filepath.Join(s.Work, "dbbench-agent")
		b := exec.Command("go", "build", "-o", s.agentBin, "./cmd/agent")
		b.Dir, b.Stdout, b.Stderr = s.Root, os.Stderr, os.Stderr
		if err := b.Run(); err != nil {
			return s, fmt.Errorf("go build ./cmd/agent: %w", err)
		}
	}
	// The highest CPU weight, for the server and the client alike: on a
	// busy machine the other processes (each as heavy as one default
	// group) would otherwise make the server wait for a CPU beyond its
	// quota, and the run-to-run noise would be the machine's load, not
	// the server's (measured: docs/benchmarks.md).
	if s.Group, err = s.group(fmt.Sprintf("%s-%d", o.Name, os.Getpid())); err != nil {
		return s, fmt.Errorf("a CPU cgroup for the server: %w (needs a writable /sys/fs/cgroup: run as root, outside a read-only container)", err)
	}
	// The client (agent and sysbench) gets a group with the same weight and
	// no quota, like a client pod with a CPU request: on a busy machine the
	// client would otherwise be the bottleneck and the server's quota
	// would not bind.
	if s.Client, err = s.group(fmt.Sprintf("%s-%d-client", o.Name, os.Getpid())); err != nil {
		return s, fmt.Errorf("a CPU cgroup for the client: %w", err)
	}
	dbRoot := filepath.Join(s.Work, "db")
	port, stop, err := dbservers.Start(s.Root, agentapi.MariaDB, dbRoot)
	if err != nil {
		return s, err
	}
	s.Port = port
	s.closers = append(s.closers, stop) // before the groups' removal (closed in reverse)
	pidText, err := os.ReadFile(filepath.Join(dbRoot, "mariadb", "mysqld.pid"))
	if err != nil {
		return s, fmt.Errorf("the server's pid: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		return s, fmt.Errorf("the server's pid %q: %w", pidText, err)
	}
	if err := s.Group.Add(pid); err != nil {
		return s, fmt.Errorf("moving mariadbd (pid %d) into %s: %w", pid, s.Group.Dir, err)
	}
	s.pwFile = filepath.Join(s.Work, "pw")
	if err := os.WriteFile(s.pwFile, []byte(dbservers.Password), 0o600); err != nil {
		return s, err
	}
	return s, nil
}

// NewGroup creates a CPU cgroup at the highest weight, removed by Close.
func (s *Server) NewGroup(name string) (*cgroup.Group, error) { return s.group(name) }

func (s *Server) group(name string) (*cgroup.Group, error) {
	g, err := cgroup.New(name)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, func() {
		if err := g.Remove(); err != nil {
			s.logf("removing %s: %v", g.Dir, err)
		}
	})
	if err := g.SetMaxWeight(); err != nil {
		s.logf("the CPU weight of %s: %v", g.Dir, err)
	}
	return g, nil
}

// Close stops the server and removes the groups and the work directory,
// in the reverse order of their creation.
func (s *Server) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// Cell is what one agent run measures: its steps at its threads.
type Cell struct {
	Sysbench  string
	Steps     []string
	TableSize int64
	// Seconds are measured seconds per step, after Warmup.
	Seconds, Warmup int
	Threads         int
	// FlushWait caps the post-load flush, seconds.
	FlushWait int
}

// PerRunSeconds is a rough wall time of one run, for the logs' estimates.
func (c Cell) PerRunSeconds() int { return 3 + len(c.Steps)*(c.Seconds+c.Warmup) + c.FlushWait }

// Run is one agent run.
type Run struct {
	// Wall is its wall time in seconds.
	Wall float64
	// Throttled is the share of CFS periods in which the server was
	// throttled (NaN when no period passed).
	Throttled float64
	Doc       *results.Document
}

// Run sets the server's quota to quota CPUs and runs the agent once,
// writing its results under out. A step that failed or measured no QPS is
// an error.
func (s *Server) Run(ctx context.Context, c Cell, quota float64, out string) (Run, error) {
	if err := s.Group.SetQuota(quota); err != nil {
		return Run{}, err
	}
	cmd := dbservers.AgentLocal{
		Bin: s.agentBin, Sysbench: c.Sysbench, Engine: agentapi.MariaDB, Port: s.Port, PasswordFile: s.pwFile,
		Steps: c.Steps, TableSize: c.TableSize, Seconds: c.Seconds + c.Warmup, Warmup: c.Warmup,
		Threads: c.Threads, FlushWait: c.FlushWait, Out: out,
	}.Command(ctx)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	p0, t0, err := s.Group.Throttling()
	if err != nil {
		return Run{}, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Run{}, fmt.Errorf("dbbench-agent local: %w", err)
	}
	// Into the client's group before it starts sysbench (after its data
	// load's connection checks): its children inherit the group.
	if err := s.Client.Add(cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill() // best effort: the run is abandoned
		_ = cmd.Wait()
		return Run{}, fmt.Errorf("moving the agent into %s: %w", s.Client.Dir, err)
	}
	if err := cmd.Wait(); err != nil {
		return Run{}, fmt.Errorf("dbbench-agent local: %w\n%s", err, log.String())
	}
	wall := time.Since(start).Seconds()
	p1, t1, err := s.Group.Throttling()
	if err != nil {
		return Run{}, err
	}
	b, err := os.ReadFile(filepath.Join(out, agent.FullDocumentFile))
	if err != nil {
		return Run{}, err
	}
	doc, err := results.Unmarshal(b)
	if err != nil {
		return Run{}, err
	}
	for _, st := range doc.Steps {
		if st.Error != "" || !(st.SteadyQPS > 0) {
			return Run{}, fmt.Errorf("step %s@%d: QPS %v, error %q", st.Step, st.Threads, st.SteadyQPS, st.Error)
		}
	}
	thr := math.NaN()
	if p1 > p0 {
		thr = float64(t1-t0) / float64(p1-p0)
	}
	return Run{Wall: wall, Throttled: thr, Doc: doc}, nil
}

// Mean is the mean of xs without NaNs (NaN when none is left).
func Mean(xs []float64) float64 {
	s, n := 0.0, 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

// CV is the coefficient of variation of xs (sample standard deviation over
// the mean).
func CV(xs []float64) float64 {
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss/float64(len(xs)-1)) / m
}
