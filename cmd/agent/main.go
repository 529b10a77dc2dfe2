// Command dbbench-agent runs one benchmark cell with sysbench.
//
//	dbbench-agent [run]      in a cell's client pod: plan from $DBBENCH_PLAN,
//	                         credentials from the environment, results to the
//	                         cell's results ConfigMap (or plan.results.dir)
//	dbbench-agent local ...  against a server already listening; results to --out
//	dbbench-agent collector --listen :9100
//	                         hardware metrics beside the database server
//
// Exit codes are pkg/agentapi's: 0 done, 2 benchmark failed, 3 server
// unreachable, 4 invalid plan, 5 config variant not in effect.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbbench/dbbench/pkg/agent"
	"github.com/dbbench/dbbench/pkg/agentapi"
)

var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	args := os.Args[1:]
	cmd := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "run":
		os.Exit(runCluster(ctx, args))
	case "local":
		os.Exit(runLocal(ctx, args))
	case "collector":
		os.Exit(runCollector(ctx, args))
	case "version":
		fmt.Println(version)
	default:
		fmt.Fprintf(os.Stderr, "dbbench-agent: unknown command %q (run, local, collector, version)\n", cmd)
		os.Exit(agentapi.ExitInvalidTask)
	}
}

func runCluster(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	sysbenchBin := fs.String("sysbench", "sysbench", "sysbench binary")
	_ = fs.Parse(args)

	p, err := agent.LoadPlanFile(os.Getenv(agentapi.EnvTaskPath))
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbbench-agent:", err)
		return agentapi.ExitInvalidTask
	}
	if v := os.Getenv(agentapi.EnvAttempt); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "dbbench-agent: %s=%q is not an attempt number\n", agentapi.EnvAttempt, v)
			return agentapi.ExitInvalidTask
		}
		p.Cell.Attempt = n
	}
	var sink agent.ResultSink
	switch {
	case p.Results.ConfigMap != "":
		s, err := agent.NewInClusterConfigMapSink(p.Run.Namespace, p.Results.ConfigMap)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dbbench-agent:", err)
			return agentapi.ExitServerUnreachable // the API server is infrastructure too
		}
		sink = s
	case p.Results.Dir != "":
		sink = agent.DirSink{Dir: p.Results.Dir}
	}
	a := &agent.Agent{
		Plan: *p, Host: os.Getenv(agentapi.EnvHost), User: os.Getenv(agentapi.EnvUser), Password: os.Getenv(agentapi.EnvPassword),
		AdminUser: os.Getenv(agentapi.EnvAdminUser), AdminPassword: os.Getenv(agentapi.EnvAdminPassword),
		SysbenchBinary: *sysbenchBin, Sink: sink, Log: os.Stderr,
		NodeName: os.Getenv(agentapi.EnvNodeName), PodName: os.Getenv(agentapi.EnvPodName), Version: version,
	}
	if a.ServerConfig, err = agent.LoadServerConfig(os.Getenv(agentapi.EnvTaskPath)); err != nil {
		fmt.Fprintln(os.Stderr, "dbbench-agent:", err)
		return agentapi.ExitInvalidTask
	}
	if u := os.Getenv(agentapi.EnvCollectorURL); u != "" {
		a.Collector, a.CollectorScope = &agent.HTTPCollector{URL: u}, "database node (collector)"
		if p.Workload.Profile != nil {
			// The collector sidecar runs perf beside the server.
			a.Profiler = &agent.HTTPProfiler{URL: u}
		}
	}
	if v := os.Getenv(agentapi.EnvOutbox); v != "" {
		ob, err := strconv.ParseBool(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "dbbench-agent: %s=%q is not a boolean\n", agentapi.EnvOutbox, v)
			return agentapi.ExitInvalidTask
		}
		a.Outbox = ob
	}
	res := a.Run(ctx)
	return res.ExitCode
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runLocal(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("local", flag.ExitOnError)
	o := agent.LocalOptions{}
	var custom multiFlag
	fs.StringVar(&o.PlanFile, "plan", "", "plan.json to run (flags below override it)")
	fs.StringVar(&o.Engine, "engine", "", "mysql, mariadb or postgres")
	fs.StringVar(&o.Host, "host", "127.0.0.1", "server host")
	fs.IntVar(&o.Port, "port", 0, "server port (default: the engine's)")
	fs.StringVar(&o.User, "user", "sbtest", "user")
	fs.StringVar(&o.PasswordFile, "password-file", "", "file holding the password (default: $"+agentapi.EnvPassword+")")
	fs.StringVar(&o.Database, "database", "", "database (default sbtest)")
	fs.StringVar(&o.Steps, "steps", "", "comma-separated step names, or standard / extended")
	o.Workload.AddFlags(fs) // --tables, --threads, --read-seconds, --tpcc-*, ...
	fs.Var(&custom, "custom", "custom Lua step NAME=PATH[:SECONDS] (repeatable; add NAME to --steps)")
	fs.StringVar(&o.Out, "out", "", "results directory (progress.json, result.json)")
	fs.IntVar(&o.ReadyTimeout, "ready-timeout", 0, "seconds to wait for the server (default 60)")
	fs.StringVar(&o.ServerConfigFile, "server-config", "", "the server's config variant (my.cnf / postgresql.conf): verified against the running server before the load")
	sysbenchBin := fs.String("sysbench", "sysbench", "sysbench binary")
	hw := fs.Bool("hw", true, "sample /proc of this host for hardware metrics per step")
	cgroup := fs.String("server-cgroup-cpu", "", "the server's cgroup cpu.stat / cpuacct.usage, for its own CPU per op")
	perf := fs.String("perf", "perf", "perf binary, for the profiled pass (--profile-steps)")
	_ = fs.Parse(args)
	o.Custom = custom

	p, password, err := o.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbbench-agent local:", err)
		return agentapi.ExitInvalidTask
	}
	if p.Results.Dir == "" {
		fmt.Fprintln(os.Stderr, "dbbench-agent local: --out is required")
		return agentapi.ExitInvalidTask
	}
	a := &agent.Agent{
		Plan: *p, Host: o.Host, User: o.User, Password: password, SysbenchBinary: *sysbenchBin,
		Sink: agent.DirSink{Dir: p.Results.Dir}, Log: os.Stderr, Version: version, ClientOnDBNode: true,
	}
	if a.ServerConfig, err = o.ServerConfig(); err != nil {
		fmt.Fprintln(os.Stderr, "dbbench-agent local:", err)
		return agentapi.ExitInvalidTask
	}
	if *hw {
		a.Collector, a.CollectorScope = &agent.ProcCollector{CgroupCPU: *cgroup}, "local host (client and server together)"
	}
	if p.Workload.Profile != nil {
		// No Targets: the server the agent connects to, on this machine.
		a.Profiler = &agent.PerfProfiler{Perf: *perf}
	}
	res := a.Run(ctx)
	if res.Err != nil {
		fmt.Fprintf(os.Stderr, "dbbench-agent local: %v (exit %d)\n", res.Err, res.ExitCode)
	}
	return res.ExitCode
}

