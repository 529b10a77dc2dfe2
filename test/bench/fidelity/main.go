// Command fidelity is the agent's fidelity benchmark (make bench-fidelity):
// does a step measured through the agent give the throughput a plain sysbench
// command line gives?
//
// On a real local server started here with hack/dbservers.sh (MariaDB by
// default; a private data root and a free loopback port, stopped at the end;
// or -port for a server already running), it runs the same steps with the same duration, threads and data several times,
// interleaved:
//
//   - agent: the real dbbench-agent binary in local mode (built from
//     ./cmd/agent unless -agent is given): its own load (cleanup, one-thread
//     prepare, warm-up read step, InnoDB flush / VACUUM + CHECKPOINT), then
//     the steps;
//   - plain: the same load as plain sysbench commands (and the same flush
//     SQL), then each step as the sysbench command line a person would type:
//     the stock script, the connection, --tables --table-size
//     --rand-type=uniform --threads --time --report-interval=1 run. The agent
//     also passes --db-ps-mode=auto --events=0 --percentile=95, which are
//     sysbench 1.0.20's defaults.
//
// Pair i runs agent then plain when i is even, plain then agent when odd, so
// a drift of the machine over time does not favour one side. The QPS of both
// sides is computed the same way from sysbench's own output: "steady" is the
// mean of the 1-s interval samples after the warm-up (what the agent
// reports), "whole" is the final report's "queries: N (X per sec.)", which
// includes the warm-up and the connection set-up. The ratio agent/plain is
// printed per pair and summarised per step (mean, min, max, sample stddev);
// the exit status is 1 when a step's mean steady ratio is below -target. The
// agent process's own CPU time (sampled from /proc, sysbench excluded) is
// printed too. -aa runs plain sysbench on both sides: the ratio's noise floor
// on this machine.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/dbbench/dbbench/internal/testutil/dbservers"
	"github.com/dbbench/dbbench/pkg/agent"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
	"github.com/dbbench/dbbench/pkg/workload"
)

type config struct {
	engine    agentapi.Engine
	port      int
	steps     []workload.Step
	pairs     int
	seconds   int
	warmup    int
	threads   int
	tableSize int64
	flushWait int
	target    float64
	agentBin  string
	sysbench  string
	sslOff    string // the TLS-off option of this sysbench version
	control   bool   // A/A: the "agent" side is a second plain run
	together  bool   // both sides at the same time on the same tables
	work      string
}

// measure is one side's figures for one step in one pair.
type measure struct {
	Steady, Whole float64
}

type pairResult struct {
	Order        string
	Agent, Plain map[string]measure
}

