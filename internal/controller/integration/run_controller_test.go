package integration_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/benchmarkrun"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
)

// scaledDocument is a valid compact results document, as the agent writes, with point-query at 4 threads scaled, to
// play a version or config that costs throughput. Its p99 latency moves ten
// times as fast the other way (scale^-10: +22 % at 0.98), as periodic
// stalls do: a small throughput cost, a large tail-latency one.
func scaledDocument(cell string, scale float64) string {
	return cellDocument(results.Cell{Name: cell, Engine: "mariadb", Version: "11.8", Repeat: 1, Attempt: 1}, scale)
}

// cellDocument is scaledDocument of the given cell.
func cellDocument(cell results.Cell, scale float64) string {
	now := time.Now().UTC()
	p95, p99 := 2/scale, 3*math.Pow(scale, -10)
	doc := &results.Document{
		SchemaVersion: results.SchemaV1, Form: results.FormCompact,
		Run:       results.Run{Name: "r"},
		Cell:      cell,
		StartedAt: now, FinishedAt: &now,
		Status:     results.Status{Outcome: results.OutcomeSucceeded},
		Provenance: results.Provenance{ServerVersion: "11.8.3-MariaDB", DatabaseNode: results.Host{NodeName: "node-a"}},
		Steps: []results.StepResult{
			{Step: "point-query", Group: "point", Threads: 1, DurationSeconds: 10, SteadyQPS: 1234.5, SteadyTPS: 1234.5, SteadySamples: 9, FinalQPS: 1200, FinalTPS: 1200, Queries: 12000, Transactions: 12000, LatencyAvgMs: 0.8, LatencyMaxMs: 3},
			{Step: "point-query", Group: "point", Threads: 4, DurationSeconds: 10, SteadyQPS: 4000 * scale, SteadyTPS: 4000 * scale, SteadySamples: 9, FinalQPS: 3900, FinalTPS: 3900, Queries: 39000, Transactions: 39000, LatencyAvgMs: 1, LatencyMaxMs: 50, LatencyP95Ms: &p95, LatencyP99Ms: &p99,
				// The engine's counters per query: a slower build
				// syncs its log more often per query.
				Counters: &results.Counters{Source: "SHOW GLOBAL STATUS", Seconds: 10, OpsPerSecond: 4000 * scale, OpsBasis: "qps", Operations: 40000 * scale,
					PerOp: map[string]float64{"Handler_read_key": 1, "Innodb_os_log_fsyncs": 0.01 / (scale * scale)}}},
		},
	}
	b, err := results.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("sample document is invalid: %v", err))
	}
	return string(b)
}

// matrixRun is the example: 3 versions × 2 configs × threads
// [1, 4, 16] → 6 cells (the thread sweep runs inside each cell).
func matrixRun(ns, name string) *dbbenchv1alpha1.BenchmarkRun {
	run := minimalRun(ns, name)
	run.Spec.Databases[0].Versions = []string{"10.5", "10.11", "11.8"}
	run.Spec.Databases[0].Configs = []dbbenchv1alpha1.ConfigVariant{
		{Name: "default"},
		{Name: "bp4g", Inline: ptr.To("[mysqld]\ninnodb_buffer_pool_size=4G\n")},
	}
	run.Spec.Databases[0].Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"),
	}}
	run.Spec.Workload.Threads = []int32{1, 4, 16}
	run.Spec.Workload.Steps = []string{"point-query", "update-index"}
	run.Spec.Placement = dbbenchv1alpha1.PlacementSpec{
		MaxParallelCells: 6,
		QoSClass:         dbbenchv1alpha1.QoSGuaranteed,
		ClientNode:       dbbenchv1alpha1.ClientOtherNode,
		Database: dbbenchv1alpha1.PodPlacement{
			NodeSelector: map[string]string{"dbbench.io/pool": "db"},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db", Effect: corev1.TaintEffectNoSchedule}},
		},
		Client: dbbenchv1alpha1.PodPlacement{NodeSelector: map[string]string{"dbbench.io/pool": "client"}},
	}
	return run
}

