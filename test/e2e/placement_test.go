//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/specs"
)

// Simulated nodes: kwok manages the nodes carrying its annotation and fakes
// the status of the pods bound to them; the real kube-scheduler places the
// pods. The taint keeps every other pod (the real runs of the other tests, a
// demo on the same cluster) off them.
const (
	kwokAnnotation = "kwok.x-k8s.io/node"
	kwokTaintKey   = "kwok.x-k8s.io/node"
	poolLabel      = "dbbench.io/pool"
	poolValue      = "kwok-e2e"
	fakeNodePrefix = "e2e-kwok-"
)

// kwokTimeout bounds each wait on kwok. On the local cluster kwok v0.8.0
// acts late: its node and pod watches start at resourceVersion 0 with
// bookmarks, which kube-apiserver 1.36 on etcd 3.4 (no RequestWatchProgress)
// refuses, so kwok only sees changes when its reflectors relist, up to ~30 s
// apart (their backoff). The scheduler itself is not affected.
const kwokTimeout = 3 * time.Minute

// TestPlacementOnSimulatedNodes checks what the real scheduler does with the
// placement dbbench asks for: exclusive nodes and the client's node policy,
// on three (then four) kwok nodes beside the real one. The agent never runs
// on a fake node, so only placement is checked; the run is then deleted.
func TestPlacementOnSimulatedNodes(t *testing.T) {
	tier.Long(t)
	t.Parallel()
	startKwok(t)
	nodes := []string{fakeNode(t, 0), fakeNode(t, 1), fakeNode(t, 2)}
	waitForNodesReady(t, nodes)

	t.Run("OtherNode", func(t *testing.T) {
		ns := kwokNamespace(t, "place-other")
		run := kwokRun(ns, "other", dbbenchv1alpha1.ClientOtherNode, "10.11", "11.8", "10.5")
		createRun(t, run)
		run = kubetest.GetRun(t, k8sClient, ns, run.Name)

		// Two cells start (maxParallelCells: 2), four pods want four
		// nodes of their own, and there are three: one pod must stay
		// unschedulable, and every placed pod is alone on its node.
		snap := waitForPlacement(t, run, "three pods placed and one unschedulable", 3, 1)
		t.Logf("with 3 nodes: %s", snap)
		snap.requireExclusive(t)
		snap.requireClientPolicy(t, dbbenchv1alpha1.ClientOtherNode)

		// A fourth node lets the last pod in, on that node.
		nodes = append(nodes, fakeNode(t, 3))
		waitForNodesReady(t, nodes)
		snap = waitForPlacement(t, run, "all four pods placed", 4, 0)
		t.Logf("with 4 nodes: %s", snap)
		snap.requireStartedCells(t, 2)
		snap.requireExclusive(t)
		snap.requireClientPolicy(t, dbbenchv1alpha1.ClientOtherNode)
		snap.requireOnNodes(t, nodes)
		requireCellNodes(t, run, snap)
	})

	t.Run("SameNode", func(t *testing.T) {
		ns := kwokNamespace(t, "place-same")
		run := kwokRun(ns, "same", dbbenchv1alpha1.ClientSameNode, "10.11", "11.8")
		createRun(t, run)
		run = kubetest.GetRun(t, k8sClient, ns, run.Name)
		snap := waitForPlacement(t, run, "all four pods placed", 4, 0)
		t.Logf("placement: %s", snap)
		snap.requireStartedCells(t, 2)
		snap.requireExclusive(t)
		snap.requireClientPolicy(t, dbbenchv1alpha1.ClientSameNode)
		snap.requireOnNodes(t, nodes)
		requireCellNodes(t, run, snap)
	})
}

