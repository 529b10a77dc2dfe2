// Command controller is the controller benchmark (make bench-controller):
// against a real kube-apiserver + etcd (envtest) with 500 Node objects, it
// runs the real dbbench-manager binary as its own process, applies 200 runs
// of 10 cells each, plays kubelet and agent for every cell, and prints how
// fast cells' pods appear, how many API writes a cell costs the manager over
// its life, and the manager's peak memory.
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
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/manager"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
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
	flag.StringVar(&managerArgs, "manager-args", "", "extra flags for the manager, space-separated (e.g. \"--kube-api-qps 2000 --kube-api-burst 4000\")")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write the manager's CPU profile from the first apply to this file (go tool pprof reads it)")
	flag.DurationVar(&profileFor, "profile-for", 25*time.Second, "with -cpuprofile: how long to profile")
	flag.Parse()
	var err error
	if *scaling != "" {
		err = runScaling(*scaling, *repeats, time.Duration(*cellSeconds*float64(time.Second)), *workers)
	} else {
		err = run(*nodes, *runs, *cellsPerRun, *workers)
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
}

const (
	// referenceWorkers is the bare client's concurrency, the manager's 16
	// parallel reconciles.
	referenceWorkers = 16
	metricsAddr      = "127.0.0.1:18089"
	pprofAddr        = "127.0.0.1:18090"
)

var (
	// managerArgs are extra flags for the manager under test.
	managerArgs string
	// cpuProfile receives the manager's CPU profile over profileFor from
	// the first apply (its --pprof-bind-address).
	cpuProfile string
	profileFor time.Duration
)

// newBench starts envtest with nodes Node objects; before reports the
// reference's figures (or anything else) before the manager starts.
func newBench(ctx context.Context, nodes, workers int, before func(client.Client) error) (*bench, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	b := &bench{
		env:   &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join(root, "config", "crd", "bases")}, ErrorIfCRDPathMissing: true},
		nodes: nodes,
	}
	cfg, err := b.env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	cfg.QPS, cfg.Burst = 2000, 4000
	b.cfg = cfg
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
	if before != nil {
		if err := before(b.c); err != nil {
			b.close()
			return nil, err
		}
	}
	if err := b.startManager(ctx, root, workers); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *bench) close() {
	if b.stop != nil {
		b.stop()
	}
	if b.mgr != nil && b.mgr.Process != nil {
		_ = b.mgr.Process.Kill()
	}
	if b.tmp != "" {
		_ = os.RemoveAll(b.tmp)
	}
	_ = b.env.Stop()
}

// startManager builds and starts the manager under test, the real binary
// as its own process, and the simulator.
func (b *bench) startManager(ctx context.Context, root string, workers int) error {
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
	b.sim = newSimulator(b.c, b.nodes)
	simCtx, stop := context.WithCancel(ctx)
	b.stop = stop
	if err := b.sim.watchPods(simCtx, b.cfg); err != nil {
		return err
	}
	if err := b.sim.start(simCtx, workers); err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // let the manager's caches sync
	return nil
}

