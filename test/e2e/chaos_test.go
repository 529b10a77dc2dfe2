//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/manager"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/specs"
	"github.com/dbbench/dbbench/pkg/store"
)

// Settings of TestManagerChaos, from the environment. The defaults are the
// short version that `make test` runs; `make bench-chaos` sets more kills.
const (
	envChaosSeed  = "CHAOS_SEED"
	envChaosKills = "CHAOS_KILLS"
	envChaosRuns  = "CHAOS_RUNS"

	defaultChaosKills = 5
	defaultChaosRuns  = 2

	// chaosSummaryPrefix starts the one summary line hack/bench-chaos.sh
	// picks out of the test's output.
	chaosSummaryPrefix = "CHAOS SUMMARY:"
)

// Moments a kill is aimed at, once a manager pod leads.
type killMoment int

const (
	// killAfterDelay: after a uniformly random delay of up to
	// chaosMaxDelay, anywhere in the runs' lives (a delay near 0 kills the
	// new leader while it resyncs every run and adopts their children).
	killAfterDelay killMoment = iota
	// killOnTransition: as soon as a cell changes phase or attempt, which
	// is when the manager has just created a cell's children and written
	// the status, and goes on with the next cell.
	killOnTransition
	// killOnResult: as soon as an agent's final result document is in its
	// cell's ConfigMap while the cell is not Succeeded yet: the pass that
	// reads it uploads the cell's objects to S3 and then writes the status.
	killOnResult
	// killOnChild: as soon as a new pod or Job of the runs appears: the
	// pass that created it writes the run's status only at its end, so
	// the kill tends to fall between the two.
	killOnChild
	killMoments
)

func (m killMoment) String() string {
	return [...]string{"after-delay", "on-transition", "on-result", "on-child"}[m]
}

const (
	chaosMaxDelay = 20 * time.Second
	// chaosTransitionWait bounds killOnTransition: a run that does not
	// change for this long is killed anyway.
	chaosTransitionWait = 40 * time.Second
	// chaosLeaderTimeout covers the Lease expiring (15 s by default), a
	// new pod starting and acquiring it on a busy machine.
	chaosLeaderTimeout = 3 * time.Minute
	chaosOrphanTimeout = 3 * time.Minute
)

// chaosSettings are the test's knobs, logged so that a failure can be
// replayed with the same schedule.
type chaosSettings struct {
	seed  uint64
	kills int
	runs  int
}

func chaosSettingsFromEnv(t *testing.T) chaosSettings {
	t.Helper()
	s := chaosSettings{seed: rand.Uint64(), kills: defaultChaosKills, runs: defaultChaosRuns}
	for _, e := range []struct {
		name string
		set  func(string) error
	}{
		{envChaosSeed, func(v string) (err error) { s.seed, err = strconv.ParseUint(v, 10, 64); return }},
		{envChaosKills, func(v string) (err error) { s.kills, err = strconv.Atoi(v); return }},
		{envChaosRuns, func(v string) (err error) { s.runs, err = strconv.Atoi(v); return }},
	} {
		if v := os.Getenv(e.name); v != "" {
			if err := e.set(v); err != nil {
				t.Fatalf("%s=%q: %v", e.name, v, err)
			}
		}
	}
	if s.kills < 1 || s.runs < 1 {
		t.Fatalf("%s=%d %s=%d: both must be at least 1", envChaosKills, s.kills, envChaosRuns, s.runs)
	}
	return s
}