func TestMatrixBecomesCellsWithChildrenPlacedAsDeclared(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	run := matrixRun(ns, "matrix")
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}

	var pods []corev1.Pod
	eventually(t, "6 database pods", func() string {
		pods = dbPods(t, ns, run.Name)
		if len(pods) != 6 {
			return fmt.Sprintf("%d pods", len(pods))
		}
		return ""
	})
	// The pods exist before the status write of the pass that created
	// them: wait for the status to record them.
	wantCells := []string{
		"maria-10.5-default", "maria-10.5-bp4g", "maria-10.11-default",
		"maria-10.11-bp4g", "maria-11.8-default", "maria-11.8-bp4g",
	}
	run = waitRun(t, ns, run.Name, "6 cells Starting in the status", func(r *dbbenchv1alpha1.BenchmarkRun) string {
		var gotCells []string
		var wrong []string
		for _, c := range r.Status.Cells {
			gotCells = append(gotCells, c.Name)
			if c.Phase != dbbenchv1alpha1.CellStarting || c.Attempts != 1 || c.StepsTotal != 6 {
				wrong = append(wrong, fmt.Sprintf("cell %s: phase %s attempts %d stepsTotal %d, want Starting, 1, 6", c.Name, c.Phase, c.Attempts, c.StepsTotal))
			}
		}
		if diff := cmp.Diff(wantCells, gotCells); diff != "" {
			return fmt.Sprintf("cells (-want +got):\n%s", diff)
		}
		return strings.Join(wrong, "; ")
	})

	for _, pod := range pods {
		cell := pod.Labels[dbbenchv1alpha1.LabelCell]
		// Every cell has its Secret, config and result ConfigMaps and a
		// headless Service, all owned by the run.
		for _, obj := range []client.Object{
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: cell + "-creds"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cell + "-config"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cell + "-result"}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: cell + "-db"}},
		} {
			if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: obj.GetName()}, obj); err != nil {
				t.Errorf("cell %s: %T %s: %v", cell, obj, obj.GetName(), err)
				continue
			}
			if !metav1.IsControlledBy(obj, run) {
				t.Errorf("%T %s is not controlled by the run", obj, obj.GetName())
			}
		}
		c := pod.Spec.Containers[0]
		if !strings.HasPrefix(c.Image, "mariadb:") {
			t.Errorf("pod %s image %q, want mariadb:<version>", pod.Name, c.Image)
		}
		// Guaranteed QoS: requests equal limits, whole CPUs.
		if diff := cmp.Diff(c.Resources.Limits, c.Resources.Requests); diff != "" {
			t.Errorf("pod %s requests differ from limits:\n%s", pod.Name, diff)
		}
		if diff := cmp.Diff(map[string]string{"dbbench.io/pool": "db"}, pod.Spec.NodeSelector); diff != "" {
			t.Errorf("pod %s nodeSelector:\n%s", pod.Name, diff)
		}
		// The API server's admission adds not-ready/unreachable tolerations.
		if len(pod.Spec.Tolerations) == 0 || pod.Spec.Tolerations[0].Key != "dedicated" {
			t.Errorf("pod %s tolerations %v", pod.Name, pod.Spec.Tolerations)
		}
		anti := pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		if len(anti) != 1 || anti[0].TopologyKey != "kubernetes.io/hostname" || anti[0].LabelSelector.MatchLabels[dbbenchv1alpha1.LabelExclusive] != "true" {
			t.Errorf("pod %s exclusivity anti-affinity: %+v", pod.Name, anti)
		}
		if pod.Spec.SecurityContext.RunAsNonRoot == nil || !*pod.Spec.SecurityContext.RunAsNonRoot {
			t.Errorf("pod %s runs as root", pod.Name)
		}
		for _, e := range c.Env {
			if strings.Contains(e.Name, "PASSWORD") && e.Value != "" {
				t.Errorf("pod %s has a plaintext password in %s", pod.Name, e.Name)
			}
		}
	}

	// The kubelet reports one database ready: its client Job appears, on
	// another node than the database, with the pod IP to connect to.
	markPodReady(t, &pods[0], "node-db-1", "10.88.0.10")
	cell := pods[0].Labels[dbbenchv1alpha1.LabelCell]
	var job batchv1.Job
	eventually(t, "the client job", func() string {
		jobs := kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelCell: cell})
		if len(jobs) != 1 {
			return fmt.Sprintf("%d jobs", len(jobs))
		}
		job = jobs[0]
		return ""
	})
	tpl := job.Spec.Template.Spec
	if got := envValue(tpl.Containers[0].Env, agentapi.EnvHost); got != "10.88.0.10" {
		t.Errorf("client %s=%q, want the database pod IP", agentapi.EnvHost, got)
	}
	if diff := cmp.Diff(map[string]string{"dbbench.io/pool": "client"}, tpl.NodeSelector); diff != "" {
		t.Errorf("client nodeSelector:\n%s", diff)
	}
	anti := tpl.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(anti) != 2 || anti[1].LabelSelector.MatchLabels[dbbenchv1alpha1.LabelRole] != specs.RoleDatabase {
		t.Errorf("client anti-affinity (exclusive + other node than its database): %+v", anti)
	}
	if r := tpl.Containers[0].Resources; r.Limits.Cpu().String() != "1" || cmp.Diff(r.Limits, r.Requests) != "" {
		t.Errorf("client resources %+v, want Guaranteed with the default 1 CPU", r)
	}
	if *job.Spec.BackoffLimit != 0 {
		t.Errorf("client backoffLimit %d: retries are the controller's decision", *job.Spec.BackoffLimit)
	}
	// The rest become ready too: every cell gets its client Job.
	for i, pod := range pods[1:] {
		markPodReady(t, &pod, fmt.Sprintf("node-db-%d", i+2), fmt.Sprintf("10.88.0.%d", 11+i))
	}
	eventually(t, "a client job per cell", func() string {
		jobs := kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name})
		if len(jobs) != 6 {
			return fmt.Sprintf("%d jobs", len(jobs))
		}
		for _, j := range jobs {
			if j.Spec.Template.Spec.NodeSelector["dbbench.io/pool"] != "client" || j.Spec.Template.Spec.Affinity.PodAntiAffinity == nil {
				return "job " + j.Name + " is not placed as declared"
			}
		}
		return ""
	})
	eventually(t, "the cell to run on its node", func() string {
		var c *dbbenchv1alpha1.CellStatus
		for _, cs := range kubetest.GetRun(t, k8sClient, ns, run.Name).Status.Cells {
			if cs.ResultConfigMap == cell+"-result" {
				c = &cs
			}
		}
		if c == nil {
			return "no cell with result ConfigMap " + cell + "-result"
		}
		if c.Phase != dbbenchv1alpha1.CellRunning || c.Node != "node-db-1" {
			return fmt.Sprintf("%s on %q", c.Phase, c.Node)
		}
		return ""
	})
}

