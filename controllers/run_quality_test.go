package controllers_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/controllers"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/pkg/plan"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
)

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
		var pod corev1.Pod
		eventually(t, fmt.Sprintf("attempt %d's database pod", attempt), func() string {
			for _, p := range dbPods(t, ns, run.Name) {
				if p.Labels[specs.LabelAttempt] == fmt.Sprint(attempt) && p.DeletionTimestamp == nil {
					pod = p
					return ""
				}
			}
			return "no pod"
		})
		markPodReady(t, &pod, "node-1", "10.88.0.50")
		var job batchv1.Job
		eventually(t, fmt.Sprintf("attempt %d's client job", attempt), func() string {
			for _, j := range kubetest.ListJobs(t, k8sClient, ns, map[string]string{specs.LabelRun: run.Name}) {
				if j.Labels[specs.LabelAttempt] == fmt.Sprint(attempt) {
					job = j
					return ""
				}
			}
			return "no job"
		})
		cell := pod.Labels[specs.LabelCell]
		writeProgress(t, ns, cell+"-result", plan.Progress{Attempt: attempt, Phase: plan.PhaseDone, StepsDone: 1, StepsTotal: 1}, starvedDocument(t, cell))
		finishJob(t, &job, true)
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
	if c.Phase != dbbenchv1alpha1.CellSucceeded || c.Attempts != 2 || run.Status.RetriesUsed != 1 || c.Reason != dbbenchv1alpha1.ReasonClientStarved {
		t.Errorf("cell %s after %d attempts (%d retries), reason %q; want Succeeded after 2, 1 retry, ClientStarved", c.Phase, c.Attempts, run.Status.RetriesUsed, c.Reason)
	}
	want := &dbbenchv1alpha1.CellQuality{Invalid: 1, Rerun: 1, InvalidSteps: []string{"read-only-count@1: Stalled"}}
	if diff := cmp.Diff(want, c.Quality); diff != "" {
		t.Errorf("quality (-want +got):\n%s", diff)
	}
	cond := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded)
	if !strings.Contains(cond.Message, "1 step result(s) of 1 cell(s) invalid") {
		t.Errorf("Succeeded condition %q does not count the invalid result", cond.Message)
	}
	eventually(t, "the StepsInvalid event", func() string {
		for _, e := range runEvents(t, ns, run.Name) {
			if e.Reason == controllers.EventStepsInvalid && e.Type == corev1.EventTypeWarning && strings.Contains(e.Note, "read-only-count@1") {
				return ""
			}
		}
		return "no StepsInvalid event"
	})
}