// TestManagerChaos kills the manager (its pod deleted with grace period 0,
// so it gets no chance to finish anything) at seeded random moments while
// several runs with output.s3 are in progress: after a random delay, as a
// cell changes phase (status just written), as a new pod or Job appears
// (created, status not yet written), or as an agent's result appears (the
// manager uploading it to S3). When the runs
// started run out before the kills do, another wave of runs is started.
// Then: every run ends Succeeded; every cell has exactly one result
// ConfigMap, exactly one result document in the bucket, where the run's
// manifest says, and one client Job per attempt; and once the runs are
// deleted, none of their pods, Jobs, ConfigMaps, Secrets, Services, claims
// or agent RBAC objects remain. It prints one summary line (kills, runs,
// cells, failed runs, lost, duplicated, orphans) and fails unless the
// counts of failures are 0.
//
// CHAOS_SEED replays a schedule (the seed is logged), CHAOS_KILLS and
// CHAOS_RUNS (runs per wave) size it; make bench-chaos runs the long
// version. Not parallel: other tests' runs would see the kills too.
func TestManagerChaos(t *testing.T) {
	tier.Long(t)
	endpoint := s3Endpoint(t)
	cfg := chaosSettingsFromEnv(t)
	t.Logf("chaos: seed %d (%s=%d replays this schedule), %d kills, %d runs per wave", cfg.seed, envChaosSeed, cfg.seed, cfg.kills, cfg.runs)
	rng := rand.New(rand.NewPCG(cfg.seed, cfg.seed^0x9e3779b97f4a7c15))
	start := time.Now()

	ns := newNamespace(t, "chaos")
	// A prefix of the namespace's own: the bucket outlives the test.
	bucket, prefix := "e2e-chaos", ns
	st, s3 := objectStore(t, endpoint, ns, bucket, prefix)

	var names []string
	startWave := func() {
		for range cfg.runs {
			run := chaosRun(ns, fmt.Sprintf("chaos-%d", len(names)), s3)
			createRun(t, run)
			names = append(names, run.Name)
		}
		t.Logf("started runs %s", strings.Join(names[len(names)-cfg.runs:], ", "))
	}
	startWave()

	moments := map[killMoment]int{}
	for kill := 1; kill <= cfg.kills; kill++ {
		leader := waitForLeader(t)
		if allRunsFinished(t, ns, names) {
			startWave()
		}
		wave := names[len(names)-cfg.runs:]
		moment := killMoment(rng.IntN(int(killMoments)))
		delay := time.Duration(rng.Int64N(int64(chaosMaxDelay)))
		what := moment.String()
		var seen bool
		switch moment {
		case killAfterDelay:
			time.Sleep(delay)
			what += " " + delay.Round(100*time.Millisecond).String()
			seen = true
		case killOnTransition:
			seen = waitForCellTransition(t, ns, wave, chaosTransitionWait)
		case killOnResult:
			seen = waitForUnrecordedResult(t, ns, wave, chaosTransitionWait)
		case killOnChild:
			seen = waitForNewChild(t, ns, wave, chaosTransitionWait)
		}
		if !seen {
			// The wave finished (the manager may still be uploading its
			// manifests and reports) or the wait timed out.
			what += " (not seen: " + runsState(t, ns, wave) + ")"
		}
		moments[moment]++
		var pod corev1.Pod
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: systemNamespace, Name: leader}, &pod); err != nil {
			t.Fatalf("kill %d: getting the leader pod %s: %v", kill, leader, err)
		}
		if err := k8sClient.Delete(ctx, &pod, client.GracePeriodSeconds(0)); err != nil {
			t.Fatalf("kill %d: deleting the leader pod %s: %v", kill, leader, err)
		}
		t.Logf("[%s] kill %d/%d: manager pod %s (%s) while %s", time.Since(start).Round(time.Second), kill, cfg.kills, leader, what, runsSummary(t, ns, wave))
	}
	var byMoment []string
	for m := range killMoments {
		byMoment = append(byMoment, fmt.Sprintf("%s=%d", m, moments[m]))
	}
	t.Logf("kills by moment: %s", strings.Join(byMoment, " "))
	// The runs finish under a manager that stays up.
	waitForLeader(t)

	// A run that did not succeed is reported and counted, not fatal, so
	// that the summary line still comes out.
	var runs []*dbbenchv1alpha1.BenchmarkRun
	var failed int
	for _, name := range names {
		run := waitForRunFinished(t, ns, name, runTimeout)
		runs = append(runs, run)
		if run.Status.Phase != dbbenchv1alpha1.RunSucceeded {
			failed++
			t.Errorf("run %s ended %s, want Succeeded: %s; cell messages: %s", name, run.Status.Phase, runSummary(run), cellMessages(run))
			continue
		}
		eventually(t, 2*time.Minute, "ResultsUploaded=True of "+name, func() string {
			run = kubetest.GetRun(t, k8sClient, ns, name)
			c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded)
			if c == nil || c.Status != metav1.ConditionTrue {
				return "ResultsUploaded: " + conditionString(c)
			}
			return ""
		})
		runs[len(runs)-1] = run
	}

	var cells, lost, duplicated, retries int
	for _, run := range runs {
		c, l, d := countResults(t, st, run)
		cells, lost, duplicated = cells+c, lost+l, duplicated+d
		retries += int(run.Status.RetriesUsed)
	}

	for _, run := range runs {
		if err := k8sClient.Delete(ctx, run); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("deleting run %s: %v", run.Name, err)
		}
	}
	orphans := waitForNoChildren(t, ns, names, chaosOrphanTimeout)

	// retries (cell attempts beyond the first) are reported, not failed:
	// a kill must not cause one, but the database pods share two busy
	// cores with everything else and may be slow to become ready.
	summary := fmt.Sprintf("%s seed=%d kills=%d runs=%d cells=%d failed=%d lost=%d duplicated=%d orphans=%d retries=%d elapsed=%s",
		chaosSummaryPrefix, cfg.seed, cfg.kills, len(runs), cells, failed, lost, duplicated, len(orphans), retries, time.Since(start).Round(time.Second))
	t.Log(summary)
	// On stdout as well, alone on its line, for hack/bench-chaos.sh.
	fmt.Println(summary)
	if failed != 0 || lost != 0 || duplicated != 0 || len(orphans) != 0 {
		t.Errorf("failed runs %d, lost %d, duplicated %d, orphans %d (%s), want 0 each; replay with %s=%d",
			failed, lost, duplicated, len(orphans), strings.Join(orphans, ", "), envChaosSeed, cfg.seed)
	}
}

