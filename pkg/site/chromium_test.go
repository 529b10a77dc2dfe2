package site

import (
	"image"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/internal/testutil/chromium"
)

// WriteTree writes the site's files and a stub report.html for every run
// and bisection it links, as a copy of the bucket would hold them.
func writeTree(t *testing.T, idx *Index, dir string) {
	t.Helper()
	files, err := Files(idx, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stub := func(rel string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("<!doctype html><title>report</title>"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range idx.Runs {
		stub(r.Name + "/" + ReportFile)
	}
	for _, b := range idx.Bisections {
		stub(BisectionsDir + "/" + b.Name + "/" + ReportFile)
	}
}

// TestSiteInChromium opens the fixture suite's index in headless Chromium
// from a directory (as a copy of the bucket): the charts are in the DOM it
// serialises, the environment-only change and the acknowledged slowdown
// are marked as such, every relative link resolves to a file of the copy,
// and the screenshot shows the charts with the marks' colours.
// DBBENCH_SITE_OUT=DIR keeps the copy and the screenshot (index.png).
func TestSiteInChromium(t *testing.T) {
	chromium.Require(t)
	dir := t.TempDir()
	if out := os.Getenv("DBBENCH_SITE_OUT"); out != "" {
		dir = out
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	idx := buildFixture(t)
	writeTree(t, idx, dir)
	index := filepath.Join(dir, FileIndex)
	dom := chromium.DOM(t, index, "1280,2400")
	checkSiteDOM(t, dom)
	if broken := chromium.BrokenLinks(dom, dir); len(broken) > 0 {
		t.Errorf("links that resolve to no file of the copy: %v", broken)
	}
	// 1,400 px: the width the README's picture is taken at.
	img := chromium.Screenshot(t, index, "1400,2400", filepath.Join(dir, "index.png"))
	share, colours := chromium.Painted(img)
	if share < 0.03 || colours < 20 {
		t.Errorf("screenshot: %.1f %% painted, %d colours", 100*share, colours)
	}
	for name, c := range map[string]string{"the series' line": colLine, "the slowdown's acknowledged mark": colAck, "the environment-only mark": colEnv} {
		if n := pixelsNear(img, c); n < 20 {
			t.Errorf("%s (%s): %d pixels in the screenshot", name, c, n)
		}
	}
}

// checkSiteDOM asserts what the fixture's page must show.
func checkSiteDOM(t *testing.T, dom string) {
	t.Helper()
	if n := len(regexp.MustCompile(`<svg class="chart[ "]`).FindAllString(dom, -1)); n != 2 {
		t.Errorf("%d chart SVGs, want one per series (2)", n)
	}
	for what, re := range map[string]string{
		"the acknowledged slowdown's mark":     `<g class="cp confirmed acknowledged worse"><title>[^<]*acknowledged by slow-commits[^<]*</title>.*?✓ ack</text>`,
		"the environment-only change's mark":   `<g class="cp confirmed open better env-only"><title>[^<]*environment only: image digest[^<]*</title>.*?env</text>`,
		"the acknowledged row of the table":    `<tr class="cp confirmed acknowledged worse">`,
		"a run's hover text with build":        `<title>night-7 · 2026-11-07 02:00 UTC\s+update-index@1: [0-9.]+ QPS\s+build: bisect:t7 @ sha256:777777777777 \(10.11.14-MariaDB\)\s+node: node-1, kernel 6.1.0-40-amd64`,
		"the noise bands":                      `<rect class="band"`,
		"the environment change on the x axis": `<path class="env-change"`,
		"the latest verdict":                   `night-9</a>: Regressed=False \(RegressionAcknowledged\)`,
		"the bisection's link":                 `<a href="_bisections/night-8-bisect/report.html">night-8-bisect</a>`,
		// Laid out by the browser, each label beside its mark: no label
		// placed at a guessed text width can run into the next.
		"the legend as a list of labelled marks": `<ul class="legend" aria-label="legend">(<li><svg [^>]*>.*?</svg><span>[^<]+</span></li>){7}</ul>`,
	} {
		if !regexp.MustCompile(re).MatchString(dom) {
			t.Errorf("the page lacks %s (%s)", what, re)
		}
	}
	if strings.Contains(dom, "<script") {
		t.Error("the page has a script")
	}
}

// pixelsNear counts the pixels of img within a small distance of the
// colour hex ("#rrggbb").
func pixelsNear(img image.Image, hex string) int {
	var r0, g0, b0 int
	for i, p := range []*int{&r0, &g0, &b0} {
		v := 0
		for _, c := range hex[1+2*i : 3+2*i] {
			v = v*16 + strings.IndexRune("0123456789abcdef", c)
		}
		*p = v
	}
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if abs(int(r>>8)-r0) < 12 && abs(int(g>>8)-g0) < 12 && abs(int(bl>>8)-b0) < 12 {
				n++
			}
		}
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
