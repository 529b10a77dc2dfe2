package integration_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
)

// noiseDocument is a compact document of one cell with point-query at 4
// threads at qps, its per-second samples recorded with a CV of 0.5 % over
// 60 s (so that Welch's test on them calls any few-percent gap
// significant), and the provenance that makes two runs an A/A pair.
func noiseDocument(cell string, repeat int, qps float64) string {
	now := time.Now().UTC()
	doc := &results.Document{
		SchemaVersion: results.SchemaV1, Form: results.FormCompact,
		Run:       results.Run{Name: "r"},
		Cell:      results.Cell{Name: cell, Database: "maria", Engine: "mariadb", Version: "11.8", Config: "default", Repeat: repeat, Attempt: 1},
		StartedAt: now, FinishedAt: &now,
		Status: results.Status{Outcome: results.OutcomeSucceeded},
		Provenance: results.Provenance{ServerVersion: "11.8.3-MariaDB", ServerSettingsSHA256: results.SettingsDigest(map[string]string{"innodb_buffer_pool_size": "134217728"}),
			ImageDigest: "sha256:" + strings.Repeat("1", 64), DatabaseNode: results.Host{NodeName: "node-a"}},
		Steps: []results.StepResult{{Step: "point-query", Group: "point", Threads: 4, DurationSeconds: 60,
			SteadyQPS: qps, SteadyTPS: qps, SteadySamples: 60, FinalQPS: qps, FinalTPS: qps, Queries: 60000, Transactions: 60000,
			LatencyAvgMs: 1, LatencyMaxMs: 5,
			Summary: &results.SeriesSummary{Samples: 60, Min: qps * 0.99, P5: qps * 0.99, Median: qps, P95: qps * 1.01, Max: qps * 1.01, Mean: qps, CV: 0.005}}},
	}
	b, err := results.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("noise document is invalid: %v", err))
	}
	return string(b)
}

// driveNoiseRun plays the agent for every cell of a run: repeat r (from
// 1) measures qps[r−1].
func driveNoiseRun(t *testing.T, ns, name string, qps ...float64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		run := kubetest.GetRun(t, k8sClient, ns, name)
		if meta.IsStatusConditionTrue(run.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) ||
			meta.IsStatusConditionTrue(run.Status.Conditions, dbbenchv1alpha1.ConditionFailed) {
			return
		}
		for _, pod := range dbPods(t, ns, name) {
			if pod.DeletionTimestamp == nil && pod.Status.PodIP == "" {
				markPodReady(t, &pod, "node-1", "10.88.0.20")
			}
		}
		for _, job := range kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: name}) {
			if len(job.Status.Conditions) > 0 {
				continue
			}
			attempt, _ := strconv.Atoi(job.Labels[dbbenchv1alpha1.LabelAttempt]) // set by the controller
			cell := job.Labels[dbbenchv1alpha1.LabelCell]
			// Cell names end in -r<repeat> when the run has repeats.
			repeat := 1
			if i := strings.LastIndex(cell, "-r"); i >= 0 {
				if _, err := fmt.Sscan(cell[i+2:], &repeat); err != nil || repeat < 1 || repeat > len(qps) {
					repeat = 1
				}
			}
			agentCompletesWith(t, ns, &job, attempt, noiseDocument(cell, repeat, qps[repeat-1]))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("run %s did not finish: %s", name, cellPhases(kubetest.GetRun(t, k8sClient, ns, name)))
}

func newSuiteRun(t *testing.T, ns, name, suite string, repeats int32) {
	t.Helper()
	r := minimalRun(ns, name)
	r.Spec.Suite = suite
	r.Spec.Workload.Steps = []string{"point-query"}
	r.Spec.Workload.Threads = []int32{4}
	r.Spec.Workload.Repeats = repeats
	r.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{}
	if err := k8sClient.Create(ctx, r); err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
}

func regressedCondition(t *testing.T, ns, name string) *metav1.Condition {
	t.Helper()
	var c *metav1.Condition
	eventually(t, "the Regressed condition of "+name, func() string {
		if c = meta.FindStatusCondition(kubetest.GetRun(t, k8sClient, ns, name).Status.Conditions, dbbenchv1alpha1.ConditionRegressed); c == nil {
			return "not set"
		}
		return ""
	})
	return c
}

// manifestQPS prints a run's manifest QPS per cell, for failure messages.
func manifestQPS(t *testing.T, ns, name string) string {
	t.Helper()
	var cm corev1.ConfigMap
	if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: specs.RunResultsConfigMapName(kubetest.GetRun(t, k8sClient, ns, name))}, &cm); err != nil {
		return err.Error()
	}
	m, err := results.UnmarshalManifest([]byte(cm.Data[agentapi.RunResultKeyManifest]))
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, c := range m.Cells {
		out = append(out, fmt.Sprintf("%s(%s r%d %s): %v", c.Name, c.Phase, c.Repeat, c.Config, c.QPS))
	}
	return name + ": " + strings.Join(out, "; ")
}

func methodsOf(st *dbbenchv1alpha1.RegressionStatus) string {
	if st == nil {
		return "no status.regression"
	}
	var out []string
	for _, m := range st.Methods {
		out = append(out, fmt.Sprintf("%s:%d", m.Method, m.Pairs))
	}
	return strings.Join(out, ",")
}

