package integration_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/specs"
)

var ctx = context.Background()

// The deadlines of the waits are generous: they bound a test that is stuck,
// and the suite must pass on a loaded 2-core machine (make test-stress).
const (
	// waitTimeout bounds one eventually.
	waitTimeout = 30 * time.Second
	// driveTimeout bounds driving a run's cells through to a condition.
	driveTimeout = 60 * time.Second
)

// newNamespace creates a namespace of its own for a test; every test that
// needs the API server starts with it, so it skips those without one.
func newNamespace(t *testing.T) string {
	t.Helper()
	requireEnvtest(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "t-"}}
	if err := k8sClient.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	// envtest has no namespace or garbage collector: without this, every
	// later test's manager would reconcile this test's runs and schedules
	// (a schedule left behind creates a run each minute), and with
	// -count=N the suite would slow down test by test. Registered first,
	// it runs after the test's manager stopped. Children of a deleted run
	// stay, but no pass looks at them any more.
	t.Cleanup(func() {
		for _, obj := range []client.Object{&dbbenchv1alpha1.BenchmarkSchedule{}, &dbbenchv1alpha1.BenchmarkRun{}} {
			if err := k8sClient.DeleteAllOf(ctx, obj, client.InNamespace(ns.Name)); err != nil {
				t.Errorf("deleting the test's %T objects: %v", obj, err)
			}
		}
	})
	return ns.Name
}

// minimalRun is the smallest useful spec: one database, one version. Its
// pre-flight is off: the tests built on it follow the cells' machinery and
// count their pods; run_preflight_test.go turns it on.
func minimalRun(ns, name string) *dbbenchv1alpha1.BenchmarkRun {
	return &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: dbbenchv1alpha1.BenchmarkRunSpec{
			Databases: []dbbenchv1alpha1.DatabaseSpec{{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"11.8"}}},
			Preflight: dbbenchv1alpha1.PreflightSpec{Enabled: ptr.To(false)},
		},
	}
}

// eventually polls cond until it returns "" (success) or the deadline passes,
// then fails with the last explanation.
func eventually(t *testing.T, what string, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	var last string
	for time.Now().Before(deadline) {
		if last = cond(); last == "" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s: %s", what, last)
}

// waitRun polls the run until cond, given the run as the API server has it,
// returns "" (success), and returns that run. Children are created before
// the status write of the pass that created them, so a test that saw them
// must wait like this for the status, never read it once.
func waitRun(t *testing.T, ns, name, what string, cond func(*dbbenchv1alpha1.BenchmarkRun) string) *dbbenchv1alpha1.BenchmarkRun {
	t.Helper()
	var run *dbbenchv1alpha1.BenchmarkRun
	eventually(t, what, func() string {
		run = kubetest.GetRun(t, k8sClient, ns, name)
		return cond(run)
	})
	return run
}

// onlyCell is the status of a one-cell run's cell, nil before the first
// status write.
func onlyCell(run *dbbenchv1alpha1.BenchmarkRun) *dbbenchv1alpha1.CellStatus {
	if len(run.Status.Cells) == 0 {
		return nil
	}
	return &run.Status.Cells[0]
}

func dbPods(t *testing.T, ns, run string) []corev1.Pod {
	return kubetest.ListPods(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run, dbbenchv1alpha1.LabelRole: specs.RoleDatabase})
}

// markPodReady plays the kubelet: the pod runs on node with an IP and is ready.
// attemptPod waits for the database pod of a run's attempt that is neither
// failed nor being deleted.
func attemptPod(t *testing.T, ns, run string, attempt int) corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	eventually(t, fmt.Sprintf("attempt %d's database pod", attempt), func() string {
		for _, p := range dbPods(t, ns, run) {
			if p.Labels[dbbenchv1alpha1.LabelAttempt] == fmt.Sprint(attempt) && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil {
				pod = p
				return ""
			}
		}
		return "no pod"
	})
	return pod
}

