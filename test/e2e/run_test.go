//go:build e2e

package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
)

// Deadlines of the real runs. A cell of smallRun takes 30–60 s on two shared
// cores (server start, load, 6 × 4 s of steps, flush), a run of the tests
// here at most two cells' time; the deadlines leave room for a busy machine
// (a demo beside the suite) without letting a stuck run hold the suite.
const (
	cellRunningTimeout = 5 * time.Minute
	runTimeout         = 6 * time.Minute
)

// TestRunCompletes: two versions of MariaDB, two cells side by side, every
// step at every thread count measured, and the run manifest lists both.
func TestRunCompletes(t *testing.T) {
	tier.Core(t)
	t.Parallel()
	ns := newNamespace(t, "complete")
	run := smallRun(ns, "versions", "10.11", "11.8")
	createRun(t, run)
	start := time.Now()
	run = waitForRunFinished(t, ns, run.Name, runTimeout)
	t.Logf("run finished in %s: %s", time.Since(start).Round(time.Second), runSummary(run))
	requireSucceeded(t, run)

	if got := cellNames(run); !slices.Equal(got, []string{"mariadb-10.11-small", "mariadb-11.8-small"}) {
		t.Fatalf("cells %v, want mariadb-10.11-small and mariadb-11.8-small", got)
	}
	for _, cs := range run.Status.Cells {
		doc := resultDocument(t, ns, cs)
		requireAllSteps(t, run, cs, doc, cellAttempt(t, cs))
	}

	// The run manifest.
	if run.Status.Results == nil || run.Status.Results.ConfigMap != run.Name+"-results" {
		t.Fatalf("status.results = %+v, want configMap %s-results", run.Status.Results, run.Name)
	}
	var cm corev1.ConfigMap
	if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: run.Status.Results.ConfigMap}, &cm); err != nil {
		t.Fatalf("getting the run manifest ConfigMap: %v", err)
	}
	m, err := results.UnmarshalManifest([]byte(cm.Data[agentapi.RunResultKeyManifest]))
	if err != nil {
		t.Fatalf("decoding the run manifest: %v", err)
	}
	if m.Run.Name != run.Name || m.Run.UID != string(run.UID) {
		t.Errorf("manifest run = %+v, want %s (%s)", m.Run, run.Name, run.UID)
	}
	for _, cs := range run.Status.Cells {
		mc, ok := m.Cell(cs.Name)
		if !ok {
			t.Errorf("manifest has no cell %s: %+v", cs.Name, m.Cells)
			continue
		}
		if mc.Phase != string(dbbenchv1alpha1.CellSucceeded) || mc.ConfigMap != cs.ResultConfigMap {
			t.Errorf("manifest cell %s: phase %q configMap %q, want Succeeded and %s", cs.Name, mc.Phase, mc.ConfigMap, cs.ResultConfigMap)
		}
		// Every point has a value, or is listed invalid with the quality
		// gate's reasons (a write step with too few steady samples on a
		// loaded machine is flagged, not re-run): nothing is left out
		// without a word.
		for _, step := range run.Spec.Workload.Steps {
			for _, th := range run.Spec.Workload.Threads {
				q, reasons := mc.QPS[step][int(th)], mc.Invalid[step][int(th)]
				switch {
				case q > 0 && len(reasons) == 0:
				case q == 0 && len(reasons) > 0:
					t.Logf("manifest cell %s: %s at %d threads invalid: %v", cs.Name, step, th, reasons)
				default:
					t.Errorf("manifest cell %s: %s at %d threads has QPS %v and invalid %v, want a QPS > 0 or the reasons it is invalid", cs.Name, step, th, q, reasons)
				}
			}
		}
	}
	if len(m.Cells) != 2 {
		t.Errorf("manifest lists %d cells, want 2", len(m.Cells))
	}
}

