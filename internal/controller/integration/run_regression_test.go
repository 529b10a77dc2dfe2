package integration_test

import (
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/triage"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Three runs of a suite, judged against the previous run: the first has no
// history, the second is 10 % slower on one step (a config variant that
// costs throughput), the third matches the second.
func TestRegressedVerdictAgainstThePreviousRun(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	newRun := func(name string) *dbbenchv1alpha1.BenchmarkRun {
		r := minimalRun(ns, name)
		r.Spec.Suite = "nightly"
		r.Spec.Workload.Steps = []string{"point-query"}
		r.Spec.Workload.Threads = []int32{1, 4}
		r.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{}
		if err := k8sClient.Create(ctx, r); err != nil {
			t.Fatalf("creating %s: %v", name, err)
		}
		return r
	}
	verdict := func(name string) *metav1.Condition {
		return meta.FindStatusCondition(kubetest.GetRun(t, k8sClient, ns, name).Status.Conditions, dbbenchv1alpha1.ConditionRegressed)
	}

	newRun("night-1")
	driveCellsToCompletion(t, ns, "night-1", 1.0)
	if c := verdict("night-1"); c == nil || c.Status != metav1.ConditionFalse || c.Reason != dbbenchv1alpha1.ReasonNoHistory {
		t.Fatalf("first run: %+v", c)
	}

	newRun("night-2")
	driveCellsToCompletion(t, ns, "night-2", 0.9)
	c := verdict("night-2")
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != dbbenchv1alpha1.ReasonRegressed {
		t.Fatalf("slower run: %+v", c)
	}
	st := kubetest.GetRun(t, k8sClient, ns, "night-2").Status.Regression
	if st == nil || len(st.Regressed) != 1 || st.Regressed[0].Step != "point-query" || st.Regressed[0].Threads != 4 ||
		st.Regressed[0].ChangePercent != "-10.0" || st.Regressed[0].Metric != dbbenchv1alpha1.MetricThroughput ||
		len(st.Regressed[0].Metrics) != 1 || st.ComparedPairs != 2 || st.ComparedTo[0] != "night-1" ||
		st.MagnitudeRule != dbbenchv1alpha1.MagnitudeTested {
		t.Fatalf("regression status %+v", st)
	}

	// Beside the manifest: the verdict with every case, and as JUnit XML.
	v, junit := writtenVerdict(t, ns, "night-2")
	if len(v.Cases) != 2 || v.Cases[0].Result != triage.CasePassed || v.Cases[1].Result != triage.CaseRegressed ||
		v.Cases[1].Name() != "point-query@4 Throughput" || v.Cases[1].ChangePercent != "-10.0" || v.Status != "True" {
		t.Errorf("written verdict %+v", v)
	}
	if !strings.Contains(junit, `tests="2" failures="1" errors="0" skipped="0"`) || !strings.Contains(junit, `name="point-query@4 Throughput"`) {
		t.Errorf("junit.xml:\n%s", junit)
	}
	if v, junit := writtenVerdict(t, ns, "night-1"); len(v.Cases) != 0 || v.Reason != dbbenchv1alpha1.ReasonNoHistory ||
		!strings.Contains(junit, `skipped="1"`) {
		t.Errorf("the first run's written verdict %+v\n%s", v, junit)
	}

	newRun("night-3")
	driveCellsToCompletion(t, ns, "night-3", 0.9)
	if c := verdict("night-3"); c == nil || c.Status != metav1.ConditionFalse || c.Reason != dbbenchv1alpha1.ReasonNoRegression {
		t.Fatalf("third run, as slow as the second: %+v", c)
	}
	if st := kubetest.GetRun(t, k8sClient, ns, "night-3").Status.Regression; st == nil || len(st.ComparedTo) == 0 || st.ComparedTo[0] != "night-2" || len(st.Regressed) != 0 {
		t.Fatalf("third run, as slow as the second: regression status %+v", st)
	}
}

// A run judged on throughput and p99 latency whose point-query@4 is 2 %
// slower (under the 5 % magnitude) with a 22 % higher p99 (the helper's
// documents move p99 as scale^-10) regressed on p99 latency alone, and the
// condition and status say so. The suite uses magnitudeRule Estimated: the
// 2 % drop is measured under the magnitude, the p99 rise beyond it.
func TestRegressedOnP99Latency(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	newRun := func(name string, scale float64) *dbbenchv1alpha1.BenchmarkRun {
		r := minimalRun(ns, name)
		r.Spec.Suite = "nightly-latency"
		r.Spec.Workload.Steps = []string{"point-query"}
		r.Spec.Workload.Threads = []int32{1, 4}
		r.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{MinMagnitudePercent: 5, MagnitudeRule: dbbenchv1alpha1.MagnitudeEstimated,
			Metrics: []dbbenchv1alpha1.RegressionMetric{dbbenchv1alpha1.MetricThroughput, dbbenchv1alpha1.MetricP99Latency}}
		if err := k8sClient.Create(ctx, r); err != nil {
			t.Fatalf("creating %s: %v", name, err)
		}
		driveCellsToCompletion(t, ns, name, scale)
		return kubetest.GetRun(t, k8sClient, ns, name)
	}
	newRun("lat-1", 1.0)
	r := newRun("lat-2", 0.98)
	c := meta.FindStatusCondition(r.Status.Conditions, dbbenchv1alpha1.ConditionRegressed)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != dbbenchv1alpha1.ReasonRegressed {
		t.Fatalf("condition %+v", c)
	}
	st := r.Status.Regression
	if st == nil || len(st.Regressed) != 1 || st.MagnitudeRule != dbbenchv1alpha1.MagnitudeEstimated || len(st.ComparedTo) == 0 || st.ComparedTo[0] != "lat-1" {
		t.Fatalf("regression status %+v", st)
	}
	got := st.Regressed[0]
	if got.Step != "point-query" || got.Threads != 4 || got.Metric != dbbenchv1alpha1.MetricP99Latency ||
		len(got.Metrics) != 1 || got.Metrics[0] != dbbenchv1alpha1.MetricP99Latency || got.ChangePercent != "22.4" ||
		got.Before != "3.000" || got.After != "3.672" || len(got.AlsoRegressed) != 0 {
		t.Fatalf("regressed %+v", got)
	}
	// Throughput and p99 at 1 and 4 threads: 2 pairs, 4 points.
	if st.ComparedPairs != 2 {
		t.Errorf("compared pairs %d, want 2", st.ComparedPairs)
	}
}

func TestRegressionNeedsASuite(t *testing.T) {
	r := minimalRun(newNamespace(t), "nosuite")
	r.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{}
	err := k8sClient.Create(ctx, r)
	if err == nil || !strings.Contains(err.Error(), "regression: needs suite") {
		t.Fatalf("got %v", err)
	}
	r = minimalRun(r.Namespace, "norun")
	r.Spec.Suite = "s"
	r.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{Against: dbbenchv1alpha1.RegressAgainstRun}
	if err := k8sClient.Create(ctx, r); err == nil || !strings.Contains(err.Error(), "regression.run: must name a run") {
		t.Fatalf("got %v", err)
	}
}

// Change-point verdicts over a suite's nights: constant throughput, then
// 10 % slower. The first slow night is only suspected (Regressed=False,
// reason RegressionSuspected: one run cannot be told from an outlier); the
// second confirms it (Regressed=True), named at the first slow night's
// level. The first night's verdict is not revised.
func TestRegressedVerdictOnChangePointsSuspectedThenConfirmed(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	verdict := func(name string) *metav1.Condition {
		return meta.FindStatusCondition(kubetest.GetRun(t, k8sClient, ns, name).Status.Conditions, dbbenchv1alpha1.ConditionRegressed)
	}
	night := func(i int, scale float64) string {
		name := fmt.Sprintf("night-%d", i)
		r := minimalRun(ns, name)
		r.Spec.Suite = "nightly-cp"
		r.Spec.Workload.Steps = []string{"point-query"}
		r.Spec.Workload.Threads = []int32{4}
		r.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{Against: dbbenchv1alpha1.RegressAgainstChangePoints}
		if err := k8sClient.Create(ctx, r); err != nil {
			t.Fatalf("creating %s: %v", name, err)
		}
		driveCellsToCompletion(t, ns, name, scale)
		return name
	}
	for i := 1; i <= 4; i++ {
		name := night(i, 1.0)
		if c := verdict(name); c == nil || c.Status != metav1.ConditionFalse || (i > 1 && c.Reason != dbbenchv1alpha1.ReasonNoRegression) {
			t.Fatalf("%s, steady: %+v", name, c)
		}
	}
	first := night(5, 0.9)
	c := verdict(first)
	// The message is the contract here: it is the only place a suspected
	// drop is named (status.regression.regressed leaves it out by design).
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != dbbenchv1alpha1.ReasonRegressionSuspected || !strings.Contains(c.Message, "point-query@4 -10.0% (suspected)") {
		t.Fatalf("first slow night: %+v", c)
	}
	if st := kubetest.GetRun(t, k8sClient, ns, first).Status.Regression; st == nil || len(st.Regressed) != 0 {
		t.Fatalf("first slow night: a suspected drop is not in status.regression.regressed: %+v", st)
	}
	// The written verdict names it in a typed field: point-query@4's case
	// Suspected, every other case passed, the JUnit form without a failure.
	v, junit := writtenVerdict(t, ns, first)
	suspected := 0
	for _, c := range v.Cases {
		switch {
		case c.Name() == "point-query@4 Throughput" && c.Result == triage.CaseSuspected && c.ChangePercent == "-10.0":
			suspected++
		case c.Result != triage.CasePassed:
			t.Errorf("first slow night: case %+v", c)
		}
	}
	if suspected != 1 || int32(len(v.Cases)) != kubetest.GetRun(t, k8sClient, ns, first).Status.Regression.ComparedPairs ||
		!strings.Contains(junit, `failures="0"`) {
		t.Errorf("first slow night's written verdict %+v\n%s", v, junit)
	}
	second := night(6, 0.9)
	c = verdict(second)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != dbbenchv1alpha1.ReasonRegressed {
		t.Fatalf("second slow night: %+v", c)
	}
	if st := kubetest.GetRun(t, k8sClient, ns, second).Status.Regression; st == nil || len(st.Regressed) != 1 || st.Regressed[0].Step != "point-query" ||
		st.Regressed[0].Threads != 4 || st.Regressed[0].ChangePercent != "-10.0" {
		t.Fatalf("second slow night: regression status %+v", st)
	}
	if c := verdict(first); c == nil || c.Reason != dbbenchv1alpha1.ReasonRegressionSuspected {
		t.Fatalf("first slow night's verdict was revised: %+v", c)
	}
}

// The chain from a nightly drop to a bisection: a suite judged against
// change points whose database image is pinned by digest each night
// (a GitOps repository's nightly bump) and whose builds are all listed.
// Night 5 runs build b6, 20 % slower: suspected, no bisection. Night 6
// (b7) confirms it: the verdict names night 5 as the first run of the
// new level and night 4 as the last before it, and the bisection runs
// between their builds (b3 and b6) over the builds between (b4, b5),
// judged on the metric and step@threads that regressed, with the suite's
// rule. Night 7 (b8) still sees the change and points to that bisection
// instead of making another.
func TestChangePointVerdictBisectsBetweenTheRunsAroundTheChange(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	build := func(i int) string { return fmt.Sprintf("reg.example/mariadb@sha256:b%d", i) }
	var builds []dbbenchv1alpha1.BisectionPoint
	for i := 1; i <= 8; i++ {
		builds = append(builds, dbbenchv1alpha1.BisectionPoint{Image: build(i)})
	}
	night := func(i, b int, scale float64) *dbbenchv1alpha1.BenchmarkRun {
		name := fmt.Sprintf("night-%d", i)
		r := minimalRun(ns, name)
		r.Spec.Suite = "nightly-chain"
		r.Spec.Databases[0].Versions = []string{"nightly"}
		r.Spec.Databases[0].Image = build(b)
		r.Spec.Workload.Steps = []string{"point-query"}
		r.Spec.Workload.Threads = []int32{4}
		r.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{Against: dbbenchv1alpha1.RegressAgainstChangePoints, MinMagnitudePercent: 5,
			MagnitudeRule: dbbenchv1alpha1.MagnitudeEstimated,
			Bisect:        &dbbenchv1alpha1.RegressionBisect{Builds: builds, Repeats: 3, MaxCells: 60}}
		if err := k8sClient.Create(ctx, r); err != nil {
			t.Fatalf("creating %s: %v", name, err)
		}
		driveCellsToCompletion(t, ns, name, scale)
		return kubetest.GetRun(t, k8sClient, ns, name)
	}
	bisections := func() []dbbenchv1alpha1.BenchmarkBisection {
		var list dbbenchv1alpha1.BenchmarkBisectionList
		if err := k8sClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		return list.Items
	}
	for i, b := range []int{1, 2, 2, 3} {
		night(i+1, b, 1.0)
	}
	if r := night(5, 6, 0.8); len(bisections()) != 0 || meta.IsStatusConditionTrue(r.Status.Conditions, dbbenchv1alpha1.ConditionRegressed) {
		t.Fatalf("the suspected night made a bisection or regressed: %+v", r.Status.Conditions)
	}
	r := night(6, 7, 0.8)
	st := r.Status.Regression
	if !meta.IsStatusConditionTrue(r.Status.Conditions, dbbenchv1alpha1.ConditionRegressed) || st == nil || len(st.Regressed) != 1 ||
		st.Regressed[0].Since != "night-5" || st.Regressed[0].LastBefore != "night-4" {
		t.Fatalf("night 6: conditions %+v, regression %+v", r.Status.Conditions, st)
	}
	got := bisections()
	if len(got) != 1 || got[0].Name != "night-6-bisect" || st.Bisection != "night-6-bisect" || got[0].Labels[dbbenchv1alpha1.LabelSuite] != "nightly-chain" {
		t.Fatalf("bisections %d (%+v), run points to %q", len(got), got, st.Bisection)
	}
	s := got[0].Spec
	if s.Good.Image != build(3) || s.Bad.Image != build(6) || len(s.Candidates) != 2 || s.Candidates[0].Image != build(4) || s.Candidates[1].Image != build(5) ||
		fmt.Sprint(s.Metrics) != "[Throughput]" || fmt.Sprint(s.Judge.Steps) != "[point-query]" || s.Repeats != 3 {
		t.Fatalf("bisection spec %+v", s)
	}
	eventually(t, "the bisection's rule", func() string {
		var b dbbenchv1alpha1.BenchmarkBisection
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "night-6-bisect"}, &b); err != nil {
			return err.Error()
		}
		// The suite's definition of worse; its own significance level, not
		// the change-point scan's 0.001.
		if b.Status.Rule == nil || b.Status.Rule.MagnitudeRule != dbbenchv1alpha1.MagnitudeEstimated || b.Status.Rule.MinMagnitudePercent != 5 || b.Status.Rule.MaxPValue != "0.05" {
			return fmt.Sprintf("rule %+v", b.Status.Rule)
		}
		return ""
	})
	r = night(7, 8, 0.8)
	if got := bisections(); len(got) != 1 || r.Status.Regression == nil || r.Status.Regression.Bisection != "night-6-bisect" {
		t.Fatalf("night 7: %d bisections, run points to %+v", len(got), r.Status.Regression)
	}
}