func ifNot(ok bool) string {
	if ok {
		return ""
	}
	return " (not yet)"
}

func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// driveCellsToCompletion plays kubelet, agent and Job controller for every
// cell of a run until the run finishes; the agents report point-query at 4
// threads scaled by scale[0] when given.
func driveCellsToCompletion(t *testing.T, ns, name string, scale ...float64) {
	t.Helper()
	driveUntil(t, ns, name, "the run to finish", finishedRun, scale...)
}

func TestRunCompletesWithConditionsAndResults(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	run := minimalRun(ns, "complete")
	run.Spec.Databases[0].Versions = []string{"10.11", "11.8"}
	run.Spec.Workload.Threads = []int32{1, 4}
	run.Spec.Workload.Steps = []string{"point-query"}
	run.Spec.Placement.MaxParallelCells = 1
	statuses := watchRunStatuses(t, ns, run.Name)
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	// maxParallelCells 1: one database pod at a time.
	eventually(t, "the first database pod", func() string {
		if pods := dbPods(t, ns, run.Name); len(pods) != 1 {
			var names []string
			for _, p := range pods {
				names = append(names, p.Name)
			}
			return fmt.Sprintf("%d pods: %v; %s", len(pods), names, cellPhases(kubetest.GetRun(t, k8sClient, ns, run.Name)))
		}
		return ""
	})
	time.Sleep(300 * time.Millisecond)
	if n := len(dbPods(t, ns, run.Name)); n != 1 {
		t.Fatalf("%d database pods with maxParallelCells 1", n)
	}
	driveCellsToCompletion(t, ns, run.Name)
	statuses.finalStaysFinal(t, time.Second)

	run = kubetest.GetRun(t, k8sClient, ns, run.Name)
	if !meta.IsStatusConditionTrue(run.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) {
		t.Fatalf("run did not succeed: %+v", run.Status.Conditions)
	}
	if c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionProgressing); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Progressing: %+v", c)
	}
	if run.Status.Phase != dbbenchv1alpha1.RunSucceeded || run.Status.Progress != "2/2" || run.Status.CompletionTime == nil {
		t.Errorf("status phase %s progress %s completion %v", run.Status.Phase, run.Status.Progress, run.Status.CompletionTime)
	}
	if run.Status.ObservedGeneration != run.Generation {
		t.Errorf("observedGeneration %d, generation %d", run.Status.ObservedGeneration, run.Generation)
	}
	if run.Status.Results == nil || run.Status.Results.ConfigMap != "complete-results" {
		t.Fatalf("results reference %+v", run.Status.Results)
	}
	var cm corev1.ConfigMap
	if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "complete-results"}, &cm); err != nil {
		t.Fatalf("run results ConfigMap: %v", err)
	}
	m, err := results.UnmarshalManifest([]byte(cm.Data[agentapi.RunResultKeyManifest]))
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	if m.Baseline != "maria-10.11-default" || len(m.Cells) != 2 {
		t.Fatalf("manifest baseline %q cells %d", m.Baseline, len(m.Cells))
	}
	for _, c := range m.Cells {
		if c.Phase != "Succeeded" || c.QPS["point-query"][4] != 4000 || c.ConfigMap == "" {
			t.Errorf("manifest cell %+v", c)
		}
	}
	// Finished cells give their node back: every database pod is being
	// deleted (envtest has no kubelet to finish the graceful deletion), and
	// there was exactly one per cell.
	pods := dbPods(t, ns, run.Name)
	if len(pods) != 2 {
		t.Errorf("%d database pods, want one per cell", len(pods))
	}
	for _, pod := range pods {
		if pod.DeletionTimestamp == nil {
			t.Errorf("database pod %s of a finished cell was not deleted", pod.Name)
		}
	}
}

