// Command controller is the controller benchmark (make bench-controller):
// against a real kube-apiserver + etcd (envtest) with 500 Node objects and
// a simulated cluster around them (scheduler, kubelet, agent and Job
// controller: simulator.go), a bare client first starts 2,000 cells
// (reference.go), then the real dbbench-manager binary, as its own process,
// starts and finishes 200 runs of 10 cells each. It prints the manager's
// time to start every cell against the bare client's, where the CPU and
// the API requests of both went, how many API writes a cell costs the
// manager over its life, pods per cell and the manager's peak memory: each
// trial on a fresh API server, and the median ratio of -trials trials.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/manager"
	"github.com/dbbench/dbbench/pkg/specs"
)

func main() {
	nodes := flag.Int("nodes", 500, "Node objects to create")
	runs := flag.Int("runs", 200, "BenchmarkRuns to apply")
	cellsPerRun := flag.Int("cells", 10, "cells per run (versions of one database)")
	workers := flag.Int("sim-workers", 16, "goroutines playing kubelet and agent")
	scaling := flag.String("scaling", "", "instead: node counts (1,5,20,50) for the wall time of one blocked 2-version run of -repeats repeats")
	repeats := flag.Int("repeats", 10, "with -scaling: repeats per side (blocks)")
	cellSeconds := flag.Float64("cell-seconds", 3, "with -scaling: how long the simulated agent takes per cell")
	trials := flag.Int("trials", 3, "times to measure, each on a fresh API server; the manager/reference figure is their median")
	flag.StringVar(&managerArgs, "manager-args", "", "extra flags for the manager, space-separated (e.g. \"--kube-api-qps 2000 --kube-api-burst 4000\")")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write the manager's CPU profile from the first apply to this file (go tool pprof reads it)")
	flag.BoolVar(&quietReference, "quiet-reference", false, "measure the reference before the simulated cluster starts (nothing binds or readies its pods), as the bench did before 2026-12-01")
	flag.StringVar(&apiServerProfile, "apiserver-cpuprofile", "", "write the API server's CPU profile from the first apply to this file, and over the reference's first 7 s to FILE.reference")
	flag.DurationVar(&profileFor, "profile-for", 25*time.Second, "with -cpuprofile: how long to profile")
	flag.Parse()
	// The API clients' logs are not the figures; their errors return.
	logf.SetLogger(logr.Discard())
	stopOnSignal()
	var err error
	if *scaling != "" {
		err = runScaling(*scaling, *repeats, time.Duration(*cellSeconds*float64(time.Second)), *workers)
	} else {
		err = runTrials(*trials, *nodes, *runs, *cellsPerRun, *workers)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-controller:", err)
		os.Exit(1)
	}
}

// bench is envtest with nodes, the real manager binary as its own process,
// and the simulator.
type bench struct {
	env   *envtest.Environment
	cfg   *rest.Config
	c     client.Client
	tmp   string
	mgr   *exec.Cmd
	sim   *simulator
	stop  context.CancelFunc
	nodes int
	cpu   *cpuSampler
	// stopOnce guards stopAll, which a signal may run beside close.
	stopOnce sync.Once
}

const (
	// referenceWorkers is the bare client's concurrency, the manager's 16
	// parallel reconciles.
	referenceWorkers = 16
	metricsAddr      = "127.0.0.1:18089"
	// settledCPU is the API server's and etcd's CPU seconds per second
	// under which a window may start; settleLimit, the longest wait.
	settledCPU  = 0.1
	settleLimit = time.Minute
	// cpuSampleInterval is how often the processes' CPU times are read.
	cpuSampleInterval = 100 * time.Millisecond
	pprofAddr         = "127.0.0.1:18090"
)

var (
	// managerArgs are extra flags for the manager under test.
	managerArgs string
	// cpuProfile receives the manager's CPU profile over profileFor from
	// the first apply (its --pprof-bind-address).
	cpuProfile string
	// quietReference runs the reference with no simulated cluster
	// around it.
	quietReference bool
	// apiServerProfile receives the API server's CPU profile over the same
	// window (its /debug/pprof, as the admin user).
	apiServerProfile string
	profileFor       time.Duration
)

