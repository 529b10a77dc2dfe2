package integration_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/specs"
)

// The pre-flight (spec.preflight): every (database, version, config) pair
// starts once, as a cell whose agent stops after its config check, before
// any cell; these tests play kubelet and agent for the pairs as the others
// do for cells.

// rejectedLog is the end of the log of a MariaDB that refused its variant.
const rejectedLog = "2026-11-24  3:04:05 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'innodb_bufer_pool_size=256M'\n" +
	"2026-11-24  3:04:05 0 [ERROR] Aborting\n"

// preflightRun is a run of two pairs (config variants default and typo of
// one version), repeated twice: four cells.
func preflightRun(ns, name string, maxParallel int32) *dbbenchv1alpha1.BenchmarkRun {
	run := minimalRun(ns, name)
	run.Spec.Preflight = dbbenchv1alpha1.PreflightSpec{} // the default: on
	run.Spec.Databases[0].Configs = []dbbenchv1alpha1.ConfigVariant{
		{Name: "default"},
		{Name: "typo", Inline: ptr.To("[mysqld]\ninnodb_bufer_pool_size=256M\n")},
	}
	run.Spec.Workload.Steps = []string{"point-query"}
	run.Spec.Workload.Repeats = 2
	run.Spec.Placement.MaxParallelCells = maxParallel
	return run
}

// objectBases maps the object bases of cells to their names.
func objectBases(cells []matrix.Cell) map[string]string {
	out := map[string]string{}
	for _, c := range cells {
		out[c.ObjectBase] = c.Name
	}
	return out
}

// livePods are the run's database pods that are not being deleted, by the
// name of the cell or pair (in of) they belong to; pods of neither are
// returned under "".
func livePods(t *testing.T, ns, run string, of map[string]string) map[string]corev1.Pod {
	t.Helper()
	out := map[string]corev1.Pod{}
	for _, p := range dbPods(t, ns, run) {
		if p.DeletionTimestamp == nil {
			out[of[p.Labels[dbbenchv1alpha1.LabelCell]]] = p
		}
	}
	return out
}

// requireNoCellStarted fails the test if any cell of the run has a database pod or a
// client Job: no cell may start before the pre-flight passed.
func requireNoCellStarted(t *testing.T, ns string, run *dbbenchv1alpha1.BenchmarkRun) {
	t.Helper()
	cells := objectBases(matrix.Expand(run))
	for _, p := range dbPods(t, ns, run.Name) {
		if name, ok := cells[p.Labels[dbbenchv1alpha1.LabelCell]]; ok {
			t.Errorf("cell %s has database pod %s during or after a pre-flight that did not pass", name, p.Name)
		}
	}
	for _, j := range kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name}) {
		if name, ok := cells[j.Labels[dbbenchv1alpha1.LabelCell]]; ok {
			t.Errorf("cell %s has client Job %s during or after a pre-flight that did not pass", name, j.Name)
		}
	}
}

// serverRefuses plays a database container that exited before it answered
// and was restarted, its termination message the end of its log.
func serverRefuses(t *testing.T, pod *corev1.Pod, log string) {
	t.Helper()
	playStatus(t, client.ObjectKeyFromObject(pod), func(fresh *corev1.Pod) {
		now := metav1.Now()
		fresh.Status.Phase = corev1.PodRunning
		fresh.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: specs.DatabaseContainer, Image: fresh.Spec.Containers[0].Image, RestartCount: 1,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 7, Reason: "Error", Message: log, StartedAt: now, FinishedAt: now,
			}},
		}}
	})
}

// pairJob waits for the client Job of a pair's first attempt.
func pairJob(t *testing.T, ns string, pair matrix.Cell) batchv1.Job {
	t.Helper()
	var job batchv1.Job
	eventually(t, "the client Job of pair "+pair.Name, func() string {
		err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: specs.ClientJobName(pair, 1)}, &job)
		if err != nil {
			return err.Error()
		}
		return ""
	})
	return job
}

// A pair's outcome, as the test plays it.
type pairPlay int

const (
	// pairPasses: the server runs and the agent's check passes.
	pairPasses pairPlay = iota
	// serverRejectsVariant: the server exits before it answers, its log
	// blaming the variant.
	serverRejectsVariant
	// settingNotInEffect: the server runs, the agent finds a setting not in
	// effect.
	settingNotInEffect
)