func main() {
	var (
		c        config
		engine   = flag.String("engine", "mariadb", "mariadb, mysql or postgres (a hack/dbservers.sh server)")
		steps    = flag.String("steps", "point-query,read-write_range=10", "catalog steps that use stock sysbench scripts")
		jsonOut  = flag.String("json", "", "also write every figure to this JSON file")
		keepWork = flag.Bool("keep-work", false, "keep the agent's result directories and the plain outputs")
	)
	flag.IntVar(&c.port, "port", 0, "use the server already listening on this loopback port (account dbbench/dbbench-pw, database sbtest; its sbtest tables are dropped); default: start one with hack/dbservers.sh")
	flag.IntVar(&c.pairs, "pairs", 5, "agent/plain pairs")
	flag.IntVar(&c.seconds, "seconds", 10, "measured seconds per step (after the warm-up)")
	flag.IntVar(&c.warmup, "warmup", 2, "warm-up seconds dropped from each step's steady QPS (both sides)")
	flag.IntVar(&c.threads, "threads", 2, "sysbench threads")
	flag.Int64Var(&c.tableSize, "table-size", 100000, "rows in the one sbtest table")
	flag.IntVar(&c.flushWait, "flush-wait", 30, "cap of the post-load flush, seconds")
	flag.Float64Var(&c.target, "target", 0.98, "fail when a step's mean steady ratio agent/plain is below this")
	flag.StringVar(&c.agentBin, "agent", "", "dbbench-agent binary (default: go build ./cmd/agent)")
	flag.StringVar(&c.sysbench, "sysbench", "sysbench", "sysbench binary")
	flag.BoolVar(&c.control, "aa", false, "control run: plain sysbench on both sides (the noise floor of the ratio)")
	flag.BoolVar(&c.together, "concurrent", false, "run the plain command at the same time as the agent's step, on the agent's tables (cancels the machine's load swings)")
	flag.Parse()

	c.engine = agentapi.Engine(*engine)
	if _, ok := dbservers.PortEnv[c.engine]; !ok {
		fatalf("unknown engine %q (mariadb, mysql, postgres)", *engine)
	}
	for _, n := range strings.Split(*steps, ",") {
		s, ok := workload.Lookup(strings.TrimSpace(n))
		if !ok {
			fatalf("unknown step %q", n)
		}
		if strings.HasPrefix(s.Script, "dbbench/") || s.RowsPerSecond {
			fatalf("step %q uses our own Lua script or reports rows/s; pick steps of stock sysbench", n)
		}
		c.steps = append(c.steps, s)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, c, *jsonOut, *keepWork))
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "fidelity: "+format+"\n", args...)
	os.Exit(2)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func listening(port int) bool {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

func run(ctx context.Context, c config, jsonOut string, keepWork bool) int {
	root, err := dbservers.RepoRoot()
	if err != nil {
		fatalf("%v", err)
	}
	work, err := os.MkdirTemp("", "dbbench-fidelity-")
	if err != nil {
		fatalf("%v", err)
	}
	c.work = work
	if !keepWork {
		defer os.RemoveAll(work)
	} else {
		logf("work directory: %s", work)
	}

	if c.agentBin == "" {
		c.agentBin = filepath.Join(work, "dbbench-agent")
		logf("building ./cmd/agent")
		b := exec.Command("go", "build", "-o", c.agentBin, "./cmd/agent")
		b.Dir, b.Stdout, b.Stderr = root, os.Stderr, os.Stderr
		if err := b.Run(); err != nil {
			fatalf("go build ./cmd/agent: %v", err)
		}
	}
	if c.port != 0 {
		if !listening(c.port) {
			fatalf("nothing listens on 127.0.0.1:%d", c.port)
		}
	} else {
		// A server of our own (private data root, free port): nothing else
		// uses its sbtest tables while we measure.
		dbRoot := filepath.Join(work, "db")
		if err := os.MkdirAll(dbRoot, 0o755); err != nil {
			fatalf("%v", err)
		}
		_ = os.Chmod(work, 0o755) // PostgreSQL runs as its own user
		port, stop, err := dbservers.Start(root, c.engine, dbRoot)
		if err != nil {
			fatalf("%v", err)
		}
		c.port = port
		defer stop()
	}
	vout, err := exec.Command(c.sysbench, "--version").Output()
	if err != nil {
		fatalf("%s --version: %v", c.sysbench, err)
	}
	ver, err := sysbench.ParseVersion(string(vout))
	if err != nil {
		fatalf("%s --version: %v", c.sysbench, err)
	}
	c.sslOff = ver.MySQLSSLOff()
	pwFile := filepath.Join(work, "pw")
	if err := os.WriteFile(pwFile, []byte(dbservers.Password), 0o600); err != nil {
		fatalf("%v", err)
	}

	names := make([]string, 0, len(c.steps))
	for _, s := range c.steps {
		names = append(names, s.Name)
	}
	logf("%s, %s on 127.0.0.1:%d: %d pairs of {agent, plain} x [%s], %d s + %d s warm-up per step, %d threads, 1 x %d rows",
		ver, c.engine, c.port, c.pairs, strings.Join(names, ", "), c.seconds, c.warmup, c.threads, c.tableSize)

	var pairs []pairResult
	for i := 0; i < c.pairs && c.together; i++ {
		pr, err := runTogether(ctx, c, i, pwFile)
		if err != nil {
			logf("pair %d: %v", i+1, err)
			return 2
		}
		for _, n := range names {
			logf("pair %d %-22s agent steady %9.1f whole %9.1f | plain steady %9.1f whole %9.1f QPS", i+1, n,
				pr.Agent[n].Steady, pr.Agent[n].Whole, pr.Plain[n].Steady, pr.Plain[n].Whole)
		}
		pairs = append(pairs, pr)
	}
	for i := 0; i < c.pairs && !c.together; i++ {
		pr := pairResult{Order: "agent,plain"}
		sides := []string{"agent", "plain"}
		if i%2 == 1 {
			sides = []string{"plain", "agent"}
			pr.Order = "plain,agent"
		}
		for _, side := range sides {
			var m map[string]measure
			var err error
			if side == "agent" && !c.control {
				m, err = runAgent(ctx, c, i, pwFile, nil)
				pr.Agent = m
			} else if side == "agent" {
				m, err = runPlain(ctx, c, i)
				pr.Agent = m
			} else {
				m, err = runPlain(ctx, c, i)
				pr.Plain = m
			}
			if err != nil {
				logf("pair %d, %s: %v", i+1, side, err)
				return 2
			}
			for _, n := range names {
				logf("pair %d %-5s %-22s steady %9.1f QPS  whole-run %9.1f QPS", i+1, side, n, m[n].Steady, m[n].Whole)
			}
		}
		pairs = append(pairs, pr)
	}
	code := report(os.Stdout, c, names, pairs)
	if jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{
			"engine": c.engine, "port": c.port, "steps": names, "pairs": pairs, "seconds": c.seconds,
			"warmupSeconds": c.warmup, "threads": c.threads, "tableSize": c.tableSize,
		}, "", "  ")
		if err := os.WriteFile(jsonOut, b, 0o644); err != nil {
			logf("writing %s: %v", jsonOut, err)
			return 2
		}
	}
	return code
}