// TestDatabasePodDeleted: the database pod deleted while the benchmark runs
// is an infrastructure failure; the cell is retried from a fresh server and
// the run still succeeds.
func TestDatabasePodDeleted(t *testing.T) {
	tier.Core(t)
	t.Parallel()
	ns := newNamespace(t, "dbdelete")
	run := smallRun(ns, "dbdelete", "11.8")
	createRun(t, run)

	// Wait until a step runs, so the deletion hits a benchmark in progress.
	run = waitForStepInProgress(t, ns, run.Name, "delete its database")
	cs := run.Status.Cells[0]
	dbs := kubetest.ListPods(t, k8sClient, ns, withAttempt(cellLabels(run, cs.Name, specs.RoleDatabase), 1))
	if len(dbs) != 1 {
		t.Fatalf("found %d database pods of attempt 1, want 1", len(dbs))
	}
	if err := k8sClient.Delete(ctx, &dbs[0]); err != nil {
		t.Fatalf("deleting database pod %s: %v", dbs[0].Name, err)
	}
	t.Logf("deleted database pod %s during step %s (%d/%d done)", dbs[0].Name, cs.CurrentStep, cs.StepsDone, cs.StepsTotal)

	run = waitForRunFinished(t, ns, run.Name, runTimeout)
	requireSucceeded(t, run)
	cs = run.Status.Cells[0]
	// The deletion costs one retry; later attempts whose client the loaded
	// machine starved may cost more (retriedAfter).
	extra := int(retriedAfter(t, cs, dbbenchv1alpha1.ReasonDatabasePodDeleted))
	if run.Status.RetriesUsed != int32(1+extra) {
		t.Errorf("retriesUsed = %d, want %d", run.Status.RetriesUsed, 1+extra)
	}
	doc := resultDocument(t, ns, cs)
	requireAllSteps(t, run, cs, doc, 2+extra)
	// The earlier attempts' clients went with their servers; one Job remains.
	jobs := kubetest.ListJobs(t, k8sClient, ns, cellLabels(run, cs.Name, specs.RoleClient))
	if len(jobs) != 1 || jobs[0].Labels[dbbenchv1alpha1.LabelAttempt] != fmt.Sprint(2+extra) {
		t.Errorf("client jobs %v, want only attempt %d's", jobNames(jobs), 2+extra)
	}
}

// TestManagerPodDeleted: the manager pod deleted while a run is in progress
// comes back (a new pod, after leader election) and continues the run from
// the status and the children it finds: every cell once, one client Job per
// attempt, no retry.
//
// Not parallel: the other tests' runs would see the restart too, which
// would blur what a failure there means.
func TestManagerPodDeleted(t *testing.T) {
	tier.Core(t)
	ns := newNamespace(t, "mgrdelete")
	run := smallRun(ns, "mgrdelete", "10.11", "11.8")
	run.Spec.Placement.MaxParallelCells = 1
	createRun(t, run)

	run = waitForCellPhase(t, ns, run.Name, 0, dbbenchv1alpha1.CellRunning, cellRunningTimeout)
	t.Logf("deleting the manager while %s", runSummary(run))
	old := map[types.UID]bool{}
	for _, p := range managerPods(t) {
		old[p.UID] = true
		if err := k8sClient.Delete(ctx, &p); err != nil {
			t.Fatalf("deleting manager pod %s: %v", p.Name, err)
		}
		t.Logf("deleted manager pod %s", p.Name)
	}
	if len(old) == 0 {
		t.Fatalf("no manager pod found")
	}
	eventually(t, 3*time.Minute, "a new manager pod to be ready", func() string {
		for _, p := range managerPods(t) {
			if !old[p.UID] && p.DeletionTimestamp == nil && podIsReady(p) {
				return ""
			}
		}
		return "no new ready manager pod"
	})

	run = waitForRunFinished(t, ns, run.Name, runTimeout)
	requireSucceeded(t, run)
	if len(run.Status.Cells) != 2 {
		t.Fatalf("%d cells, want 2", len(run.Status.Cells))
	}
	// Every cell once: the restart costs no attempt. A cell whose client
	// the loaded machine starved is retried by the quality gate
	// (ClientStarved, the infrastructure's), which is no duplicate.
	starved := int32(0)
	for _, cs := range run.Status.Cells {
		starved += int32(len(cs.RetryReasons))
	}
	if run.Status.RetriesUsed != starved {
		t.Errorf("retriesUsed = %d, want %d (the ClientStarved retries)", run.Status.RetriesUsed, starved)
	}
	for _, cs := range run.Status.Cells {
		cellAttempt(t, cs)
		jobs := kubetest.ListJobs(t, k8sClient, ns, cellLabels(run, cs.Name, specs.RoleClient))
		perAttempt := map[string]int{}
		for _, j := range jobs {
			perAttempt[j.Labels[dbbenchv1alpha1.LabelAttempt]]++
		}
		// One client Job, the last attempt's (a retry removes the attempt
		// before it with its children).
		if n := perAttempt[strconv.Itoa(int(cs.Attempts))]; n != 1 || len(jobs) != 1 {
			t.Errorf("cell %s: %d client jobs, %d of them attempt %d's; want one, the last attempt's: %v", cs.Name, len(jobs), n, cs.Attempts, jobNames(jobs))
		}
		// The agent's pod ran once per Job: a duplicate Job would have
		// shown up above, a restarted agent here.
		for _, p := range kubetest.ListPods(t, k8sClient, ns, cellLabels(run, cs.Name, specs.RoleClient)) {
			for _, st := range p.Status.ContainerStatuses {
				if st.RestartCount != 0 {
					t.Errorf("client pod %s container %s restarted %d times", p.Name, st.Name, st.RestartCount)
				}
			}
		}
		requireAllSteps(t, run, cs, resultDocument(t, ns, cs), cellAttempt(t, cs))
	}
}