// chaosRun is a short run of two MariaDB cells, one at a time, whose
// results go to the object store as well.
func chaosRun(ns, name string, s3 *dbbenchv1alpha1.S3Output) *dbbenchv1alpha1.BenchmarkRun {
	run := smallRun(ns, name, "10.11", "11.8")
	run.Spec.Placement.MaxParallelCells = 1
	run.Spec.Workload.Steps = []string{"point-query", "update-index"}
	run.Spec.Workload.Threads = []int32{1}
	run.Spec.Workload.ReadSeconds, run.Spec.Workload.WriteSeconds = 2, 2
	run.Spec.Workload.FlushWaitSeconds = 1
	run.Spec.Output.S3 = s3.DeepCopy()
	return run
}

func allRunsFinished(t *testing.T, ns string, names []string) bool {
	t.Helper()
	for _, name := range names {
		switch kubetest.GetRun(t, k8sClient, ns, name).Status.Phase {
		case dbbenchv1alpha1.RunSucceeded, dbbenchv1alpha1.RunFailed:
		default:
			return false
		}
	}
	return true
}

func runsSummary(t *testing.T, ns string, names []string) string {
	t.Helper()
	var s []string
	for _, name := range names {
		s = append(s, runSummary(kubetest.GetRun(t, k8sClient, ns, name)))
	}
	return strings.Join(s, " | ")
}

// waitForLeader waits until a live manager pod holds the leader election
// Lease and returns its name. A pod that is Ready does not lead yet: after a
// kill, the old holder's Lease must expire first.
func waitForLeader(t *testing.T) string {
	t.Helper()
	var leader string
	eventually(t, chaosLeaderTimeout, "a live manager pod to lead", func() string {
		var lease coordinationv1.Lease
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: systemNamespace, Name: manager.LeaderElectionID}, &lease); err != nil {
			return fmt.Sprintf("lease %s: %v", manager.LeaderElectionID, err)
		}
		// controller-runtime's holder identity is "<hostname>_<uuid>".
		holder, _, _ := strings.Cut(ptr.Deref(lease.Spec.HolderIdentity, ""), "_")
		for _, p := range managerPods(t) {
			if p.Name == holder && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				leader = holder
				return ""
			}
		}
		return fmt.Sprintf("lease held by %q, which is not a live manager pod", holder)
	})
	return leader
}

