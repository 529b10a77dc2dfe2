package reporthtml

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/analysis/analysistest"
)

func renderLatencyHTML(t *testing.T) string {
	t.Helper()
	rep, err := analysis.BuildReport(analysistest.LatencyDataset(), analysis.ReportOptions{})
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
