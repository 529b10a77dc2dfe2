package plugin

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

func TestRegressionPrintsTheChain(t *testing.T) {
	run := runObj("night-6", "nightly", time.Now(), "Succeeded", nil)
	st := run.Object["status"].(map[string]any)
	st["conditions"] = []any{map[string]any{"type": "Regressed", "status": "True", "reason": "Regressed", "lastTransitionTime": time.Now().Format(time.RFC3339),
		"message": "1 step × thread pairs slower by 5% or more than change points over the last 6 runs of suite nightly: maria-nightly-default update-index@1 -86.0%"}}
	st["results"] = map[string]any{"url": "s3://bench/suites/nightly/night-6/"}
	st["regression"] = map[string]any{"bisection": "night-6-bisect", "regressed": []any{map[string]any{
		"cell": "maria-nightly-default", "step": "update-index", "threads": int64(1), "metric": "Throughput", "before": "900", "after": "126", "changePercent": "-86.0",
		"since": "night-5", "lastBefore": "night-4"}}}
	b := &dbbenchv1alpha1.BenchmarkBisection{
		TypeMeta:   metav1.TypeMeta{APIVersion: "dbbench.io/v1alpha1", Kind: "BenchmarkBisection"},
		ObjectMeta: metav1.ObjectMeta{Name: "night-6-bisect", Namespace: "bench", Labels: map[string]string{dbbenchv1alpha1.LabelRegressedRun: "night-6"}},
		Status: dbbenchv1alpha1.BenchmarkBisectionStatus{
			Conditions: []metav1.Condition{{Type: "Localized", Status: "True", Reason: "Localized", Message: "t5 is the first bad point (after t4) with probability 1.000", LastTransitionTime: metav1.Now()},
				{Type: "Explained", Status: "True", Reason: "Explained", Message: "t5 against t4", LastTransitionTime: metav1.Now()}},
			FirstBad: "t5", LastGood: "t4", Confidence: "1.000", RoundCount: 3, CellsUsed: 14,
			Explanation: &dbbenchv1alpha1.BisectionExplanation{Step: "update-index", Threads: 1,
				Counters: []dbbenchv1alpha1.ExplainedCounter{{Name: "Innodb_os_log_fsyncs", LastGood: "0.003", FirstBad: "1", Ratio: "333"}}},
		},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if err != nil {
		t.Fatal(err)
	}
	clients, _ := bisectCluster(t, run, &unstructured.Unstructured{Object: obj})
	out, _, err := runCmd(t, clients, "regression", "night-6")
	if err != nil {
		t.Fatal(err)
	}
	want := `night-6: Regressed=True (Regressed)
  1 step × thread pairs slower by 5% or more than change points over the last 6 runs of suite nightly: maria-nightly-default update-index@1 -86.0%
  maria-nightly-default update-index@1 Throughput -86.0%, since run night-5 (the last run before it: night-4)
Report: s3://bench/suites/nightly/night-6/report.html
Bisection: night-6-bisect

night-6-bisect: Localized=True (Localized) after 3 rounds, 14 cells
  t5 is the first bad point (after t4) with probability 1.000
Created by the Regressed verdict of run night-6 (spec.regression.bisect)
First bad: t5 (after t4), probability 1.000
Explanation (t5 against t4 at update-index@1):
  counter   Innodb_os_log_fsyncs             0.003 → 1 per op (×333)
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Fatalf("output (-want +got):\n%s", diff)
	}
	// A run without a verdict says so and stops there.
	clients, _ = bisectCluster(t, runObj("plain", "", time.Now(), "Succeeded", nil))
	out, _, err = runCmd(t, clients, "regression", "plain")
	if err != nil || !strings.Contains(out, "plain: no regression verdict") {
		t.Fatalf("output %q, error %v", out, err)
	}
}

// The chain names what else changed at a pair's change and the pairs an
// ack kept out of the verdict, and points to the suite's site.
func TestRegressionPrintsAcknowledgedAndEnvironment(t *testing.T) {
	run := runObj("night-9", "nightly", time.Now(), "Succeeded", nil)
	st := run.Object["status"].(map[string]any)
	st["conditions"] = []any{map[string]any{"type": "Regressed", "status": "True", "reason": "EnvironmentChanged", "lastTransitionTime": time.Now().Format(time.RFC3339),
		"message": "1 step × thread pairs slower …: not the build's regression"}}
	st["results"] = map[string]any{"url": "s3://bench/suites/nightly/night-9/", "site": "s3://bench/suites/nightly/index.html"}
	st["regression"] = map[string]any{
		"regressed": []any{map[string]any{"cell": "c", "step": "point-query", "threads": int64(1), "metric": "Throughput", "before": "9", "after": "7", "changePercent": "-22.0",
			"since": "night-8", "lastBefore": "night-7", "environmentOnly": true,
			"coincidesWith": []any{map[string]any{"field": "kernel", "before": "6.1.0", "after": "6.6.0"}}}},
		"acknowledged": []any{map[string]any{"cell": "c", "step": "update-index", "threads": int64(1), "changePercent": "-80.0", "since": "night-5",
			"ack": "durable", "resolution": "Acknowledged"}},
		"bisectionMessage": "every regressed pair coincides with a change of the environment"}
	clients, _ := bisectCluster(t, run)
	out, _, err := runCmd(t, clients, "regression", "night-9")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"c point-query@1 Throughput -22.0%, since run night-8 (the last run before it: night-7); the environment alone changed: kernel 6.1.0 → 6.6.0",
		"c update-index@1 -80.0%, since run night-5: acknowledged by durable, not reported",
		"The suite's site: s3://bench/suites/nightly/index.html",
		"No bisection: every regressed pair coincides with a change of the environment",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