func TestInfrastructureFailureIsRetried(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	run := minimalRun(ns, "retry")
	run.Spec.Workload.Steps = []string{"point-query"}
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	var pod corev1.Pod
	eventually(t, "attempt 1", func() string {
		pods := dbPods(t, ns, run.Name)
		if len(pods) != 1 {
			return fmt.Sprintf("%d pods", len(pods))
		}
		pod = pods[0]
		return ""
	})
	markPodReady(t, &pod, "node-1", "10.88.0.30")
	eventually(t, "the client job", func() string {
		return ifNot(len(kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name})) == 1)
	})
	// The node runs out of memory and evicts the database mid-cell.
	markPodEvicted(t, &pod)
	eventually(t, "attempt 2", func() string {
		c := onlyCell(kubetest.GetRun(t, k8sClient, ns, run.Name))
		if c == nil {
			return "no cell in the status yet"
		}
		// Attempt 2 may already be past Starting when the poll looks.
		if c.Attempts != 2 || (c.Phase != dbbenchv1alpha1.CellStarting && c.Phase != dbbenchv1alpha1.CellRunning) {
			return fmt.Sprintf("attempts %d phase %s", c.Attempts, c.Phase)
		}
		if c.Reason != dbbenchv1alpha1.ReasonDatabaseEvicted {
			return fmt.Sprintf("reason %q", c.Reason)
		}
		return ""
	})
	driveCellsToCompletion(t, ns, run.Name)
	run = kubetest.GetRun(t, k8sClient, ns, run.Name)
	if run.Status.Phase != dbbenchv1alpha1.RunSucceeded || run.Status.RetriesUsed != 1 || run.Status.Cells[0].Attempts != 2 {
		t.Fatalf("phase %s retries %d attempts %d", run.Status.Phase, run.Status.RetriesUsed, run.Status.Cells[0].Attempts)
	}
}