// playPair plays kubelet and agent for a pair's first attempt.
func playPair(t *testing.T, ns string, pair matrix.Cell, pod corev1.Pod, how pairPlay) {
	t.Helper()
	if how == serverRejectsVariant {
		serverRefuses(t, &pod, rejectedLog)
		return
	}
	markPodReady(t, &pod, "node-1", "10.88.0.70")
	job := pairJob(t, ns, pair)
	if how == pairPasses {
		agentCompletes(t, ns, &job, 1)
		return
	}
	writeProgress(t, ns, specs.ResultConfigMapName(pair), agentapi.Progress{Attempt: 1, Phase: agentapi.PhaseFailed,
		Error:        "config variant: line 2 max_connections: requested 77, effective 151",
		FailureClass: agentapi.FailureBenchmark, Reason: agentapi.FailureConfigNotApplied}, "")
	finishJob(t, &job, false)
}

func TestPreflightRunsEveryPairBeforeAnyCell(t *testing.T) {
	tests := []struct {
		name        string
		maxParallel int32
		// play is each pair's outcome, in matrix order (default, typo).
		play []pairPlay
		// failing names the pairs the condition must name, with each one's
		// reason and what its message must quote; empty when the pre-flight
		// passes.
		failing map[string]pairFailed
	}{
		{name: "every pair passes, one at a time", maxParallel: 1, play: []pairPlay{pairPasses, pairPasses}},
		// Three slots: the pairs side by side, while the four cells would
		// come in two waves (with four, every cell starts at once and the
		// pre-flight is skipped: TestPreflightSkipped).
		{name: "every pair passes, side by side", maxParallel: 3, play: []pairPlay{pairPasses, pairPasses}},
		{
			name: "a server refuses its variant", maxParallel: 2,
			play:    []pairPlay{pairPasses, serverRejectsVariant},
			failing: map[string]pairFailed{"maria-11.8-typo": {dbbenchv1alpha1.ReasonConfigRejected, "2026-11-24  3:04:05 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'innodb_bufer_pool_size=256M'"}},
		},
		{
			name: "every failing pair is named", maxParallel: 2,
			play: []pairPlay{settingNotInEffect, serverRejectsVariant},
			failing: map[string]pairFailed{
				"maria-11.8-default": {dbbenchv1alpha1.ReasonConfigNotApplied, "line 2 max_connections: requested 77, effective 151"},
				"maria-11.8-typo":    {dbbenchv1alpha1.ReasonConfigRejected, "unknown variable 'innodb_bufer_pool_size=256M'"},
			},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := newNamespace(t)
			startManager(t, nil)
			run := preflightRun(ns, fmt.Sprintf("pf%d", i), tt.maxParallel)
			statuses := watchRunStatuses(t, ns, run.Name)
			if err := k8sClient.Create(ctx, run); err != nil {
				t.Fatalf("creating run: %v", err)
			}
			pairs := matrix.PreflightCells(run)
			of := objectBases(pairs)

			// Pairs start, up to maxParallelCells at a time, and no cell.
			started := min(int(tt.maxParallel), len(pairs))
			var pods map[string]corev1.Pod
			eventually(t, fmt.Sprintf("%d pre-flight pods", started), func() string {
				pods = livePods(t, ns, run.Name, of)
				if len(pods) != started {
					return fmt.Sprintf("%d pods", len(pods))
				}
				return ""
			})
			run = waitRun(t, ns, run.Name, "the pre-flight Running with its pairs", func(r *dbbenchv1alpha1.BenchmarkRun) string {
				pf := r.Status.Preflight
				c := meta.FindStatusCondition(r.Status.Conditions, dbbenchv1alpha1.ConditionPreflightPassed)
				if pf == nil || pf.Phase != dbbenchv1alpha1.PreflightRunning || len(pf.Pairs) != 2 || c == nil ||
					c.Status != metav1.ConditionUnknown || r.Status.CurrentStep != "pre-flight" {
					return fmt.Sprintf("status.preflight %+v, condition %+v, currentStep %q", pf, c, r.Status.CurrentStep)
				}
				return ""
			})
			requireNoCellStarted(t, ns, run)
			for _, pair := range pairs[:started] {
				requirePreflightPlan(t, ns, pair)
			}

			// Play every pair; with one slot, the second starts when the
			// first has ended.
			for k, pair := range pairs {
				var pod corev1.Pod
				eventually(t, "the pod of pair "+pair.Name, func() string {
					p, ok := livePods(t, ns, run.Name, of)[pair.Name]
					if !ok {
						return "none"
					}
					pod = p
					return ""
				})
				playPair(t, ns, pair, pod, tt.play[k])
			}

			if len(tt.failing) > 0 {
				run = waitRun(t, ns, run.Name, "the run to fail in its pre-flight", func(r *dbbenchv1alpha1.BenchmarkRun) string {
					if r.Status.Phase != dbbenchv1alpha1.RunFailed {
						return fmt.Sprintf("run %s, status.preflight %+v; pods: %s", r.Status.Phase, r.Status.Preflight, podStates(t, ns, r.Name))
					}
					return ""
				})
				requirePreflightFailed(t, run, tt.failing)
				// Nothing starts later, nor changes.
				statuses.finalStaysFinal(t, 500*time.Millisecond)
				requireNoCellStarted(t, ns, kubetest.GetRun(t, k8sClient, ns, run.Name))
				requirePreflightGone(t, ns, run, pairs)
				return
			}
			run = waitRun(t, ns, run.Name, "PreflightPassed", func(r *dbbenchv1alpha1.BenchmarkRun) string {
				c := meta.FindStatusCondition(r.Status.Conditions, dbbenchv1alpha1.ConditionPreflightPassed)
				if c == nil || c.Status != metav1.ConditionTrue || r.Status.Preflight.Phase != dbbenchv1alpha1.PreflightPassed {
					return fmt.Sprintf("condition %+v, status.preflight %+v", c, r.Status.Preflight)
				}
				return ""
			})
			requirePreflightGone(t, ns, run, pairs)
			driveCellsToCompletion(t, ns, run.Name)
			run = kubetest.GetRun(t, k8sClient, ns, run.Name)
			if run.Status.Phase != dbbenchv1alpha1.RunSucceeded {
				t.Fatalf("run %s after its pre-flight passed: %s", run.Status.Phase, cellPhases(run))
			}
			for _, cs := range run.Status.Preflight.Pairs {
				if cs.Phase != dbbenchv1alpha1.CellSucceeded || cs.Attempts != 1 {
					t.Errorf("pair %s: %s after %d attempts, want Succeeded after 1", cs.Name, cs.Phase, cs.Attempts)
				}
			}
		})
	}
}