func runCollector(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("collector", flag.ExitOnError)
	listen := fs.String("listen", ":9100", "address to serve on")
	cgroup := fs.String("server-cgroup-cpu", "", "the server's cgroup cpu.stat (v2) or cpuacct.usage (v1)")
	devices := fs.String("devices", "", "block devices to count (default: all disks)")
	podProcs := fs.Bool("pod-processes", false, "measure the server's CPU as that of every other process in the (shared) pod process namespace")
	var volumes volumeFlags
	fs.Var(&volumes, "volume", "name=path: report the I/O of the block device behind path apart, as volume name (repeatable)")
	profile := fs.Bool("profile", false, "serve /profile/start and /profile/stop: sample every other process of the (shared) pod process namespace with perf")
	perf := fs.String("perf", "perf", "perf binary, with --profile")
	_ = fs.Parse(args)
	c := &agent.ProcCollector{CgroupCPU: *cgroup, PodProcesses: *podProcs, Volumes: volumes}
	if *devices != "" {
		c.Devices = strings.Split(*devices, ",")
	}
	var prof agent.Profiler
	if *profile {
		prof = &agent.PerfProfiler{Perf: *perf, Targets: func(context.Context) ([]int, error) { return agent.PodProcesses("") },
			SymbolsFromTarget: true}
	}
	srv := &http.Server{Addr: *listen, Handler: agent.CollectorProfilerHandler(c, prof), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "dbbench-agent collector:", err)
		return 1
	}
	return 0
}

// volumeFlags collects the collector's repeated --volume name=path.
type volumeFlags []agent.Volume

func (v *volumeFlags) String() string {
	parts := make([]string, len(*v))
	for i, x := range *v {
		parts[i] = x.Name + "=" + x.Path
	}
	return strings.Join(parts, ",")
}

func (v *volumeFlags) Set(s string) error {
	x, err := agent.ParseVolume(s)
	if err != nil {
		return err
	}
	*v = append(*v, x)
	return nil
}
