package analysis

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/results"
)

func f64(v float64) *float64 { return &v }

// latencyDataset is two cells, point-query at 1 and 4 threads with a
// fixed-rate variant at 4, update-index at 4 with a latency series in which
// a write stall (seconds 20-24, two of them idle) comes with a latency
// spike that starts two seconds earlier (18-24).
func latencyDataset() *Dataset {
	ds := NewDataset("latency")
	for ci, c := range []string{"old", "new"} {
		_ = ds.AddCell(CellMeta{Name: c, Engine: "mariadb", Version: c})
		k := 1 + float64(ci) // new is twice as slow in latency
		add := func(step string, th int, qps float64, p95, p99 float64, rate *results.Rate, series bool) {
			o := Observation{Cell: c, Step: step, Threads: th, QPS: qps, TPS: qps,
				Latency: &Latency{AvgMs: p95 / 2 * k, MaxMs: p99 * 3 * k, P95Ms: f64(p95 * k), P99Ms: f64(p99 * k), Rate: rate}}
			if series {
				q := &TimeSeries{IntervalSeconds: 1, WarmupSeconds: 5}
				l := &TimeSeries{IntervalSeconds: 1, WarmupSeconds: 5}
				for s := 1; s <= 60; s++ {
					qv, lv := qps, p95*k
					switch {
					case s >= 18 && s < 20:
						lv = 10 * p95 * k // latency first
					case s == 21 || s == 22:
						qv, lv = 0, 0 // idle: sysbench prints 0 latency
					case s >= 20 && s <= 24:
						qv, lv = qps/10, 10*p95*k
					case s <= 5:
						lv = 1000 // the warm-up is left out
					}
					q.Values, l.Values = append(q.Values, qv), append(l.Values, lv)
				}
				o.Series, o.Latency.Series, o.Latency.SeriesPercentile = q, l, 95
			}
			_ = ds.Add(o)
		}
		add("point-query", 1, 5000, 0.5, 0.8, nil, false)
		add("point-query", 4, 15000, 1, 2, nil, false)
		peak := 15000.0
		add("point-query@0.5peak", 4, 7500*(1-0.2*float64(ci)), 0.7, 1.5,
			&results.Rate{Step: "point-query", TargetTPS: 7500, FractionOfPeak: "0.5", PeakTPS: peak, MaxQueueLength: int64(ci) * 900, PollIntervalMs: 0.27}, false)
		add("update-index", 4, 3000, 4, 9, nil, true)
	}
	return ds
}

func TestBuildLatencyReport(t *testing.T) {
	ds := latencyDataset()
	r, err := BuildLatencyReport(ds, LatencyOptions{})
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
	rep, err := BuildReport(ds, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range rep.Relative {
		for _, s := range rel.Steps {
			if IsFixedRateStep(s) {
				t.Errorf("relative throughput at %d threads lists %s", rel.Threads, s)
			}
		}
	}
	if rep.Latency == nil || len(rep.Latency.Percentiles) != 2 {
		t.Error("BuildReport has no latency section")
	}
}

func TestLatencySeriesStats(t *testing.T) {
	r, err := BuildLatencyReport(latencyDataset(), LatencyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Series) != 2 {
		t.Fatalf("%d latency series, want 2", len(r.Series))
	}
	got := r.Series[0]
	got.qps, got.lat = nil, nil
	// 55 steady seconds (6..60), 2 idle; median 4 ms; spikes at 18-20 and
	// 23-24 (10 × 4 ms); stalls at 20-24 (qps/10 or 0); both at 20, 23, 24.
	want := LatencySeriesStats{Cell: "old", Step: "update-index", Threads: 4, Percentile: 95, Samples: 53, IdleSeconds: 2,
		MedianMs: 4, MaxMs: 40, MaxAtSecond: 18, SpikeFactor: 2, SpikeSeconds: 5, StallFraction: 0.5, StallSeconds: 5, BothSeconds: 3}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(LatencySeriesStats{})); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if _, err := BuildLatencyReport(latencyDataset(), LatencyOptions{SpikeFactor: 0.5}); err == nil {
		t.Error("a spike factor below 1 was accepted")
	}
}

func TestLatencyTablesText(t *testing.T) {
	r, err := BuildLatencyReport(latencyDataset(), LatencyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ts := r.Tables()
	ids := map[string]Table{}
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
	if err := WriteTables(&buf, FormatTable, ts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "p99 t4") {
		t.Errorf("text output lacks the concurrency columns:\n%s", buf.String())
	}
}

func renderLatencyHTML(t *testing.T) string {
	t.Helper()
	rep, err := BuildReport(latencyDataset(), ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, rep, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestLatencyHTML(t *testing.T) {
	page := renderLatencyHTML(t)
	for class, want := range map[string]int{
		"concurrency-qps": 1, "concurrency-latency": 1, // point-query has two thread counts
		"series-qps": 1, "series-latency": 1, // update-index at 4 threads, a line per cell
	} {
		if got := strings.Count(page, `class="chart `+class+`"`); got != want {
			t.Errorf("%d %s charts, want %d", got, class, want)
		}
	}
	for _, want := range []string{"Response time, 4 threads (lower is better)", "Latency ratios: LOWER IS BETTER",
		`data-id="latency.relative.t4"`, `data-id="latency.fixedrate"`, `class="pair"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The idle seconds break the latency line: two segments per cell.
	latChart := page[strings.Index(page, `class="chart series-latency"`):]
	latChart = latChart[:strings.Index(latChart, "</svg>")]
	if got := strings.Count(latChart, "<polyline"); got != 4 {
		t.Errorf("latency-over-time chart has %d line segments, want 4 (2 cells × 2, broken at the idle seconds)", got)
	}
}

// TestLatencyHTMLInChromium renders the latency sections in headless
// Chromium: the charts are in the DOM with their size, their lines drawn,
// and the screenshot is painted.
func TestLatencyHTMLInChromium(t *testing.T) {
	run, dir := chromiumOn(t, "latency.html", renderLatencyHTML(t), "1200,2400")
	dom := string(run("--dump-dom"))
	svgs := regexp.MustCompile(`<svg class="chart (concurrency|series)-(qps|latency)"[^>]*width="([0-9]+)" height="([0-9]+)"`).FindAllStringSubmatch(dom, -1)
	if len(svgs) != 4 {
		t.Fatalf("dumped DOM has %d latency chart SVGs, want 4", len(svgs))
	}
	for _, m := range svgs {
		if m[3] == "0" || m[4] == "0" {
			t.Errorf("chart with zero size: %s", m[0])
		}
	}
	if n := strings.Count(dom, `class="line"`); n < 8 {
		t.Errorf("dumped DOM has %d lines", n)
	}
	screenshotPainted(t, dir, "latency.html", "1200,2400")
}