// waitForCellTransition returns true as soon as any cell of the runs
// changes phase or attempt, false once the runs have all finished or after
// timeout.
func waitForCellTransition(t *testing.T, ns string, names []string, timeout time.Duration) bool {
	t.Helper()
	fingerprint := func() string {
		var b strings.Builder
		for _, name := range names {
			run := kubetest.GetRun(t, k8sClient, ns, name)
			for _, c := range run.Status.Cells {
				fmt.Fprintf(&b, "%s/%s=%s/%d;", name, c.Name, c.Phase, c.Attempts)
			}
		}
		return b.String()
	}
	before := fingerprint()
	changed := false
	pollFor(timeout, func() bool {
		changed = fingerprint() != before
		return changed || allRunsFinished(t, ns, names)
	})
	return changed
}

// waitForUnrecordedResult returns true as soon as a cell that is not
// Succeeded has its agent's final result document in its ConfigMap (the
// progress record says Done), false once
// the runs have all finished or after timeout.
func waitForUnrecordedResult(t *testing.T, ns string, names []string, timeout time.Duration) bool {
	t.Helper()
	found := false
	pollFor(timeout, func() bool {
		if allRunsFinished(t, ns, names) {
			return true
		}
		for _, name := range names {
			run := kubetest.GetRun(t, k8sClient, ns, name)
			for _, c := range run.Status.Cells {
				if c.Phase == dbbenchv1alpha1.CellSucceeded || c.ResultConfigMap == "" {
					continue
				}
				var cm corev1.ConfigMap
				err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: c.ResultConfigMap}, &cm)
				if err != nil || cm.Data[agentapi.ResultKeyDocument] == "" {
					continue
				}
				// The agent also sends partial documents between steps;
				// only the final one ends the cell.
				var p agentapi.Progress
				if json.Unmarshal([]byte(cm.Data[agentapi.ResultKeyProgress]), &p) == nil && p.Phase == agentapi.PhaseDone {
					found = true
					return true
				}
			}
		}
		return false
	})
	return found
}

// waitForNewChild returns true as soon as a pod or Job that dbbench manages
// appears in the namespace, false once the runs have all finished or after
// timeout.
func waitForNewChild(t *testing.T, ns string, names []string, timeout time.Duration) bool {
	t.Helper()
	managed := map[string]string{dbbenchv1alpha1.LabelManagedBy: dbbenchv1alpha1.ManagedByValue}
	children := func() map[string]bool {
		out := map[string]bool{}
		for _, p := range kubetest.ListPods(t, k8sClient, ns, managed) {
			out["Pod/"+p.Name] = true
		}
		for _, j := range kubetest.ListJobs(t, k8sClient, ns, managed) {
			out["Job/"+j.Name] = true
		}
		return out
	}
	before := children()
	found := false
	pollFor(timeout, func() bool {
		for k := range children() {
			if !before[k] {
				found = true
				return true
			}
		}
		return allRunsFinished(t, ns, names)
	})
	return found
}

// pollFor polls cond every 100 ms until it holds or timeout passes.
func pollFor(timeout time.Duration, cond func() bool) {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return
		}
	}
}

// runsState is "finished" when every run has, else "timed out".
func runsState(t *testing.T, ns string, names []string) string {
	t.Helper()
	if allRunsFinished(t, ns, names) {
		return "the runs had finished"
	}
	return "timed out"
}