// runAgent runs dbbench-agent local and reads the steps' figures from its
// full results document.
func runAgent(ctx context.Context, c config, pair int, pwFile string, started func(pid int)) (map[string]measure, error) {
	out := filepath.Join(c.work, fmt.Sprintf("agent-%d", pair+1))
	names := make([]string, 0, len(c.steps))
	for _, s := range c.steps {
		names = append(names, s.Name)
	}
	cmd := dbservers.AgentLocal{
		Bin: c.agentBin, Sysbench: c.sysbench, Engine: c.engine, Port: c.port, PasswordFile: pwFile,
		Steps: names, TableSize: c.tableSize, Seconds: c.seconds, Warmup: c.warmup,
		Threads: c.threads, FlushWait: c.flushWait, Out: out,
	}.Command(ctx)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("dbbench-agent local: %v", err)
	}
	// The agent's own CPU (utime + stime of its process, not of its sysbench
	// children), sampled until it exits: an upper bound of what it takes from
	// the benchmark.
	if started != nil {
		started(cmd.Process.Pid)
	}
	done := make(chan struct{})
	cpu := make(chan float64, 1)
	go func() {
		var last float64
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if v, err := ownCPUSeconds(cmd.Process.Pid); err == nil {
				last = v
			}
			select {
			case <-done:
				cpu <- last
				return
			case <-t.C:
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	agentCPU, wall := <-cpu, time.Since(start).Seconds()
	if err != nil {
		return nil, fmt.Errorf("dbbench-agent local: %v\n%s", err, log.String())
	}
	b, err := os.ReadFile(filepath.Join(out, agent.FullDocumentFile))
	if err != nil {
		return nil, err
	}
	doc, err := results.Unmarshal(b)
	if err != nil {
		return nil, err
	}
	m := map[string]measure{}
	for _, s := range doc.Steps {
		if s.Threads == c.threads {
			m[s.Step] = measure{Steady: s.SteadyQPS, Whole: s.FinalQPS}
		}
	}
	m[agentCPUKey] = measure{Steady: agentCPU, Whole: wall}
	for _, n := range names {
		if _, ok := m[n]; !ok {
			return nil, fmt.Errorf("no result for %s in %s", n, out)
		}
	}
	return m, nil
}

// runPlain loads the data as the agent does, with plain sysbench commands and
// the same flush, then runs each step as a plain sysbench command line.
// connArgs are the plain command's connection options.
func connArgs(c config) []string {
	conn := []string{
		"--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=" + strconv.Itoa(c.port),
		"--mysql-user=" + dbservers.User, "--mysql-password=" + dbservers.Password, "--mysql-db=" + dbservers.Database, c.sslOff,
	}
	if c.engine == agentapi.Postgres {
		conn = []string{
			"--db-driver=pgsql", "--pgsql-host=127.0.0.1", "--pgsql-port=" + strconv.Itoa(c.port),
			"--pgsql-user=" + dbservers.User, "--pgsql-password=" + dbservers.Password, "--pgsql-db=" + dbservers.Database,
		}
	}
	return conn
}

// plainSB runs `sysbench SCRIPT CONN... ARGS...` and parses its output.
func plainSB(ctx context.Context, c config, pair int, name string, args ...string) (*sysbench.Output, error) {
	full := append([]string{args[0]}, connArgs(c)...)
	full = append(full, args[1:]...)
	cmd := exec.CommandContext(ctx, c.sysbench, full...)
	cmd.Env = append(os.Environ(), "PGSSLMODE=disable")
	b, err := cmd.CombinedOutput()
	_ = os.WriteFile(filepath.Join(c.work, fmt.Sprintf("plain-%d-%s.txt", pair+1, name)), b, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sysbench %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return sysbench.ParseString(string(b))
}

// plainStep runs one step as the plain command line.
func plainStep(ctx context.Context, c config, pair int, s workload.Step) (measure, error) {
	args := append([]string{s.Script}, "--tables=1", "--table-size="+strconv.FormatInt(c.tableSize, 10), "--rand-type=uniform")
	args = append(args, "--threads="+strconv.Itoa(c.threads), "--time="+strconv.Itoa(c.seconds+c.warmup), "--report-interval=1")
	args = append(args, s.Args...)
	args = append(args, "run")
	o, err := plainSB(ctx, c, pair, s.Name, args...)
	if err != nil {
		return measure{}, err
	}
	if o.Final == nil || o.Final.SQL == nil {
		return measure{}, fmt.Errorf("%s: no final report", s.Name)
	}
	st, err := o.SteadyState(float64(c.warmup))
	if err != nil {
		return measure{}, fmt.Errorf("%s: %w", s.Name, err)
	}
	return measure{Steady: st.QPS, Whole: o.Final.SQL.QueriesPerSec}, nil
}

func runPlain(ctx context.Context, c config, pair int) (map[string]measure, error) {
	data := []string{"--tables=1", "--table-size=" + strconv.FormatInt(c.tableSize, 10), "--rand-type=uniform"}
	timeArg := "--time=" + strconv.Itoa(c.seconds+c.warmup)
	thr := "--threads=" + strconv.Itoa(c.threads)
	sb := func(name string, args ...string) (*sysbench.Output, error) {
		return plainSB(ctx, c, pair, name, args...)
	}
	// The load: what the agent does, step by step.
	if _, err := sb("cleanup", append(append([]string{"oltp_read_only"}, data...), "cleanup")...); err != nil {
		return nil, err
	}
	if _, err := sb("prepare", append(append([]string{"oltp_read_only"}, data...), "--threads=1", "prepare")...); err != nil {
		return nil, err
	}
	if _, err := sb("warm", append(append([]string{"oltp_read_only"}, data...),
		thr, timeArg, "--report-interval=1", "--range-size=100", "run")...); err != nil {
		return nil, err
	}
	srv := &agent.Server{Engine: c.engine, Host: "127.0.0.1", Port: c.port, Database: dbservers.Database, User: dbservers.User, Password: dbservers.Password}
	if err := srv.WaitReady(ctx, 10*time.Second); err != nil {
		return nil, err
	}
	_, err := srv.Flush(ctx, []string{"sbtest1"}, time.Duration(c.flushWait)*time.Second)
	srv.Close()
	if err != nil {
		return nil, fmt.Errorf("flush: %w", err)
	}

	m := map[string]measure{}
	for _, s := range c.steps {
		r, err := plainStep(ctx, c, pair, s)
		if err != nil {
			return nil, err
		}
		m[s.Name] = r
	}
	return m, nil
}

// agentCPUKey holds, in an agent side's measures, the agent process's own CPU
// seconds (Steady) and its wall seconds (Whole).
const agentCPUKey = "(agent cpu)"

// ownCPUSeconds is utime + stime of a process itself (fields 14 and 15 of
// /proc/PID/stat; its waited-for children are in 16 and 17).
func ownCPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: split after its ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	const clkTck = 100 // USER_HZ on Linux
	return (ut + st) / clkTck, nil
}

// runTogether runs the agent and, for each of its steps, the plain command at
// the same moment on the same tables: both see the same load swings of the
// machine, which the ratio then cancels. The agent's sysbench children are
// found by polling /proc for processes whose parent is the agent.
func runTogether(ctx context.Context, c config, pair int, pwFile string) (pairResult, error) {
	pr := pairResult{Order: "together", Plain: map[string]measure{}}
	type res struct {
		name string
		m    measure
		err  error
	}
	results := make(chan res, len(c.steps))
	pidCh := make(chan int, 1)
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		agentPid := <-pidCh
		seen := map[int]bool{}
		next, runs := 0, 0
		for next < len(c.steps) && ctx.Err() == nil {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", agentPid)); err != nil {
				break // the agent has exited
			}
			for _, pid := range childrenOf(agentPid, seen) {
				cl, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				args := strings.Split(strings.TrimRight(string(cl), "\x00"), "\x00")
				if len(args) < 3 || filepath.Base(args[0]) != filepath.Base(c.sysbench) {
					continue // not yet exec'd, or not sysbench: look again
				}
				seen[pid] = true
				if args[len(args)-1] != "run" {
					continue // cleanup, prepare
				}
				// The agent's first `sysbench ... run` is its load's warm-up
				// read step; then come the steps, in order.
				if runs++; runs == 1 {
					continue
				}
				if args[1] != c.steps[next].Script {
					results <- res{c.steps[next].Name, measure{}, fmt.Errorf("expected the agent to run %s, saw %s", c.steps[next].Script, args[1])}
					next++
					break
				}
				s := c.steps[next]
				go func() {
					m, err := plainStep(ctx, c, pair, s)
					results <- res{s.Name, m, err}
				}()
				next++
				// Nothing to look for until this step is nearly over.
				time.Sleep(time.Duration(c.seconds+c.warmup-1) * time.Second)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		for ; next < len(c.steps); next++ {
			results <- res{c.steps[next].Name, measure{}, fmt.Errorf("the agent's %s step was not seen", c.steps[next].Name)}
		}
	}()
	m, err := runAgent(ctx, c, pair, pwFile, func(pid int) { pidCh <- pid })
	<-watchDone
	for range c.steps {
		r := <-results
		if r.err != nil && err == nil {
			err = r.err
		}
		pr.Plain[r.name] = r.m
	}
	pr.Agent = m
	return pr, err
}

// childrenOf lists the processes whose parent is ppid and that are not in
// seen (only pids above ppid's: new processes, barring pid wrap-around).
func childrenOf(ppid int, seen map[int]bool) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= ppid || seen[pid] {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:])) // f[1] is field 4, the parent
		if len(f) > 1 && f[1] == strconv.Itoa(ppid) {
			out = append(out, pid)
		}
	}
	return out
}