// kwokRun is a run pinned to the simulated pool: exclusive nodes, two cells
// at a time, the client on the given side of its database.
func kwokRun(ns, name string, clientNode dbbenchv1alpha1.ClientNodePolicy, versions ...string) *dbbenchv1alpha1.BenchmarkRun {
	run := smallRun(ns, name, versions...)
	pool := dbbenchv1alpha1.PodPlacement{
		NodeSelector: map[string]string{poolLabel: poolValue},
		Tolerations:  []corev1.Toleration{{Key: kwokTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
	}
	run.Spec.Placement = dbbenchv1alpha1.PlacementSpec{
		Database:         pool,
		Client:           pool,
		ClientNode:       clientNode,
		ExclusiveNodes:   ptr.To(true),
		MaxParallelCells: 2,
	}
	// The agent never runs on a fake node: a pre-flight would never end,
	// and the cells' placement is what the test checks.
	run.Spec.Preflight.Enabled = ptr.To(false)
	return run
}

// kwokNamespace is newNamespace for runs on fake nodes: when the test ends,
// the run's pods must be gone before kwok stops and the nodes go, or they
// would linger until the pod garbage collector finds their node missing.
func kwokNamespace(t *testing.T, prefix string) string {
	t.Helper()
	var ns string
	// Cleanups run last-in first-out: this one runs after newNamespace's
	// (dump, delete the namespace).
	t.Cleanup(func() {
		if ns == "" || (t.Failed() && os.Getenv("DBBENCH_E2E_KEEP") != "") {
			return
		}
		start := time.Now()
		deadline := start.Add(kwokTimeout)
		for time.Now().Before(deadline) {
			var pods corev1.PodList
			if err := k8sClient.List(ctx, &pods, client.InNamespace(ns)); err == nil && len(pods.Items) == 0 {
				t.Logf("pods of %s gone %s after the namespace's deletion", ns, time.Since(start).Round(time.Second))
				return
			}
			time.Sleep(time.Second)
		}
		t.Errorf("pods of namespace %s still exist %s after its deletion", ns, kwokTimeout)
	})
	ns = newNamespace(t, prefix)
	return ns
}

// podPlace is where one pod of a cell is.
type podPlace struct {
	cell, role, pod, node string
	unschedulable         bool
}

// placement is a snapshot of the pods of a run's cells.
type placement struct {
	run  *dbbenchv1alpha1.BenchmarkRun
	pods []podPlace
}

// waitForPlacement waits until the run has placed pods and unschedulable
// ones in exactly these numbers, and returns what it saw last.
func waitForPlacement(t *testing.T, run *dbbenchv1alpha1.BenchmarkRun, what string, placed, unschedulable int) placement {
	t.Helper()
	var snap placement
	eventually(t, kwokTimeout, what, func() string {
		snap = observePlacement(t, run)
		if p, u := snap.count(); p == placed && u == unschedulable {
			return ""
		}
		return snap.String()
	})
	return snap
}

func observePlacement(t *testing.T, run *dbbenchv1alpha1.BenchmarkRun) placement {
	t.Helper()
	p := placement{run: run}
	for _, pod := range kubetest.ListPods(t, k8sClient, run.Namespace, map[string]string{dbbenchv1alpha1.LabelRun: run.Name}) {
		if pod.DeletionTimestamp != nil {
			continue
		}
		pp := podPlace{cell: pod.Labels[dbbenchv1alpha1.LabelCell], role: pod.Labels[dbbenchv1alpha1.LabelRole], pod: pod.Name, node: pod.Spec.NodeName}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				pp.unschedulable = true
			}
		}
		p.pods = append(p.pods, pp)
	}
	sort.Slice(p.pods, func(i, j int) bool { return p.pods[i].pod < p.pods[j].pod })
	return p
}

func (p placement) count() (placed, unschedulable int) {
	for _, pp := range p.pods {
		switch {
		case pp.node != "":
			placed++
		case pp.unschedulable:
			unschedulable++
		}
	}
	return placed, unschedulable
}

func (p placement) String() string {
	var parts []string
	for _, pp := range p.pods {
		where := pp.node
		switch {
		case where != "":
		case pp.unschedulable:
			where = "(unschedulable)"
		default:
			where = "(pending)"
		}
		parts = append(parts, fmt.Sprintf("%s %s→%s", pp.role, pp.pod, where))
	}
	if len(parts) == 0 {
		return "no pods yet"
	}
	return strings.Join(parts, ", ")
}