// newBench starts envtest with nodes Node objects; before reports the
// reference's figures (or anything else) before the manager starts.
func newBench(ctx context.Context, nodes, workers int, before func(*bench) error) (*bench, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	b := &bench{
		env:   &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join(root, "config", "crd", "bases")}, ErrorIfCRDPathMissing: true},
		nodes: nodes,
	}
	open.Lock()
	open.benches[b] = true
	open.Unlock()
	cfg, err := b.env.Start()
	if err != nil {
		b.close()
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	cfg.QPS, cfg.Burst = 2000, 4000
	b.cfg = cfg
	b.cpu = newCPUSampler()
	b.cpu.start(cpuSampleInterval)
	if b.c, err = client.New(cfg, client.Options{Scheme: manager.Scheme()}); err != nil {
		b.close()
		return nil, err
	}
	if b.tmp, err = os.MkdirTemp("", "bench-controller-"); err != nil {
		b.close()
		return nil, err
	}
	fmt.Printf("Creating %d nodes...\n", nodes)
	if err := createNodes(ctx, b.c, nodes); err != nil {
		b.close()
		return nil, err
	}
	// The simulated cluster runs before the reference, so that its pods
	// are bound and made ready as the manager's are: whoever creates a
	// pod, the cluster answers it (-quiet-reference: after it).
	if quietReference {
		if err := b.runBefore(before); err != nil {
			return nil, err
		}
	}
	if b.sim, err = newSimulator(cfg, nodes); err != nil {
		b.close()
		return nil, err
	}
	simCtx, stop := context.WithCancel(ctx)
	b.stop = stop
	if err := b.sim.start(simCtx, workers); err != nil {
		b.close()
		return nil, err
	}
	if !quietReference {
		if err := b.runBefore(before); err != nil {
			return nil, err
		}
	}
	if err := b.startManager(root); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

// open holds the benches not yet closed, for stopOnSignal.
var open = struct {
	sync.Mutex
	benches map[*bench]bool
}{benches: map[*bench]bool{}}

// stopOnSignal closes every open bench on SIGINT or SIGTERM before exiting:
// the API server, etcd and the manager are processes of their own, and
// would outlive the bench (and load the machine the next measurement runs
// on).
func stopOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-ch
		open.Lock()
		for b := range open.benches {
			b.stopProcesses()
		}
		open.Unlock()
		fmt.Fprintf(os.Stderr, "bench-controller: stopped by %s\n", sig)
		os.Exit(1)
	}()
}

// runBefore runs before, if any, closing the bench when it fails.
func (b *bench) runBefore(before func(*bench) error) error {
	if before == nil {
		return nil
	}
	if err := before(b); err != nil {
		b.close()
		return err
	}
	return nil
}

// apiRequests reads the API server's request counters.
func (b *bench) apiRequests() (apiRequests, error) {
	hc, err := rest.HTTPClientFor(b.cfg)
	if err != nil {
		return nil, err
	}
	return scrapeAPIServer(hc, b.cfg.Host)
}

func (b *bench) close() {
	open.Lock()
	delete(open.benches, b)
	open.Unlock()
	b.stopProcesses()
}

// stopProcesses stops what the bench started, once.
func (b *bench) stopProcesses() {
	b.stopOnce.Do(b.stopAll)
}

func (b *bench) stopAll() {
	if b.stop != nil {
		b.stop()
	}
	if b.cpu != nil {
		b.cpu.close()
	}
	if b.mgr != nil && b.mgr.Process != nil {
		// Reaped, so that the next trial's manager finds its ports free.
		_ = b.mgr.Process.Kill()
		_ = b.mgr.Wait()
	}
	if b.tmp != "" {
		_ = os.RemoveAll(b.tmp)
	}
	_ = b.env.Stop()
}

