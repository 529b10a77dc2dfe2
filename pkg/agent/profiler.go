package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/profile"
	"github.com/dbbench/dbbench/pkg/results"
)

// Profiler samples the database server's on-CPU time between Start and
// Stop, for the unmeasured profiled pass (docs/explain.md).
type Profiler interface {
	Start(ctx context.Context, frequencyHz int) error
	// Stop ends the sampling and returns the profile; on an error the
	// profile still says what it can (tool, event, frequency).
	Stop(ctx context.Context) (results.Profile, error)
}

// ProfileEvent is the perf event sampled: the software CPU clock, which
// needs no hardware performance counters (virtual machines and containers
// often have none).
const ProfileEvent = "cpu-clock"

// DefaultMaxFoldedBytes bounds a profile's folded stacks in the document:
// the rarest stacks are dropped beyond it (counted in Profile.Dropped),
// which keeps a few profiles within the results ConfigMap's budget.
const DefaultMaxFoldedBytes = 96 << 10

// PerfProfiler samples processes with `perf record -e cpu-clock -g` and
// folds `perf script`'s output (pkg/profile).
type PerfProfiler struct {
	// Perf is the perf executable ("perf" from PATH).
	Perf string
	// Targets returns the processes to sample, asked when sampling starts
	// (so PostgreSQL's backends for the pass's connections are there).
	Targets func(ctx context.Context) ([]int, error)
	// MaxFoldedBytes bounds the stacks kept (default DefaultMaxFoldedBytes).
	MaxFoldedBytes int
	// KernelSuffix marks kernel frames "_[k]" (profile.FoldOptions).
	KernelSuffix bool
	// SymbolsFromTarget reads the sampled processes' binaries, for their
	// symbols, through /proc/<pid>/root of the first target (perf script
	// --symfs): a sidecar's own filesystem does not have the server's
	// binaries, and entering its mount namespace would need
	// CAP_SYS_ADMIN, whereas /proc/<pid>/root needs only ptrace access.
	SymbolsFromTarget bool

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan error
	dir     string
	stderr  *bytes.Buffer
	started time.Time
	freq    int
	symfs   string
}

func (p *PerfProfiler) perf() string {
	if p.Perf != "" {
		return p.Perf
	}
	return "perf"
}

// perfAttachWait is how long Start waits for perf to fail at once (not
// permitted, no such process) before it assumes perf is sampling.
const perfAttachWait = 500 * time.Millisecond

// Start runs perf record on the targets until Stop.
func (p *PerfProfiler) Start(ctx context.Context, frequencyHz int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return errors.New("profiler: already started")
	}
	if p.Targets == nil {
		return errors.New("profiler: no targets to sample")
	}
	pids, err := p.Targets(ctx)
	if err != nil {
		return fmt.Errorf("profiler: finding the server's processes: %w", err)
	}
	if len(pids) == 0 {
		return errors.New("profiler: no server process to sample")
	}
	dir, err := os.MkdirTemp("", "dbbench-perf-")
	if err != nil {
		return err
	}
	list := make([]string, len(pids))
	for i, pid := range pids {
		list[i] = strconv.Itoa(pid)
	}
	// Not CommandContext: perf must get SIGINT, not SIGKILL, to write its
	// file; Stop sends it.
	cmd := exec.Command(p.perf(), "record", "-e", ProfileEvent, "-F", strconv.Itoa(frequencyHz), "-g",
		"-p", strings.Join(list, ","), "-o", filepath.Join(dir, "perf.data"), "--quiet")
	stderr := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("profiler: starting %s: %w", p.perf(), err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		os.RemoveAll(dir)
		return fmt.Errorf("profiler: perf record exited at once (%v): %s", err, tailLines(stderr.String()))
	case <-time.After(perfAttachWait):
	}
	p.cmd, p.done, p.dir, p.stderr, p.started, p.freq = cmd, done, dir, stderr, time.Now(), frequencyHz
	p.symfs = ""
	if p.SymbolsFromTarget {
		p.symfs = filepath.Join(defaultProc, strconv.Itoa(pids[0]), "root")
	}
	return nil
}