// countResults counts the run's cells and, of those, the ones without a
// result (lost) and with more than one (duplicated), in the result
// ConfigMaps labelled for the cell and in the result documents under the
// run's prefix in the bucket; an object of a cell the run does not have,
// and an attempt with more than one client Job, count as duplicated. The manifest must name each cell's object.
func countResults(t *testing.T, st *store.Store, run *dbbenchv1alpha1.BenchmarkRun) (cells, lost, duplicated int) {
	t.Helper()
	layout := st.Layout()
	suite := run.Spec.Suite
	runPrefix := layout.RunPrefix(suite, run.Name)
	keys, err := st.List(ctx, runPrefix)
	if err != nil {
		t.Fatalf("listing %s: %v", runPrefix, err)
	}
	objects := map[string]int{}
	for _, k := range keys {
		if strings.HasSuffix(k, "/"+store.ObjectResult) {
			objects[k]++
		}
	}
	inManifest := map[string]string{}
	if m, err := st.GetManifest(ctx, suite, run.Name); err != nil {
		t.Errorf("reading run %s's manifest: %v", run.Name, err)
	} else {
		for _, mc := range m.Cells {
			inManifest[mc.Name] = mc.ObjectKey
		}
	}
	for _, cs := range run.Status.Cells {
		cells++
		var cms corev1.ConfigMapList
		if err := k8sClient.List(ctx, &cms, client.InNamespace(run.Namespace), client.MatchingLabels(cellLabels(run, cs.Name, specs.RoleResult))); err != nil {
			t.Fatalf("listing cell %s's result ConfigMaps: %v", cs.Name, err)
		}
		key := layout.CellKey(suite, run.Name, cs.Name, store.ObjectResult)
		nObj := objects[key]
		delete(objects, key)
		if got := inManifest[cs.Name]; got != key {
			t.Errorf("run %s cell %s: manifest object key %q, want %q", run.Name, cs.Name, got, key)
		}
		// A second client Job for one attempt would be a second execution
		// of the cell's benchmark, even if its result overwrote the first.
		perAttempt := map[string]int{}
		var twice []string
		for _, j := range kubetest.ListJobs(t, k8sClient, run.Namespace, cellLabels(run, cs.Name, specs.RoleClient)) {
			if perAttempt[j.Labels[dbbenchv1alpha1.LabelAttempt]]++; perAttempt[j.Labels[dbbenchv1alpha1.LabelAttempt]] == 2 {
				twice = append(twice, j.Labels[dbbenchv1alpha1.LabelAttempt])
			}
		}
		switch {
		case len(cms.Items) == 0 || nObj == 0:
			lost++
			t.Errorf("run %s cell %s lost: %d result ConfigMaps, %d objects at %s", run.Name, cs.Name, len(cms.Items), nObj, key)
		case len(cms.Items) > 1 || nObj > 1 || len(twice) > 0:
			duplicated++
			t.Errorf("run %s cell %s duplicated: %d result ConfigMaps, %d objects at %s, attempts with two client Jobs or more: %v",
				run.Name, cs.Name, len(cms.Items), nObj, key, twice)
		}
		if len(cms.Items) == 1 {
			if doc := resultDocument(t, run.Namespace, cs); doc.Cell.Name != cs.Name {
				t.Errorf("run %s cell %s: result ConfigMap holds cell %q's document", run.Name, cs.Name, doc.Cell.Name)
			}
		}
	}
	for k, n := range objects {
		duplicated++
		t.Errorf("run %s: %d result objects at %s, which is no cell of the run", run.Name, n, k)
	}
	return cells, lost, duplicated
}

// waitForNoChildren waits until nothing labelled for the runs remains in the
// namespace (the garbage collector follows the owner references) and
// returns what still does after timeout, as kind/name.
func waitForNoChildren(t *testing.T, ns string, names []string, timeout time.Duration) []string {
	t.Helper()
	var left []string
	deadline := time.Now().Add(timeout)
	for {
		left = left[:0]
		for _, name := range names {
			opts := []client.ListOption{client.InNamespace(ns), client.MatchingLabels{dbbenchv1alpha1.LabelRun: name}}
			for _, l := range []struct {
				kind string
				list client.ObjectList
			}{
				{"Pod", &corev1.PodList{}}, {"Job", &batchv1.JobList{}}, {"ConfigMap", &corev1.ConfigMapList{}},
				{"Secret", &corev1.SecretList{}}, {"Service", &corev1.ServiceList{}},
				{"PersistentVolumeClaim", &corev1.PersistentVolumeClaimList{}}, {"ServiceAccount", &corev1.ServiceAccountList{}},
				{"Role", &rbacv1.RoleList{}}, {"RoleBinding", &rbacv1.RoleBindingList{}},
			} {
				if err := k8sClient.List(ctx, l.list, opts...); err != nil {
					t.Fatalf("listing %ss of run %s: %v", l.kind, name, err)
				}
				items, err := meta.ExtractList(l.list)
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range items {
					obj := o.(client.Object)
					left = append(left, l.kind+"/"+obj.GetName())
				}
			}
			var run dbbenchv1alpha1.BenchmarkRun
			if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &run); err == nil {
				left = append(left, "BenchmarkRun/"+name)
			} else if !apierrors.IsNotFound(err) {
				t.Fatalf("getting run %s: %v", name, err)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(2 * time.Second)
	}
}
