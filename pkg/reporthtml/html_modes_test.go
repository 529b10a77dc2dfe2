package reporthtml

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/analysis/analysistest"
)

func htmlModes(t *testing.T) map[string][]byte {
	t.Helper()
	r, err := analysis.BuildReport(chartDataset(), analysis.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.Notes = append(r.Notes, `a <note> & "quotes" + 'x'`)
	a, b := chartDataset(), chartDataset()
	b.Name = "other"
	p, err := analysis.PairedTable(a, b, 16)
	if err != nil {
		t.Fatal(err)
	}
	runs := analysistest.NightlyRuns(func(i int) float64 {
		if i >= 20 {
			return 900 + float64(i%3)
		}
		return 1000 + float64(i%3)
	}, func(i int) float64 { return 500 + float64(i%2) })
	h, err := analysis.History(runs, analysis.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for name, c := range map[string]struct {
		r *analysis.Report
		o HTMLOptions
	}{
		"report":  {r, HTMLOptions{}},
		"paired":  {nil, HTMLOptions{Title: "x <vs> y & z", Paired: p, PairedName: "run-b"}},
		"history": {nil, HTMLOptions{Title: "dbbench history: s", History: h, MaxSeriesCharts: 1}},
	} {
		var buf bytes.Buffer
		if err := WriteHTML(&buf, c.r, c.o); err != nil {
			t.Fatal(err)
		}
		out[name] = buf.Bytes()
	}
	return out
}

// TestHTMLModes renders the three pages the plugin writes (report, compare,
// history) and checks the template's part of them: headings, the note and
// chart counts, the escaping of every text, and the page's end.
func TestHTMLModes(t *testing.T) {
	pages := htmlModes(t)
	tests := []struct {
		mode string
		want []string // substrings, in order
		cnt  map[string]int
	}{
		{"report", []string{"<title>dbbench report: mariadb-regressions</title>", "<h2>Relative throughput, 1 threads (base mariadb-10.6-base)</h2>",
			"<h2>Notes</h2>\n<ul>", "<li>a &lt;note&gt; &amp; &#34;quotes&#34; &#43; &#39;x&#39;</li></ul>\n<footer>"},
			map[string]int{`class="chart bars"`: 8, "<h2>Hardware efficiency: ": 64, "<table data-id=": -1}},
		{"paired", []string{"<title>x &lt;vs&gt; y &amp; z</title>", "<h1>x &lt;vs&gt; y &amp; z</h1>",
			"<h2>run-b compared with mariadb-regressions, cell by cell</h2>\n<figure"},
			map[string]int{`class="chart bars"`: 4, "<h2>": 1}},
		{"history", []string{"<h2>History and change points</h2>\n<p class=\"note\">Charts of the first 1 of 2 series, those with change points first (1); the tables below list them all.</p>\n",
			`class="chart history"`},
			map[string]int{`class="chart history"`: 1, "<h2>": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			page := string(pages[tt.mode])
			rest := page
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("page lacks %q (or has it out of order)", w)
				}
				rest = rest[i+len(w):]
			}
			for s, n := range tt.cnt {
				if got := strings.Count(page, s); n >= 0 && got != n || n < 0 && got == 0 {
					t.Errorf("%d × %q, want %d", got, s, n)
				}
			}
			if strings.Contains(page, "<note>") || strings.Contains(page, "<vs>") {
				t.Error("unescaped text in the page")
			}
			if !strings.HasSuffix(page, "</footer>\n</body></html>\n") {
				t.Errorf("page ends %q", page[max(0, len(page)-60):])
			}
		})
	}
}