// Stop ends perf record and folds what it sampled.
func (p *PerfProfiler) Stop(ctx context.Context) (results.Profile, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := results.Profile{Tool: results.ProfileToolPerf, Event: ProfileEvent, FrequencyHz: p.freq}
	if p.cmd == nil {
		return out, errors.New("profiler: not started")
	}
	cmd, done, dir := p.cmd, p.done, p.dir
	p.cmd = nil
	defer os.RemoveAll(dir)
	out.Seconds = time.Since(p.started).Seconds()
	_ = cmd.Process.Signal(syscall.SIGINT)
	// perf record exits non-zero when interrupted; what it wrote decides.
	select {
	case waitErr := <-done:
		_ = waitErr
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		if waitErr := <-done; waitErr != nil {
			p.stderr.WriteString("\n" + waitErr.Error())
		}
		return out, fmt.Errorf("profiler: perf record did not stop within 30 s: %s", tailLines(p.stderr.String()))
	}
	data := filepath.Join(dir, "perf.data")
	if _, err := os.Stat(data); err != nil {
		return out, fmt.Errorf("profiler: perf record wrote no data: %s", tailLines(p.stderr.String()))
	}
	args := []string{"script", "-i", data, "-F", "comm,pid,tid,time,event,ip,sym,dso"}
	if p.symfs != "" {
		args = append(args, "--symfs", p.symfs)
	}
	script := exec.CommandContext(ctx, p.perf(), args...)
	var stdout, stderr bytes.Buffer
	script.Stdout, script.Stderr = &stdout, &stderr
	if err := script.Run(); err != nil {
		return out, fmt.Errorf("profiler: perf script: %w: %s", err, tailLines(stderr.String()))
	}
	// perf names what it can read itself; the rest (a sidecar's perf
	// cannot read the server's binaries) is named from the binaries under
	// the server's own root.
	syms := &profile.ELFSymbols{Root: p.symfs}
	prof, err := profile.FoldPerfScript(&stdout, profile.FoldOptions{KernelSuffix: p.KernelSuffix, Resolve: syms.Resolve})
	if err != nil {
		return out, fmt.Errorf("profiler: %w", err)
	}
	limit := p.MaxFoldedBytes
	if limit <= 0 {
		limit = DefaultMaxFoldedBytes
	}
	prof.Trim(limit)
	out.Samples, out.Dropped, out.Folded = prof.Total(), prof.Dropped, prof.Folded()
	if out.Samples == 0 {
		return out, errors.New("profiler: perf took no samples (is the server busy? is perf allowed to sample it?)")
	}
	return out, nil
}

// perfStderrLines is how much of perf's stderr an error quotes: the last few
// lines say why it failed, the rest is progress noise.
const perfStderrLines = 5

// tailLines joins the last perfStderrLines lines of s into one line.
func tailLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > perfStderrLines {
		lines = lines[len(lines)-perfStderrLines:]
	}
	return strings.Join(lines, " | ")
}

// ProcessTree returns pid and its descendants as /proc (default "/proc")
// lists them now: a PostgreSQL postmaster and its backends.
func ProcessTree(proc string, pid int) ([]int, error) {
	if proc == "" {
		proc = defaultProc
	}
	if _, err := os.Stat(filepath.Join(proc, strconv.Itoa(pid))); err != nil {
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	children := map[int][]int{}
	entries, err := os.ReadDir(proc)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentPID(proc, child); ok {
			children[ppid] = append(children[ppid], child)
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out, nil
}

// parentPID reads the parent of pid from /proc/<pid>/stat.
func parentPID(proc string, pid int) (int, bool) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false // exited meanwhile
	}
	// The command name may hold spaces; fields resume after its ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// PodProcesses returns every process in the collector's PID namespace but
// itself and PID 1 (the pod's pause process): the database container's
// processes when the collector is a sidecar of a pod that shares its
// process namespace.
func PodProcesses(proc string) ([]int, error) {
	if proc == "" {
		proc = defaultProc
	}
	entries, err := os.ReadDir(proc)
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pid == 1 {
			continue
		}
		if ppid, ok := parentPID(proc, pid); ok && ppid == self {
			continue // our own perf
		}
		out = append(out, pid)
	}
	return out, nil
}

// LocalPID is the pid of the server process the agent is connected to,
// when it runs on this machine (local mode): MySQL's and MariaDB's pid
// file, PostgreSQL's postmaster (the parent of this connection's backend).
func (s *Server) LocalPID(ctx context.Context) (int, error) {
	if s.db == nil {
		return 0, errors.New("not connected")
	}
	if s.Engine == agentapi.Postgres {
		var backend int
		if err := s.db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
			return 0, err
		}
		ppid, ok := parentPID(defaultProc, backend)
		if !ok {
			return 0, fmt.Errorf("backend %d is not a process of this machine", backend)
		}
		return ppid, nil
	}
	var pidFile, dataDir string
	if err := s.db.QueryRowContext(ctx, "SELECT @@pid_file, @@datadir").Scan(&pidFile, &dataDir); err != nil {
		return 0, err
	}
	if !filepath.IsAbs(pidFile) {
		pidFile = filepath.Join(dataDir, pidFile)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0, fmt.Errorf("the server's pid file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("pid file %s: %q is not a pid", pidFile, b)
	}
	return pid, nil
}
