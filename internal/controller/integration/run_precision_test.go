package integration_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/intstr"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
)

// precisionRun compares two versions (10.11 the baseline, 11.8) on one
// step with adaptive repeats, one cell at a time so that the order the
// cells start in is the order the controller chose.
func precisionRun(ns, name string, target intstr.IntOrString, minRepeats, maxRepeats int32) *dbbenchv1alpha1.BenchmarkRun {
	run := minimalRun(ns, name)
	run.Spec.Databases[0].Versions = []string{"10.11", "11.8"}
	run.Spec.Workload.Steps = []string{"point-query"}
	run.Spec.Workload.Threads = []int32{1, 4}
	run.Spec.Workload.Precision = &dbbenchv1alpha1.PrecisionSpec{TargetPercent: target, MinRepeats: minRepeats, MaxRepeats: maxRepeats}
	return run
}

// roundScale is the fake agents' point-query@4 throughput (× 4000) of
// each version per round; rounds past the list repeat its last value.
type roundScale map[string][]float64

func (s roundScale) of(cell string) float64 {
	i := strings.LastIndex(cell, "-r")
	round, err := strconv.Atoi(cell[i+2:])
	if err != nil {
		panic(fmt.Sprintf("cell %q has no round", cell))
	}
	for version, xs := range s {
		if strings.Contains(cell, "-"+version+"-") {
			return xs[min(round, len(xs))-1]
		}
	}
	panic(fmt.Sprintf("cell %q has no scale", cell))
}

// drivePrecision plays kubelet, agent and Job controller like driveUntil,
// with each cell's throughput from scale, until done holds; it returns the
// cells in the order their client Jobs were first seen (with one cell at
// a time, the order they ran in) appended to seen.
func drivePrecision(t *testing.T, ns, name string, scale roundScale, seen []string, done func(*dbbenchv1alpha1.BenchmarkRun) bool) []string {
	t.Helper()
	// Up to ten cells one at a time, each several passes: on an idle
	// machine about 25 s, minutes under make test-stress. A cell whose
	// status entry never names its results ConfigMap is never played (its
	// Job's cell is not found): that was the last-round stall make
	// test-stress found, an adopted cell without resultConfigMap
	// (TestAdoptedPendingCellRecordsItsResultConfigMap).
	deadline := time.Now().Add(6 * driveTimeout)
	for time.Now().Before(deadline) {
		pods := dbPods(t, ns, name)
		jobs := kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: name})
		run := kubetest.GetRun(t, k8sClient, ns, name)
		if done(run) {
			return seen
		}
		cellOf := map[string]string{}
		for _, cs := range run.Status.Cells {
			cellOf[strings.TrimSuffix(cs.ResultConfigMap, "-result")] = cs.Name
		}
		for _, pod := range pods {
			if pod.DeletionTimestamp == nil && pod.Status.PodIP == "" {
				markPodReady(t, &pod, "node-1", "10.88.0.20")
			}
		}
		for _, job := range jobs {
			if len(job.Status.Conditions) > 0 {
				continue
			}
			cell, ok := cellOf[job.Labels[dbbenchv1alpha1.LabelCell]]
			if !ok {
				continue // the status write naming it is still to come
			}
			if !slices.Contains(seen, cell) {
				seen = append(seen, cell)
			}
			attempt, _ := strconv.Atoi(job.Labels[dbbenchv1alpha1.LabelAttempt])
			agentCompletes(t, ns, &job, attempt, scale.of(cell))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out driving run %s: %s\n%s", name, cellPhases(kubetest.GetRun(t, k8sClient, ns, name)), childrenState(t, ns, name))
	return nil
}

// childrenState describes a run's cells, client Jobs and database pods for
// a failure message: what the driver saw when it gave up.
func childrenState(t *testing.T, ns, name string) string {
	t.Helper()
	var b strings.Builder
	run := kubetest.GetRun(t, k8sClient, ns, name)
	for _, cs := range run.Status.Cells {
		fmt.Fprintf(&b, "  cell %s %s a%d result=%q\n", cs.Name, cs.Phase, cs.Attempts, cs.ResultConfigMap)
	}
	for _, j := range kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: name}) {
		fmt.Fprintf(&b, "  job %s cell=%s attempt=%s conditions=%d deleting=%v\n", j.Name, j.Labels[dbbenchv1alpha1.LabelCell], j.Labels[dbbenchv1alpha1.LabelAttempt], len(j.Status.Conditions), j.DeletionTimestamp != nil)
	}
	for _, pod := range dbPods(t, ns, name) {
		fmt.Fprintf(&b, "  pod %s ip=%q deleting=%v\n", pod.Name, pod.Status.PodIP, pod.DeletionTimestamp != nil)
	}
	if p := run.Status.Precision; p != nil {
		fmt.Fprintf(&b, "  precision %+v\n", *p)
	}
	return b.String()
}

func succeeded(run *dbbenchv1alpha1.BenchmarkRun) bool {
	return meta.IsStatusConditionTrue(run.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) ||
		meta.IsStatusConditionTrue(run.Status.Conditions, dbbenchv1alpha1.ConditionFailed)
}

