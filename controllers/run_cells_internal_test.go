package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/specs"
)

// A cell whose last attempt's database pod was evicted fails with the retry
// budget exhausted. The evicted pod is the only record of why: the pass
// that fails the cell must leave it until a status write has recorded the
// failure. Found under CPU load (make test-stress): a pass working from a
// stale run deleted the pod, lost its status write to the conflict, and the
// next pass found no pod and started the attempt again, so the cell stayed
// Starting. (A conflict now redoes the pass at once, in the same Reconcile.)
func TestFailedCellKeepsItsEvidenceUntilTheStatusRecordsIt(t *testing.T) {
	scheme := runtimeScheme(t)
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
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
		StartTime: &start, RetriesUsed: 1,
		Cells: []dbbenchv1alpha1.CellStatus{{
			Name: cell.Name, Database: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Version: "11.8", Config: cell.Config.Name, Repeat: cell.Repeat,
			Phase: dbbenchv1alpha1.CellStarting, Attempts: 2, StartTime: &start, AttemptStartTime: &start, StepsTotal: 1,
			ResultConfigMap: specs.ResultConfigMapName(cell),
		}},
	}
	pod := specs.DatabasePod(run, cell, 2, false, "")
	if err := ctrl.SetControllerReference(run, pod, scheme); err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."}

	loseWrites := 1
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(run, pod).WithStatusSubresource(run, pod).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*dbbenchv1alpha1.BenchmarkRun); ok && loseWrites > 0 {
				loseWrites--
				return apierrors.NewConflict(schema.GroupResource{Group: "dbbench.io", Resource: "benchmarkruns"}, obj.GetName(), nil)
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}).Build()
	r := &BenchmarkRunReconciler{Client: c, APIReader: c, Scheme: scheme, Clock: clocktesting.NewFakePassiveClock(now), AgentImage: DefaultAgentImage}
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
		if cs.Phase == dbbenchv1alpha1.CellFailed && (!strings.Contains(cs.Message, "DatabaseEvicted") || !strings.Contains(cs.Message, "retry budget exhausted")) {
			t.Errorf("%s: message %q, want the eviction and the exhausted budget", step.name, cs.Message)
		}
		var p corev1.Pod
		err := c.Get(context.Background(), podKey, &p)
		switch {
		case step.wantPod && err != nil:
			t.Fatalf("%s: the evicted pod is gone (%v): nothing says why attempt 2 ended", step.name, err)
		case step.wantPod && p.Status.Reason != "Evicted":
			t.Fatalf("%s: pod %s was started again (%s %s)", step.name, p.Name, p.Status.Phase, p.Status.Reason)
		case !step.wantPod && !apierrors.IsNotFound(err):
			t.Fatalf("%s: the failed cell's database pod is still there (%v), holding its node", step.name, err)
		}
	}
}

func runtimeScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := dbbenchv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}
