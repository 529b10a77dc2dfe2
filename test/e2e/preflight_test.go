//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/specs"
)

// preflightTimeout bounds a run that stops in its pre-flight: two server
// starts side by side (one of which exits at once) on a busy machine, far
// less than one cell of smallRun with its load and steps.
const preflightTimeout = 4 * time.Minute

// TestPreflightStopsAMisspeltVariant: the real MariaDB image with two config
// variants, the second misspelling innodb_buffer_pool_size. The pre-flight
// starts both pairs; MariaDB refuses the second's option and exits, so the
// run fails before the first cell's load, with a PreflightPassed condition
// naming that variant and MariaDB's own "unknown variable" line. The good
// pair passes (its server answers with its settings), and how long it took
// is the price of the pre-flight per pair.
func TestPreflightStopsAMisspeltVariant(t *testing.T) {
	tier.Core(t)
	t.Parallel()
	ns := newNamespace(t, "preflight")
	run := smallRun(ns, "typo", "11.8")
	run.Spec.Databases[0].Configs = append(run.Spec.Databases[0].Configs, dbbenchv1alpha1.ConfigVariant{
		Name: "typo", Inline: ptr.To("[mysqld]\ninnodb_bufer_pool_size=64M\n"),
	})
	// Two repeats: four cells for two slots, so the cells would come in
	// waves and the pre-flight runs (with every cell at once it is skipped).
	run.Spec.Workload.Repeats = 2
	createRun(t, run)
	start := time.Now()
	run = waitForRunFinished(t, ns, run.Name, preflightTimeout)
	total := time.Since(start).Round(time.Second)
	t.Logf("the failed run took %s from creation to Failed", total)
	fmt.Printf("e2e TestPreflightStopsAMisspeltVariant: the failed run took %s from creation to Failed\n", total)

	if run.Status.Phase != dbbenchv1alpha1.RunFailed {
		t.Fatalf("run ended %s, want Failed: %s", run.Status.Phase, runSummary(run))
	}
	pf := run.Status.Preflight
	if pf == nil || pf.Phase != dbbenchv1alpha1.PreflightFailed || len(pf.Pairs) != 2 {
		t.Fatalf("status.preflight = %+v, want phase Failed with 2 pairs", pf)
	}
	good, bad := pf.Pairs[0], pf.Pairs[1]
	if good.Name != "mariadb-11.8-small" || good.Phase != dbbenchv1alpha1.CellSucceeded {
		t.Errorf("pair %s is %s (%s), want mariadb-11.8-small Succeeded", good.Name, good.Phase, good.Message)
	}
	if good.StartTime != nil && good.CompletionTime != nil {
		cost := good.CompletionTime.Sub(good.StartTime.Time).Round(time.Second)
		t.Logf("the good pair's pre-flight (server start and config check) took %s", cost)
		fmt.Printf("e2e TestPreflightStopsAMisspeltVariant: the good pair's pre-flight took %s\n", cost)
	}
	if bad.Name != "mariadb-11.8-typo" || bad.Phase != dbbenchv1alpha1.CellFailed || bad.Reason != dbbenchv1alpha1.ReasonConfigRejected {
		t.Errorf("pair %s is %s with reason %s, want mariadb-11.8-typo Failed with %s: %s",
			bad.Name, bad.Phase, bad.Reason, dbbenchv1alpha1.ReasonConfigRejected, bad.Message)
	}

	cond := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionPreflightPassed)
	if cond == nil || cond.Status != "False" || cond.Reason != dbbenchv1alpha1.ReasonPreflightFailed {
		t.Fatalf("condition PreflightPassed = %+v, want False with reason %s", cond, dbbenchv1alpha1.ReasonPreflightFailed)
	}
	t.Logf("PreflightPassed: %s", cond.Message)
	// The text is the contract: the condition names every failing pair and
	// quotes the server's own "unknown variable" line to the user (the
	// pairs' reasons are checked above), and names no pair that passed.
	for _, want := range []string{"mariadb-11.8-typo", "unknown variable 'innodb_bufer_pool_size=64M'"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("condition message does not contain %q: %s", want, cond.Message)
		}
	}
	if strings.Contains(cond.Message, "mariadb-11.8-small") {
		t.Errorf("condition message names the pair that passed: %s", cond.Message)
	}
	if failed := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionFailed); failed == nil || failed.Reason != dbbenchv1alpha1.ReasonPreflightFailed {
		t.Errorf("condition Failed = %+v, want reason %s", failed, dbbenchv1alpha1.ReasonPreflightFailed)
	}

	// No cell started: no attempt, no client Job, no database pod.
	for _, cs := range run.Status.Cells {
		if cs.Phase != dbbenchv1alpha1.CellPending || cs.Attempts != 0 {
			t.Errorf("cell %s is %s after %d attempts, want Pending and never started", cs.Name, cs.Phase, cs.Attempts)
		}
	}
	for _, c := range matrix.Expand(run) {
		if pods := kubetest.ListPods(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelCell: c.ObjectBase}); len(pods) > 0 {
			t.Errorf("cell %s has pods: %s", c.Name, pods[0].Name)
		}
		if jobs := kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelCell: c.ObjectBase}); len(jobs) > 0 {
			t.Errorf("cell %s has client Jobs: %s", c.Name, jobs[0].Name)
		}
	}
	// The pre-flight's database pods go with it.
	eventually(t, time.Minute, "the pre-flight's pods to go", func() string {
		var left []string
		for _, c := range matrix.PreflightCells(run) {
			for _, p := range kubetest.ListPods(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelCell: c.ObjectBase, dbbenchv1alpha1.LabelRole: specs.RoleDatabase}) {
				if p.DeletionTimestamp == nil {
					left = append(left, p.Name)
				}
			}
		}
		if len(left) > 0 {
			return strings.Join(left, ", ")
		}
		return ""
	})
}