func run(nodes, runs, cellsPerRun, workers int) error {
	ctx := context.Background()
	var ref time.Duration
	b, err := newBench(ctx, nodes, workers, func(c client.Client) error {
		// Reference, same machine, same run: a bare client creates what
		// the manager creates before a cell's database pod exists
		// (Secret, two ConfigMaps, Service, pod) for the same number of
		// cells, with the manager's concurrency. The manager's figures
		// are reported against it, because absolute times on a shared
		// 2-core machine are noise.
		fmt.Printf("Reference: a bare client creates the objects of %d cells...\n", runs*cellsPerRun)
		var err error
		ref, err = reference(ctx, c, runs*cellsPerRun, referenceWorkers)
		return err
	})
	if err != nil {
		return err
	}
	defer b.close()
	c, sim, mgr := b.c, b.sim, b.mgr

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}
	if err := c.Create(ctx, ns); err != nil {
		return err
	}
	total := runs * cellsPerRun
	fmt.Printf("Applying %d runs × %d cells = %d cells...\n", runs, cellsPerRun, total)
	profiled := make(chan error, 1)
	if cpuProfile != "" {
		go func() { profiled <- fetchProfile(ctx, cpuProfile, profileFor) }()
	} else {
		profiled <- nil
	}
	applyStart := time.Now()
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
		return err
	}
	applyDone := time.Since(applyStart)

	// Wait for every run to finish.
	deadline := time.Now().Add(15 * time.Minute)
	var done int
	for time.Now().Before(deadline) {
		var list dbbenchv1alpha1.BenchmarkRunList
		if err := c.List(ctx, &list, client.InNamespace(ns.Name)); err != nil {
			return err
		}
		done = 0
		for _, r := range list.Items {
			if meta.IsStatusConditionTrue(r.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) {
				done++
			}
		}
		if done == runs {
			break
		}
		fmt.Printf("  %3.0f s: %d/%d runs succeeded, %d database pods seen\n", time.Since(applyStart).Seconds(), done, runs, len(sim.podLatencies()))
		time.Sleep(5 * time.Second)
	}
	wall := time.Since(applyStart)
	if done != runs {
		return fmt.Errorf("only %d of %d runs succeeded within the deadline", done, runs)
	}
	time.Sleep(2 * time.Second) // last deletions and events
	if err := <-profiled; err != nil {
		return fmt.Errorf("the manager's CPU profile: %w", err)
	}
	peak, err := peakRSS(mgr.Process.Pid)
	if err != nil {
		return err
	}
	byMethod, err := scrapeRequests("http://" + metricsAddr + "/metrics")
	if err != nil {
		return err
	}
	evCount, err := countEvents(ctx, c, ns.Name)
	if err != nil {
		return err
	}

	lat := sim.podLatencies()
	writes := byMethod["POST"] + byMethod["PUT"] + byMethod["PATCH"] + byMethod["DELETE"]
	fmt.Println()
	fmt.Printf("dbbench controller benchmark: %d nodes, %d runs × %d cells = %d cells (maxParallelCells %d)\n", nodes, runs, cellsPerRun, total, cellsPerRun)
	fmt.Printf("  apply of all runs took                     %8.2f s\n", applyDone.Seconds())
	fmt.Printf("  run applied → its database pods exist: p50 %8.2f s   p95 %6.2f s   max %6.2f s   (target ≤ 30 s)\n",
		pct(lat, 50), pct(lat, 95), pct(lat, 100))
	lastPod := sim.lastPod().Sub(applyStart)
	fmt.Printf("  first apply → last cell's pod exists       %8.2f s\n", lastPod.Seconds())
	fmt.Printf("  reference: bare client, same objects       %8.2f s   → manager/reference %.2f×\n", ref.Seconds(), lastPod.Seconds()/ref.Seconds())
	fmt.Printf("  first apply → all %d runs Succeeded      %8.2f s\n", runs, wall.Seconds())
	fmt.Printf("  manager API requests: %s\n", formatMethods(byMethod))
	fmt.Printf("  manager API writes per cell                %8.2f (%.2f without the %d events)   (target ≤ 10)\n",
		float64(writes)/float64(total), float64(writes-evCount)/float64(total), evCount)
	fmt.Printf("  manager API requests per cell              %8.2f\n", float64(sum(byMethod))/float64(total))
	fmt.Printf("  manager peak RSS                           %8.1f MiB   (target < 256 MiB)\n", float64(peak)/1024)
	return nil
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

// reference creates, for n cells, the objects the manager creates before a
// cell's pod exists, with `workers` cells in flight and each cell's objects
// created concurrently, and returns the wall time. The objects carry no
// dbbench labels, so the manager neither caches nor reconciles them.
func reference(ctx context.Context, c client.Client, n, workers int) (time.Duration, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "reference"}}
	if err := c.Create(ctx, ns); err != nil {
		return 0, err
	}
	run := benchRun(ns.Name, "ref", 1)
	cell := matrix.Expand(run)[0]
	start := time.Now()
	var g errgroup.Group
	g.SetLimit(workers)
	for i := 0; i < n; i++ {
		g.Go(func() error {
			cell := cell
			cell.ObjectBase = fmt.Sprintf("ref-%05d", i)
			p := specs.Plan(run, cell, 1, []string{"point-query"})
			cm, _ := specs.ConfigMap(run, cell, p, "", nil)
			objs := []client.Object{specs.Secret(run, cell, specs.Credentials{Password: "x", RootPassword: "y"}), cm,
				specs.ResultConfigMap(run, cell), specs.Service(run, cell), specs.DatabasePod(run, cell, 1, false, "agent")}
			// A cell's objects are created at once, as the controller does.
			var inner errgroup.Group
			for _, o := range objs {
				o.SetLabels(map[string]string{"bench": "reference"})
				inner.Go(func() error { return c.Create(ctx, o) })
			}
			return inner.Wait()
		})
	}
	if err := g.Wait(); err != nil {
		return 0, fmt.Errorf("reference creates: %w", err)
	}
	return time.Since(start), nil
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

