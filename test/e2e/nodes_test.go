//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/benchmarkrun"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/specs"
)

// The tests here need real worker nodes: the local cluster started with
// NODES ≥ 3 (hack/test-e2e.sh does), whose workers hack/test-e2e.sh names in
// DBBENCH_E2E_WORKERS, and hack/cluster/node.sh to lose one and bring it back
// (DBBENCH_E2E_NODE_SCRIPT). Elsewhere they are skipped.

// realWorkers returns the worker nodes of the local cluster, or skips.
func realWorkers(t *testing.T, want int) []string {
	t.Helper()
	workers := strings.Fields(os.Getenv("DBBENCH_E2E_WORKERS"))
	if len(workers) < want {
		t.Skipf("needs %d worker nodes of the local cluster (NODES=%d hack/test-e2e.sh); DBBENCH_E2E_WORKERS=%q", want, want+1, os.Getenv("DBBENCH_E2E_WORKERS"))
	}
	return workers
}

// TestCellsOnRealNodes: two cells at once (maxParallelCells 2), each with its
// client on another node than its database (clientNode OtherNode), on real
// nodes: every byte of the benchmark crosses the pod network between two
// nodes, and every step's results prove the client reached its server.
func TestCellsOnRealNodes(t *testing.T) {
	tier.Core(t)
	t.Parallel()
	realWorkers(t, 2)
	ns := newNamespace(t, "realnodes")
	run := smallRun(ns, "othernode", "10.11", "11.8")
	run.Spec.Placement.ClientNode = dbbenchv1alpha1.ClientOtherNode
	run.Spec.Placement.MaxParallelCells = 2
	createRun(t, run)
	run = waitForRunFinished(t, ns, run.Name, runTimeout)
	requireSucceeded(t, run)

	for _, cs := range run.Status.Cells {
		doc := resultDocument(t, ns, cs)
		requireAllSteps(t, run, cs, doc, cellAttempt(t, cs))
		client := ""
		if doc.Provenance.ClientNode != nil {
			client = doc.Provenance.ClientNode.NodeName
		}
		t.Logf("cell %s: database on %s, client on %s, %s → %s", cs.Name, cs.Node, client,
			cs.StartTime.Format(time.TimeOnly), cs.CompletionTime.Format(time.TimeOnly))
		if cs.Node == "" || client == "" || cs.Node == client {
			t.Errorf("cell %s: database on %q, client on %q: want two different nodes", cs.Name, cs.Node, client)
		}
	}
	a, b := run.Status.Cells[0], run.Status.Cells[1]
	if !a.StartTime.Before(b.CompletionTime) || !b.StartTime.Before(a.CompletionTime) {
		t.Errorf("cells %s (%s–%s) and %s (%s–%s) did not overlap: maxParallelCells 2 ran them one after the other",
			a.Name, a.StartTime, a.CompletionTime, b.Name, b.StartTime, b.CompletionTime)
	}
}