// requirePreflightPlan checks a pair's objects: its plan asks the agent for
// the pre-flight only, and it has no Service.
func requirePreflightPlan(t *testing.T, ns string, pair matrix.Cell) {
	t.Helper()
	var cm corev1.ConfigMap
	if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: specs.ConfigMapName(pair)}, &cm); err != nil {
		t.Fatalf("pair %s: config ConfigMap: %v", pair.Name, err)
	}
	var p agentapi.Task
	if err := json.Unmarshal([]byte(cm.Data[agentapi.ConfigKeyTask]), &p); err != nil {
		t.Fatalf("pair %s: plan: %v", pair.Name, err)
	}
	if !p.Preflight || p.Cell.Config != pair.Config.Name {
		t.Errorf("pair %s: plan preflight=%v config=%q, want true and %q", pair.Name, p.Preflight, p.Cell.Config, pair.Config.Name)
	}
	err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: specs.ServiceName(pair)}, &corev1.Service{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("pair %s: Service %s: %v, want none", pair.Name, specs.ServiceName(pair), err)
	}
}

// pairFailed is how a pair of the pre-flight must fail: its reason
// (status.preflight.pairs[].reason) and what its message must quote.
type pairFailed struct {
	reason dbbenchv1alpha1.FailureReason
	// quote is the server's own line, or the setting with its requested and
	// effective value: the text is the contract, since the user must see
	// which line of the variant the server refused and no field carries it.
	quote string
}

