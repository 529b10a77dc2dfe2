//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/internal/testutil/tier"
)

// TestScheduleBisectionAndAck is the core tier's pass through the three
// kinds besides BenchmarkRun, on the real cluster and a real S3 server,
// each once and small (the long tier's chain, site and bisection tests
// take them through their real searches and verdicts):
//
//   - a BenchmarkSchedule every minute creates a run of its suite, which
//     succeeds and uploads; the schedule is then suspended and records it;
//   - a BenchmarkAck of that run's step is accepted and published to the
//     suite's store;
//   - a BenchmarkBisection from MariaDB 10.11 to 11.8 over one candidate
//     creates its endpoints round as a run it owns and ends with an answer
//     (whichever the two servers' speeds give: the search is the long
//     tier's), its summary uploaded.
func TestScheduleBisectionAndAck(t *testing.T) {
	tier.Core(t)
	endpoint := s3Endpoint(t)
	t.Parallel()
	ns := newNamespace(t, "kinds")
	_, s3 := objectStore(t, endpoint, ns, "kinds-"+ns, "suites")
	const suite = "kinds"

	template := smallRun(ns, "", "10.11").Spec
	template.Suite = suite
	template.Workload.Steps = []string{"point-query"}
	template.Workload.Threads = []int32{1}
	template.Output.S3 = s3

	sched := &dbbenchv1alpha1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"},
		Spec: dbbenchv1alpha1.BenchmarkScheduleSpec{
			Schedule:    "* * * * *",
			RunTemplate: dbbenchv1alpha1.BenchmarkRunTemplate{Spec: template},
		},
	}
	if err := k8sClient.Create(ctx, sched); err != nil {
		t.Fatalf("creating schedule: %v", err)
	}
	var runName string
	eventually(t, 2*time.Minute, "the schedule's first run", func() string {
		var runs dbbenchv1alpha1.BenchmarkRunList
		if err := k8sClient.List(ctx, &runs, client.InNamespace(ns), client.MatchingLabels{dbbenchv1alpha1.LabelSchedule: sched.Name}); err != nil {
			return err.Error()
		}
		if len(runs.Items) == 0 {
			return "no run yet"
		}
		runName = runs.Items[0].Name
		if !metav1.IsControlledBy(&runs.Items[0], sched) {
			t.Fatalf("run %s is not controlled by schedule %s: %+v", runName, sched.Name, runs.Items[0].OwnerReferences)
		}
		return ""
	})
	// One night is enough: no second run while this one is judged.
	patch := []byte(`{"spec":{"suspend":true}}`)
	if err := k8sClient.Patch(ctx, sched, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("suspending the schedule: %v", err)
	}
	run := waitForRunFinished(t, ns, runName, runTimeout)
	requireSucceeded(t, run)
	if run.Spec.Suite != suite {
		t.Errorf("the scheduled run's suite is %q, want %q", run.Spec.Suite, suite)
	}
	eventually(t, 2*time.Minute, "the scheduled run's results uploaded", func() string {
		run = kubetest.GetRun(t, k8sClient, ns, runName)
		if c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded); c == nil || c.Status != metav1.ConditionTrue {
			return "ResultsUploaded: " + conditionString(c)
		}
		return ""
	})
	requireReady(t, "the scheduled run", run.Status.Conditions, dbbenchv1alpha1.ReasonAllCellsSucceeded)
	eventually(t, time.Minute, "the schedule to record its run", func() string {
		var got dbbenchv1alpha1.BenchmarkSchedule
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(sched), &got); err != nil {
			return err.Error()
		}
		if got.Status.LastScheduleTime == nil || got.Status.LastSuccessfulTime == nil || len(got.Status.Active) != 0 {
			return fmt.Sprintf("lastScheduleTime %v, lastSuccessfulTime %v, active %d", got.Status.LastScheduleTime, got.Status.LastSuccessfulTime, len(got.Status.Active))
		}
		// Suspended is Ready: the schedule does what it was told.
		if c := meta.FindStatusCondition(got.Status.Conditions, dbbenchv1alpha1.ConditionReady); c == nil || c.Reason != dbbenchv1alpha1.ScheduleReasonSuspended {
			return "Ready: " + conditionString(c)
		}
		requireReady(t, "the suspended schedule", got.Status.Conditions, dbbenchv1alpha1.ScheduleReasonSuspended)
		return ""
	})

	ack := &dbbenchv1alpha1.BenchmarkAck{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "known-change"},
		Spec: dbbenchv1alpha1.BenchmarkAckSpec{Suite: suite, Run: runName, Step: "point-query", Threads: 1,
			Reason: "the core tier's ack: accepted and published"},
	}
	if err := k8sClient.Create(ctx, ack); err != nil {
		t.Fatalf("creating ack: %v", err)
	}

	bis := &dbbenchv1alpha1.BenchmarkBisection{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "versions"},
		Spec: dbbenchv1alpha1.BenchmarkBisectionSpec{
			Template: &template,
			Good:     dbbenchv1alpha1.BisectionPoint{Version: "10.11"},
			Bad:      dbbenchv1alpha1.BisectionPoint{Version: "11.8"},
			// The good version once more, as an image: any answer will do.
			Candidates:          []dbbenchv1alpha1.BisectionPoint{{Image: "docker.io/library/mariadb:10.11"}},
			Repeats:             2,
			MinMagnitudePercent: ptr.To[int32](30),
			MaxCells:            12,
		},
	}

	eventually(t, time.Minute, "the ack accepted and published", func() string {
		var got dbbenchv1alpha1.BenchmarkAck
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(ack), &got); err != nil {
			return err.Error()
		}
		acc := meta.FindStatusCondition(got.Status.Conditions, dbbenchv1alpha1.AckConditionAccepted)
		pub := meta.FindStatusCondition(got.Status.Conditions, dbbenchv1alpha1.AckConditionPublished)
		if acc == nil || acc.Status != metav1.ConditionTrue || pub == nil || pub.Status != metav1.ConditionTrue {
			return "Accepted " + conditionString(acc) + "; Published " + conditionString(pub)
		}
		requireReady(t, "the ack", got.Status.Conditions, dbbenchv1alpha1.AckReasonPublished)
		return ""
	})

	got, wall := runBisection(t, bis) // creates it
	c := meta.FindStatusCondition(got.Status.Conditions, dbbenchv1alpha1.BisectionConditionLocalized)
	switch c.Reason {
	case dbbenchv1alpha1.BisectionReasonLocalized, dbbenchv1alpha1.BisectionReasonEndpointsNotReproduced:
	default:
		t.Errorf("bisection ended %s %s: %s; want an answer (Localized or EndpointsNotReproduced)", c.Status, c.Reason, c.Message)
	}
	t.Logf("bisection answered %s in %s", c.Reason, wall.Round(time.Second))
	if len(got.Status.Rounds) == 0 {
		t.Fatalf("no rounds in status")
	}
	first := kubetest.GetRun(t, k8sClient, ns, got.Status.Rounds[0].Run)
	if !metav1.IsControlledBy(first, got) {
		t.Errorf("round run %s is not controlled by the bisection: %+v", first.Name, first.OwnerReferences)
	}
	eventually(t, 2*time.Minute, "the bisection's summary uploaded", func() string {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(bis), got); err != nil {
			return err.Error()
		}
		if c := meta.FindStatusCondition(got.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded); c == nil || c.Status != metav1.ConditionTrue {
			return "ResultsUploaded: " + conditionString(c)
		}
		return ""
	})
	requireReady(t, "the bisection", got.Status.Conditions, c.Reason)
}

// requireReady fails unless conditions say Ready (True, with reason), the
// one of Ready, Reconciling and Stalled that GitOps tools read as done and
// well (docs/design.md, "Conditions GitOps tools read").
func requireReady(t *testing.T, what string, conditions []metav1.Condition, reason string) {
	t.Helper()
	for typ, want := range map[string]metav1.ConditionStatus{dbbenchv1alpha1.ConditionReady: metav1.ConditionTrue,
		dbbenchv1alpha1.ConditionReconciling: metav1.ConditionFalse, dbbenchv1alpha1.ConditionStalled: metav1.ConditionFalse} {
		c := meta.FindStatusCondition(conditions, typ)
		if c == nil || c.Status != want || c.Reason != reason {
			t.Errorf("%s: %s is %s, want %s with reason %s", what, typ, conditionString(c), want, reason)
		}
	}
}
