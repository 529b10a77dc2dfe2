package reporthtml

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/analysis"
)

// uncertainDataset has single runs of two cells whose ratios are marked
// "~" (point-query: within the runs' own per-second noise), "?" (insert:
// beyond it, one run per side) and unmarked (scan: no series on one side).
func uncertainDataset(t *testing.T) *analysis.Dataset {
	t.Helper()
	series := func(vals ...float64) *analysis.TimeSeries {
		return &analysis.TimeSeries{IntervalSeconds: 1, WarmupSeconds: 1, Values: append([]float64{1}, vals...)}
	}
	ds := analysis.NewDataset("single")
	for _, o := range []analysis.Observation{
		{Cell: "old", Step: "point-query", Threads: 1, QPS: 1000, Series: series(900, 1000, 1100, 1000)},
		{Cell: "new", Step: "point-query", Threads: 1, QPS: 1050, Series: series(950, 1050, 1150, 1050)},
		{Cell: "old", Step: "insert", Threads: 1, QPS: 500, Series: series(495, 500, 505, 500)},
		{Cell: "new", Step: "insert", Threads: 1, QPS: 260, Series: series(255, 260, 265, 260)},
		{Cell: "old", Step: "scan", Threads: 1, QPS: 200},
		{Cell: "new", Step: "scan", Threads: 1, QPS: 100, Series: series(99, 100, 101)},
	} {
		if err := ds.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return ds
}

// TestBarChartDrawsTheUncertainty: a ratio marked "?" is drawn like a
// real one but hatched, with its interval as a whisker and a "?" above
// it; one marked "~" is faded with its whisker; an unmarked one is a
// plain bar with no whisker; the caption says what the marks mean. The
// hatching is the chart's own pattern (its ids are unique per chart).
func TestBarChartDrawsTheUncertainty(t *testing.T) {
	rel, err := analysis.Relative(uncertainDataset(t), analysis.RelativeOptions{Base: "old", Steps: []string{"point-query", "insert", "scan"}})
	if err != nil {
		t.Fatal(err)
	}
	svg := barChart("insert and reads", rel, []int{0, 1, 2})
	bars := regexp.MustCompile(`<rect class="bar"[^>]*>`).FindAllString(svg, -1)
	if len(bars) != 3 {
		t.Fatalf("%d bars, want 3:\n%s", len(bars), svg)
	}
	tests := []struct {
		step, want, not string
	}{
		{"point-query", `data-mark="~" fill-opacity="0.3"`, "url(#"},
		{"insert", `fill="url(#hatch-`, "fill-opacity"},
		{"scan", `fill="#1f77b4"`, "data-mark"},
	}
	for i, tt := range tests {
		if !strings.Contains(bars[i], tt.want) || strings.Contains(bars[i], tt.not) {
			t.Errorf("%s bar %s: want %s, not %s", tt.step, bars[i], tt.want, tt.not)
		}
	}
	if n := strings.Count(svg, `class="whisker"`); n != 2 {
		t.Errorf("%d whiskers, want one per marked ratio (2)", n)
	}
	if n := strings.Count(svg, `class="mark"`); n != 1 || !strings.Contains(svg, `>?</text>`) {
		t.Errorf("%d ? marks, want 1", n)
	}
	id := regexp.MustCompile(`fill="url\(#(hatch-[0-9a-f]+-0)\)"`).FindStringSubmatch(svg)
	if id == nil || !strings.Contains(svg, `<pattern id="`+id[1]+`"`) {
		t.Errorf("the hatched bar's pattern is not defined in the chart")
	}
	if other := barChart("another chart", rel, []int{1}); strings.Contains(other, id[1]) {
		t.Error("two charts share a pattern id")
	}
	for _, want := range []string{"Whiskers are the ratios' 95 % intervals", "Faded bars (~) are within noise", "hatched bars (?)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("caption lacks %q", want)
		}
	}
	if !strings.Contains(svg, "<title>new, insert: 0.52? [") {
		t.Errorf("the hatched bar's tooltip lacks its mark and interval")
	}
}

// A page with marked ratios stays self-contained and renders in full.
func TestHTMLWithUncertaintyIsSelfContained(t *testing.T) {
	r, err := analysis.BuildReport(uncertainDataset(t), analysis.ReportOptions{Base: "old"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := strings.ReplaceAll(b.String(), `xmlns="http://www.w3.org/2000/svg"`, "")
	if strings.Contains(strings.ReplaceAll(page, "url(#hatch-", ""), "url(") || strings.Contains(page, "http") {
		t.Error("the page references something outside itself")
	}
	if !strings.Contains(page, `data-mark="?"`) {
		t.Error("the report's chart has no hatched bar")
	}
}

// TestUncertaintyInChromium: Chromium keeps the hatched and the faded bar
// with their whiskers, and paints the hatching (the pattern resolves).
func TestUncertaintyInChromium(t *testing.T) {
	r, err := analysis.BuildReport(uncertainDataset(t), analysis.ReportOptions{Base: "old"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	run, _ := chromiumOn(t, "uncertain.html", b.String(), "1200,900")
	dom := string(run("--dump-dom"))
	for _, want := range []string{`data-mark="?"`, `data-mark="~"`, `class="whisker"`, "<pattern id=\"hatch-"} {
		if !strings.Contains(dom, want) {
			t.Errorf("Chromium's DOM lacks %s", want)
		}
	}
}
