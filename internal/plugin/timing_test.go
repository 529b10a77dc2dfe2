package plugin

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/dbbench/dbbench/pkg/results"
)

func TestTimingFromCluster(t *testing.T) {
	d := doc("demo", "", "maria-11-8", "11.8", t0, map[string]float64{"point-query@1": 100, "point-query@2": 180}, "point-query@1", "point-query@2")
	d.Load = &results.Load{Seconds: 12, InsertsPerSecond: 1000, Tables: 1, RowsPerTable: 10000, Rows: 10000}
	s1, s2 := t0.Add(20*time.Second), t0.Add(80*time.Second+300*time.Millisecond)
	el := 60.0
	d.Steps[0].StartedAt, d.Steps[0].ElapsedSeconds = &s1, &el
	d.Steps[1].StartedAt = &s2
	d.Provenance.ClientNode = &results.Host{NodeName: "dbbench-node-3"}
	cells, cms := cellCMs(t, "demo", []*results.Document{d})
	start, end := metav1.NewTime(t0.Add(-5*time.Second)), metav1.NewTime(t0.Add(150*time.Second))
	cells[0].StartTime, cells[0].CompletionTime = &start, &end
	cells[0].Node = "dbbench-node-2"
	clients := newFakeCluster(t, []*unstructured.Unstructured{runObj("demo", "", t0, "Succeeded", cells)}, cms)

	out, _, err := runCmd(t, clients, "timing", "demo")
	if err != nil {
		t.Fatal(err)
	}
	// wall 155 s − load 12 s − 2 × 60 s configured = 23 s; gap 80.3 − (20 + 60) = 0.30 s.
	checkContains(t, "timing output", out, out, []string{"maria-11-8", "155.0", "12.0", "120.0", "23.0", "0.30", "dbbench-node-2", "dbbench-node-3"})
	if _, _, err := runCmd(t, clients, "timing", "nope"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("unknown run: %v", err)
	}
}
