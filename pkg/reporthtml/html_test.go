package reporthtml

import (
	"bytes"
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/internal/testutil/chromium"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/workload"
)

// chartDataset is a small realistic run for the HTML report: four versions,
// the 32 steps at 1 and 16 threads, hardware figures, per-second series with
// a stall, one step missing, one x/0 ratio and one 0/0.
func chartDataset() *analysis.Dataset {
	ds := analysis.NewDataset("mariadb-regressions")
	versions := []string{"10.6", "10.11", "11.4", "11.8"}
	for vi, v := range versions {
		name := "mariadb-" + v + "-base"
		_ = ds.AddCell(analysis.CellMeta{Name: name, Database: "mariadb", Engine: "mariadb", Version: v, Config: "base"})
		for si, s := range workload.Standard() {
			for _, th := range []int{1, 16} {
				if vi == 2 && s.Name == "hot-points" {
					continue // missing
				}
				f := 1 + 0.06*math.Sin(float64(si*7+vi*3)) - 0.03*float64(vi)
				scale := math.Pow(float64(th), 0.9-0.02*float64(si%10))
				q := 2000 * (1 + float64(si%5)) * f * scale
				switch {
				case s.Name == "update-one" && vi == 0:
					q = 0 // base 0 → inf for the others
				case s.Name == "scan" && th == 1:
					q = 0 // 0/0 → 1
				}
				cpu, cs, r, rkb, wkb := 0.006*f, 30/f, 0.0, 0.0, 40*f
				if vi >= 2 {
					r, rkb = 0.05, 0.2
				}
				o := analysis.Observation{Cell: name, Step: s.Name, Threads: th, QPS: q,
					HW: &analysis.Hardware{CPUPerOp: &cpu, CSPerOp: &cs, ReadsPerOp: &r, ReadKBPerOp: &rkb, WriteKBPerOp: &wkb, OpsPerSecond: q}}
				if th == 16 && si < 3 {
					ts := &analysis.TimeSeries{IntervalSeconds: 1, WarmupSeconds: 10}
					for i := 0; i < 300; i++ {
						x := q * (1 + 0.04*math.Sin(float64(i)/9+float64(vi)))
						if vi == 3 && i > 150 && i < 158 {
							x = q * 0.2 // a stall
						}
						ts.Values = append(ts.Values, x)
					}
					o.Series = ts
				}
				_ = ds.Add(o)
			}
		}
	}
	return ds
}