func TestBenchmarkFailureFailsTheCellWithoutRetry(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	run := minimalRun(ns, "benchfail")
	run.Spec.Workload.Steps = []string{"point-query", "update-index"}
	statuses := watchRunStatuses(t, ns, run.Name)
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	var pod corev1.Pod
	eventually(t, "the database pod", func() string {
		pods := dbPods(t, ns, run.Name)
		if len(pods) != 1 {
			return "no pod"
		}
		pod = pods[0]
		return ""
	})
	markPodReady(t, &pod, "node-1", "10.88.0.40")
	var job batchv1.Job
	eventually(t, "the client job", func() string {
		jobs := kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name})
		if len(jobs) != 1 {
			return "no job"
		}
		job = jobs[0]
		return ""
	})
	cm := pod.Labels[dbbenchv1alpha1.LabelCell] + "-result"
	writeProgress(t, ns, cm, agentapi.Progress{Attempt: 1, Phase: agentapi.PhaseFailed, Step: "update-index", StepsDone: 1, StepsTotal: 2,
		Error: "Duplicate entry '7' for key 'PRIMARY'", FailureClass: agentapi.FailureBenchmark}, "")
	finishJob(t, &job, false)
	statuses.finalStaysFinal(t, time.Second)
	run = kubetest.GetRun(t, k8sClient, ns, run.Name)
	c := run.Status.Cells[0]
	if c.Phase != dbbenchv1alpha1.CellFailed || c.Attempts != 1 || run.Status.RetriesUsed != 0 {
		t.Errorf("cell %s attempts %d retries %d, want Failed after 1 attempt", c.Phase, c.Attempts, run.Status.RetriesUsed)
	}
	if c.Reason != dbbenchv1alpha1.ReasonBenchmarkFailed {
		t.Errorf("reason %q, want %s", c.Reason, dbbenchv1alpha1.ReasonBenchmarkFailed)
	}
	// The message's quote of the agent's error is checked where it is made
	// (TestClientOutcome), and its way into the status by the pre-flight
	// tests.
	cond := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionFailed)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != dbbenchv1alpha1.ReasonCellsFailed {
		t.Errorf("Failed condition %+v, want True with reason %s", cond, dbbenchv1alpha1.ReasonCellsFailed)
	}
}

func TestRetryBudgetIsHonoured(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	run := minimalRun(ns, "budget")
	run.Spec.Workload.Steps = []string{"point-query"}
	run.Spec.Retry = dbbenchv1alpha1.RetrySpec{MaxAttemptsPerCell: 2, MaxRetriesPerRun: ptr.To[int32](10)}
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	for attempt := 1; attempt <= 2; attempt++ {
		pod := attemptPod(t, ns, run.Name, attempt)
		markPodEvicted(t, &pod)
	}
	eventually(t, "the cell to fail", func() string {
		c := onlyCell(kubetest.GetRun(t, k8sClient, ns, run.Name))
		if c == nil {
			return "no cell in the status yet"
		}
		if c.Phase != dbbenchv1alpha1.CellFailed {
			return string(c.Phase)
		}
		if c.Attempts != 2 {
			return fmt.Sprintf("failed after %d attempts, want the 2 maxAttemptsPerCell allows", c.Attempts)
		}
		if c.Reason != dbbenchv1alpha1.ReasonDatabaseEvicted {
			return fmt.Sprintf("reason %q", c.Reason)
		}
		return ""
	})
	// The evicted pod of the last attempt stays until the failure is
	// recorded, then goes with the run finished.
	eventually(t, "the failed cell's database pod deleted", func() string {
		for _, p := range dbPods(t, ns, run.Name) {
			if p.DeletionTimestamp == nil {
				return "pod " + p.Name + " is still there"
			}
		}
		return ""
	})
}