func markPodReady(t *testing.T, pod *corev1.Pod, node, ip string) {
	t.Helper()
	fresh := &corev1.Pod{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), fresh); err != nil {
		t.Fatalf("getting pod: %v", err)
	}
	// The scheduler would bind the pod; envtest has none, so set the node
	// through the binding subresource like the scheduler does.
	if fresh.Spec.NodeName == "" && node != "" {
		binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: fresh.Name, Namespace: fresh.Namespace}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
		if err := k8sClient.SubResource("binding").Create(ctx, fresh, binding); err != nil {
			t.Fatalf("binding pod %s: %v", fresh.Name, err)
		}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), fresh); err != nil {
			t.Fatalf("getting pod: %v", err)
		}
	}
	now := metav1.Now()
	fresh.Status.Phase = corev1.PodRunning
	fresh.Status.PodIP = ip
	fresh.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	fresh.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	fresh.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: specs.DatabaseContainer, Ready: true, Image: fresh.Spec.Containers[0].Image, ImageID: podImageID(fresh.Spec.Containers[0].Image),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
	}}
	if err := k8sClient.Status().Update(ctx, fresh); err != nil {
		t.Fatalf("updating pod status: %v", err)
	}
}

// markPodEvicted plays the kubelet evicting a pod.
func markPodEvicted(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	fresh := &corev1.Pod{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), fresh); err != nil {
		t.Fatalf("getting pod: %v", err)
	}
	fresh.Status.Phase = corev1.PodFailed
	fresh.Status.Reason = "Evicted"
	fresh.Status.Message = "The node was low on resource: memory."
	if err := k8sClient.Status().Update(ctx, fresh); err != nil {
		t.Fatalf("updating pod status: %v", err)
	}
}

// writeProgress plays the agent writing its progress (and, when done, a
// results document) to the cell's result ConfigMap.
func writeProgress(t *testing.T, ns, cm string, p agentapi.Progress, doc string) {
	t.Helper()
	raw, _ := json.Marshal(p)
	eventuallyNoConflict(t, func() error {
		obj := &corev1.ConfigMap{}
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: cm}, obj); err != nil {
			return err
		}
		if obj.Data == nil {
			obj.Data = map[string]string{}
		}
		obj.Data[agentapi.ResultKeyProgress] = string(raw)
		if doc != "" {
			obj.Data[agentapi.ResultKeyDocument] = doc
		}
		return k8sClient.Update(ctx, obj)
	})
}

// finishJob plays the Job controller marking a Job complete or failed.
func finishJob(t *testing.T, job *batchv1.Job, succeeded bool) {
	t.Helper()
	playStatus(t, client.ObjectKeyFromObject(job), func(fresh *batchv1.Job) {
		now := metav1.Now()
		start := metav1.NewTime(now.Add(-time.Minute))
		fresh.Status.StartTime = &start
		if succeeded {
			fresh.Status.Succeeded = 1
			fresh.Status.CompletionTime = &now
			fresh.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: "CompletionsReached"},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: "CompletionsReached"},
			}
		} else {
			fresh.Status.Failed = 1
			fresh.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: "BackoffLimitExceeded"},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"},
			}
		}
		fresh.Status.Ready = ptr.To[int32](0)
	})
}

// playStatus plays another controller or the kubelet: it applies set to the
// latest copy of the object at key and writes its status, again on a
// conflict.
func playStatus[T any, PT interface {
	*T
	client.Object
}](t *testing.T, key client.ObjectKey, set func(PT)) {
	t.Helper()
	eventuallyNoConflict(t, func() error {
		fresh := PT(new(T))
		if err := k8sClient.Get(ctx, key, fresh); err != nil {
			return err
		}
		set(fresh)
		return k8sClient.Status().Update(ctx, fresh)
	})
}

