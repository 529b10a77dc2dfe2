package plugin

import (
	"encoding/json"
	"fmt"
	"slices"
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

func TestStepFlushes(t *testing.T) {
	ext := func(seconds ...float64) map[string]json.RawMessage {
		var b strings.Builder
		b.WriteString(`{"flushes":[`)
		for i, s := range seconds {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"method":"innodb","seconds":%g,"reachedTarget":true}`, s)
		}
		b.WriteString(`]}`)
		return map[string]json.RawMessage{results.AgentExtensionKey: json.RawMessage(b.String())}
	}
	loadFlush := 2.0
	steps := func(names ...string) []results.StepResult {
		out := make([]results.StepResult, len(names))
		for i, n := range names {
			out[i] = results.StepResult{Step: n, Threads: 1}
		}
		return out
	}
	tests := []struct {
		name string
		doc  results.Document
		want []float64
	}{
		{"the post-load flush is the load's; the next follows read-write_range=100",
			results.Document{Load: &results.Load{FlushSeconds: &loadFlush}, Extensions: ext(2, 6.5),
				Steps: steps("point-query", "read-write_range=100", "insert")},
			[]float64{0, 6.5, 0}},
		{"no load flush recorded: every flush is a step's",
			results.Document{Load: &results.Load{}, Extensions: ext(4),
				Steps: steps("read-write_range=100", "insert")},
			[]float64{4, 0}},
		{"flushes that match no step's: none attributed",
			results.Document{Load: &results.Load{FlushSeconds: &loadFlush}, Extensions: ext(2, 6.5, 3),
				Steps: steps("read-write_range=100")},
			[]float64{0}},
		{"no agent extension", results.Document{Steps: steps("point-query")}, []float64{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stepFlushes(&tt.doc); !slices.Equal(got, tt.want) {
				t.Errorf("stepFlushes = %v, want %v", got, tt.want)
			}
		})
	}
}
