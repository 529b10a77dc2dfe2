package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
)

// simulator plays the cluster around the manager: the scheduler (binds
// database pods to nodes), the kubelet (makes them ready), and the agent
// and the Job controller (report a cell's results, complete its Job).
//
// It works as those components do, from informers (a list from the watch
// cache, then a watch) and with patches, so its own load on the API server
// is what a cluster's would be at least, and nothing the manager's figures
// should carry: an earlier version polled with lists every 100 ms, and on
// this API server (etcd 3.4 has no watch progress requests, so every
// consistent list is read from etcd) those lists of thousands of pods cost
// more CPU than the manager did.
type simulator struct {
	cs    kubernetes.Interface
	nodes int
	// cellDelay is how long the agent takes per cell (0: at once), and
	// no cell ends before hold is closed (holdCellsUntil).
	cellDelay time.Duration
	hold      <-chan struct{}
	// kubelets and agents are the work queues of the two roles, each
	// with its own workers: a pod waits for no Job, as in a cluster
	// the kubelet waits for no Job controller.
	kubelets, agents chan func()

	mu        sync.Mutex
	runStart  map[string]time.Time
	seen      map[string]bool
	latencies []float64
	next      int
	// created counts the runs' database pods as they come to exist;
	// started, their client Jobs (a cell has started once its Job
	// exists).
	created, started *tally
}

// tally counts pods to a mark and remembers when the last one reached it.
type tally struct {
	want, n int
	last    time.Time
	// done is closed when n reaches want.
	done chan struct{}
}

// closedChannel holds nothing back.
func closedChannel() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

func newTally() *tally { return &tally{done: make(chan struct{})} }

// expect makes done close once n pods have been counted.
func (t *tally) expect(n int) {
	t.want = n
	if t.n >= n {
		close(t.done)
	}
}

func (t *tally) add(now time.Time) {
	t.n++
	if now.After(t.last) {
		t.last = now
	}
	if t.want > 0 && t.n == t.want {
		close(t.done)
	}
}

func newSimulator(cfg *rest.Config, nodes int) (*simulator, error) {
	pcfg := rest.CopyConfig(cfg)
	// The kubelet and the scheduler speak protobuf.
	pcfg.ContentType = "application/vnd.kubernetes.protobuf"
	pcfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(pcfg)
	if err != nil {
		return nil, err
	}
	return &simulator{
		cs: cs, nodes: nodes, kubelets: make(chan func(), 100000), agents: make(chan func(), 100000),
		runStart: map[string]time.Time{}, seen: map[string]bool{},
		created: newTally(), started: newTally(), hold: closedChannel(),
	}, nil
}

// start runs workers goroutines for each role and the informers: a
// database pod not yet bound is bound and made ready; a client Job of the
// manager's is played (agent, then Job controller). It returns once the
// informers have synced.
func (s *simulator) start(ctx context.Context, workers int) error {
	for _, queue := range []chan func(){s.kubelets, s.agents} {
		for range workers {
			go func() {
				for {
					select {
					case <-ctx.Done():
						return
					case f := <-queue:
						f()
					}
				}
			}()
		}
	}
	database := informers.NewSharedInformerFactoryWithOptions(s.cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = dbbenchv1alpha1.LabelRole + "=" + specs.RoleDatabase
	}))
	pods := database.Core().V1().Pods().Informer()
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		s.seenPod(pod)
		if pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil {
			s.kubelets <- func() { s.kubelet(ctx, pod) }
		}
	}}); err != nil {
		return err
	}
	managed := informers.NewSharedInformerFactoryWithOptions(s.cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = dbbenchv1alpha1.LabelManagedBy + "=" + dbbenchv1alpha1.ManagedByValue
	}))
	jobs := managed.Batch().V1().Jobs().Informer()
	if _, err := jobs.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		job, ok := obj.(*batchv1.Job)
		if !ok {
			return
		}
		s.jobStarted(job)
		if job.Status.CompletionTime == nil {
			// The agent's time runs in a goroutine of the cell's, not
			// in a worker: the cells run side by side.
			s.mu.Lock()
			delay, hold := s.cellDelay, s.hold
			s.mu.Unlock()
			go func() {
				select {
				case <-time.After(delay):
				case <-ctx.Done():
					return
				}
				select {
				case <-hold:
				case <-ctx.Done():
					return
				}
				s.agents <- func() { s.agent(ctx, job) }
			}()
		}
	}}); err != nil {
		return err
	}
	database.Start(ctx.Done())
	managed.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced, jobs.HasSynced) {
		return fmt.Errorf("the simulator's informers did not sync")
	}
	return nil
}

// expectCells makes the created and started tallies close once n of the
// runs' cells reached them.
func (s *simulator) expectCells(n int) {
	s.mu.Lock()
	s.created.expect(n)
	s.started.expect(n)
	s.mu.Unlock()
}

// isManagers reports whether the object is one of the runs' (not the
// reference's).
func isManagers(o metav1.Object) bool {
	return o.GetLabels()[dbbenchv1alpha1.LabelManagedBy] == dbbenchv1alpha1.ManagedByValue
}

func (s *simulator) noteRun(name string, t time.Time) {
	s.mu.Lock()
	s.runStart[name] = t
	s.mu.Unlock()
}

// seenPod records when a run's database pod first came to exist, as its
// informer delivers it; the reference's pods (not the manager's) do not
// count.
func (s *simulator) seenPod(pod *corev1.Pod) {
	if !isManagers(pod) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[pod.Name] {
		return
	}
	s.seen[pod.Name] = true
	now := time.Now()
	s.created.add(now)
	if start, ok := s.runStart[pod.Labels[dbbenchv1alpha1.LabelRun]]; ok {
		s.latencies = append(s.latencies, now.Sub(start).Seconds())
	}
}