func TestDatabaseNotReadyInTimeIsAnInfrastructureFailure(t *testing.T) {
	ns := newNamespace(t)
	m := startManager(t, nil)
	run := minimalRun(ns, "notready")
	run.Spec.Workload.Steps = []string{"point-query"}
	run.Spec.Timeouts.DatabaseReady = &metav1.Duration{Duration: time.Minute}
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	eventually(t, "attempt 1", func() string { return ifNot(len(dbPods(t, ns, run.Name)) == 1) })
	// The image never arrives; time passes beyond the timeout.
	m.clock.SetTime(m.clock.Now().Add(2 * time.Minute))
	// Any change to the run's children triggers a pass; touch the result
	// ConfigMap as the agent would.
	cell := dbPods(t, ns, run.Name)[0].Labels[dbbenchv1alpha1.LabelCell]
	writeProgress(t, ns, cell+"-result", agentapi.Progress{Attempt: 0}, "")
	eventually(t, "attempt 2", func() string {
		c := onlyCell(kubetest.GetRun(t, k8sClient, ns, run.Name))
		if c == nil {
			return "no cell in the status yet"
		}
		if c.Attempts != 2 || c.Reason != dbbenchv1alpha1.ReasonDatabaseNotReady {
			return fmt.Sprintf("attempts %d reason %q", c.Attempts, c.Reason)
		}
		return ""
	})
}

func TestMissingConfigMapFailsTheCell(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	run := minimalRun(ns, "nocfg")
	run.Spec.Databases[0].Configs = []dbbenchv1alpha1.ConfigVariant{{
		Name: "tuned", ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "my-cnf"}, Key: "my.cnf"},
	}}
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	eventually(t, "the run to fail", func() string {
		r := kubetest.GetRun(t, k8sClient, ns, run.Name)
		if r.Status.Phase != dbbenchv1alpha1.RunFailed {
			return string(r.Status.Phase)
		}
		// The message names the field and the ConfigMap (TestConfigInput).
		if reason := r.Status.Cells[0].Reason; reason != dbbenchv1alpha1.ReasonConfigMissing {
			return fmt.Sprintf("reason %q", reason)
		}
		return ""
	})
}

// The manager stops in the middle of a run and a new one takes over: the run
// finishes with every cell exactly once.
func TestManagerRestartLosesNothing(t *testing.T) {
	ns := newNamespace(t)
	first := startManager(t, nil)
	run := minimalRun(ns, "restart")
	run.Spec.Databases[0].Versions = []string{"10.5", "10.11", "11.8"}
	run.Spec.Workload.Steps = []string{"point-query"}
	run.Spec.Placement.MaxParallelCells = 2
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	var pods []corev1.Pod
	eventually(t, "two database pods", func() string {
		pods = dbPods(t, ns, run.Name)
		if len(pods) != 2 {
			var names []string
			for _, p := range pods {
				names = append(names, p.Name)
			}
			return fmt.Sprintf("%d pods %v; cells %s", len(pods), names, cellPhases(kubetest.GetRun(t, k8sClient, ns, run.Name)))
		}
		return ""
	})
	markPodReady(t, &pods[0], "node-1", "10.88.0.50")
	eventually(t, "a client job", func() string {
		return ifNot(len(kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name})) == 1)
	})
	first.stop()

	// While no manager runs, the first cell's agent finishes.
	jobs := kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name})
	agentCompletes(t, ns, &jobs[0], 1)

	startManager(t, nil)
	driveCellsToCompletion(t, ns, run.Name)
	run = kubetest.GetRun(t, k8sClient, ns, run.Name)
	if run.Status.Phase != dbbenchv1alpha1.RunSucceeded {
		t.Fatalf("run %s: %s", run.Status.Phase, cellPhases(run))
	}
	for _, c := range run.Status.Cells {
		if c.Attempts != 1 {
			t.Errorf("cell %s took %d attempts", c.Name, c.Attempts)
		}
	}
	// Exactly one client Job per cell ever existed.
	perCell := map[string]int{}
	for _, j := range kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name}) {
		perCell[j.Labels[dbbenchv1alpha1.LabelCell]]++
	}
	if len(perCell) != 3 {
		t.Errorf("jobs for %d cells, want 3: %v", len(perCell), perCell)
	}
	for cell, n := range perCell {
		if n != 1 {
			t.Errorf("cell %s has %d jobs", cell, n)
		}
	}
}