// Noisy first rounds, steady ones after: the controller adds rounds, each
// in the reverse order of the one before, until point-query@4's ratio is
// within ±15 % (round 5: the half-widths are 155, 36, 21 and 15 % after
// rounds 2 to 5). The manager restarts once the third round is added; the
// new one continues from status.precision without repeating a cell.
func TestPrecisionAddsReversedRoundsUntilTargetMet(t *testing.T) {
	ns := newNamespace(t)
	first := startManager(t, nil)
	run := precisionRun(ns, "adaptive", intstr.FromInt32(15), 2, 8)
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	scale := roundScale{"10.11": {1.0, 1.3, 1.15}, "11.8": {1.25, 0.95, 1.1}}

	seen := drivePrecision(t, ns, run.Name, scale, nil, func(r *dbbenchv1alpha1.BenchmarkRun) bool {
		return r.Status.Precision != nil && r.Status.Precision.Rounds >= 3
	})
	first.stop()
	mid := kubetest.GetRun(t, k8sClient, ns, run.Name)
	if p := mid.Status.Precision; p.Rounds != 3 || p.RoundsJudged != 2 || p.State != dbbenchv1alpha1.PrecisionMeasuring || len(mid.Status.Cells) != 6 {
		t.Fatalf("after round 2: precision %+v, %d cells", p, len(mid.Status.Cells))
	}
	startManager(t, nil)
	seen = drivePrecision(t, ns, run.Name, scale, seen, succeeded)

	run = kubetest.GetRun(t, k8sClient, ns, run.Name)
	if run.Status.Phase != dbbenchv1alpha1.RunSucceeded {
		t.Fatalf("run %s: %s", run.Status.Phase, cellPhases(run))
	}
	a, b := "maria-10.11-default", "maria-11.8-default"
	var want []string
	for r := 1; r <= 5; r++ {
		pair := []string{fmt.Sprintf("%s-r%d", a, r), fmt.Sprintf("%s-r%d", b, r)}
		if r%2 == 0 {
			slices.Reverse(pair)
		}
		want = append(want, pair...)
	}
	if !slices.Equal(seen, want) {
		t.Errorf("cells ran in the order\n  %v\nwant\n  %v", seen, want)
	}
	var names []string
	for _, c := range run.Status.Cells {
		names = append(names, c.Name)
		if c.Attempts != 1 {
			t.Errorf("cell %s took %d attempts", c.Name, c.Attempts)
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("status.cells %v, want %v", names, want)
	}
	perCell := map[string]int{}
	for _, j := range kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name}) {
		perCell[j.Labels[dbbenchv1alpha1.LabelCell]]++
	}
	if len(perCell) != 10 {
		t.Errorf("jobs for %d cells, want 10: %v", len(perCell), perCell)
	}
	p := run.Status.Precision
	if p.State != dbbenchv1alpha1.PrecisionTargetMet || p.Rounds != 5 || p.RoundsJudged != 5 || p.HalfWidthPercent != "14.77" || p.Reached != "±14.77% after 5/8" {
		t.Errorf("precision %+v, want the target met after 5 rounds at ±14.77 %%", p)
	}
	// point-query@1 is the same in every cell (a zero-width interval);
	// point-query@4 carries the noise.
	wantPoints := []dbbenchv1alpha1.PrecisionPoint{
		{Step: "point-query", Threads: 1, HalfWidthPercent: "0.00", Combination: b, Met: true},
		{Step: "point-query", Threads: 4, HalfWidthPercent: "14.77", Combination: b, Met: true},
	}
	if !slices.Equal(p.Points, wantPoints) {
		t.Errorf("points %+v, want %+v", p.Points, wantPoints)
	}
}

// Noise that never settles: the run stops after maxRepeats rounds, says the
// target was not met, and the regression verdict states the precision it
// had.
func TestPrecisionStopsAtMaxRepeats(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	run := precisionRun(ns, "capped", intstr.FromString("0.5"), 2, 3)
	run.Spec.Suite = "capped"
	run.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{Against: dbbenchv1alpha1.RegressAgainstPreviousRun}
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	scale := roundScale{"10.11": {1.0, 1.3, 1.0}, "11.8": {1.3, 1.0, 1.3}}
	seen := drivePrecision(t, ns, run.Name, scale, nil, succeeded)
	run = kubetest.GetRun(t, k8sClient, ns, run.Name)
	if run.Status.Phase != dbbenchv1alpha1.RunSucceeded || len(run.Status.Cells) != 6 || len(seen) != 6 {
		t.Fatalf("run %s with %d cells (%d ran), want 6: %s", run.Status.Phase, len(run.Status.Cells), len(seen), cellPhases(run))
	}
	p := run.Status.Precision
	if p.State != dbbenchv1alpha1.PrecisionMaxRepeatsReached || p.Rounds != 3 || p.RoundsJudged != 3 {
		t.Fatalf("precision %+v, want MaxRepeatsReached after 3 rounds", p)
	}
	hw, err := strconv.ParseFloat(p.HalfWidthPercent, 64)
	if err != nil || !(hw > 0.5) || !strings.HasPrefix(p.Reached, "±"+p.HalfWidthPercent+"% after 3/3") {
		t.Errorf("half-width %q (%v), reached %q", p.HalfWidthPercent, err, p.Reached)
	}
	// The verdict was judged at that precision: status.precision says it to
	// programs (checked above), the Regressed message to people.
	if c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionRegressed); c == nil {
		t.Errorf("no Regressed condition: %+v", run.Status.Conditions)
	}
}