// An A/A-like pair with 3 repeats each, whose per-second samples differ
// significantly (a 3–7 % gap at a 0.5 % per-second CV) but whose repeats
// overlap, is not a regression; a 10 % slowdown with tight repeats is,
// and both say they were tested between runs.
func TestRegressedVerdictBetweenRunsWithRepeats(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)

	newSuiteRun(t, ns, "aa-1", "repeats", 3)
	driveNoiseRun(t, ns, "aa-1", 1000, 900, 1080)
	newSuiteRun(t, ns, "aa-2", "repeats", 3)
	driveNoiseRun(t, ns, "aa-2", 930, 1020, 880)
	c := regressedCondition(t, ns, "aa-2")
	st := kubetest.GetRun(t, k8sClient, ns, "aa-2").Status.Regression
	if c.Status != metav1.ConditionFalse || c.Reason != dbbenchv1alpha1.ReasonNoRegression || len(st.Methods) != 1 || st.Methods[0].Detail != "between runs (3+3 repeats)" {
		t.Fatalf("A/A-like pair: %+v\n%s\n%s", c, manifestQPS(t, ns, "aa-1"), manifestQPS(t, ns, "aa-2"))
	}
	if methodsOf(st) != "BetweenRuns:1" || st.Correction != dbbenchv1alpha1.CorrectionHolm || len(st.Regressed) != 0 || st.ComparedTo[0] != "aa-1" {
		t.Fatalf("A/A-like pair: status.regression %+v", st)
	}

	// Another suite in the namespace: tight repeats, then 10 % slower.
	newSuiteRun(t, ns, "tight-1", "tight", 3)
	driveNoiseRun(t, ns, "tight-1", 1000, 1005, 995)
	newSuiteRun(t, ns, "slower", "tight", 3)
	driveNoiseRun(t, ns, "slower", 900, 898, 903)
	c = regressedCondition(t, ns, "slower")
	st = kubetest.GetRun(t, k8sClient, ns, "slower").Status.Regression
	if c.Status != metav1.ConditionTrue || c.Reason != dbbenchv1alpha1.ReasonRegressed {
		t.Fatalf("10 %% slower: %+v", c)
	}
	if len(st.Regressed) != 1 || st.Regressed[0].Step != "point-query" || st.Regressed[0].Threads != 4 || st.Regressed[0].Method != dbbenchv1alpha1.MethodBetweenRuns ||
		st.ComparedTo[0] != "tight-1" || st.Regressed[0].ChangePercent != "-10.0" ||
		st.Regressed[0].Detail != "between runs (3+3 repeats)" || st.Regressed[0].AdjustedPValue == "" {
		t.Fatalf("10 %% slower: status.regression %+v", st)
	}
}

// One repeat per side: without a floor the verdict falls back to the
// per-second test and says so; once the suite's history holds an A/A set
// of MinFloorDF df or more, the verdict uses the floor, and the manifest
// records it.
func TestRegressedVerdictWithTheSuitesNoiseFloor(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	// Six unchanged runs (CV about 3 %), then a run 25 % slower.
	history := []float64{1000, 920, 990, 1010, 970, 1000}
	for i, q := range history {
		newSuiteRun(t, ns, fmt.Sprintf("night-%d", i+1), "floor", 0)
		driveNoiseRun(t, ns, fmt.Sprintf("night-%d", i+1), q)
	}
	// night-2 is judged on night-1 alone: no floor, per-second fallback,
	// which calls an 8 % gap between two unchanged runs a regression.
	c := regressedCondition(t, ns, "night-2")
	st := kubetest.GetRun(t, k8sClient, ns, "night-2").Status.Regression
	// The method says it was judged per second; the message then says how
	// to get a noise floor (fallbackNote, TestRegressionStatusOf).
	if c.Status != metav1.ConditionTrue || c.Reason != dbbenchv1alpha1.ReasonRegressed {
		t.Fatalf("night-2, no floor: %+v", c)
	}
	if methodsOf(st) != "PerSecond:1" || st.Regressed[0].Method != dbbenchv1alpha1.MethodPerSecond {
		t.Fatalf("night-2: status.regression %+v", st)
	}

	newSuiteRun(t, ns, "slower", "floor", 0)
	driveNoiseRun(t, ns, "slower", 750)
	c = regressedCondition(t, ns, "slower")
	st = kubetest.GetRun(t, k8sClient, ns, "slower").Status.Regression
	if c.Status != metav1.ConditionTrue || c.Reason != dbbenchv1alpha1.ReasonRegressed {
		t.Fatalf("25 %% slower with a floor: %+v", c)
	}
	if methodsOf(st) != "NoiseFloor:1" || len(st.Regressed) != 1 || st.Regressed[0].Method != dbbenchv1alpha1.MethodNoiseFloor ||
		!strings.HasPrefix(st.Regressed[0].Detail, "noise floor CV ") || !strings.HasSuffix(st.Regressed[0].Detail, " over 5 df") {
		t.Fatalf("25 %% slower: status.regression %+v", st)
	}

	// The floor is in the run's manifest for later runs and the plugin.
	var cm corev1.ConfigMap
	run := kubetest.GetRun(t, k8sClient, ns, "slower")
	if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: specs.RunResultsConfigMapName(run)}, &cm); err != nil {
		t.Fatal(err)
	}
	m, err := results.UnmarshalManifest([]byte(cm.Data[agentapi.RunResultKeyManifest]))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := m.NoiseFloor.Point("point-query", 4)
	if !ok || p.DF != 5 || p.Runs != 6 || p.CV < 0.02 || p.CV > 0.05 || len(m.NoiseFloor.Runs) != 6 || m.WorkloadSHA256 == "" {
		t.Fatalf("manifest noise floor %+v (point %+v), workload %q", m.NoiseFloor, p, m.WorkloadSHA256)
	}
}
