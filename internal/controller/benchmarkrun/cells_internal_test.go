package benchmarkrun

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
)

// oneCellRun is a one-cell run at attempt, Starting since a minute before
// now, and its cell.
func oneCellRun(now time.Time, attempt int32) (*dbbenchv1alpha1.BenchmarkRun, matrix.Cell) {
	run := &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "budget", UID: "run-uid", Generation: 1},
		Spec: dbbenchv1alpha1.BenchmarkRunSpec{
			Databases: []dbbenchv1alpha1.DatabaseSpec{{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"11.8"}}},
			Workload:  dbbenchv1alpha1.WorkloadSpec{Steps: []string{"point-query"}},
			Retry:     dbbenchv1alpha1.RetrySpec{MaxAttemptsPerCell: 2},
		},
	}
	cell := matrix.Expand(run)[0]
	start := metav1.NewTime(now.Add(-time.Minute))
	run.Status = dbbenchv1alpha1.BenchmarkRunStatus{
		StartTime: &start, RetriesUsed: attempt - 1,
		Cells: []dbbenchv1alpha1.CellStatus{{
			Name: cell.Name, Database: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Version: "11.8", Config: cell.Config.Name, Repeat: cell.Repeat,
			Phase: dbbenchv1alpha1.CellStarting, Attempts: attempt, StartTime: &start, AttemptStartTime: &start, StepsTotal: 1,
			ResultConfigMap: specs.ResultConfigMapName(cell),
		}},
	}
	return run, cell
}

// A cell whose last attempt's database pod was evicted fails with the retry
// budget exhausted. The evicted pod is the only record of why: the pass
// that fails the cell must leave it until a status write has recorded the
// failure. Found under CPU load (make test-stress): a pass working from a
// stale run deleted the pod, lost its status write to the conflict, and the
// next pass found no pod and started the attempt again, so the cell stayed
// Starting.
func TestFailedCellKeepsItsEvidenceUntilTheStatusRecordsIt(t *testing.T) {
	scheme := framework.Scheme()
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	run, cell := oneCellRun(now, 2)
	pod := specs.DatabasePod(run, cell, 2, false, "")
	if err := ctrl.SetControllerReference(run, pod, scheme); err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: podReasonEvicted, Message: "The node was low on resource: memory."}

	loseWrites := 1
	c := withChildIndexes(fake.NewClientBuilder()).WithScheme(scheme).
		WithObjects(run, pod).WithStatusSubresource(run, pod).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*dbbenchv1alpha1.BenchmarkRun); ok && loseWrites > 0 {
				loseWrites--
				return apierrors.NewConflict(schema.GroupResource{Group: "dbbench.io", Resource: "benchmarkruns"}, obj.GetName(), nil)
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}).Build()
	r := &Reconciler{Client: c, APIReader: c, Scheme: scheme, Clock: clocktesting.NewFakePassiveClock(now), AgentImage: DefaultAgentImage}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(run)}
	podKey := client.ObjectKeyFromObject(pod)

	for _, step := range []struct {
		name string
		// wantPhase is the cell's phase in the status after the pass.
		wantPhase dbbenchv1alpha1.CellPhase
		// wantPod: the evicted pod still exists after the pass.
		wantPod bool
	}{
		// The pass that fails the cell loses its status write to a
		// conflict; the pass redone at once (retry.RetryOnConflict, on a
		// fresh read) must still find the evicted pod to record why.
		{"the failing pass loses its write, the redone pass records the failure", dbbenchv1alpha1.CellFailed, true},
		{"the pass after the write releases the pod", dbbenchv1alpha1.CellFailed, false},
	} {
		if _, err := r.Reconcile(context.Background(), req); err != nil && !apierrors.IsConflict(err) {
			t.Fatalf("%s: reconcile: %v", step.name, err)
		}
		got := &dbbenchv1alpha1.BenchmarkRun{}
		if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		cs := got.Status.Cells[0]
		if cs.Phase != step.wantPhase || cs.Attempts != 2 {
			t.Fatalf("%s: cell %s attempt %d (%s), want %s at attempt 2", step.name, cs.Phase, cs.Attempts, cs.Message, step.wantPhase)
		}
		if cs.Phase == dbbenchv1alpha1.CellFailed && cs.Reason != dbbenchv1alpha1.ReasonDatabaseEvicted {
			t.Errorf("%s: reason %q (%s), want %s at the last attempt", step.name, cs.Reason, cs.Message, dbbenchv1alpha1.ReasonDatabaseEvicted)
		}
		var p corev1.Pod
		err := c.Get(context.Background(), podKey, &p)
		switch {
		case step.wantPod && err != nil:
			t.Fatalf("%s: the evicted pod is gone (%v): nothing says why attempt 2 ended", step.name, err)
		case step.wantPod && p.Status.Reason != podReasonEvicted:
			t.Fatalf("%s: pod %s was started again (%s %s)", step.name, p.Name, p.Status.Phase, p.Status.Reason)
		case !step.wantPod && !apierrors.IsNotFound(err):
			t.Fatalf("%s: the failed cell's database pod is still there (%v), holding its node", step.name, err)
		}
	}
}

