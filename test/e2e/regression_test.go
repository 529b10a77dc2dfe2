//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// The my.cnf of the suite's one config variant, "tuned", before and after a
// change that costs write throughput: durable commits (a redo log flush and
// a binary log sync per transaction) instead of a flush once a second.
const (
	tunedCnf   = "[mysqld]\ninnodb_buffer_pool_size=64M\ninnodb_flush_log_at_trx_commit=2\n"
	durableCnf = "[mysqld]\ninnodb_buffer_pool_size=64M\ninnodb_flush_log_at_trx_commit=1\nlog_bin=binlog\nsync_binlog=1\n"
)

// TestRegressedVerdictOnRealRuns: a nightly suite of three real runs, each
// judged against the previous one. The first has no history, the second is
// the same spec (Regressed=False), the third ships a config change that
// makes every commit durable (Regressed=True naming the write step at both
// thread counts, and not the read step). The test is not parallel: the
// other tests' load would be noise in the comparison.
func TestRegressedVerdictOnRealRuns(t *testing.T) {
	ns := newNamespace(t, "regress")
	nightly := func(name, cnf string) *dbbenchv1alpha1.BenchmarkRun {
		t.Helper()
		run := smallRun(ns, name, "10.11")
		run.Spec.Suite = "nightly"
		run.Spec.Databases[0].Configs = []dbbenchv1alpha1.ConfigVariant{{Name: "tuned", Inline: ptr.To(cnf)}}
		run.Spec.Workload.Steps = []string{"point-query", "update-index"}
		run.Spec.Workload.ReadSeconds, run.Spec.Workload.WriteSeconds = 6, 6
		run.Spec.Workload.WarmupSeconds = ptr.To[int32](2)
		// Big enough for the noise of short steps on two shared cores
		// (±40 % seen between identical runs), small enough for the cost of
		// durable commits (75–85 % slower on this machine's disk).
		run.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{Against: dbbenchv1alpha1.RegressAgainstPreviousRun, MinMagnitudePercent: 50}
		createRun(t, run)
		start := time.Now()
		run = waitForRunFinished(t, ns, name, runTimeout)
		t.Logf("%s finished in %s: %s", name, time.Since(start).Round(time.Second), runSummary(run))
		requireSucceeded(t, run)
		for _, cs := range run.Status.Cells {
			doc := resultDocument(t, ns, cs)
			for _, s := range doc.Steps {
				t.Logf("%s %s %s@%d: %.1f QPS", name, cs.Name, s.Step, s.Threads, s.SteadyQPS)
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

	if c := verdict(nightly("night-1", tunedCnf)); c.Status != metav1.ConditionFalse || c.Reason != "NoHistory" {
		t.Fatalf("first run of the suite: want Regressed=False NoHistory")
	}

	second := nightly("night-2", tunedCnf)
	if c := verdict(second); c.Status != metav1.ConditionFalse || c.Reason != "NoRegression" || !strings.Contains(c.Message, "run night-1") {
		t.Fatalf("unchanged spec: want Regressed=False NoRegression against night-1")
	}
	if st := second.Status.Regression; st == nil || st.ComparedPairs != 4 {
		t.Fatalf("unchanged spec compared %+v, want 4 pairs (2 steps × 2 thread counts)", st)
	}

	third := nightly("night-3", durableCnf)
	c := verdict(third)
	if c.Status != metav1.ConditionTrue || c.Reason != "Regressed" || !strings.Contains(c.Message, "run night-2") {
		t.Fatalf("durable commits: want Regressed=True against night-2")
	}
	st := third.Status.Regression
	if st == nil {
		t.Fatal("no status.regression")
	}
	got := map[string]bool{}
	for _, r := range st.Regressed {
		t.Logf("regressed: %+v", r)
		got[fmt.Sprintf("%s@%d", r.Step, r.Threads)] = true
		if r.Cell != "mariadb-10.11-tuned" {
			t.Errorf("regressed cell %q, want mariadb-10.11-tuned", r.Cell)
		}
	}
	for _, want := range []string{"update-index@1", "update-index@2"} {
		if !got[want] {
			t.Errorf("status.regression.regressed %+v does not name %s", st.Regressed, want)
		}
		if !strings.Contains(c.Message, "mariadb-10.11-tuned "+want) {
			t.Errorf("the condition message does not name %s", want)
		}
	}
	for _, notWant := range []string{"point-query@1", "point-query@2"} {
		if got[notWant] {
			t.Errorf("status.regression.regressed names the read step %s, which durable commits do not slow down: %+v", notWant, st.Regressed)
		}
	}
}
