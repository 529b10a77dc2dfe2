package integration_test

import (
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
)

// TestBlockedRunRunsEachBlockOnOneNode: two versions, two repeats, blocks
// Repeats and four slots. Each block's first cell starts at once (block 2
// in reverse order), unpinned; once they ran on node-a and node-b, each
// block's second cell starts pinned to its block's node, never two cells
// of a block at once; the plans and the manifest carry the blocks.
func TestBlockedRunRunsEachBlockOnOneNode(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	run := minimalRun(ns, "blocked")
	run.Spec.Databases[0].Versions = []string{"10.11", "11.8"}
	run.Spec.Workload.Steps = []string{"point-query"}
	run.Spec.Workload.Repeats = 2
	run.Spec.Placement.MaxParallelCells = 4
	run.Spec.Placement.Blocks = dbbenchv1alpha1.BlocksRepeats
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	cells := matrix.Expand(run)
	of := objectBases(cells)
	byName := map[string]matrix.Cell{}
	for _, c := range cells {
		byName[c.Name] = c
	}
	nodeOf := map[int32]string{1: "node-a", 2: "node-b"}

	// wave plays one wave: the pods of want (cell names) and no other
	// live, each pinned as wantPin says, bound to its block's node, and
	// its agent done.
	wave := func(want []string, wantPin map[string]string) {
		t.Helper()
		var pods map[string]corev1.Pod
		eventually(t, fmt.Sprintf("the database pods of %v", want), func() string {
			pods = livePods(t, ns, run.Name, of)
			for _, name := range want {
				if _, ok := pods[name]; !ok {
					return fmt.Sprintf("%d pods, none of %s", len(pods), name)
				}
			}
			return ifNot(len(pods) == len(want))
		})
		for _, name := range want {
			pod := pods[name]
			if got := specs.PinnedNode(&pod); got != wantPin[name] {
				t.Errorf("cell %s: pinned to %q, want %q", name, got, wantPin[name])
			}
			c := byName[name]
			var cm corev1.ConfigMap
			if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: specs.ConfigMapName(c)}, &cm); err != nil {
				t.Fatalf("cell %s: config ConfigMap: %v", name, err)
			}
			var p agentapi.Task
			if err := json.Unmarshal([]byte(cm.Data[agentapi.ConfigKeyTask]), &p); err != nil || p.Cell.Block != int(c.Block) {
				t.Errorf("cell %s: plan's block %d (%v), want %d", name, p.Cell.Block, err, c.Block)
			}
			markPodReady(t, &pod, nodeOf[c.Block], "10.88.0.30")
		}
		for _, name := range want {
			c := byName[name]
			eventually(t, "the client Job of "+name, func() string {
				for _, j := range kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelCell: c.ObjectBase}) {
					if len(j.Status.Conditions) == 0 {
						agentCompletes(t, ns, &j, 1)
						return ""
					}
				}
				return "none"
			})
		}
	}

	wave([]string{"maria-10.11-default-r1", "maria-11.8-default-r2"}, nil)
	wave([]string{"maria-11.8-default-r1", "maria-10.11-default-r2"},
		map[string]string{"maria-11.8-default-r1": "node-a", "maria-10.11-default-r2": "node-b"})

	run = waitRun(t, ns, run.Name, "the run Succeeded", func(r *dbbenchv1alpha1.BenchmarkRun) string {
		return ifNot(r.Status.Phase == dbbenchv1alpha1.RunSucceeded)
	})
	for _, cs := range run.Status.Cells {
		if want := nodeOf[byName[cs.Name].Block]; cs.Node != want {
			t.Errorf("cell %s ran on %q, want its block's %s", cs.Name, cs.Node, want)
		}
	}
	var cm corev1.ConfigMap
	if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: run.Status.Results.ConfigMap}, &cm); err != nil {
		t.Fatalf("run results ConfigMap: %v", err)
	}
	m, err := results.UnmarshalManifest([]byte(cm.Data[agentapi.RunResultKeyManifest]))
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	if len(m.Cells) != len(cells) {
		t.Errorf("manifest has %d cells, want %d", len(m.Cells), len(cells))
	}
	for _, mc := range m.Cells {
		if want := int(byName[mc.Name].Block); mc.Block != want {
			t.Errorf("manifest cell %s: block %d, want %d", mc.Name, mc.Block, want)
		}
	}
}