type stats struct{ mean, median, min, max, sd float64 }

func summarize(xs []float64) stats {
	s := stats{min: math.Inf(1), max: math.Inf(-1)}
	for _, x := range xs {
		s.mean += x
		s.min = math.Min(s.min, x)
		s.max = math.Max(s.max, x)
	}
	s.mean /= float64(len(xs))
	sorted := append([]float64(nil), xs...)
	sort.Float64s(sorted)
	if n := len(sorted); n%2 == 1 {
		s.median = sorted[n/2]
	} else {
		s.median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	if len(xs) > 1 {
		for _, x := range xs {
			s.sd += (x - s.mean) * (x - s.mean)
		}
		s.sd = math.Sqrt(s.sd / float64(len(xs)-1))
	}
	return s
}

// tQuantile975 is Student's t 0.975 quantile for df degrees of freedom.
func tQuantile975(df int) float64 {
	t := []float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086}
	if df < len(t) {
		return t[df]
	}
	return 1.96 + 2.4/float64(df) // within 0.5 % of the exact value above 20
}

func report(w *os.File, c config, names []string, pairs []pairResult) int {
	fmt.Fprintf(w, "\nfidelity: %s, %d pairs, %d s + %d s warm-up per step, %d threads, 1 x %d rows\n",
		c.engine, len(pairs), c.seconds, c.warmup, c.threads, c.tableSize)
	fmt.Fprintln(w, "ratio = agent QPS / plain sysbench QPS, per pair; stddev is the sample stddev (n-1)")
	if c.control {
		fmt.Fprintln(w, "CONTROL (-aa): the \"agent\" column is a second plain sysbench run")
	}
	if c.together {
		fmt.Fprintln(w, "CONCURRENT: each plain command ran at the same time as the agent's step, on the agent's tables")
	}
	code := 0
	for _, n := range names {
		fmt.Fprintf(w, "\n%s\n", n)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "pair\torder\tagent steady\tplain steady\tratio\tagent whole\tplain whole\tratio\t")
		rs, rw, rx := make([]float64, 0, len(pairs)), make([]float64, 0, len(pairs)), make([]float64, 0, len(pairs))
		for i, p := range pairs {
			a, b := p.Agent[n], p.Plain[n]
			rs = append(rs, a.Steady/b.Steady)
			rw = append(rw, a.Whole/b.Whole)
			rx = append(rx, a.Steady/b.Whole)
			fmt.Fprintf(tw, "%d\t%s\t%.1f\t%.1f\t%.4f\t%.1f\t%.1f\t%.4f\t\n", i+1, p.Order, a.Steady, b.Steady, a.Steady/b.Steady,
				a.Whole, b.Whole, a.Whole/b.Whole)
		}
		tw.Flush()
		for _, row := range []struct {
			label string
			xs    []float64
		}{
			{"steady/steady (like with like)", rs},
			{"whole/whole   (like with like)", rw},
			{"steady/whole  (mixed definitions)", rx},
		} {
			s := summarize(row.xs)
			fmt.Fprintf(w, "  %s: mean %.4f  median %.4f  min %.4f  max %.4f  stddev %.4f\n", row.label, s.mean, s.median, s.min, s.max, s.sd)
		}
		if len(rs) > 1 {
			s := summarize(rs)
			h := tQuantile975(len(rs)-1) * s.sd / math.Sqrt(float64(len(rs)))
			fmt.Fprintf(w, "  95%% confidence interval of the mean steady ratio: [%.4f, %.4f]\n", s.mean-h, s.mean+h)
		}
		if s := summarize(rs); s.mean < c.target {
			fmt.Fprintf(w, "  FAIL: mean steady ratio %.4f < target %.2f\n", s.mean, c.target)
			code = 1
		} else {
			fmt.Fprintf(w, "  ok: mean steady ratio %.4f >= target %.2f\n", s.mean, c.target)
		}
	}
	var cpuS, wallS float64
	for _, p := range pairs {
		cpuS += p.Agent[agentCPUKey].Steady
		wallS += p.Agent[agentCPUKey].Whole
	}
	if wallS > 0 {
		fmt.Fprintf(w, "\nagent process's own CPU (not sysbench's): %.2f s over %.0f s of agent runs = %.2f%% of one core\n",
			cpuS, wallS, 100*cpuS/wallS)
	}
	if code != 0 {
		fmt.Fprintln(w, "\nfidelity: FAILED")
	}
	return code
}