// byCell maps cell → role → node of the placed pods.
func (p placement) byCell() map[string]map[string]string {
	m := map[string]map[string]string{}
	for _, pp := range p.pods {
		if pp.node == "" {
			continue
		}
		if m[pp.cell] == nil {
			m[pp.cell] = map[string]string{}
		}
		m[pp.cell][pp.role] = pp.node
	}
	return m
}

// requireExclusive: no node holds pods of two cells.
func (p placement) requireExclusive(t *testing.T) {
	t.Helper()
	owner := map[string]string{}
	for _, pp := range p.pods {
		if pp.node == "" {
			continue
		}
		if other, ok := owner[pp.node]; ok && other != pp.cell {
			t.Errorf("node %s holds pods of cells %s and %s (exclusiveNodes): %s", pp.node, other, pp.cell, p)
		}
		owner[pp.node] = pp.cell
	}
}

// requireClientPolicy: each placed client is on (SameNode) or off
// (OtherNode) its database's node.
func (p placement) requireClientPolicy(t *testing.T, policy dbbenchv1alpha1.ClientNodePolicy) {
	t.Helper()
	for cell, roles := range p.byCell() {
		db, client := roles[specs.RoleDatabase], roles[specs.RoleClient]
		if db == "" || client == "" {
			continue
		}
		switch {
		case policy == dbbenchv1alpha1.ClientOtherNode && db == client:
			t.Errorf("cell %s: client and database share node %s (clientNode: OtherNode)", cell, db)
		case policy == dbbenchv1alpha1.ClientSameNode && db != client:
			t.Errorf("cell %s: client on %s, database on %s (clientNode: SameNode)", cell, client, db)
		}
	}
}

// requireStartedCells: exactly n cells have pods (maxParallelCells), each
// one database pod and one client pod.
func (p placement) requireStartedCells(t *testing.T, n int) {
	t.Helper()
	cells := map[string]map[string]int{}
	for _, pp := range p.pods {
		if cells[pp.cell] == nil {
			cells[pp.cell] = map[string]int{}
		}
		cells[pp.cell][pp.role]++
	}
	if len(cells) != n {
		t.Errorf("%d cells have pods, want %d (maxParallelCells): %s", len(cells), n, p)
	}
	for cell, roles := range cells {
		if roles[specs.RoleDatabase] != 1 || roles[specs.RoleClient] != 1 {
			t.Errorf("cell %s has %d database and %d client pods, want 1 and 1: %s", cell, roles[specs.RoleDatabase], roles[specs.RoleClient], p)
		}
	}
}

// requireOnNodes: every pod is on one of the pool's nodes, none on the real
// node.
func (p placement) requireOnNodes(t *testing.T, nodes []string) {
	t.Helper()
	allowed := map[string]bool{}
	for _, n := range nodes {
		allowed[n] = true
	}
	for _, pp := range p.pods {
		if pp.node != "" && !allowed[pp.node] {
			t.Errorf("pod %s is on node %s, outside the pool %v", pp.pod, pp.node, nodes)
		}
	}
}

// requireCellNodes: the run's status reports each started cell's database
// node as the scheduler placed it.
func requireCellNodes(t *testing.T, run *dbbenchv1alpha1.BenchmarkRun, snap placement) {
	t.Helper()
	placed := snap.byCell()
	eventually(t, 30*time.Second, "the status to report the database nodes", func() string {
		run = kubetest.GetRun(t, k8sClient, run.Namespace, run.Name)
		var wrong []string
		started := 0
		for _, cs := range run.Status.Cells {
			roles := placed[matrix.ObjectBase(run.Name, string(run.UID), cs.Name)]
			if roles == nil {
				if cs.Phase != dbbenchv1alpha1.CellPending {
					wrong = append(wrong, fmt.Sprintf("%s is %s without pods", cs.Name, cs.Phase))
				}
				continue
			}
			started++
			if cs.Phase != dbbenchv1alpha1.CellRunning || cs.Node != roles[specs.RoleDatabase] {
				wrong = append(wrong, fmt.Sprintf("%s is %s on %q, database pod on %s", cs.Name, cs.Phase, cs.Node, roles[specs.RoleDatabase]))
			}
		}
		if started == 0 {
			wrong = append(wrong, "no started cell in the status")
		}
		return strings.Join(wrong, "; ")
	})
}