// startManager builds and starts the manager under test, the real binary
// as its own process.
func (b *bench) startManager(root string) error {
	bin := filepath.Join(b.tmp, "dbbench-manager")
	build := exec.Command("go", "build", "-o", bin, "./cmd/manager")
	build.Dir, build.Stdout, build.Stderr = root, os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the manager: %w", err)
	}
	user, err := b.env.ControlPlane.AddUser(envtest.User{Name: "dbbench-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(b.tmp, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return err
	}
	args := []string{"--kubeconfig", kubeconfig, "--metrics-bind-address", metricsAddr, "--health-probe-bind-address", "0", "--zap-log-level", "error"}
	if cpuProfile != "" {
		args = append(args, "--pprof-bind-address", pprofAddr)
	}
	b.mgr = exec.Command(bin, append(args, strings.Fields(managerArgs)...)...)
	b.mgr.Stderr = os.Stderr
	if err := b.mgr.Start(); err != nil {
		return err
	}
	b.cpu.addProcess("manager", b.mgr.Process.Pid)
	time.Sleep(2 * time.Second) // let the manager's caches sync
	return nil
}

// referenceResult is the reference's window: when it started, its marks
// and the API requests every client made until its end.
type referenceResult struct {
	start time.Time
	referenceTimes
	requests apiRequests
}

// end is when the reference's window ends: its last client Job, or with no
// cluster around it (no pod gets ready, so no Job), its last create.
func (r referenceResult) end() time.Time {
	if r.started > 0 {
		return r.start.Add(r.started)
	}
	return r.start.Add(r.created)
}

// measureReference runs the reference for cells cells: a bare client, same
// machine, same run, does what starting the cells takes (reference), and
// unless -quiet-reference the simulated cluster answers its pods as it
// does the manager's. The manager's figures are reported against it,
// because absolute times on a shared 2-core machine are noise.
func measureReference(ctx context.Context, b *bench, cells int) (referenceResult, error) {
	fmt.Printf("Reference: a bare client starts %d cells (the API server settled in %.1f s)...\n", cells, b.cpu.settle(settledCPU, settleLimit).Seconds())
	before, err := b.apiRequests()
	if err != nil {
		return referenceResult{}, err
	}
	profiled := make(chan error, 1)
	if apiServerProfile != "" {
		go func() { profiled <- b.apiServerProfile(ctx, apiServerProfile+".reference", referenceProfileFor) }()
	} else {
		profiled <- nil
	}
	res := referenceResult{start: time.Now()}
	if res.referenceTimes, err = reference(ctx, b, cells, referenceWorkers, !quietReference); err != nil {
		return res, err
	}
	if err := <-profiled; err != nil {
		return res, err
	}
	after, err := b.apiRequests()
	res.requests = after.minus(before)
	return res, err
}

// referenceProfileFor is how long -apiserver-cpuprofile profiles the
// reference (FILE.reference): less than the reference takes here.
const referenceProfileFor = 7 * time.Second

// apiServerProfile writes the API server's CPU profile over d to file.
func (b *bench) apiServerProfile(ctx context.Context, file string, d time.Duration) error {
	hc, err := rest.HTTPClientFor(b.cfg)
	if err != nil {
		return err
	}
	return fetchProfile(ctx, hc, strings.TrimSuffix(b.cfg.Host, "/"), file, d)
}

// startProfiles starts the profiles asked for (-cpuprofile,
// -apiserver-cpuprofile) over profileFor; the channel receives one result
// for each of the two.
func (b *bench) startProfiles(ctx context.Context) <-chan error {
	profiled := make(chan error, 2)
	if cpuProfile != "" {
		go func() { profiled <- fetchProfile(ctx, http.DefaultClient, "http://"+pprofAddr, cpuProfile, profileFor) }()
	} else {
		profiled <- nil
	}
	if apiServerProfile != "" {
		go func() { profiled <- b.apiServerProfile(ctx, apiServerProfile, profileFor) }()
	} else {
		profiled <- nil
	}
	return profiled
}