func renderHTML(t *testing.T) (string, *analysis.Report) {
	t.Helper()
	r, err := analysis.BuildReport(chartDataset(), analysis.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	return buf.String(), r
}

// TestHTMLSelfContained checks the page without a browser: no scripts, no
// external references, one bar chart per group and thread count, the base
// line, the y-axis caption, series and scale-up charts.
func TestHTMLSelfContained(t *testing.T) {
	page, r := renderHTML(t)
	for _, bad := range []string{"<script", "http://", "https://", "src=", "@import", "url("} {
		// url(#id) names a pattern of the page itself (the hatching).
		own := strings.ReplaceAll(strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""), "url(#", "")
		if strings.Contains(own, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if got, want := strings.Count(page, `class="chart bars"`), 4*len(r.Relative); got != want {
		t.Errorf("%d bar charts, want %d", got, want)
	}
	if got := strings.Count(page, `class="baseline"`); got != 4*len(r.Relative) {
		t.Errorf("%d base lines", got)
	}
	if !strings.Contains(page, "The y-axis does not start at 0") {
		t.Error("no y-axis caption")
	}
	if got := strings.Count(page, `class="chart series"`); got != 3 {
		t.Errorf("%d series charts, want 3", got)
	}
	if got := strings.Count(page, `class="chart scaleup"`); got != 16 {
		t.Errorf("%d scale-up charts, want 16 (4 cells × 4 groups)", got)
	}
	if !strings.Contains(page, ">inf</text>") || !strings.Contains(page, "×") {
		t.Error("inf and missing markers not drawn")
	}
}

// TestHTMLInChromium renders the page in headless Chromium, checks from the
// DOM that every chart's SVG has a non-zero size and drawn bars and lines,
// and checks the screenshot is not blank. It needs /usr/bin/chromium
// (Debian: apt-get install -y chromium).
func TestHTMLInChromium(t *testing.T) {
	page, _ := renderHTML(t)
	run, dir := chromiumOn(t, "report.html", page, "1200,1600")
	// A script-free page cannot report layout sizes itself, so the DOM
	// check reads what Chromium serialised, and the size check uses the
	// screenshot: every chart's SVG declares its box and the pixels prove
	// it was painted.
	dom := string(run("--dump-dom"))
	svgs := regexp.MustCompile(`<svg class="chart [a-z]+"[^>]*width="([0-9]+)" height="([0-9]+)"`).FindAllStringSubmatch(dom, -1)
	if len(svgs) < 10 {
		t.Fatalf("dumped DOM has %d chart SVGs", len(svgs))
	}
	for _, m := range svgs {
		w, _ := strconv.Atoi(m[1])
		h, _ := strconv.Atoi(m[2])
		if w == 0 || h == 0 {
			t.Errorf("chart with zero size: %s", m[0])
		}
	}
	if n := strings.Count(dom, `class="bar"`); n < 100 {
		t.Errorf("dumped DOM has %d bars", n)
	}
	screenshotPainted(t, dir, "report.html", "1200,1600")
}

// chromiumOn writes page to a temporary directory as name (and to
// $DBBENCH_HTML_OUT when set, to look at by hand) and returns that
// directory and a function that runs headless Chromium on the page with a
// window of size ("W,H") and the extra flags, returning its stdout. It
// skips the test when /usr/bin/chromium is not installed (Debian:
// apt-get install -y chromium).
func chromiumOn(t *testing.T, name, page, size string) (run func(extra ...string) []byte, dir string) {
	t.Helper()
	chromium.Require(t)
	dir = t.TempDir()
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("DBBENCH_HTML_OUT"); out != "" {
		_ = os.WriteFile(out, []byte(page), 0o644) // for looking at it by hand
	}
	return func(extra ...string) []byte {
		t.Helper()
		return chromium.Run(t, file, size, extra...)
	}, dir
}

// screenshotPainted has headless Chromium take a screenshot of the page
// name in dir, with a window of size (kept at $DBBENCH_PNG_OUT when set),
// and checks it was painted.
func screenshotPainted(t *testing.T, dir, name, size string) {
	t.Helper()
	shot := filepath.Join(dir, "out.png")
	img := chromium.Screenshot(t, filepath.Join(dir, name), size, shot)
	if out := os.Getenv("DBBENCH_PNG_OUT"); out != "" {
		data, _ := os.ReadFile(shot)
		_ = os.WriteFile(out, data, 0o644)
	}
	checkPainted(t, img)
}

// checkPainted asserts the screenshot has many distinct colours (bars of
// the palette) and a good share of non-white pixels in the chart area.
func checkPainted(t *testing.T, img image.Image) {
	t.Helper()
	b := img.Bounds()
	colours := map[uint32]bool{}
	nonWhite, total := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			total++
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				nonWhite++
			}
			colours[(r>>12)<<8|(g>>12)<<4|bl>>12] = true
		}
	}
	t.Logf("screenshot %dx%d: %d colours, %.1f %% non-white", b.Dx(), b.Dy(), len(colours), 100*float64(nonWhite)/float64(total))
	if len(colours) < 20 || float64(nonWhite)/float64(total) < 0.03 {
		t.Errorf("screenshot looks blank: %d colours, %d of %d pixels non-white", len(colours), nonWhite, total)
	}
	_ = fmt.Sprint()
}