// TestBlocksOnRealNodes: two versions, two repeats, placement.blocks
// Repeats on exclusive nodes: each repeat is a block whose two cells run
// one after the other on one real node (the second pinned to the first's
// node), block 2 in reverse order, and the results documents carry the
// blocks.
func TestBlocksOnRealNodes(t *testing.T) {
	tier.Long(t)
	t.Parallel()
	realWorkers(t, 2)
	ns := newNamespace(t, "blocks")
	run := smallRun(ns, "blocks", "10.11", "11.8")
	run.Spec.Workload.Steps = []string{"point-query"}
	run.Spec.Workload.Threads = []int32{1}
	run.Spec.Workload.Repeats = 2
	run.Spec.Placement.Blocks = dbbenchv1alpha1.BlocksRepeats
	run.Spec.Placement.ExclusiveNodes = ptr.To(true)
	run.Spec.Placement.MaxParallelCells = 2
	// A goal the 3-s steps cannot be predicted to reach (the defaults'
	// noise holds at 5-s steps or more), run anyway: the plan is recorded
	// before the first cell and the precision achieved after the last.
	run.Spec.Goal = &dbbenchv1alpha1.GoalSpec{HalfWidthPercent: ptr.To(intstr.FromInt32(40)), OnOutOfReach: dbbenchv1alpha1.GoalRun}
	// Adaptive steps through the cluster: every step records why it
	// stopped (3-s steps end at their maximum or converge).
	run.Spec.Workload.Adaptive = &dbbenchv1alpha1.AdaptiveSpec{MinSeconds: 2, BetweenRunCVPercent: ptr.To(intstr.FromInt32(5))}
	// The verdict of 11.8 against the run's own baseline, paired by block.
	run.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{Against: dbbenchv1alpha1.RegressAgainstBaseline}
	createRun(t, run)
	run = waitForRunFinished(t, ns, run.Name, runTimeout)
	requireSucceeded(t, run)
	if c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionRegressed); c == nil || c.Status == metav1.ConditionUnknown {
		t.Errorf("Regressed %+v: want a verdict against the baseline", c)
	} else if st := run.Status.Regression; st == nil || len(st.Methods) != 1 || st.Methods[0].Method != dbbenchv1alpha1.MethodPairedBlocks {
		t.Errorf("regression status %+v: want point-query@1 paired by block", st)
	} else {
		t.Logf("verdict against the baseline: %s: %s", c.Reason, c.Message)
	}
	if ps := run.Status.Plan; ps == nil || ps.Design.Met || ps.Design.Repeats != 2 || ps.Cheapest == nil ||
		ps.RequiredHalfWidthPercent != "40.00" || ps.AchievedAt != "point-query@1" || ps.Met == nil {
		t.Errorf("status.plan = %+v: want a 2-repeat design short of ±40 %% (3-s steps), a cheapest design, and the achieved precision at point-query@1", ps)
	} else {
		t.Logf("plan: %s; achieved ±%s %% (met %v)", ps.Message, ps.AchievedHalfWidthPercent, *ps.Met)
	}
	requireEvent(t, ns, run.Name, dbbenchv1alpha1.ReasonGoalOutOfReach)

	// In matrix order: block 1 forward, block 2 reversed.
	order := map[int32][]string{
		1: {"mariadb-10.11-small-r1", "mariadb-11.8-small-r1"},
		2: {"mariadb-11.8-small-r2", "mariadb-10.11-small-r2"},
	}
	byName := map[string]dbbenchv1alpha1.CellStatus{}
	for _, cs := range run.Status.Cells {
		byName[cs.Name] = cs
		doc := resultDocument(t, ns, cs)
		if doc.Cell.Block != int(cs.Repeat) {
			t.Errorf("cell %s: document block %d, want %d", cs.Name, doc.Cell.Block, cs.Repeat)
		}
		for _, st := range doc.Steps {
			if st.StopReason == "" || st.Adaptive == nil {
				t.Errorf("cell %s: step %s@%d has no adaptive record (stopReason %q)", cs.Name, st.Step, st.Threads, st.StopReason)
			}
		}
		t.Logf("cell %s (block %d): database on %s, %s → %s", cs.Name, cs.Repeat, cs.Node,
			cs.StartTime.Format(time.TimeOnly), cs.CompletionTime.Format(time.TimeOnly))
	}
	for b, names := range order {
		first, second := byName[names[0]], byName[names[1]]
		if first.Name == "" || second.Name == "" {
			t.Fatalf("block %d: cells %v not in the status %s", b, names, runSummary(run))
		}
		if first.Node == "" || first.Node != second.Node {
			t.Errorf("block %d: %s on %q, %s on %q: want one node", b, first.Name, first.Node, second.Name, second.Node)
		}
		if second.StartTime.Before(first.CompletionTime) {
			t.Errorf("block %d: %s started at %s, before %s ended at %s: a block's cells run one after the other",
				b, second.Name, second.StartTime, first.Name, first.CompletionTime)
		}
	}
}

// TestExclusiveNodesOnRealNodes: two runs with exclusiveNodes, started
// together, each with its client beside its database: they run at the same
// time on different nodes, and no node ever holds pods of both. The pods are
// sampled every second while the runs go.
func TestExclusiveNodesOnRealNodes(t *testing.T) {
	tier.Long(t)
	t.Parallel()
	realWorkers(t, 2)
	ns := newNamespace(t, "exclusive")
	runs := []*dbbenchv1alpha1.BenchmarkRun{smallRun(ns, "excl-a", "10.11"), smallRun(ns, "excl-b", "11.8")}
	for _, r := range runs {
		r.Spec.Placement.ExclusiveNodes = ptr.To(true)
		r.Spec.Placement.ClientNode = dbbenchv1alpha1.ClientSameNode
		createRun(t, r)
	}

	var mu sync.Mutex
	shared := map[string]string{} // node -> what was seen there
	together := 0                 // samples with both runs' pods running
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Second):
			}
			nodes := [2]map[string]bool{{}, {}}
			var pods corev1.PodList
			if err := k8sClient.List(ctx, &pods, client.InNamespace(ns)); err != nil {
				continue
			}
			for _, p := range pods.Items {
				if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
					continue
				}
				for i, r := range runs {
					if p.Labels[dbbenchv1alpha1.LabelRun] == r.Name {
						nodes[i][p.Spec.NodeName] = true
					}
				}
			}
			mu.Lock()
			if len(nodes[0]) > 0 && len(nodes[1]) > 0 {
				together++
			}
			for n := range nodes[0] {
				if nodes[1][n] {
					shared[n] = fmt.Sprintf("pods of both runs at %s", time.Now().Format(time.TimeOnly))
				}
			}
			mu.Unlock()
		}
	}()

	for i, r := range runs {
		runs[i] = waitForRunFinished(t, ns, r.Name, runTimeout)
		requireSucceeded(t, runs[i])
	}
	close(done)
	<-sampled
	mu.Lock()
	defer mu.Unlock()
	for n, what := range shared {
		t.Errorf("node %s: %s", n, what)
	}
	a, b := runs[0].Status.Cells[0], runs[1].Status.Cells[0]
	t.Logf("run %s on %s, run %s on %s; %d one-second samples with both running", runs[0].Name, a.Node, runs[1].Name, b.Node, together)
	if together == 0 {
		t.Errorf("the two runs never ran at the same time: exclusivity was not put to the test")
	}
	if a.Node == b.Node && a.StartTime.Before(b.CompletionTime) && b.StartTime.Before(a.CompletionTime) {
		t.Errorf("both runs' databases on %s at overlapping times", a.Node)
	}
}