// The Job and the results ConfigMap reach the manager through different
// informers, so a pass can see the Job ended while its cache still holds
// the agent's progress from before its last write. Found under CPU load
// (make test-stress): a completed cell failed with NoResults. The pass
// reads the ConfigMap from the API server before it judges the attempt.
func TestEndedJobIsJudgedOnTheAgentsLastWrite(t *testing.T) {
	scheme := framework.Scheme()
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	doc := &results.Document{
		SchemaVersion: results.SchemaV1, Form: results.FormCompact,
		Run: results.Run{Name: "budget"}, Cell: results.Cell{Name: "maria-11.8-default", Engine: "mariadb", Version: "11.8", Repeat: 1, Attempt: 1},
		StartedAt: now.Add(-time.Minute), FinishedAt: &now, Status: results.Status{Outcome: results.OutcomeSucceeded},
		Steps: []results.StepResult{{Step: "point-query", Threads: 1, DurationSeconds: 10, SteadyQPS: 100, SteadyTPS: 100, SteadySamples: 9}},
	}
	docJSON, err := results.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	progress := func(p agentapi.Progress) string {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	running := progress(agentapi.Progress{Attempt: 1, Phase: agentapi.PhaseRunning, Step: "point-query", StepsTotal: 1})
	for _, tc := range []struct {
		name      string
		succeeded bool
		// last is the agent's last write, which the cache has not seen.
		last        map[string]string
		wantPhase   dbbenchv1alpha1.CellPhase
		wantAttempt int32
		wantReason  dbbenchv1alpha1.FailureReason
	}{
		{"completed", true, map[string]string{agentapi.ResultKeyProgress: progress(agentapi.Progress{Attempt: 1, Phase: agentapi.PhaseDone, Step: "point-query", StepsDone: 1, StepsTotal: 1}), agentapi.ResultKeyDocument: string(docJSON)},
			dbbenchv1alpha1.CellSucceeded, 1, ""},
		{"benchmark failure", false, map[string]string{agentapi.ResultKeyProgress: progress(agentapi.Progress{Attempt: 1, Phase: agentapi.PhaseFailed, Step: "point-query", StepsTotal: 1, Error: "Duplicate entry '7'", FailureClass: agentapi.FailureBenchmark})},
			dbbenchv1alpha1.CellFailed, 1, dbbenchv1alpha1.ReasonBenchmarkFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, cell := oneCellRun(now, 1)
			run.Status.Cells[0].Phase = dbbenchv1alpha1.CellRunning
			pod := specs.DatabasePod(run, cell, 1, false, "")
			job := specs.ClientJob(run, cell, 1, DefaultAgentImage, "10.88.0.1", false)
			cm := specs.ResultConfigMap(run, cell)
			for _, obj := range []client.Object{pod, job, cm} {
				if err := ctrl.SetControllerReference(run, obj, scheme); err != nil {
					t.Fatal(err)
				}
			}
			pod.Spec.NodeName = "node-1"
			pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.88.0.1"}
			end := batchv1.JobComplete
			if !tc.succeeded {
				end = batchv1.JobFailed
			}
			job.Status.Conditions = []batchv1.JobCondition{{Type: end, Status: corev1.ConditionTrue}}
			cached := cm.DeepCopy()
			cached.Data = map[string]string{agentapi.ResultKeyProgress: running}
			live := cm.DeepCopy()
			live.Data = tc.last
			cache := withChildIndexes(fake.NewClientBuilder()).WithScheme(scheme).WithObjects(run, pod, job, cached).WithStatusSubresource(run, pod, job).Build()
			api := fake.NewClientBuilder().WithScheme(scheme).WithObjects(live).Build()
			r := &Reconciler{Client: cache, APIReader: api, Scheme: scheme, Clock: clocktesting.NewFakePassiveClock(now), AgentImage: DefaultAgentImage}
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(run)}
			if _, err := r.Reconcile(context.Background(), req); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			got := &dbbenchv1alpha1.BenchmarkRun{}
			if err := cache.Get(context.Background(), req.NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			cs := got.Status.Cells[0]
			if cs.Phase != tc.wantPhase || cs.Attempts != tc.wantAttempt || cs.Reason != tc.wantReason {
				t.Errorf("cell %s attempt %d reason %q (%s), want %s attempt %d reason %q", cs.Phase, cs.Attempts, cs.Reason, cs.Message, tc.wantPhase, tc.wantAttempt, tc.wantReason)
			}
		})
	}
}