func eventuallyNoConflict(t *testing.T, f func() error) {
	t.Helper()
	var err error
	for i := 0; i < 20; i++ {
		if err = f(); err == nil || !apierrors.IsConflict(err) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("%v", err)
	}
}

func cellPhases(run *dbbenchv1alpha1.BenchmarkRun) string {
	var b strings.Builder
	for _, c := range run.Status.Cells {
		fmt.Fprintf(&b, "%s=%s/a%d ", c.Name, c.Phase, c.Attempts)
	}
	return b.String()
}

// agentCompletes plays a whole successful client attempt: progress, a results
// document, and the Job's success.
func agentCompletes(t *testing.T, ns string, job *batchv1.Job, attempt int, scale ...float64) {
	t.Helper()
	f := 1.0
	if len(scale) > 0 {
		f = scale[0]
	}
	agentCompletesWith(t, ns, job, attempt, scaledDocument(job.Labels[dbbenchv1alpha1.LabelCell], f))
}

// agentCompletesWith is agentCompletes with the given results document.
func agentCompletesWith(t *testing.T, ns string, job *batchv1.Job, attempt int, doc string) {
	t.Helper()
	cm := strings.TrimSuffix(job.Name, fmt.Sprintf("-client-a%d", attempt)) + "-result"
	writeProgress(t, ns, cm, agentapi.Progress{Attempt: attempt, Phase: agentapi.PhaseDone, Step: "point-query", StepsDone: 2, StepsTotal: 2}, doc)
	finishJob(t, job, true)
}

// driveUntil plays kubelet, agent and Job controller for the run's cells
// until done(run) holds; the agents report point-query at 4 threads scaled
// by scale[0] when given. Each round lists the children before it reads the
// run and acts only when done does not hold yet: a child the controller
// created after a status write that satisfies done is then never played, so
// a test that stops at done (say, at the first cell's upload) sees no later
// cell move.
func driveUntil(t *testing.T, ns, name, what string, done func(*dbbenchv1alpha1.BenchmarkRun) bool, scale ...float64) {
	t.Helper()
	f := 1.0
	if len(scale) > 0 {
		f = scale[0]
	}
	driveWith(t, ns, name, what, done, func(job *batchv1.Job) string {
		return scaledDocument(job.Labels[dbbenchv1alpha1.LabelCell], f)
	})
}

// driveWith is driveUntil with each client Job's results document from
// docOf.
func driveWith(t *testing.T, ns, name, what string, done func(*dbbenchv1alpha1.BenchmarkRun) bool, docOf func(job *batchv1.Job) string) {
	t.Helper()
	deadline := time.Now().Add(driveTimeout)
	for time.Now().Before(deadline) {
		pods := dbPods(t, ns, name)
		jobs := kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: name})
		if done(kubetest.GetRun(t, k8sClient, ns, name)) {
			return
		}
		for _, pod := range pods {
			if pod.DeletionTimestamp == nil && pod.Status.PodIP == "" {
				markPodReady(t, &pod, "node-1", "10.88.0.20")
			}
		}
		for _, job := range jobs {
			if len(job.Status.Conditions) == 0 {
				attempt, _ := strconv.Atoi(job.Labels[dbbenchv1alpha1.LabelAttempt]) // set by the controller
				agentCompletesWith(t, ns, &job, attempt, docOf(&job))
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s of run %s: %s", what, name, cellPhases(kubetest.GetRun(t, k8sClient, ns, name)))
}

// podImageID is what the played kubelet reports as a database
// container's imageID; tests that re-point a tag replace it.
var podImageID = imageIDOf

// imageIDOf is the imageID a runtime reports for an image: its own digest
// when the reference has one, else a digest made from the reference (one
// per tag, as a registry would resolve it).
func imageIDOf(image string) string {
	if i := strings.Index(image, "@sha256:"); i >= 0 {
		return image
	}
	sum := sha256.Sum256([]byte(image))
	return image + "@sha256:" + hex.EncodeToString(sum[:8])
}