// runTrials measures trials times, each on a fresh API server, and prints
// the median of the manager/reference ratios: on a shared machine one
// trial's ratio moves by a fifth from one trial to the next.
func runTrials(trials, nodes, runs, cellsPerRun, workers int) error {
	ratios := make([]float64, 0, trials)
	for i := range trials {
		fmt.Printf("Trial %d of %d\n", i+1, trials)
		ratio, err := run(nodes, runs, cellsPerRun, workers)
		if err != nil {
			return fmt.Errorf("trial %d: %w", i+1, err)
		}
		ratios = append(ratios, ratio)
		// Profiles are of the first trial.
		cpuProfile, apiServerProfile = "", ""
	}
	parts := make([]string, len(ratios))
	for i, r := range ratios {
		parts[i] = fmt.Sprintf("%.2f×", r)
	}
	sort.Float64s(ratios)
	goal := "   (goal ≤ 1.5×)"
	if quietReference {
		// The goal is for the reference that starts the same cells.
		goal = ""
	}
	fmt.Printf("\nmanager / reference over %d trials: %s; median %.2f×%s\n", len(ratios), strings.Join(parts, ", "), median(ratios), goal)
	return nil
}

// median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// run is one trial; it prints its figures and returns the manager /
// reference ratio.
func run(nodes, runs, cellsPerRun, workers int) (float64, error) {
	ctx := context.Background()
	total := runs * cellsPerRun
	var ref referenceResult
	b, err := newBench(ctx, nodes, workers, func(b *bench) error {
		var err error
		ref, err = measureReference(ctx, b, total)
		return err
	})
	if err != nil {
		return 0, err
	}
	defer b.close()
	c, sim := b.c, b.sim
	// A real cell's steps last minutes: no simulated cell ends before
	// every cell has started, so the window holds the starts alone.
	sim.holdCellsUntil(sim.started.done)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}
	if err := c.Create(ctx, ns); err != nil {
		return 0, err
	}
	fmt.Printf("Applying %d runs × %d cells = %d cells (the API server settled in %.1f s)...\n", runs, cellsPerRun, total, b.cpu.settle(settledCPU, settleLimit).Seconds())
	profiled := b.startProfiles(ctx)
	sim.expectCells(total)
	beforeApply, err := b.apiRequests()
	if err != nil {
		return 0, err
	}
	var windowRequests apiRequests
	windowScraped := make(chan error, 1)
	go func() {
		// The manager's window ends as the reference's does: every
		// pod running, or with the quiet reference, every pod created.
		if quietReference {
			<-sim.created.done
		} else {
			<-sim.started.done
		}
		after, err := b.apiRequests()
		windowRequests = after.minus(beforeApply)
		windowScraped <- err
	}()
	m := managerFigures{applyStart: time.Now()}
	// The runs are applied with the reference's concurrency: one client
	// creating 200 objects in turn on a loaded API server takes longer
	// than the manager's work on them, and the bench measures the manager.
	var apply errgroup.Group
	apply.SetLimit(referenceWorkers)
	for i := 0; i < runs; i++ {
		apply.Go(func() error {
			r := benchRun(ns.Name, fmt.Sprintf("run-%03d", i), cellsPerRun)
			sim.noteRun(r.Name, time.Now())
			if err := c.Create(ctx, r); err != nil {
				return fmt.Errorf("creating %s: %w", r.Name, err)
			}
			return nil
		})
	}
	if err := apply.Wait(); err != nil {
		return 0, err
	}
	m.applied = time.Since(m.applyStart)
	if m.wall, err = waitForRuns(ctx, c, sim, ns.Name, runs, total, m.applyStart); err != nil {
		return 0, err
	}
	time.Sleep(2 * time.Second) // last deletions and events
	for range 2 {
		if err := <-profiled; err != nil {
			return 0, fmt.Errorf("a CPU profile: %w", err)
		}
	}
	if err := m.collect(ctx, b, ns.Name, beforeApply); err != nil {
		return 0, err
	}
	if err := <-windowScraped; err != nil {
		return 0, err
	}
	m.window = windowRequests
	return m.print(b, ref, nodes, runs, cellsPerRun), nil
}