// A pass that started a cell and lost its status write leaves the cell
// Pending in the status with its database pod created; the next pass adopts
// the pod and records everything startCell would have, the results
// ConfigMap included. Found under CPU load (make test-stress): an adopted
// cell had no status.cells[].resultConfigMap, so the precision tests'
// agent, which finds a Job's cell by it, never completed the cell.
func TestAdoptedPendingCellRecordsItsResultConfigMap(t *testing.T) {
	now := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	run, cell := oneCellRun(now, 0)
	run.Status.RetriesUsed = 0
	run.Status.Cells[0] = dbbenchv1alpha1.CellStatus{Name: cell.Name, Phase: dbbenchv1alpha1.CellPending, StepsTotal: 1}
	pod := specs.DatabasePod(run, cell, 1, false, "")
	created := metav1.NewTime(now.Add(-time.Second))
	pod.CreationTimestamp = created
	p := &runPass{run: run, now: now, kids: children{pods: map[string]*corev1.Pod{pod.Name: pod}}}

	cs := &run.Status.Cells[0]
	p.adoptAttempts(p.targetFor(cell, cs), cs)

	if cs.Phase != dbbenchv1alpha1.CellStarting || cs.Attempts != 1 || run.Status.RetriesUsed != 0 {
		t.Errorf("phase %s, attempts %d, retries %d; want Starting, 1, 0", cs.Phase, cs.Attempts, run.Status.RetriesUsed)
	}
	if want := specs.ResultConfigMapName(cell); cs.ResultConfigMap != want {
		t.Errorf("resultConfigMap %q, want %q", cs.ResultConfigMap, want)
	}
	if cs.StartTime == nil || !cs.StartTime.Equal(&created) {
		t.Errorf("start time %v, want the pod's creation %v", cs.StartTime, created)
	}
}