// resultDocument reads and decodes a cell's results document.
func resultDocument(t *testing.T, ns string, cs dbbenchv1alpha1.CellStatus) *results.Document {
	t.Helper()
	if cs.ResultConfigMap == "" {
		t.Fatalf("cell %s has no resultConfigMap", cs.Name)
	}
	var cm corev1.ConfigMap
	if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: cs.ResultConfigMap}, &cm); err != nil {
		t.Fatalf("getting cell %s's result ConfigMap: %v", cs.Name, err)
	}
	raw, ok := cm.Data[agentapi.ResultKeyDocument]
	if !ok {
		t.Fatalf("result ConfigMap %s has no %s (keys: %v)", cm.Name, agentapi.ResultKeyDocument, keys(cm.Data))
	}
	doc, err := results.Unmarshal([]byte(raw))
	if err != nil {
		t.Fatalf("decoding %s/%s: %v", cm.Name, agentapi.ResultKeyDocument, err)
	}
	return doc
}

// requireAllSteps: the document is the cell's, from the given attempt, ran
// the version it names, and has a non-zero steady QPS for every step at
// every thread count.
func requireAllSteps(t *testing.T, run *dbbenchv1alpha1.BenchmarkRun, cs dbbenchv1alpha1.CellStatus, doc *results.Document, attempt int) {
	t.Helper()
	if doc.Status.Outcome != results.OutcomeSucceeded {
		t.Errorf("cell %s: document outcome %q (%s), want Succeeded", cs.Name, doc.Status.Outcome, doc.Status.Error)
	}
	if doc.Cell.Attempt != attempt {
		t.Errorf("cell %s: document from attempt %d, want %d", cs.Name, doc.Cell.Attempt, attempt)
	}
	if doc.Cell.Version != cs.Version {
		t.Errorf("cell %s: document version %q, want %q", cs.Name, doc.Cell.Version, cs.Version)
	}
	// The server really is the version under test (the image's own report).
	if !strings.HasPrefix(doc.Provenance.ServerVersion, cs.Version+".") {
		t.Errorf("cell %s: server reported version %q, want %s.x", cs.Name, doc.Provenance.ServerVersion, cs.Version)
	}
	var missing []string
	for _, step := range run.Spec.Workload.Steps {
		for _, th := range run.Spec.Workload.Threads {
			i := slices.IndexFunc(doc.Steps, func(s results.StepResult) bool { return s.Step == step && s.Threads == int(th) })
			switch {
			case i < 0:
				missing = append(missing, fmt.Sprintf("%s@%d missing", step, th))
			case doc.Steps[i].SteadyQPS <= 0 && !stalledOnRecord(doc.Steps[i]):
				missing = append(missing, fmt.Sprintf("%s@%d steadyQps %v", step, th, doc.Steps[i].SteadyQPS))
			case doc.Steps[i].SteadyQPS <= 0:
				// The loaded machine stopped the server through the
				// window: the gate flagged it, the final report shows
				// the client reached its server.
				t.Logf("cell %s: %s@%d stalled through its window (final %.0f QPS): flagged %v", cs.Name, step, th,
					doc.Steps[i].FinalQPS, doc.Steps[i].Quality.Reasons)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("cell %s: %s (steps in the document: %s)", cs.Name, strings.Join(missing, ", "), stepList(doc))
	}
}

// stalledOnRecord: the quality gate flagged the step Stalled, and its
// final report has throughput.
func stalledOnRecord(s results.StepResult) bool {
	return s.Quality != nil && !s.Quality.Valid && slices.Contains(s.Quality.Reasons, results.QualityStalled) && s.FinalQPS > 0
}

// cellAttempt is the attempt a cell that nothing disturbed ends with: its
// first, or a later one when every retry before it was the quality gate
// finding the client starved (ClientStarved, the infrastructure's: seconds
// of 3-s steps that no report covers, which this shared 2-core machine
// running three nodes and other end-to-end tests beside this one can
// cause, twice in a row when the load lasts) and the controller retried
// it. Any other retry reason fails the test.
func cellAttempt(t *testing.T, cs dbbenchv1alpha1.CellStatus) int {
	t.Helper()
	undisturbed := int(cs.Attempts) == len(cs.RetryReasons)+1
	for _, r := range cs.RetryReasons {
		undisturbed = undisturbed && r == dbbenchv1alpha1.ReasonClientStarved
	}
	if !undisturbed {
		t.Errorf("cell %s took %d attempts after retries %v, want every retry ClientStarved: %s", cs.Name, cs.Attempts, cs.RetryReasons, cs.Message)
	}
	return int(cs.Attempts)
}

// retriedAfter checks that a cell's first retry was for want and every
// later one for ClientStarved (the loaded machine, as in cellAttempt), one
// attempt per retry, and returns how many later ones there were.
func retriedAfter(t *testing.T, cs dbbenchv1alpha1.CellStatus, want dbbenchv1alpha1.FailureReason) int32 {
	t.Helper()
	if len(cs.RetryReasons) == 0 || cs.RetryReasons[0] != want {
		t.Errorf("cell %s retried for %v (%s), want %s first", cs.Name, cs.RetryReasons, cs.Message, want)
		return 0
	}
	for _, r := range cs.RetryReasons[1:] {
		if r != dbbenchv1alpha1.ReasonClientStarved {
			t.Errorf("cell %s retried for %v, want %s then only ClientStarved", cs.Name, cs.RetryReasons, want)
		}
	}
	if int(cs.Attempts) != len(cs.RetryReasons)+1 {
		t.Errorf("cell %s made %d attempts after %d retries", cs.Name, cs.Attempts, len(cs.RetryReasons))
	}
	return int32(len(cs.RetryReasons) - 1)
}

func stepList(doc *results.Document) string {
	var s []string
	for _, st := range doc.Steps {
		s = append(s, fmt.Sprintf("%s@%d=%.0f", st.Step, st.Threads, st.SteadyQPS))
	}
	return strings.Join(s, " ")
}

func cellNames(run *dbbenchv1alpha1.BenchmarkRun) []string {
	var n []string
	for _, c := range run.Status.Cells {
		n = append(n, c.Name)
	}
	return n
}

// waitForStepInProgress waits until the run's first cell runs a step with
// more to come, and returns the run as it was then; a cell that ends first
// fails the test, which could not do (what) in time.
func waitForStepInProgress(t *testing.T, ns, name, what string) *dbbenchv1alpha1.BenchmarkRun {
	t.Helper()
	var run *dbbenchv1alpha1.BenchmarkRun
	eventually(t, cellRunningTimeout, "the first cell to run a step", func() string {
		run = kubetest.GetRun(t, k8sClient, ns, name)
		if len(run.Status.Cells) > 0 {
			cs := run.Status.Cells[0]
			if cs.Phase == dbbenchv1alpha1.CellRunning && cs.CurrentStep != "" && cs.StepsDone < cs.StepsTotal {
				return ""
			}
			if cs.Phase == dbbenchv1alpha1.CellSucceeded || cs.Phase == dbbenchv1alpha1.CellFailed {
				t.Fatalf("cell finished before the test could %s: %s", what, runSummary(run))
			}
		}
		return runSummary(run)
	})
	return run
}

func withAttempt(l map[string]string, attempt int) map[string]string {
	l[dbbenchv1alpha1.LabelAttempt] = strconv.Itoa(attempt)
	return l
}

func podIsReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func keys(m map[string]string) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}