// waitForRuns waits for every cell to start (its client Job exists), then
// for every run to succeed, and returns the time from applyStart to the
// last success. Nothing is read from the API server before the last cell
// starts: a list of 200 runs with their status is work the reference does
// not do.
func waitForRuns(ctx context.Context, c client.Client, sim *simulator, ns string, runs, pods int, applyStart time.Time) (time.Duration, error) {
	deadline := time.Now().Add(15 * time.Minute)
	for waiting := true; waiting; {
		select {
		case <-sim.started.done:
			waiting = false
		case <-time.After(5 * time.Second):
			fmt.Printf("  %3.0f s: %d database pods seen\n", time.Since(applyStart).Seconds(), len(sim.podLatencies()))
			if time.Now().After(deadline) {
				return 0, fmt.Errorf("the %d cells did not all start within the deadline (%d database pods seen)", pods, len(sim.podLatencies()))
			}
		}
	}
	for {
		var list dbbenchv1alpha1.BenchmarkRunList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return 0, err
		}
		done := 0
		for _, r := range list.Items {
			if meta.IsStatusConditionTrue(r.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) {
				done++
			}
		}
		if done == runs {
			return time.Since(applyStart), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("only %d of %d runs succeeded within the deadline", done, runs)
		}
		fmt.Printf("  %3.0f s: %d/%d runs succeeded\n", time.Since(applyStart).Seconds(), done, runs)
		time.Sleep(5 * time.Second)
	}
}

// managerFigures are what the bench measured of the manager.
type managerFigures struct {
	applyStart time.Time
	// applied is how long the apply of every run took; wall, from the
	// first apply to the last run's success.
	applied, wall time.Duration
	// window holds the requests of every client from the first apply to
	// the last cell's pod; whole, to the end.
	window, whole apiRequests
	// byMethod is the manager's own requests (its client's metric).
	byMethod map[string]int
	events   int
	peakKiB  int64
}

// collect reads the figures that are known once every run has ended.
func (m *managerFigures) collect(ctx context.Context, b *bench, ns string, beforeApply apiRequests) error {
	var err error
	if m.peakKiB, err = peakRSS(b.mgr.Process.Pid); err != nil {
		return err
	}
	if m.byMethod, err = scrapeRequests("http://" + metricsAddr + "/metrics"); err != nil {
		return err
	}
	if m.events, err = countEvents(ctx, b.c, ns); err != nil {
		return err
	}
	end, err := b.apiRequests()
	if err != nil {
		return err
	}
	m.whole = end.minus(beforeApply)
	return nil
}

func (m *managerFigures) print(b *bench, ref referenceResult, nodes, runs, cellsPerRun int) float64 {
	total := runs * cellsPerRun
	lat := b.sim.podLatencies()
	writes := m.byMethod["POST"] + m.byMethod["PUT"] + m.byMethod["PATCH"] + m.byMethod["DELETE"]
	created := b.sim.lastCreated().Sub(m.applyStart)
	started := b.sim.lastStarted().Sub(m.applyStart)
	fmt.Println()
	fmt.Printf("dbbench controller benchmark: %d nodes, %d runs × %d cells = %d cells (maxParallelCells %d)\n", nodes, runs, cellsPerRun, total, cellsPerRun)
	fmt.Printf("  apply of all runs took                     %8.2f s\n", m.applied.Seconds())
	fmt.Printf("  run applied → its database pods exist: p50 %8.2f s   p95 %6.2f s   max %6.2f s   (target ≤ 30 s)\n",
		pct(lat, 50), pct(lat, 95), pct(lat, 100))
	fmt.Printf("  first apply → last cell's pod exists       %8.2f s\n", created.Seconds())
	var ratio float64
	window := started
	if quietReference {
		window = created
		ratio = created.Seconds() / ref.created.Seconds()
		fmt.Printf("  reference: a bare client creates the same objects, with no cluster around it: %.2f s\n", ref.created.Seconds())
		fmt.Printf("  manager / reference, last pod exists       %8.2f×\n", ratio)
	} else {
		ratio = started.Seconds() / ref.started.Seconds()
		fmt.Printf("  first apply → every cell started (Job)     %8.2f s\n", started.Seconds())
		fmt.Printf("  reference: a bare client starts the cells in the same simulated cluster: objects created %.2f s, every Job %.2f s\n",
			ref.created.Seconds(), ref.started.Seconds())
		fmt.Printf("  manager / reference, last pod exists       %8.2f×\n", created.Seconds()/ref.created.Seconds())
		fmt.Printf("  manager / reference, every cell started    %8.2f×   (goal ≤ 1.5×)\n", ratio)
	}
	fmt.Printf("  CPU s, the reference's window:             %s\n", formatCPU(b.cpu.between(ref.start, ref.end())))
	fmt.Printf("  CPU s, the manager's window:               %s\n", formatCPU(b.cpu.between(m.applyStart, m.applyStart.Add(window))))
	fmt.Printf("  API requests, the reference's window:      %s\n", ref.requests.format(10))
	fmt.Printf("  API requests, the manager's window, every client: %s\n", m.window.format(10))
	fmt.Printf("  first apply → all %d runs Succeeded      %8.2f s\n", runs, m.wall.Seconds())
	fmt.Printf("  manager API requests: %s\n", formatMethods(m.byMethod))
	fmt.Printf("  manager API writes per cell                %8.2f (%.2f without the %d events)   (target ≤ 10)\n",
		float64(writes)/float64(total), float64(writes-m.events)/float64(total), m.events)
	fmt.Printf("  manager API requests per cell              %8.2f\n", float64(sum(m.byMethod))/float64(total))
	// The simulator creates no pods: every pod is the manager's (a
	// database pod) or stands for one its Job's controller would make
	// (a client pod per Job).
	dbPods, jobs := m.whole["POST pods"]/float64(total), m.whole["POST jobs"]/float64(total)
	fmt.Printf("  pods created per cell                      %8.2f (%.2f database, %.2f client: one per Job)   (target ≤ 2 plus the pre-flight's share)\n",
		dbPods+jobs, dbPods, jobs)
	fmt.Printf("  manager peak RSS                           %8.1f MiB   (target < 256 MiB)\n", float64(m.peakKiB)/1024)
	return ratio
}