// The cells starting in a pass send their objects together. A cell one of
// whose creates fails stays Pending (the next pass starts it again; what
// exists is no error), so the status never says Starting for a cell whose
// objects are not all there; the others start.
func TestStartingCellsCreateTogether(t *testing.T) {
	scheme := framework.Scheme()
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	run := &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "together", UID: "run-uid", Generation: 1},
		Spec: dbbenchv1alpha1.BenchmarkRunSpec{
			Databases: []dbbenchv1alpha1.DatabaseSpec{{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"10.11", "11.4", "11.8"}}},
			Workload:  dbbenchv1alpha1.WorkloadSpec{Steps: []string{"point-query"}},
			Placement: dbbenchv1alpha1.PlacementSpec{MaxParallelCells: 3},
		},
	}
	cells := matrix.Expand(run)
	failing := specs.DatabasePodName(cells[1], 1)
	refusals := 1
	var created []string
	c := withChildIndexes(fake.NewClientBuilder()).WithScheme(scheme).WithObjects(run).WithStatusSubresource(run).
		WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if obj.GetName() == failing && refusals > 0 {
				refusals--
				return apierrors.NewServiceUnavailable("the API server is busy")
			}
			created = append(created, obj.GetName())
			return c.Create(ctx, obj, opts...)
		}}).Build()
	r := &Reconciler{Client: c, APIReader: c, Scheme: scheme, Clock: clocktesting.NewFakePassiveClock(now), AgentImage: DefaultAgentImage}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(run)}
	phases := func() []dbbenchv1alpha1.CellPhase {
		t.Helper()
		got := &dbbenchv1alpha1.BenchmarkRun{}
		if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		var out []dbbenchv1alpha1.CellPhase
		for _, cs := range got.Status.Cells {
			out = append(out, cs.Phase)
		}
		return out
	}
	if _, err := r.Reconcile(context.Background(), req); err == nil || !strings.Contains(err.Error(), cells[1].Name) {
		t.Fatalf("the pass whose create failed: %v, want the failed cell's error", err)
	}
	want := []dbbenchv1alpha1.CellPhase{dbbenchv1alpha1.CellStarting, dbbenchv1alpha1.CellPending, dbbenchv1alpha1.CellStarting}
	if got := phases(); !slices.Equal(got, want) {
		t.Fatalf("after the failed create: cells %v, want %v", got, want)
	}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatalf("the next pass: %v", err)
	}
	want[1] = dbbenchv1alpha1.CellStarting
	if got := phases(); !slices.Equal(got, want) {
		t.Fatalf("after the next pass: cells %v, want %v", got, want)
	}
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace("bench")); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 3 {
		t.Errorf("%d database pods, want one per cell: %v", len(pods.Items), created)
	}
}

// withChildIndexes gives a fake client the indexes the manager's cache
// has (IndexChildren), which a pass lists by.
func withChildIndexes(b *fake.ClientBuilder) *fake.ClientBuilder {
	for _, obj := range childKinds() {
		b = b.WithIndex(obj, IndexRun, runOf)
	}
	return b
}

// A pass reads its own run's children (by IndexRun), whatever else the
// namespace holds: another run's, a deleted and re-created run's of the
// same name (not controlled by this run), and objects that are not a
// run's at all.
func TestListChildrenReadsItsOwnRun(t *testing.T) {
	scheme := framework.Scheme()
	run, _ := oneCellRun(time.Now(), 1)
	other := run.DeepCopy()
	other.Name, other.UID = "other", "other-uid"
	predecessor := run.DeepCopy()
	predecessor.UID = "predecessor-uid"
	owned := func(owner *dbbenchv1alpha1.BenchmarkRun, name, role string) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Namespace: run.Namespace, Name: name,
			Labels:          map[string]string{dbbenchv1alpha1.LabelRun: owner.Name, dbbenchv1alpha1.LabelRole: role},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, dbbenchv1alpha1.GroupVersion.WithKind("BenchmarkRun"))},
		}
	}
	objs := []client.Object{
		&corev1.Pod{ObjectMeta: owned(run, "mine-db", specs.RoleDatabase)},
		&corev1.Pod{ObjectMeta: owned(other, "other-db", specs.RoleDatabase)},
		&corev1.Pod{ObjectMeta: owned(predecessor, "predecessor-db", specs.RoleDatabase)},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: "unlabelled"}},
		&batchv1.Job{ObjectMeta: owned(run, "mine-client", specs.RoleClient)},
		&batchv1.Job{ObjectMeta: owned(other, "other-client", specs.RoleClient)},
		&corev1.ConfigMap{ObjectMeta: owned(run, "mine-result", specs.RoleResult)},
		&corev1.ConfigMap{ObjectMeta: owned(run, "mine-config", specs.RoleConfig)},
		&corev1.ConfigMap{ObjectMeta: owned(other, "other-result", specs.RoleResult)},
	}
	c := withChildIndexes(fake.NewClientBuilder()).WithScheme(scheme).WithObjects(objs...).Build()
	p := &runPass{r: &Reconciler{Client: c, Scheme: scheme}, run: run}
	if err := p.listChildren(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind string
		got  []string
		want []string
	}{
		{"pods", slices.Sorted(maps.Keys(p.kids.pods)), []string{"mine-db"}},
		{"jobs", slices.Sorted(maps.Keys(p.kids.jobs)), []string{"mine-client"}},
		{"results", slices.Sorted(maps.Keys(p.kids.results)), []string{"mine-result"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.kind, tc.got, tc.want)
		}
	}
}