// A pass that retried a cell but lost its status write (it acted on a stale
// copy of the run) leaves attempt 2's database pod behind; the next pass
// adopts it, and the reason attempt 1 ended comes from the pod.
func TestAdoptedAttemptKeepsWhyThePreviousEnded(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	run := minimalRun(ns, "adopt")
	run.Spec.Workload.Steps = []string{"point-query"}
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	var first corev1.Pod
	eventually(t, "attempt 1", func() string {
		pods := dbPods(t, ns, run.Name)
		if len(pods) != 1 {
			return fmt.Sprintf("%d pods", len(pods))
		}
		first = pods[0]
		return ""
	})
	why := "attempt 1: DatabaseEvicted: database pod was evicted: The node was low on resource: memory."
	second := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: strings.Replace(first.Name, "-db-a1", "-db-a2", 1),
		Labels: map[string]string{}, Annotations: map[string]string{
			dbbenchv1alpha1.AnnotationRetryOf: why, dbbenchv1alpha1.AnnotationRetryReason: string(dbbenchv1alpha1.ReasonDatabaseEvicted),
		},
		OwnerReferences: first.OwnerReferences,
	}, Spec: *first.Spec.DeepCopy()}
	for k, v := range first.Labels {
		second.Labels[k] = v
	}
	second.Labels[dbbenchv1alpha1.LabelAttempt] = "2"
	if err := k8sClient.Create(ctx, second); err != nil {
		t.Fatalf("creating attempt 2's pod: %v", err)
	}
	eventually(t, "attempt 2 adopted with its reason", func() string {
		r := kubetest.GetRun(t, k8sClient, ns, run.Name)
		if len(r.Status.Cells) == 0 {
			return "no cells in the status yet"
		}
		c := r.Status.Cells[0]
		if c.Attempts != 2 || c.Reason != dbbenchv1alpha1.ReasonDatabaseEvicted || r.Status.RetriesUsed != 1 ||
			!slices.Equal(c.RetryReasons, []dbbenchv1alpha1.FailureReason{dbbenchv1alpha1.ReasonDatabaseEvicted}) {
			return fmt.Sprintf("attempts %d retries %d reason %q (retry reasons %v)", c.Attempts, r.Status.RetriesUsed, c.Reason, c.RetryReasons)
		}
		return ""
	})
}