// TestNodeLoss: the worker node of a running cell is lost (link down, node
// agents, runtime and containers killed: hack/cluster/node.sh lose). The
// cell is retried on another node with reason NodeLost in its status and an
// event, the run succeeds with one result for the cell, and when the node
// comes back nothing of the lost attempt returns: its pods go, and the run's
// status and results are what they were.
//
// Not parallel: every pod on the lost node would be retried, other tests'
// cells included.
func TestNodeLoss(t *testing.T) {
	tier.Long(t)
	workers := realWorkers(t, 2)
	script := os.Getenv("DBBENCH_E2E_NODE_SCRIPT")
	if script == "" {
		t.Skip("DBBENCH_E2E_NODE_SCRIPT (hack/cluster/node.sh) is not set")
	}
	// The victim must not hold the manager: losing the manager with the
	// node is the chaos test's subject, not this one's.
	mgrNodes := map[string]bool{}
	for _, p := range managerPods(t) {
		mgrNodes[p.Spec.NodeName] = true
	}
	victim := ""
	for _, w := range workers {
		if !mgrNodes[w] {
			victim = w
			break
		}
	}
	if victim == "" {
		t.Fatalf("every worker (%v) holds a manager pod", workers)
	}

	ns := newNamespace(t, "nodeloss")
	run := smallRun(ns, "nodeloss", "11.8")
	run.Spec.Workload.ReadSeconds, run.Spec.Workload.WriteSeconds = 5, 5
	// The data directory on a local volume (docs/design.md, "Node loss"):
	// the first attempt's claim binds on the victim and is lost with it;
	// the retry's claim is its own, so nothing pins the retry there.
	run.Spec.Databases[0].Storage.VolumeClaim = &dbbenchv1alpha1.VolumeClaimSpec{
		StorageClassName: ptr.To("local-path"), Size: resource.MustParse("256Mi")}
	// The first attempt prefers the victim; the retry cannot go there (the
	// lost node is tainted).
	run.Spec.Placement.Database.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 100, Preference: corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: specs.HostnameTopologyKey, Operator: corev1.NodeSelectorOpIn, Values: []string{victim}}},
		}}},
	}}
	createRun(t, run)

	run = waitForStepInProgress(t, ns, run.Name, "lose its node")
	cs := run.Status.Cells[0]
	first := kubetest.ListPods(t, k8sClient, ns, withAttempt(cellLabels(run, cs.Name, specs.RoleDatabase), 1))
	if len(first) != 1 || first[0].Spec.NodeName != victim {
		t.Fatalf("attempt 1's database pods %v: want one on %s (preferred)", podNodes(first), victim)
	}

	var claims corev1.PersistentVolumeClaimList
	if err := k8sClient.List(ctx, &claims, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(claims.Items) != 1 || claims.Items[0].Status.Phase != corev1.ClaimBound {
		t.Fatalf("%d claims before the loss, want attempt 1's, bound", len(claims.Items))
	}
	var pv corev1.PersistentVolume
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: claims.Items[0].Spec.VolumeName}, &pv); err != nil {
		t.Fatal(err)
	}
	if on := volumeNode(&pv); on != victim {
		t.Fatalf("attempt 1's volume is on %q, want the database's node %s", on, victim)
	}

	// Whatever happens next, later tests need the node.
	returned := false
	t.Cleanup(func() {
		if !returned {
			nodeScript(t, script, "return", victim)
		}
	})
	nodeScript(t, script, "lose", victim)
	lostAt := time.Now()
	t.Logf("lost node %s during step %s (%d/%d done)", victim, cs.CurrentStep, cs.StepsDone, cs.StepsTotal)

	run = waitForRunFinished(t, ns, run.Name, runTimeout+3*time.Minute)
	t.Logf("run finished %s after the loss: %s", time.Since(lostAt).Round(time.Second), runSummary(run))
	requireSucceeded(t, run)
	cs = run.Status.Cells[0]
	// The loss costs one retry; later attempts whose client the loaded
	// machine starved may cost more (retriedAfter).
	extra := retriedAfter(t, cs, dbbenchv1alpha1.ReasonNodeLost)
	if run.Status.RetriesUsed != 1+extra {
		t.Errorf("cell %s: retriesUsed %d, want %d", cs.Name, run.Status.RetriesUsed, 1+extra)
	}
	// The message must name the lost node: no field keeps the node of an
	// earlier attempt (status.cells[].node is the retry's).
	if extra == 0 && (cs.Reason != dbbenchv1alpha1.ReasonNodeLost || !strings.Contains(cs.Message, victim)) {
		t.Errorf("cell %s: reason %q, message %q; want NodeLost naming %s", cs.Name, cs.Reason, cs.Message, victim)
	}
	if cs.Node == victim || cs.Node == "" {
		t.Errorf("cell %s: the retry's database ran on %q, want another node than %s", cs.Name, cs.Node, victim)
	}
	doc := resultDocument(t, ns, cs)
	requireAllSteps(t, run, cs, doc, int(2+extra))
	requireEvent(t, ns, run.Name, benchmarkrun.EventCellRetried)

	// The node comes back: the lost attempt's pods go for good, and the run
	// is what it was.
	nodeScript(t, script, "return", victim)
	returned = true
	eventually(t, 3*time.Minute, "node "+victim+" Ready, attempt 1's pods gone, and every claim", func() string {
		var node corev1.Node
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: victim}, &node); err != nil {
			return err.Error()
		}
		if !nodeReady(node) {
			return "node not Ready"
		}
		if left := kubetest.ListPods(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name, dbbenchv1alpha1.LabelAttempt: "1"}); len(left) > 0 {
			return fmt.Sprintf("attempt 1's pods still there: %v", podNodes(left))
		}
		var claims corev1.PersistentVolumeClaimList
		if err := k8sClient.List(ctx, &claims, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		if len(claims.Items) > 0 {
			return fmt.Sprintf("%d claims left", len(claims.Items))
		}
		return ""
	})
	t.Logf("node %s back and attempt 1's pods gone %s after the loss", victim, time.Since(lostAt).Round(time.Second))
	time.Sleep(10 * time.Second) // let a resurrection, if any, show
	after := kubetest.GetRun(t, k8sClient, ns, run.Name)
	ac := after.Status.Cells[0]
	if after.Status.Phase != run.Status.Phase || ac.Attempts != cs.Attempts || ac.ResultConfigMap != cs.ResultConfigMap || after.Status.RetriesUsed != run.Status.RetriesUsed {
		t.Errorf("after the node came back: %s, result %s; before: %s, result %s", runSummary(after), ac.ResultConfigMap, runSummary(run), cs.ResultConfigMap)
	}
	if pods := kubetest.ListPods(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name, dbbenchv1alpha1.LabelRole: specs.RoleDatabase}); len(pods) > 0 {
		t.Errorf("database pods after the run ended: %v", podNodes(pods))
	}
	if got := resultDocument(t, ns, ac); got.Cell.Attempt != int(2+extra) {
		t.Errorf("the cell's result is attempt %d's, want attempt %d's", got.Cell.Attempt, 2+extra)
	}
}

// nodeScript runs hack/cluster/node.sh ACTION NODE.
func nodeScript(t *testing.T, script, action, node string) {
	t.Helper()
	out, err := exec.CommandContext(ctx, script, action, node).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s %s: %v\n%s", script, action, node, err, out)
	}
}

func nodeReady(n corev1.Node) bool {
	return slices.ContainsFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool {
		return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
	})
}

// podNodes lists pods as name@node.
func podNodes(pods []corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name+"@"+p.Spec.NodeName)
	}
	return out
}

// requireEvent fails unless an event about the run has the reason.
func requireEvent(t *testing.T, ns, runName, reason string) {
	t.Helper()
	var events corev1.EventList
	if err := k8sClient.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatalf("listing events: %v", err)
	}
	var seen []string
	for _, e := range events.Items {
		if e.InvolvedObject.Name != runName {
			continue
		}
		if e.Reason == reason {
			return
		}
		seen = append(seen, e.Reason+": "+e.Message)
	}
	t.Errorf("no event of run %s has reason %s; its events: %v", runName, reason, seen)
}