// TestRegressedAgainstTheRunsBaselinePairedByBlock: a run without a suite
// judged against its own baseline (against Baseline), two versions × three
// repeats in blocks. The blocks differ by ±30 % (their nodes and times),
// 11.8 is 10 % slower than 10.11 in every block: paired by block the
// slowdown is found at point-query@4 (PairedBlocks), where the means'
// spread would hide it. A bisect with against Baseline is refused at apply.
func TestRegressedAgainstTheRunsBaselinePairedByBlock(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	r := minimalRun(ns, "sidebyside")
	r.Spec.Databases[0].Versions = []string{"10.11", "11.8"}
	r.Spec.Workload.Steps = []string{"point-query"}
	r.Spec.Workload.Threads = []int32{4}
	r.Spec.Workload.Repeats = 3
	r.Spec.Placement.MaxParallelCells = 6
	r.Spec.Placement.Blocks = dbbenchv1alpha1.BlocksRepeats
	r.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{Against: dbbenchv1alpha1.RegressAgainstBaseline, MinMagnitudePercent: 5}

	bad := r.DeepCopy()
	bad.Name = "sidebyside-bisect"
	bad.Spec.Regression.Bisect = &dbbenchv1alpha1.RegressionBisect{Candidates: []dbbenchv1alpha1.BisectionPoint{{Version: "11.8"}}}
	if err := k8sClient.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "regression.bisect: not with against Baseline") {
		t.Fatalf("a bisect against the run's baseline: got %v", err)
	}
	if err := k8sClient.Create(ctx, r); err != nil {
		t.Fatalf("creating the run (against Baseline needs no suite): %v", err)
	}

	// Each cell's document is its own (its version and repeat: the
	// manifest's combinations come from the documents).
	block := map[int32]float64{1: 0.7, 2: 1.0, 3: 1.3}
	docs := map[string]string{}
	for _, c := range matrix.Expand(r) {
		f := block[c.Block] * (1 + 0.005*float64(c.Block%2)) // a little noise within blocks
		if c.Version == "11.8" {
			f *= 0.9
		}
		docs[c.ObjectBase] = cellDocument(results.Cell{Name: c.Name, Database: c.Database.Name, Engine: "mariadb", Version: c.Version,
			Config: c.Config.Name, Repeat: int(c.Repeat), Attempt: 1}, f)
	}
	driveWith(t, ns, r.Name, "the run to finish", finishedRun, func(job *batchv1.Job) string {
		return docs[job.Labels[dbbenchv1alpha1.LabelCell]]
	})

	run := kubetest.GetRun(t, k8sClient, ns, r.Name)
	c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionRegressed)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != dbbenchv1alpha1.ReasonRegressed {
		t.Fatalf("Regressed %+v, want True", c)
	}
	st := run.Status.Regression
	if st == nil || len(st.Regressed) != 1 || st.Regressed[0].Cell != "maria-11.8-default" || st.Regressed[0].Threads != 4 ||
		len(st.Methods) != 1 || st.Methods[0].Method != dbbenchv1alpha1.MethodPairedBlocks || st.Methods[0].Detail != "paired by block (3 blocks)" ||
		len(st.ComparedTo) != 1 || st.ComparedTo[0] != r.Name {
		t.Fatalf("regression status %+v", st)
	}
	if got := st.Regressed[0].ChangePercent; got != "-10.0" && got != "-9.9" && got != "-10.1" {
		t.Errorf("change %s %%, want the per-block -10 %%", got)
	}
}

// writtenVerdict reads the verdict document and the JUnit XML the
// controller wrote beside a finished run's manifest.
func writtenVerdict(t *testing.T, ns, run string) (triage.Verdict, string) {
	t.Helper()
	r := kubetest.GetRun(t, k8sClient, ns, run)
	if r.Status.Results == nil || r.Status.Results.ConfigMap == "" {
		t.Fatalf("%s: no results ConfigMap in the status", run)
	}
	var cm corev1.ConfigMap
	if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: r.Status.Results.ConfigMap}, &cm); err != nil {
		t.Fatalf("%s: results ConfigMap: %v", run, err)
	}
	v, err := triage.UnmarshalVerdict([]byte(cm.Data[agentapi.RunResultKeyVerdict]))
	if err != nil {
		t.Fatalf("%s: %s: %v", run, agentapi.RunResultKeyVerdict, err)
	}
	return v, cm.Data[agentapi.RunResultKeyJUnit]
}
