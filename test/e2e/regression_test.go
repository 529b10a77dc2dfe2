//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/tier"
)

// The suite's database CPU limit and the calibrated slowdown's share of it.
// The quota, not the machine, sets the server's throughput: 4 client
// threads of a CPU-heavy read keep 500m saturated even when other work
// takes part of the two cores, so throughput is (quota / CPU per query),
// steady between runs, and 75 % of the quota gives about 75 % of the QPS.
// 85 % passed 3 of 3 runs at load 12-18 but failed under heavier load,
// where the A/A pair itself drifted to 0.95 and the slowdown measured 0.91
// against it; 75 % failed once in a fresh-clone CI, where one of night-2's
// three repeats measured 0.73 of the others (CV 13 %) and 0.76 was then
// within its noise. 50 % stays past the 5 % magnitude with such a repeat.
const (
	suiteCPULimit   = "500m"
	slowdownPercent = 50
)

// TestRegressionVerdictsOnRealRuns: a nightly suite of three real runs with 3
// repeats each, judged against the previous run at the default magnitude
// (5 %). The first has no history; the second is the same spec, an A/A pair
// (Regressed=False); the third runs the same config variant with a CPU limit
// scaled to 50 % (configs[].cpuScalePercent), a slowdown the server cannot
// see (Regressed=True, every regressed point in that cell). Each run's
// repeats give the between-run test its variance. The test is not parallel:
// the other tests' load would be noise in the comparison. It logs each
// point's ratio, the realised slowdown and its wall time.
func TestRegressionVerdictsOnRealRuns(t *testing.T) {
	tier.Long(t)
	began := time.Now()
	ns := newNamespace(t, "regress")
	qps := map[string]map[string][]float64{} // run → step@threads → per-repeat QPS
	nightly := func(name string, scale *int32) *dbbenchv1alpha1.BenchmarkRun {
		t.Helper()
		run := smallRun(ns, name, "10.11")
		run.Spec.Suite = "nightly"
		db := &run.Spec.Databases[0]
		db.Configs[0].Name = "tuned"
		db.Configs[0].CPUScalePercent = scale
		db.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(suiteCPULimit)}}
		// The client's CPU request gives it CPU shares: a best-effort
		// client on a busy node would be the bottleneck, and the server's
		// quota would not bind. The server's request defaults to its limit.
		run.Spec.Client.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(suiteCPULimit)}}
		run.Spec.Workload.Steps = []string{"read-only-count"}
		run.Spec.Workload.Threads = []int32{4}
		run.Spec.Workload.Repeats = 3
		run.Spec.Workload.ReadSeconds, run.Spec.Workload.WriteSeconds = 8, 8
		run.Spec.Workload.WarmupSeconds = ptr.To[int32](2)
		// One cell at a time: a parallel cell would share the node's CPU.
		run.Spec.Placement.MaxParallelCells = 1
		run.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{Against: dbbenchv1alpha1.RegressAgainstPreviousRun}
		createRun(t, run)
		start := time.Now()
		run = waitForRunFinished(t, ns, name, runTimeout)
		t.Logf("%s finished in %s: %s", name, time.Since(start).Round(time.Second), runSummary(run))
		requireSucceeded(t, run)
		qps[name] = map[string][]float64{}
		for _, cs := range run.Status.Cells {
			doc := resultDocument(t, ns, cs)
			for _, s := range doc.Steps {
				k := fmt.Sprintf("%s@%d", s.Step, s.Threads)
				qps[name][k] = append(qps[name][k], s.SteadyQPS)
				t.Logf("%s %s %s: %.1f QPS", name, cs.Name, k, s.SteadyQPS)
			}
		}
		return run
	}
	verdict := func(run *dbbenchv1alpha1.BenchmarkRun) *metav1.Condition {
		c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionRegressed)
		if c == nil {
			t.Fatalf("%s finished without a Regressed condition: %+v", run.Name, run.Status.Conditions)
		}
		t.Logf("%s: Regressed=%s %s: %s", run.Name, c.Status, c.Reason, c.Message)
		return c
	}
	ratios := func(base, cur string) {
		for k, after := range qps[cur] {
			before := qps[base][k]
			if len(before) > 0 && len(after) > 0 {
				t.Logf("%s / %s %s: ratio of means %.3f (%v vs %v)", cur, base, k, mean(after)/mean(before), after, before)
			}
		}
	}
	defer func() { t.Logf("the regression test took %s", time.Since(began).Round(time.Second)) }()

	if c := verdict(nightly("night-1", nil)); c.Status != metav1.ConditionFalse || c.Reason != dbbenchv1alpha1.ReasonNoHistory {
		t.Fatalf("first run of the suite: want Regressed=False NoHistory")
	}

	second := nightly("night-2", nil)
	ratios("night-1", "night-2")
	if c := verdict(second); c.Status != metav1.ConditionFalse || c.Reason != dbbenchv1alpha1.ReasonNoRegression {
		t.Fatalf("A/A pair (unchanged spec): want Regressed=False NoRegression against night-1")
	}
	if st := second.Status.Regression; st == nil || st.ComparedPairs != 1 || len(st.ComparedTo) == 0 || st.ComparedTo[0] != "night-1" {
		t.Fatalf("unchanged spec compared %+v, want 1 pair (1 step × 1 thread count)", st)
	}
	// Regressed=False says what it could have missed: the change its one
	// pair finds with 80 % power at the CV of the repeats.
	if st := second.Status.Regression; st.DetectableChangePercent == "" {
		t.Errorf("A/A verdict without its sensitivity: detectableChangePercent %q, detectableAt %q", st.DetectableChangePercent, st.DetectableAt)
	} else {
		t.Logf("A/A verdict's sensitivity: %s%% at %s", st.DetectableChangePercent, st.DetectableAt)
	}

	third := nightly("night-3", ptr.To[int32](slowdownPercent))
	ratios("night-2", "night-3")
	c := verdict(third)
	st := third.Status.Regression
	if c.Status != metav1.ConditionTrue || c.Reason != dbbenchv1alpha1.ReasonRegressed || st == nil || len(st.ComparedTo) == 0 || st.ComparedTo[0] != "night-2" {
		t.Fatalf("CPU limit at %d %%: want Regressed=True against night-2 at the default 5 %% magnitude", slowdownPercent)
	}
	if !slices.ContainsFunc(st.Methods, func(m dbbenchv1alpha1.RegressionMethodCount) bool {
		return m.Method == dbbenchv1alpha1.MethodBetweenRuns && m.Detail == "between runs (3+3 repeats)"
	}) {
		t.Errorf("the verdict did not use the between-run test of the repeats: %+v", st.Methods)
	}
	if len(st.Regressed) == 0 {
		t.Fatalf("no status.regression.regressed: %+v", st)
	}
	for _, r := range st.Regressed {
		t.Logf("regressed: %+v", r)
		if r.Cell != "mariadb-10.11-tuned" || r.Step != "read-only-count" || r.Threads != 4 {
			t.Errorf("regressed %s %s@%d, want mariadb-10.11-tuned read-only-count@4", r.Cell, r.Step, r.Threads)
		}
	}
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