// starvedDocument is an agent's document whose read-only-count result is
// invalid because the client did not run for 9.3 s of its 10.
func starvedDocument(t *testing.T, cell string) string {
	t.Helper()
	now := time.Now().UTC()
	s := results.StepResult{Step: "read-only-count", Threads: 1, DurationSeconds: 12, WarmupSeconds: 2,
		SteadyQPS: 1547, SteadyTPS: 1547, SteadySamples: 1, FinalQPS: 415, FinalTPS: 415, LatencyMaxMs: 9759,
		Quality: &results.Quality{WindowSeconds: 10, MinSteadySamples: 8, StallSeconds: 9.76, StallLimitSeconds: 2, UnreportedSeconds: 9.3,
			Reasons: []results.QualityReason{results.QualityStalled}, Attempts: 2,
			Replaced: &results.ReplacedRun{Reasons: []results.QualityReason{results.QualityStalled}, StallSeconds: 9.5}}}
	doc := &results.Document{SchemaVersion: results.SchemaV1, Form: results.FormCompact, Run: results.Run{Name: "r"},
		Cell:      results.Cell{Name: cell, Engine: "mariadb", Version: "11.8", Repeat: 1, Attempt: 1},
		StartedAt: now, FinishedAt: &now, Status: results.Status{Outcome: results.OutcomeSucceeded},
		Steps: []results.StepResult{s}}
	b, err := results.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStarvedClientIsRetriedThenFlagged: an attempt that ends with a
// result whose client was starved is retried as an infrastructure failure
// (ClientStarved) while spec.retry lasts; the last attempt, starved again,
// succeeds with the result flagged in status.cells[].quality, a Warning
// event and the run's Succeeded message.
func TestStarvedClientIsRetriedThenFlagged(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	run := minimalRun(ns, "starved")
	run.Spec.Workload.Steps = []string{"read-only-count"}
	run.Spec.Retry = dbbenchv1alpha1.RetrySpec{MaxAttemptsPerCell: 2, MaxRetriesPerRun: ptr.To[int32](10)}
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	for attempt := 1; attempt <= 2; attempt++ {
		pod := attemptPod(t, ns, run.Name, attempt)
		markPodReady(t, &pod, "node-1", "10.88.0.50")
		eventually(t, fmt.Sprintf("attempt %d's client job", attempt), func() string {
			for _, j := range kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name}) {
				if j.Labels[dbbenchv1alpha1.LabelAttempt] == fmt.Sprint(attempt) {
					return ""
				}
			}
			return "no job"
		})
		// The agent's record of a completed document ends the attempt
		// (its Job's end is not waited for), as in a cluster.
		cell := pod.Labels[dbbenchv1alpha1.LabelCell]
		writeProgress(t, ns, cell+"-result", agentapi.Progress{Attempt: attempt, Phase: agentapi.PhaseDone, StepsDone: 1, StepsTotal: 1}, starvedDocument(t, cell))
	}
	eventually(t, "the run to succeed", func() string {
		r := kubetest.GetRun(t, k8sClient, ns, run.Name)
		if !meta.IsStatusConditionTrue(r.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) {
			return cellPhases(r)
		}
		return ""
	})
	run = kubetest.GetRun(t, k8sClient, ns, run.Name)
	c := run.Status.Cells[0]
	if c.Phase != dbbenchv1alpha1.CellSucceeded || c.Attempts != 2 || run.Status.RetriesUsed != 1 || c.Reason != dbbenchv1alpha1.ReasonClientStarved ||
		!slices.Equal(c.RetryReasons, []dbbenchv1alpha1.FailureReason{dbbenchv1alpha1.ReasonClientStarved}) {
		t.Errorf("cell %s after %d attempts (%d retries), reason %q, retry reasons %v; want Succeeded after 2, 1 retry, [ClientStarved]", c.Phase, c.Attempts, run.Status.RetriesUsed, c.Reason, c.RetryReasons)
	}
	want := &dbbenchv1alpha1.CellQuality{Invalid: 1, Rerun: 1, InvalidSteps: []string{"read-only-count@1: Stalled"}}
	if diff := cmp.Diff(want, c.Quality); diff != "" {
		t.Errorf("quality (-want +got):\n%s", diff)
	}
	cond := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != dbbenchv1alpha1.ReasonAllCellsSucceeded {
		t.Errorf("Succeeded condition %+v, want True with reason %s", cond, dbbenchv1alpha1.ReasonAllCellsSucceeded)
	}
	eventually(t, "the StepsInvalid event", func() string {
		for _, e := range runEvents(t, ns, run.Name) {
			// Which steps: status.cells[].quality, checked above.
			if e.Reason == benchmarkrun.EventStepsInvalid && e.Type == corev1.EventTypeWarning {
				return ""
			}
		}
		return "no StepsInvalid event"
	})
}