// startKwok runs kwok beside the real node for the test's duration. It
// manages only nodes annotated kwok.x-k8s.io/node=fake, with the stages of
// testdata/kwok-stages.yaml. The binary is $DBBENCH_KWOK or kwok on PATH
// (hack/tools.sh kwok installs it).
func startKwok(t *testing.T) {
	t.Helper()
	bin := os.Getenv("DBBENCH_KWOK")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("kwok"); err != nil {
			t.Fatalf("kwok not found: set DBBENCH_KWOK to the binary (hack/tools.sh kwok installs it)")
		}
	}
	kubeconfig := os.Getenv("KUBECONFIG")
	if kubeconfig == "" {
		t.Fatalf("KUBECONFIG is not set; kwok needs it")
	}
	stages, err := filepath.Abs("testdata/kwok-stages.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(kctx, bin,
		"--kubeconfig="+kubeconfig,
		"--config="+stages,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector="+kwokAnnotation+"=fake",
		// Nothing connects to these addresses (the agent never runs on a
		// fake node); the node's is loopback so that even an API server
		// asked for a fake pod's logs goes nowhere else.
		"--cidr=10.244.0.0/24",
		"--node-ip=127.0.0.1",
	)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	// DBBENCH_E2E_KWOK_LOG keeps kwok's whole log in a file as well.
	if path := os.Getenv("DBBENCH_E2E_KWOK_LOG"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatalf("creating the kwok log: %v", err)
		}
		t.Cleanup(func() { f.Close() })
		cmd.Stdout, cmd.Stderr = io.MultiWriter(out, f), io.MultiWriter(out, f)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting kwok: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Logf("kwok %s started (pid %d)", bin, cmd.Process.Pid)
	// If the test binary dies (go test -timeout), hack/test-e2e.sh stops
	// kwok by this pid.
	pidfile := os.Getenv("DBBENCH_E2E_KWOK_PIDFILE")
	if pidfile != "" {
		if err := os.WriteFile(pidfile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
			t.Logf("writing %s: %v", pidfile, err)
		}
	}
	t.Cleanup(func() {
		cancel()
		<-exited //nolint:errcheck // killed by cancel: its exit error says only that
		if pidfile != "" {
			_ = os.Remove(pidfile) // gone already if the test removed it
		}
		if t.Failed() {
			t.Logf("kwok log:\n%s", out.String())
		}
	})
	// A kwok that exits at once (bad flag, bad stages) fails here, not as a
	// node that never gets Ready.
	select {
	case err := <-exited:
		exited <- err
		t.Fatalf("kwok exited at start: %v\n%s", err, out.String())
	case <-time.After(2 * time.Second):
	}
}

// fakeNode creates a kwok node in the pool, tainted so that only pods that
// tolerate it land there, and deletes it when the test ends.
func fakeNode(t *testing.T, i int) string {
	t.Helper()
	name := fmt.Sprintf("%s%d", fakeNodePrefix, i)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{kwokAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{
				poolLabel: poolValue, e2eLabel: "true", "type": "kwok",
				corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
			},
		},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: kwokTaintKey, Value: "fake", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")},
		},
	}
	// A node left by an interrupted run would carry stale state.
	if err := k8sClient.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}); err == nil {
		t.Logf("deleted leftover node %s", name)
	}
	if err := k8sClient.Create(ctx, node); err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := k8sClient.Delete(ctx, node); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting node %s: %v", name, err)
		}
	})
	return name
}

func waitForNodesReady(t *testing.T, names []string) {
	t.Helper()
	eventually(t, kwokTimeout, "kwok nodes to be Ready", func() string {
		var notReady []string
		for _, n := range names {
			node := &corev1.Node{}
			if err := k8sClient.Get(ctx, client.ObjectKey{Name: n}, node); err != nil {
				notReady = append(notReady, n+": "+err.Error())
				continue
			}
			if !nodeReady(*node) {
				notReady = append(notReady, n)
			}
		}
		if len(notReady) > 0 {
			return "not ready: " + strings.Join(notReady, ", ")
		}
		return ""
	})
}

// lockedBuffer collects a child process's output safely.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