// runScaling measures, for each node count n of counts, the wall time
// from apply to Succeeded of one blocked run (spec.placement.blocks:
// Repeats) of two versions × repeats repeats, maxParallelCells n, on n
// nodes, with the simulated agent taking cellDelay per cell: it should
// fall as 1/n until the blocks run out (n = repeats), then stay at one
// block's two cells. It also checks that each block's cells ran on one
// node.
func runScaling(counts string, repeats int, cellDelay time.Duration, workers int) error {
	var ns []int
	for _, f := range strings.Split(counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-scaling %q: %q is not a node count", counts, f)
		}
		ns = append(ns, n)
	}
	ctx := context.Background()
	b, err := newBench(ctx, slices.Max(ns), workers, nil)
	if err != nil {
		return err
	}
	defer b.close()
	type row struct {
		nodes                   int
		wall                    time.Duration
		blocksOnOneNode, blocks int
	}
	var rows []row
	for _, n := range ns {
		b.sim.setNodes(n, cellDelay)
		nsName := fmt.Sprintf("scale-%d", n)
		if err := b.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName}}); err != nil {
			return err
		}
		r := &dbbenchv1alpha1.BenchmarkRun{
			ObjectMeta: metav1.ObjectMeta{Namespace: nsName, Name: "blocked"},
			Spec: dbbenchv1alpha1.BenchmarkRunSpec{
				Databases: []dbbenchv1alpha1.DatabaseSpec{{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"11.4", "11.8"}}},
				Workload:  dbbenchv1alpha1.WorkloadSpec{Steps: []string{"point-query"}, Threads: []int32{1}, Repeats: int32(repeats)},
				Placement: dbbenchv1alpha1.PlacementSpec{MaxParallelCells: int32(n), Blocks: dbbenchv1alpha1.BlocksRepeats},
			},
		}
		start := time.Now()
		if err := b.c.Create(ctx, r); err != nil {
			return err
		}
		deadline := start.Add(15 * time.Minute)
		for {
			if err := b.c.Get(ctx, client.ObjectKeyFromObject(r), r); err != nil {
				return err
			}
			if meta.IsStatusConditionTrue(r.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%d nodes: the run did not succeed within 15 min: %s", n, r.Status.Phase)
			}
			time.Sleep(200 * time.Millisecond)
		}
		wall := time.Since(start)
		nodesOf := map[int32]map[string]bool{}
		for _, cs := range r.Status.Cells {
			if nodesOf[cs.Repeat] == nil {
				nodesOf[cs.Repeat] = map[string]bool{}
			}
			nodesOf[cs.Repeat][cs.Node] = true
		}
		one := 0
		for _, set := range nodesOf {
			if len(set) == 1 && !set[""] {
				one++
			}
		}
		rows = append(rows, row{nodes: n, wall: wall, blocksOnOneNode: one, blocks: len(nodesOf)})
		fmt.Printf("  %2d nodes: %6.1f s from apply to Succeeded\n", n, wall.Seconds())
	}
	fmt.Println()
	fmt.Printf("dbbench blocked-run wall time: 2 versions × %d repeats (blocks), the simulated agent %.1f s per cell\n", repeats, cellDelay.Seconds())
	fmt.Printf("  %5s  %8s  %10s  %10s  %s\n", "nodes", "wall s", "vs 1 node", "ideal", "blocks on one node")
	for _, r := range rows {
		// Blocks run side by side up to the nodes, and no more side by
		// side than there are blocks.
		ideal := float64(min(rows[0].nodes, repeats)) / float64(min(r.nodes, repeats))
		fmt.Printf(
			"  %5d  %8.1f  %10.3f  %10.3f  %d of %d\n",
			r.nodes,
			r.wall.Seconds(),
			r.wall.Seconds()/rows[0].wall.Seconds(),
			ideal,
			r.blocksOnOneNode,
			r.blocks,
		)
	}
	fmt.Println(
		"  ideal: min(first row's nodes, blocks) / min(nodes, blocks): wall time falling as 1/nodes until the blocks run out; a block's two cells are serial",
	)
	return nil
}