// requirePreflightFailed checks a run the pre-flight failed: the failing
// pairs failed with their reasons and the others passed
// (status.preflight.pairs), the PreflightPassed and Failed conditions say
// so, and every message quotes why each pair failed.
func requirePreflightFailed(t *testing.T, run *dbbenchv1alpha1.BenchmarkRun, failing map[string]pairFailed) {
	t.Helper()
	c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionPreflightPassed)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != dbbenchv1alpha1.ReasonPreflightFailed {
		t.Fatalf("PreflightPassed = %+v, want False with reason %s", c, dbbenchv1alpha1.ReasonPreflightFailed)
	}
	f := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionFailed)
	if f == nil || f.Status != metav1.ConditionTrue || f.Reason != dbbenchv1alpha1.ReasonPreflightFailed {
		t.Fatalf("Failed = %+v, want True with reason %s", f, dbbenchv1alpha1.ReasonPreflightFailed)
	}
	var failedPairs []string
	for _, cs := range run.Status.Preflight.Pairs {
		want, ok := failing[cs.Name]
		switch {
		case ok && (cs.Phase != dbbenchv1alpha1.CellFailed || cs.Reason != want.reason):
			t.Errorf("pair %s: %s %s, want Failed with reason %s", cs.Name, cs.Phase, cs.Reason, want.reason)
		case !ok && cs.Phase != dbbenchv1alpha1.CellSucceeded:
			t.Errorf("pair %s: %s %q, want Succeeded", cs.Name, cs.Phase, cs.Message)
		}
		if !ok {
			continue
		}
		failedPairs = append(failedPairs, cs.Name)
		// The pair's message, and the conditions' (the PreflightPassed
		// contract: one place that says it all to people), quote it.
		for _, msg := range []string{cs.Message, c.Message, f.Message} {
			if !strings.Contains(msg, want.quote) {
				t.Errorf("pair %s: %q does not say why it failed (%q)", cs.Name, msg, want.quote)
			}
		}
	}
	if len(failedPairs) != len(failing) {
		t.Errorf("failed pairs %v, want %d", failedPairs, len(failing))
	}
	if run.Status.Preflight.Phase != dbbenchv1alpha1.PreflightFailed || run.Status.Preflight.CompletionTime == nil {
		t.Errorf("status.preflight = %+v, want Failed with a completion time", run.Status.Preflight)
	}
	for _, cs := range run.Status.Cells {
		if cs.Phase != dbbenchv1alpha1.CellPending || cs.Attempts != 0 {
			t.Errorf("cell %s: %s after %d attempts, want Pending, never started", cs.Name, cs.Phase, cs.Attempts)
		}
	}
}

// requirePreflightGone waits until the pairs' database pods are being
// deleted and their Jobs are gone.
func requirePreflightGone(t *testing.T, ns string, run *dbbenchv1alpha1.BenchmarkRun, pairs []matrix.Cell) {
	t.Helper()
	of := objectBases(pairs)
	eventually(t, "the pre-flight's pods and Jobs to go", func() string {
		var left []string
		for name, p := range livePods(t, ns, run.Name, of) {
			if name != "" { // a pair's
				left = append(left, p.Name)
			}
		}
		slices.Sort(left)
		for _, j := range kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name}) {
			if _, isPair := of[j.Labels[dbbenchv1alpha1.LabelCell]]; isPair && j.DeletionTimestamp == nil {
				left = append(left, j.Name)
			}
		}
		if len(left) > 0 {
			return strings.Join(left, ", ")
		}
		return ""
	})
}

func TestPreflightSkipped(t *testing.T) {
	tests := []struct {
		name     string
		run      func(ns string) *dbbenchv1alpha1.BenchmarkRun
		want     dbbenchv1alpha1.PreflightSkipReason
		cellPods int
	}{
		{
			name: "spec.preflight.enabled false",
			run: func(ns string) *dbbenchv1alpha1.BenchmarkRun {
				r := preflightRun(ns, "off", 2)
				r.Spec.Preflight.Enabled = ptr.To(false)
				return r
			},
			want: dbbenchv1alpha1.PreflightDisabled, cellPods: 2,
		},
		{
			name: "a single pair, repeated",
			run: func(ns string) *dbbenchv1alpha1.BenchmarkRun {
				r := preflightRun(ns, "single", 2)
				r.Spec.Databases[0].Configs = r.Spec.Databases[0].Configs[:1]
				return r
			},
			want: dbbenchv1alpha1.PreflightSinglePair, cellPods: 2,
		},
		{
			name: "every cell starts at once",
			run: func(ns string) *dbbenchv1alpha1.BenchmarkRun {
				return preflightRun(ns, "atonce", 4)
			},
			want: dbbenchv1alpha1.PreflightAllCellsAtOnce, cellPods: 4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := newNamespace(t)
			startManager(t, nil)
			run := tt.run(ns)
			if err := k8sClient.Create(ctx, run); err != nil {
				t.Fatalf("creating run: %v", err)
			}
			cells := objectBases(matrix.Expand(run))
			eventually(t, "the cells' pods", func() string {
				n := 0
				for name := range livePods(t, ns, run.Name, cells) {
					if name == "" {
						return "a pod of no cell"
					}
					n++
				}
				return ifNot(n == tt.cellPods)
			})
			run = waitRun(t, ns, run.Name, "status.preflight Skipped", func(r *dbbenchv1alpha1.BenchmarkRun) string {
				pf := r.Status.Preflight
				if pf == nil || pf.Phase != dbbenchv1alpha1.PreflightSkipped || pf.SkipReason != tt.want || len(pf.Pairs) != 0 {
					return fmt.Sprintf("status.preflight %+v", pf)
				}
				return ""
			})
			if c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionPreflightPassed); c != nil {
				t.Errorf("condition PreflightPassed %+v on a run without a pre-flight", c)
			}
		})
	}
}

