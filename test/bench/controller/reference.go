package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/specs"
)

// referenceLabel marks the reference's objects: the manager caches none of
// them and the simulated agent plays none of its Jobs.
const referenceLabel = "bench"

// referenceTimes are the reference's marks from its start: its last
// create of a cell's objects, and (when the simulated cluster answers it)
// its last client Job.
type referenceTimes struct {
	created, started time.Duration
}

// reference does, for n cells, what starting a cell takes, with the
// manager's concurrency and nothing else: workers cells at a time, it
// creates each cell's objects at once (Secret, two ConfigMaps, Service,
// database pod); with answered, the simulated cluster binds and readies
// the pods, and as each pod is ready (seen by an informer, as the manager
// sees it) one of workers goroutines creates the cell's client Job with
// the pod's IP. It returns when the last create returned and, with
// answered, when the last Job was created.
func reference(ctx context.Context, b *bench, n, workers int, answered bool) (referenceTimes, error) {
	c := b.c
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "reference"}}
	if err := c.Create(ctx, ns); err != nil {
		return referenceTimes{}, err
	}
	run := benchRun(ns.Name, "ref", 1)
	template := matrix.Expand(run)[0]
	cells := make(map[string]matrix.Cell, n)
	for i := range n {
		cell := template
		cell.ObjectBase = fmt.Sprintf("ref-%05d", i)
		cells[specs.DatabasePodName(cell, 1)] = cell
	}
	var jobs *referenceJobs
	if answered {
		var err error
		if jobs, err = startReferenceJobs(ctx, b, run, cells, workers); err != nil {
			return referenceTimes{}, err
		}
	}
	start := time.Now()
	var g errgroup.Group
	g.SetLimit(workers)
	for _, cell := range cells {
		g.Go(func() error {
			p := specs.Plan(run, cell, 1, []string{"point-query"})
			cm, _ := specs.ConfigMap(run, cell, p, "", nil)
			objs := []client.Object{specs.Secret(run, cell, specs.Credentials{Password: "x", RootPassword: "y"}), cm,
				specs.ResultConfigMap(run, cell), specs.Service(run, cell), specs.DatabasePod(run, cell, 1, false, "agent")}
			// A cell's objects are created at once, as the controller does.
			var inner errgroup.Group
			for _, o := range objs {
				// The pod is a database pod to the simulated cluster
				// (answered), which binds it and makes it ready as it
				// does the manager's.
				l := map[string]string{referenceLabel: "reference"}
				if _, ok := o.(*corev1.Pod); ok && answered {
					l[dbbenchv1alpha1.LabelRole] = specs.RoleDatabase
				}
				o.SetLabels(l)
				inner.Go(func() error { return c.Create(ctx, o) })
			}
			return inner.Wait()
		})
	}
	if err := g.Wait(); err != nil {
		return referenceTimes{}, fmt.Errorf("reference creates: %w", err)
	}
	t := referenceTimes{created: time.Since(start)}
	if jobs == nil {
		return t, nil
	}
	last, err := jobs.wait(ctx, 5*time.Minute)
	if err != nil {
		return t, err
	}
	t.started = last.Sub(start)
	return t, nil
}

// referenceJobs creates a reference cell's client Job once its pod is
// ready.
type referenceJobs struct {
	mu      sync.Mutex
	created int
	last    time.Time
	err     error
	done    chan struct{}
}

func startReferenceJobs(ctx context.Context, b *bench, run *dbbenchv1alpha1.BenchmarkRun, cells map[string]matrix.Cell, workers int) (*referenceJobs, error) {
	j := &referenceJobs{done: make(chan struct{})}
	queue := make(chan *corev1.Pod, len(cells))
	for range workers {
		go func() {
			for pod := range queue {
				job := specs.ClientJob(run, cells[pod.Name], 1, "agent", pod.Status.PodIP, true)
				job.Labels = map[string]string{referenceLabel: "reference"}
				err := b.c.Create(ctx, job)
				j.mu.Lock()
				if err != nil && j.err == nil {
					j.err = fmt.Errorf("reference Job %s: %w", job.Name, err)
				}
				j.created++
				if now := time.Now(); now.After(j.last) {
					j.last = now
				}
				if j.created == len(cells) {
					close(j.done)
				}
				j.mu.Unlock()
			}
		}()
	}
	factory := informers.NewSharedInformerFactoryWithOptions(b.sim.cs, 0, informers.WithNamespace(run.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = referenceLabel }))
	pods := factory.Core().V1().Pods().Informer()
	var mu sync.Mutex
	queued := make(map[string]bool, len(cells))
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || !podReady(pod) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if _, ours := cells[pod.Name]; ours && !queued[pod.Name] {
			queued[pod.Name] = true
			queue <- pod
		}
	}}); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced) {
		return nil, fmt.Errorf("the reference's pod informer did not sync")
	}
	return j, nil
}

// wait waits for every cell's Job and returns when the last was created.
func (j *referenceJobs) wait(ctx context.Context, limit time.Duration) (time.Time, error) {
	select {
	case <-j.done:
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	case <-time.After(limit):
		j.mu.Lock()
		defer j.mu.Unlock()
		return time.Time{}, fmt.Errorf("the reference created %d client Jobs in %s, not all", j.created, limit)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.last, j.err
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