func benchRun(ns, name string, cells int) *dbbenchv1alpha1.BenchmarkRun {
	versions := make([]string, cells)
	for i := range versions {
		versions[i] = fmt.Sprintf("11.%d", i)
	}
	return &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: dbbenchv1alpha1.BenchmarkRunSpec{
			Databases: []dbbenchv1alpha1.DatabaseSpec{{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: versions}},
			Workload:  dbbenchv1alpha1.WorkloadSpec{Steps: []string{"point-query"}, Threads: []int32{1}},
			Placement: dbbenchv1alpha1.PlacementSpec{MaxParallelCells: int32(cells)},
		},
	}
}

func createNodes(ctx context.Context, c client.Client, n int) error {
	var g errgroup.Group
	g.SetLimit(32)
	for i := 0; i < n; i++ {
		g.Go(func() error {
			name := fmt.Sprintf("node-%03d", i)
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{specs.HostnameTopologyKey: name}}}
			if err := c.Create(ctx, node); err != nil {
				return err
			}
			node.Status = corev1.NodeStatus{
				Capacity: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("16"),
					corev1.ResourceMemory: resource.MustParse("64Gi"),
					corev1.ResourcePods:   resource.MustParse("110"),
				},
				Allocatable: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("16"),
					corev1.ResourceMemory: resource.MustParse("64Gi"),
					corev1.ResourcePods:   resource.MustParse("110"),
				},
				Conditions: []corev1.NodeCondition{
					{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()},
				},
			}
			return c.Status().Update(ctx, node)
		})
	}
	return g.Wait()
}

func pct(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}

// peakRSS reads VmHWM (the resident set's high-water mark) in KiB.
func peakRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// scrapeRequests sums the manager's client-go request counter by method.
func scrapeRequests(url string) (map[string]int, error) {
	resp, err := http.Get(url) // the loopback metrics endpoint of the process we started
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		i := strings.Index(line, `method="`)
		if i < 0 {
			continue
		}
		method := line[i+8:]
		method = method[:strings.IndexByte(method, '"')]
		fields := strings.Fields(line)
		v, _ := strconv.ParseFloat(fields[len(fields)-1], 64)
		out[method] += int(v)
	}
	return out, sc.Err()
}

func countEvents(ctx context.Context, c client.Client, ns string) (int, error) {
	var list corev1.EventList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return 0, err
	}
	return len(list.Items), nil
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func formatMethods(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// fetchProfile writes the CPU profile over d of the server at base (its
// net/http/pprof handlers) to file.
func fetchProfile(ctx context.Context, hc *http.Client, base, file string, d time.Duration) error {
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, int(d.Seconds()))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
