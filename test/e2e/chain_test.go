//go:build e2e

package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/store"
)

// chainNights are the builds a nightly suite runs, night by night: steady
// on t1…t4, then t7 (durable commits since t6: the first slow night) and
// t8. The builds between the last steady night and the first slow one are
// t4 … t7: the bisection's good t4, candidates t5 and t6, bad t7.
var chainNights = []int{1, 2, 2, 3, 3, 4, 7, 8}

// steadyNights is how many nights run before the first slow one.
const steadyNights = 6

// TestChainFromANightlyDropToAnExplainedBuild: the whole chain with no
// command after the applies. A nightly suite judged against change points
// (the Estimated rule, as a suite that wants power at few runs sets it),
// every build listed in regression.bisect.builds, each night one applied
// run naming that night's build, as a CI job would. The first slow night is
// suspected, the next confirms it and names the runs around the change
// point; the bisection it creates judges with the suite's rule, measures
// the builds between those runs' builds, names t6 with its probability, and
// is explained by the engine counters that moved and, from an explain
// round with profiles, the functions whose share of the server's CPU moved.
// The bisection's page in the object store says how it started and links
// the run's report, whose verdict links back. Not parallel: other tests'
// load would be noise in the series.
func TestChainFromANightlyDropToAnExplainedBuild(t *testing.T) {
	tier.Long(t)
	began := time.Now()
	ns := newNamespace(t, "chain")
	// The explain round's profiler needs privileged pods (docs/explain.md).
	patch := []byte(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"privileged"}}}`)
	if err := k8sClient.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("labelling namespace %s: %v", ns, err)
	}
	var objects *store.Store
	var s3 *dbbenchv1alpha1.S3Output
	if endpoint := envOr("DBBENCH_E2E_S3_ENDPOINT", ""); endpoint != "" {
		objects, s3 = objectStore(t, endpoint, ns, "chain-"+ns, "suites")
	}
	image := func(i int) string { return fmt.Sprintf("%s:t%d", bisectRepo, i) }
	var builds []dbbenchv1alpha1.BisectionPoint
	for i := 1; i <= 8; i++ {
		builds = append(builds, dbbenchv1alpha1.BisectionPoint{Image: image(i)})
	}
	night := func(i, build int) *dbbenchv1alpha1.BenchmarkRun {
		t.Helper()
		run := smallRun(ns, fmt.Sprintf("night-%d", i), "nightly")
		run.Spec.Suite = "chain"
		db := &run.Spec.Databases[0]
		db.Image, db.ImagePullPolicy = image(build), corev1.PullNever
		// The image's baked-in drop-in decides durability.
		db.Configs = nil
		run.Spec.Workload.Steps = []string{"update-index"}
		run.Spec.Workload.Threads = []int32{1}
		run.Spec.Workload.TableSize = 1000
		run.Spec.Workload.WriteSeconds = 4
		run.Spec.Placement.MaxParallelCells = 2
		// The quota, not the shared machine, sets a fast build's
		// throughput (as in TestRegressionVerdictsOnRealRuns): a steady
		// series, so one slow night stands out; the durable builds are
		// bound by their log flushes far below it.
		db.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(suiteCPULimit)}}
		run.Spec.Client.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(suiteCPULimit)}}
		if s3 != nil {
			run.Spec.Output.S3 = s3
		}
		run.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{
			Against: dbbenchv1alpha1.RegressAgainstChangePoints, MinMagnitudePercent: 30,
			MagnitudeRule: dbbenchv1alpha1.MagnitudeEstimated, MaxPValue: "0.01",
			Bisect: &dbbenchv1alpha1.RegressionBisect{Builds: builds, Repeats: 2, MaxCells: 40,
				Explain: dbbenchv1alpha1.BisectionExplainSpec{Profile: true, Seconds: 5}},
		}
		createRun(t, run)
		run = waitForRunFinished(t, ns, run.Name, runTimeout)
		requireSucceeded(t, run)
		c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionRegressed)
		t.Logf("[%s] night %d (t%d): %s; Regressed=%s %s", time.Since(began).Round(time.Second), i, build, runSummary(run), c.Status, c.Reason)
		return run
	}
	var last *dbbenchv1alpha1.BenchmarkRun
	for i, b := range chainNights {
		last = night(i+1, b)
		c := meta.FindStatusCondition(last.Status.Conditions, dbbenchv1alpha1.ConditionRegressed)
		switch {
		case i < steadyNights && c.Status != metav1.ConditionFalse:
			t.Fatalf("steady night %d: Regressed=%s %s: %s", i+1, c.Status, c.Reason, c.Message)
		case i == steadyNights && (c.Status != metav1.ConditionFalse || c.Reason != "RegressionSuspected"):
			t.Fatalf("the first slow night: Regressed=%s %s, want False RegressionSuspected: %s", c.Status, c.Reason, c.Message)
		case i == steadyNights+1 && c.Status != metav1.ConditionTrue:
			t.Fatalf("the second slow night: Regressed=%s %s, want True: %s", c.Status, c.Reason, c.Message)
		}
	}
	st := last.Status.Regression
	since, before := fmt.Sprintf("night-%d", steadyNights+1), fmt.Sprintf("night-%d", steadyNights)
	if st == nil || len(st.Regressed) == 0 || st.Regressed[0].Since != since || st.Regressed[0].LastBefore != before || st.Bisection == "" {
		t.Fatalf("the confirming night's regression status %+v: want the change point at %s (after %s) and a bisection", st, since, before)
	}

	// From here on nothing is typed: the bisection runs and explains.
	b := &dbbenchv1alpha1.BenchmarkBisection{}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := yaml.Marshal(b)
			t.Logf("bisection as last read:\n%s", out)
		}
	})
	eventually(t, bisectTimeout, "the bisection to localize and explain", func() string {
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: st.Bisection}, b); err != nil {
			return err.Error()
		}
		l := meta.FindStatusCondition(b.Status.Conditions, dbbenchv1alpha1.BisectionConditionLocalized)
		e := meta.FindStatusCondition(b.Status.Conditions, dbbenchv1alpha1.BisectionConditionExplained)
		switch {
		case l == nil || l.Status == metav1.ConditionUnknown:
			return fmt.Sprintf("searching: round %d, %d cells", b.Status.RoundCount, b.Status.CellsUsed)
		case l.Status == metav1.ConditionFalse:
			return "done: Localized=False " + l.Reason
		case e == nil || e.Status == metav1.ConditionUnknown:
			return "explaining"
		}
		return ""
	})
	l := meta.FindStatusCondition(b.Status.Conditions, dbbenchv1alpha1.BisectionConditionLocalized)
	e := meta.FindStatusCondition(b.Status.Conditions, dbbenchv1alpha1.BisectionConditionExplained)
	t.Logf("[%s] %s: Localized=%s (%s) %s; Explained=%s (%s) %s", time.Since(began).Round(time.Second), b.Name, l.Status, l.Reason, l.Message, e.Status, e.Reason, e.Message)
	for _, r := range b.Status.Rounds {
		t.Logf("  round %d %s %v references %v, %d cells", r.Index, r.Kind, r.Points, r.References, r.Cells)
	}
	s := b.Spec
	if s.Good.Image != image(4) || s.Bad.Image != image(7) || len(s.Candidates) != 2 || s.Candidates[0].Image != image(5) || s.Candidates[1].Image != image(6) {
		t.Fatalf("bisection spec good %v bad %v candidates %v: want t4 … t7", s.Good, s.Bad, s.Candidates)
	}
	if r := b.Status.Rule; r == nil || r.MagnitudeRule != dbbenchv1alpha1.MagnitudeEstimated || r.MinMagnitudePercent != 30 {
		t.Fatalf("the bisection's rule %+v: want the suite's (Estimated, 30 %%)", r)
	}
	conf, _ := strconv.ParseFloat(b.Status.Confidence, 64)
	if l.Status != metav1.ConditionTrue || b.Status.FirstBad != image(6) || b.Status.LastGood != image(5) || conf < 0.9 {
		t.Fatalf("Localized=%s firstBad %q lastGood %q confidence %q: want t6 after t5 at 0.9 or more", l.Status, b.Status.FirstBad, b.Status.LastGood, b.Status.Confidence)
	}
	ex := b.Status.Explanation
	if e.Status != metav1.ConditionTrue || ex == nil || len(ex.Counters) == 0 || ex.Round == nil {
		t.Fatalf("Explained=%s %s, explanation %+v: want counters and an explain round", e.Status, e.Message, ex)
	}
	for _, c := range ex.Counters {
		t.Logf("  counter %s: %s → %s per op (×%s)", c.Name, c.LastGood, c.FirstBad, c.Ratio)
	}
	for _, f := range ex.Functions {
		t.Logf("  function %s: %s%% → %s%% (%s points)", f.Function, f.LastGoodSelfPercent, f.FirstBadSelfPercent, f.ChangePoints)
	}
	// Durable commits: the redo log is flushed per transaction.
	moved := map[string]bool{}
	for _, c := range ex.Counters {
		moved[c.Name] = true
	}
	if !moved["Innodb_os_log_fsyncs"] && !moved["Innodb_data_fsyncs"] && !moved["Innodb_log_writes"] {
		t.Errorf("no redo-log counter among the explanation's %v", ex.Counters)
	}
	if len(ex.Functions) == 0 {
		t.Errorf("the explain round profiled both builds but the explanation names no function (notes %v)", ex.Notes)
	}
	if objects == nil {
		return
	}
	// One page: the bisection's report says how it started and links the
	// run's report, which opens with its verdict and links back.
	eventually(t, 2*time.Minute, "the bisection's report in the bucket", func() string {
		page, err := objects.Get(ctx, objects.Layout().BisectionKey("chain", b.Name, store.ObjectReport))
		if err != nil {
			return err.Error()
		}
		for _, want := range []string{"How it started", since + " is the first run of the new level", `href="../../` + last.Name + `/report.html"`, "Innodb_"} {
			if !strings.Contains(string(page), want) {
				return "the page lacks " + want
			}
		}
		return ""
	})
	page, err := objects.Get(ctx, objects.Layout().RunKey("chain", last.Name, store.ObjectReport))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "Regression verdict") || !strings.Contains(string(page), `href="../_bisections/`+b.Name+`/report.html"`) {
		t.Errorf("the run's report has no verdict section linking %s", b.Name)
	}
	t.Logf("the chain took %s, %d bisection cells", time.Since(began).Round(time.Second), b.Status.CellsUsed)
}