// A manager that stops mid-pre-flight: the next adopts the pairs' pods and
// Jobs (no second attempt, no duplicate Job), takes the result an agent
// wrote meanwhile, and the run goes on to its cells.
func TestPreflightResumesAfterRestart(t *testing.T) {
	ns := newNamespace(t)
	first := startManager(t, nil)
	run := preflightRun(ns, "pfrestart", 2)
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	pairs := matrix.PreflightCells(run)
	of := objectBases(pairs)
	var pods map[string]corev1.Pod
	eventually(t, "both pairs' pods", func() string {
		pods = livePods(t, ns, run.Name, of)
		return ifNot(len(pods) == 2)
	})
	for _, pair := range pairs {
		pod := pods[pair.Name]
		markPodReady(t, &pod, "node-1", "10.88.0.80")
	}
	jobs := []batchv1.Job{pairJob(t, ns, pairs[0]), pairJob(t, ns, pairs[1])}
	waitRun(t, ns, run.Name, "both pairs Running", func(r *dbbenchv1alpha1.BenchmarkRun) string {
		for _, cs := range r.Status.Preflight.Pairs {
			if cs.Phase != dbbenchv1alpha1.CellRunning {
				return cs.Name + " is " + string(cs.Phase)
			}
		}
		return ""
	})
	first.stop()

	// While no manager runs, the first pair's agent finishes.
	agentCompletes(t, ns, &jobs[0], 1)
	startManager(t, nil)
	waitRun(t, ns, run.Name, "the first pair Succeeded, the second still Running", func(r *dbbenchv1alpha1.BenchmarkRun) string {
		p := r.Status.Preflight.Pairs
		if r.Status.Preflight.Phase != dbbenchv1alpha1.PreflightRunning || p[0].Phase != dbbenchv1alpha1.CellSucceeded || p[1].Phase != dbbenchv1alpha1.CellRunning {
			return fmt.Sprintf("%+v", r.Status.Preflight)
		}
		return ""
	})
	requireNoCellStarted(t, ns, kubetest.GetRun(t, k8sClient, ns, run.Name))
	agentCompletes(t, ns, &jobs[1], 1)
	driveCellsToCompletion(t, ns, run.Name)
	run = kubetest.GetRun(t, k8sClient, ns, run.Name)
	if run.Status.Phase != dbbenchv1alpha1.RunSucceeded || run.Status.Preflight.Phase != dbbenchv1alpha1.PreflightPassed {
		t.Fatalf("run %s, pre-flight %s: %s", run.Status.Phase, run.Status.Preflight.Phase, cellPhases(run))
	}
	for _, cs := range run.Status.Preflight.Pairs {
		if cs.Attempts != 1 {
			t.Errorf("pair %s took %d attempts, want 1", cs.Name, cs.Attempts)
		}
	}
	// One database pod and one Job per pair ever existed (envtest has no
	// garbage collector: deleted pods bound to a node stay, terminating).
	perPair := map[string]int{}
	for _, p := range dbPods(t, ns, run.Name) {
		if name, ok := of[p.Labels[dbbenchv1alpha1.LabelCell]]; ok {
			perPair[name]++
		}
	}
	for _, pair := range pairs {
		if perPair[pair.Name] != 1 {
			t.Errorf("pair %s had %d database pods, want 1", pair.Name, perPair[pair.Name])
		}
	}
}

// podStates says, for a timeout message, what the run's database pods are.
func podStates(t *testing.T, ns, run string) string {
	var out []string
	for _, p := range dbPods(t, ns, run) {
		restarts := int32(0)
		for _, c := range p.Status.ContainerStatuses {
			restarts = c.RestartCount
		}
		out = append(out, fmt.Sprintf("%s %s restarts=%d deleting=%v uid=%s", p.Name, p.Status.Phase, restarts, p.DeletionTimestamp != nil, p.UID))
	}
	return strings.Join(out, "; ")
}