// simulator plays the kubelet (binds database pods to nodes and makes them
// ready) and the agent + Job controller (reports results, completes Jobs).
type simulator struct {
	c     client.Client
	nodes int
	// cellDelay is how long the agent takes per cell (0: at once).
	cellDelay time.Duration

	mu        sync.Mutex
	runStart  map[string]time.Time
	seen      map[string]bool
	latencies []float64
	last      time.Time
	next      int
}

func newSimulator(c client.Client, nodes int) *simulator {
	return &simulator{c: c, nodes: nodes, runStart: map[string]time.Time{}, seen: map[string]bool{}}
}

func (s *simulator) noteRun(name string, t time.Time) {
	s.mu.Lock()
	s.runStart[name] = t
	s.mu.Unlock()
}

// simDone marks Jobs the simulator has finished, so its polls list only the
// rest.
const simDone = "bench.dbbench.io/done"

// start polls for database pods not yet bound and Jobs not yet finished and
// hands them to workers. Polling with selective lists keeps the simulator's
// load on the API server small and independent of watch behaviour.
func (s *simulator) start(ctx context.Context, workers int) error {
	work := make(chan func(), 100000)
	for i := 0; i < workers; i++ {
		go func() {
			for f := range work {
				f()
			}
		}()
	}
	pending := map[string]bool{}
	var mu sync.Mutex
	claim := func(key string) bool {
		mu.Lock()
		defer mu.Unlock()
		if pending[key] {
			return false
		}
		pending[key] = true
		return true
	}
	release := func(key string) {
		mu.Lock()
		delete(pending, key)
		mu.Unlock()
	}
	go func() {
		for ctx.Err() == nil {
			var pods corev1.PodList
			unscheduled := client.MatchingFields{"spec.nodeName": ""}
			if err := s.c.List(ctx, &pods, client.MatchingLabels{dbbenchv1alpha1.LabelRole: specs.RoleDatabase}, unscheduled); err == nil {
				for i := range pods.Items {
					pod := &pods.Items[i]
					key := "pod/" + pod.Namespace + "/" + pod.Name
					if !claim(key) {
						continue
					}
					s.seenPod(pod)
					work <- func() { s.kubelet(ctx, pod); release(key) }
				}
			}
			var jobs batchv1.JobList
			if err := s.c.List(ctx, &jobs, client.HasLabels{dbbenchv1alpha1.LabelManagedBy}, notDone{}); err == nil {
				for i := range jobs.Items {
					job := &jobs.Items[i]
					key := "job/" + job.Namespace + "/" + job.Name
					if !claim(key) {
						continue
					}
					work <- func() { s.agent(ctx, job) }
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return nil
}

// watchPods records when each database pod comes to exist from a watch,
// as the bare client's reference records its own creates: the poll that
// plays kubelet sees a pod only on its next round, which under load is
// seconds later.
func (s *simulator) watchPods(ctx context.Context, cfg *rest.Config) error {
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		return err
	}
	database := client.MatchingLabels{dbbenchv1alpha1.LabelRole: specs.RoleDatabase}
	w, err := wc.Watch(ctx, &corev1.PodList{}, database)
	if err != nil {
		return err
	}
	go func() {
		for {
			for ev := range w.ResultChan() {
				if pod, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Added {
					s.seenPod(pod)
				}
			}
			if ctx.Err() != nil {
				return
			}
			// The server ended the watch: a new one replays what exists
			// (seenPod keeps each pod's first sighting).
			if w, err = wc.Watch(ctx, &corev1.PodList{}, database); err != nil {
				return
			}
		}
	}()
	return nil
}

// notDone selects Jobs without the simulator's done label.
type notDone struct{}

func (notDone) ApplyToList(o *client.ListOptions) {
	sel, _ := labels.Parse("!" + simDone)
	if o.LabelSelector != nil {
		reqs, _ := o.LabelSelector.Requirements()
		sel = sel.Add(reqs...)
	}
	o.LabelSelector = sel
}

func (s *simulator) seenPod(pod *corev1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[pod.Name] {
		return
	}
	s.seen[pod.Name] = true
	now := time.Now()
	if start, ok := s.runStart[pod.Labels[dbbenchv1alpha1.LabelRun]]; ok {
		s.latencies = append(s.latencies, now.Sub(start).Seconds())
	}
	if now.After(s.last) {
		s.last = now
	}
}

// setNodes makes the simulator place pods on the first n nodes.
func (s *simulator) setNodes(n int, cellDelay time.Duration) {
	s.mu.Lock()
	s.nodes, s.cellDelay, s.next = n, cellDelay, 0
	s.mu.Unlock()
}

// kubelet binds the pod, to the node it is pinned to (a blocked run's
// later cells: a required node affinity on metadata.name) or else to the
// next node in turn, and makes it ready. It plays no scheduler: pod
// (anti-)affinities are not checked.
func (s *simulator) kubelet(ctx context.Context, pod *corev1.Pod) {
	s.mu.Lock()
	node := specs.PinnedNode(pod)
	if node == "" {
		node = fmt.Sprintf("node-%03d", s.next%s.nodes)
		s.next++
	}
	s.mu.Unlock()
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	// A list older than an earlier binding offers the pod again; it is
	// then already bound, which is fine.
	if err := s.c.SubResource("binding").Create(ctx, pod, b); err != nil && !apierrors.IsConflict(err) {
		fmt.Fprintln(os.Stderr, "binding:", err)
		return
	}
	for i := 0; i < 10; i++ {
		fresh := &corev1.Pod{}
		if err := s.c.Get(ctx, client.ObjectKeyFromObject(pod), fresh); err != nil {
			return
		}
		if podReady(fresh) {
			return
		}
		fresh.Status.Phase = corev1.PodRunning
		fresh.Status.PodIP = "10.88.0.2"
		fresh.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		if err := s.c.Status().Update(ctx, fresh); err == nil {
			return
		}
	}
}

func (s *simulator) agent(ctx context.Context, job *batchv1.Job) {
	s.mu.Lock()
	delay := s.cellDelay
	s.mu.Unlock()
	time.Sleep(delay)
	cell := job.Labels[dbbenchv1alpha1.LabelCell]
	attempt, _ := strconv.Atoi(job.Labels[dbbenchv1alpha1.LabelAttempt])
	now := time.Now().UTC()
	doc := &results.Document{
		SchemaVersion: results.SchemaV1, Form: results.FormCompact,
		Run: results.Run{
			Name: job.Labels[dbbenchv1alpha1.LabelRun],
		}, Cell: results.Cell{Name: cell, Engine: "mariadb", Version: "11", Repeat: 1, Attempt: attempt},
		StartedAt: now, FinishedAt: &now, Status: results.Status{Outcome: results.OutcomeSucceeded},
		Steps: []results.StepResult{
			{
				Step:            "point-query",
				Group:           "point",
				Threads:         1,
				DurationSeconds: 1,
				SteadyQPS:       1000,
				SteadyTPS:       1000,
				SteadySamples:   1,
				FinalQPS:        1000,
				FinalTPS:        1000,
				Queries:         1000,
				Transactions:    1000,
				LatencyAvgMs:    1,
				LatencyMaxMs:    1,
			},
		},
	}
	raw, _ := results.Marshal(doc)
	prog := fmt.Sprintf(`{"attempt":%d,"phase":%q,"stepsDone":1,"stepsTotal":1}`, attempt, agentapi.PhaseDone)
	for i := 0; i < 10; i++ {
		cm := &corev1.ConfigMap{}
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: cell + "-result"}, cm); err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		cm.Data = map[string]string{agentapi.ResultKeyProgress: prog, agentapi.ResultKeyDocument: string(raw)}
		if err := s.c.Update(ctx, cm); err == nil {
			break
		}
	}
	for i := 0; i < 10; i++ {
		fresh := &batchv1.Job{}
		if err := s.c.Get(ctx, client.ObjectKeyFromObject(job), fresh); err != nil {
			return
		}
		t := metav1.Now()
		start := metav1.NewTime(t.Add(-time.Second))
		fresh.Status.StartTime, fresh.Status.CompletionTime, fresh.Status.Succeeded = &start, &t, 1
		fresh.Status.Ready = ptr.To[int32](0)
		fresh.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: t},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: t},
		}
		if err := s.c.Status().Update(ctx, fresh); err == nil {
			break
		}
	}
	for i := 0; i < 10; i++ {
		fresh := &batchv1.Job{}
		if err := s.c.Get(ctx, client.ObjectKeyFromObject(job), fresh); err != nil {
			return
		}
		fresh.Labels[simDone] = "true"
		if err := s.c.Update(ctx, fresh); err == nil {
			return
		}
	}
}

func (s *simulator) podLatencies() []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]float64(nil), s.latencies...)
	sort.Float64s(out)
	return out
}

func (s *simulator) lastPod() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
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

// fetchProfile writes the manager's CPU profile over d to file.
func fetchProfile(ctx context.Context, file string, d time.Duration) error {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr, int(d.Seconds()))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
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