// holdCellsUntil makes the simulated agents end no cell before ch is
// closed.
func (s *simulator) holdCellsUntil(ch <-chan struct{}) {
	s.mu.Lock()
	s.hold = ch
	s.mu.Unlock()
}

// setNodes makes the simulator place pods on the first n nodes.
func (s *simulator) setNodes(n int, cellDelay time.Duration) {
	s.mu.Lock()
	s.nodes, s.cellDelay, s.next = n, cellDelay, 0
	s.mu.Unlock()
}

// kubelet binds the pod, to the node it is pinned to (a blocked run's
// later cells: a required node affinity on metadata.name) or else to the
// next node in turn, and patches its status ready, as the scheduler and
// the kubelet do. It checks no scheduling rule: pod (anti-)affinities are
// not checked.
func (s *simulator) kubelet(ctx context.Context, pod *corev1.Pod) {
	s.mu.Lock()
	node := specs.PinnedNode(pod)
	if node == "" {
		node = fmt.Sprintf("node-%03d", s.next%s.nodes)
		s.next++
	}
	s.mu.Unlock()
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if err := s.cs.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			fmt.Fprintln(os.Stderr, "binding:", err)
		}
		return
	}
	status := map[string]any{"status": corev1.PodStatus{
		Phase:      corev1.PodRunning,
		PodIP:      "10.88.0.2",
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}},
	}}
	s.patch(ctx, "pod status", func(body []byte) error {
		_, err := s.cs.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status")
		return err
	}, status)
}

// agent plays the agent at the end of its cell (writes the cell's
// progress and results document into its results ConfigMap) and then the
// Job controller (completes the Job).
func (s *simulator) agent(ctx context.Context, job *batchv1.Job) {
	if ctx.Err() != nil {
		return
	}
	cell := job.Labels[dbbenchv1alpha1.LabelCell]
	attempt, _ := strconv.Atoi(job.Labels[dbbenchv1alpha1.LabelAttempt])
	raw, _ := results.Marshal(simulatedDocument(job.Labels[dbbenchv1alpha1.LabelRun], cell, attempt))
	prog := fmt.Sprintf(`{"attempt":%d,"phase":%q,"stepsDone":1,"stepsTotal":1}`, attempt, agentapi.PhaseDone)
	data := map[string]any{"data": map[string]string{agentapi.ResultKeyProgress: prog, agentapi.ResultKeyDocument: string(raw)}}
	s.patch(ctx, "results ConfigMap", func(body []byte) error {
		_, err := s.cs.CoreV1().ConfigMaps(job.Namespace).Patch(ctx, cell+"-result", types.MergePatchType, body, metav1.PatchOptions{})
		return err
	}, data)
	t := metav1.Now()
	start := metav1.NewTime(t.Add(-time.Second))
	ready := int32(0)
	status := map[string]any{"status": batchv1.JobStatus{
		StartTime: &start, CompletionTime: &t, Succeeded: 1, Ready: &ready,
		Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: t},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: t},
		},
	}}
	s.patch(ctx, "Job status", func(body []byte) error {
		_, err := s.cs.BatchV1().Jobs(job.Namespace).Patch(ctx, job.Name, types.MergePatchType, body, metav1.PatchOptions{}, "status")
		return err
	}, status)
}

// patch sends v as a patch body through send, trying again a few times
// while the object is missing (its informer can deliver a Job before the
// manager's create of the cell's results ConfigMap is visible to us) or the
// server is busy.
func (s *simulator) patch(ctx context.Context, what string, send func([]byte) error, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, what+":", err)
		return
	}
	for range 10 {
		if err = send(body); err == nil || ctx.Err() != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
}

// simulatedDocument is the results document the simulated agent reports:
// one step.
func simulatedDocument(run, cell string, attempt int) *results.Document {
	now := time.Now().UTC()
	return &results.Document{
		SchemaVersion: results.SchemaV1, Form: results.FormCompact,
		Run:       results.Run{Name: run},
		Cell:      results.Cell{Name: cell, Engine: "mariadb", Version: "11", Repeat: 1, Attempt: attempt},
		StartedAt: now, FinishedAt: &now, Status: results.Status{Outcome: results.OutcomeSucceeded},
		Steps: []results.StepResult{{
			Step: "point-query", Group: "point", Threads: 1, DurationSeconds: 1,
			SteadyQPS: 1000, SteadyTPS: 1000, SteadySamples: 1, FinalQPS: 1000, FinalTPS: 1000,
			Queries: 1000, Transactions: 1000, LatencyAvgMs: 1, LatencyMaxMs: 1,
		}},
	}
}

func (s *simulator) podLatencies() []float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]float64(nil), s.latencies...)
	sort.Float64s(out)
	return out
}

// jobStarted counts a cell's first client Job, as its informer delivers it.
func (s *simulator) jobStarted(job *batchv1.Job) {
	if job.Labels[dbbenchv1alpha1.LabelAttempt] != "1" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started.add(time.Now())
}

// lastCreated and lastStarted are when the last of the runs' database
// pods came to exist and the last of their client Jobs.
func (s *simulator) lastCreated() time.Time { return s.lastOf(s.created) }
func (s *simulator) lastStarted() time.Time { return s.lastOf(s.started) }

func (s *simulator) lastOf(t *tally) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return t.last
}
