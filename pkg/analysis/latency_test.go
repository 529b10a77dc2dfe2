package analysis_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/analysis/analysistest"
)

func TestBuildLatencyReport(t *testing.T) {
	ds := analysistest.LatencyDataset()
	r, err := analysis.BuildLatencyReport(ds, analysis.LatencyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Percentiles) != 2 || r.Percentiles[0].Threads != 1 || r.Percentiles[1].Threads != 4 {
		t.Fatalf("percentile tables %+v: want 1 and 4 threads", r.Percentiles)
	}
	t4 := r.Percentiles[1]
	if d := cmp.Diff([]string{"point-query", "point-query@0.5peak", "update-index"}, t4.Steps); d != "" {
		t.Errorf("steps at 4 threads (-want +got):\n%s", d)
	}
	// new's latency is twice old's: relative 2.00, lower is better.
	if got := t4.RelP99[0][1].String(); got != "2.00" || *t4.P99[0][1] != 4 || t4.RelP95[2][0].String() != "1.00" {
		t.Errorf("point-query p99 new %v (rel %s), update-index p95 base rel %s", *t4.P99[0][1], got, t4.RelP95[2][0])
	}
	if len(r.Concurrency) != 2 {
		t.Fatalf("%d concurrency tables, want one per cell", len(r.Concurrency))
	}
	ct := r.Concurrency[1]
	if d := cmp.Diff([]string{"point-query"}, ct.Steps); d != "" {
		t.Errorf("concurrency steps (-want +got):\n%s (update-index has one thread count; fixed-rate variants are left out)", d)
	}
	if d := cmp.Diff([]int{1, 4}, ct.Threads); d != "" || *ct.QPS[0][1] != 15000 || *ct.P95[0][0] != 1 {
		t.Errorf("concurrency %+v", ct)
	}
	if len(r.FixedRate) != 2 || !r.FixedRate[0].Kept || r.FixedRate[1].Kept || r.FixedRate[1].MaxQueueLength != 900 {
		t.Errorf("fixed-rate rows %+v: want old kept, new not (6000 of 7500 TPS)", r.FixedRate)
	}

	// The throughput report leaves the fixed-rate variant out.
	rep, err := analysis.BuildReport(ds, analysis.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range rep.Relative {
		for _, s := range rel.Steps {
			if analysis.IsFixedRateStep(s) {
				t.Errorf("relative throughput at %d threads lists %s", rel.Threads, s)
			}
		}
	}
	if rep.Latency == nil || len(rep.Latency.Percentiles) != 2 {
		t.Error("BuildReport has no latency section")
	}
}

func TestLatencySeriesStats(t *testing.T) {
	r, err := analysis.BuildLatencyReport(analysistest.LatencyDataset(), analysis.LatencyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Series) != 2 {
		t.Fatalf("%d latency series, want 2", len(r.Series))
	}
	got := r.Series[0]
	// 55 steady seconds (6..60), 2 idle; median 4 ms; spikes at 18-20 and
	// 23-24 (10 × 4 ms); stalls at 20-24 (qps/10 or 0); both at 20, 23, 24.
	want := analysis.LatencySeriesStats{Cell: "old", Step: "update-index", Threads: 4, Percentile: 95, Samples: 53, IdleSeconds: 2,
		MedianMs: 4, MaxMs: 40, MaxAtSecond: 18, SpikeFactor: 2, SpikeSeconds: 5, StallFraction: 0.5, StallSeconds: 5, BothSeconds: 3}
	if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(analysis.LatencySeriesStats{})); d != "" { // the series are for charts
		t.Errorf("(-want +got):\n%s", d)
	}
	if _, err := analysis.BuildLatencyReport(analysistest.LatencyDataset(), analysis.LatencyOptions{SpikeFactor: 0.5}); err == nil {
		t.Error("a spike factor below 1 was accepted")
	}
}

func TestLatencyTablesText(t *testing.T) {
	r, err := analysis.BuildLatencyReport(analysistest.LatencyDataset(), analysis.LatencyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ts := r.Tables()
	ids := map[string]analysis.Table{}
	for _, tb := range ts {
		ids[tb.ID] = tb
	}
	for _, id := range []string{"latency.t1", "latency.t4", "latency.relative.t1", "latency.relative.t4",
		"latency.concurrency.old", "latency.concurrency.new", "latency.series", "latency.fixedrate"} {
		if _, ok := ids[id]; !ok {
			t.Errorf("no table %s", id)
		}
	}
	rel := ids["latency.relative.t4"]
	if !strings.Contains(rel.Title, "LOWER IS BETTER") || !strings.Contains(strings.Join(rel.Notes, " "), "LOWER IS BETTER") {
		t.Errorf("relative latency table does not say lower is better: %q / %q", rel.Title, rel.Notes)
	}
	if d := cmp.Diff([]string{"point-query", "1.00", "1.00", "2.00", "2.00"}, rel.Rows[0]); d != "" {
		t.Errorf("relative row (-want +got):\n%s", d)
	}
	fr := ids["latency.fixedrate"]
	if d := cmp.Diff([]string{"new", "point-query@0.5peak", "4", "7500", "0.5 × 15000.0", "6000.0", "NO", "missing", "1.40", "3.00", "missing", "9.00", "900", "0", "0.27"}, fr.Rows[1]); d != "" {
		t.Errorf("fixed-rate row (-want +got):\n%s", d)
	}
	var buf bytes.Buffer
	if err := analysis.WriteTables(&buf, analysis.FormatTable, ts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "p99 t4") {
		t.Errorf("text output lacks the concurrency columns:\n%s", buf.String())
	}
}
