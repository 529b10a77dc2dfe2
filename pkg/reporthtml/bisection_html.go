package reporthtml

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/dbbench/dbbench/pkg/analysis"
)

// BisectionPoint is one build of a bisection as its chart draws it.
type BisectionPoint struct {
	Name string
	// Verdict is Good, Bad, Inconclusive, Failed or Untested.
	Verdict string
	// Ratio is QPS(point)/QPS(good) at Key; Low and High its 95 %
	// interval. NaN when unknown.
	Ratio, Low, High float64
	// Note says why a point has no ratio (a failure reason).
	Note string
}

// BisectionChart is a bisection's points in order, with the first bad one.
type BisectionChart struct {
	Title string
	// Key is the step@threads the ratios are of.
	Key    string
	Points []BisectionPoint
	// FirstBad indexes Points; -1 when the change was not localized.
	FirstBad int
	// Summary is the verdict in a sentence.
	Summary string
	// Chain are sentences on what led to the bisection (the verdict, the
	// change point) and Links where to read more (the run's report).
	Chain []string
	Links []Link
	// Tables follow the points: the probabilities, the environment, the
	// explanation.
	Tables []analysis.Table
	// FlameGraph is the explanation's differential flame graph (SVG),
	// drawn after the tables; FlameGraphTitle heads it.
	FlameGraph      []byte
	FlameGraphTitle string
}

// verdictColors are the bar colours by verdict.
var verdictColors = map[string]string{"Good": "#2ca02c", "Bad": "#d62728", "Inconclusive": "#ff7f0e"}

// WriteBisectionHTML writes a self-contained HTML page (inline CSS and SVG,
// no scripts) with the candidates' ratios to the good point in order, the
// first bad one marked, and a table of the points.
func WriteBisectionHTML(w io.Writer, c BisectionChart) error {
	page := htmlPage{Title: c.Title, CSS: template.CSS(css)}
	t := analysis.Table{ID: "bisection.points", Title: "Points in order", Columns: []string{"point", "verdict", "ratio to good", "95 % interval", "note"}}
	for i, p := range c.Points {
		iv := ""
		if !math.IsNaN(p.Low) {
			iv = fmt.Sprintf("[%s, %s]", fmtTick(p.Low), fmtTick(p.High))
		}
		ratio := ""
		if !math.IsNaN(p.Ratio) {
			ratio = fmtTick(p.Ratio)
		}
		note := p.Note
		if i == c.FirstBad {
			note = strings.TrimSpace("first bad " + note)
		}
		t.Rows = append(t.Rows, []string{p.Name, p.Verdict, ratio, iv, note})
	}
	blocks := []htmlBlock{}
	if c.Summary != "" {
		blocks = append(blocks, htmlBlock{Note: c.Summary})
	}
	blocks = append(blocks, chartSVG(bisectionBars(c)), htmlBlock{Table: &t})
	if len(c.Chain) > 0 || len(c.Links) > 0 {
		chain := htmlSection{Heading: "How it started"}
		if len(c.Chain) > 0 {
			chain.Blocks = append(chain.Blocks, htmlBlock{Items: c.Chain})
		}
		if len(c.Links) > 0 {
			chain.Blocks = append(chain.Blocks, htmlBlock{Links: c.Links})
		}
		page.Sections = append(page.Sections, chain)
	}
	page.Sections = append(page.Sections, htmlSection{Heading: "Candidates in order", Blocks: blocks})
	if len(c.Tables) > 0 || len(c.FlameGraph) > 0 {
		more := htmlSection{Heading: "Confidence and explanation", Blocks: tableBlocks(c.Tables...)}
		if len(c.FlameGraph) > 0 {
			// Our own renderer's SVG (pkg/profile), every name escaped.
			svg := strings.TrimSpace(string(c.FlameGraph))
			if i := strings.Index(svg, "?>"); strings.HasPrefix(svg, "<?xml") && i >= 0 {
				svg = svg[i+2:]
			}
			more.Blocks = append(more.Blocks, htmlBlock{Note: c.FlameGraphTitle},
				htmlBlock{Chart: template.HTML(`<figure class="chart flame">` + svg + `</figure>`)}) // see above
		}
		page.Sections = append(page.Sections, more)
	}
	return reportTemplate.Execute(w, page)
}

// bisectionBars draws one bar per point from 0 to its ratio, coloured by
// verdict, with its interval as a whisker; the first bad point's bar is
// outlined and labelled, a failed point is an × and an untested one a dot.
// The y-axis starts at 0, the good level is the dashed line at 1.
func bisectionBars(c BisectionChart) string {
	hi := 1.0
	for _, p := range c.Points {
		for _, v := range []float64{p.Ratio, p.High} {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				hi = math.Max(hi, v)
			}
		}
	}
	lo, hi, ticks := niceRange(0, hi*1.05, true)
	var b strings.Builder
	title := "QPS / QPS(good)"
	if c.Key != "" {
		title += " at " + c.Key
	}
	svgOpen(&b, barFrame, "chart bisection", title)
	y := svgFrame(&b, barFrame, lo, hi, ticks, "ratio to good")
	slot := float64(chartW-marginL-marginR) / float64(max(len(c.Points), 1))
	barW := math.Max(2, math.Min(40, slot*0.6))
	for i, p := range c.Points {
		cx := float64(marginL) + slot*(float64(i)+0.5)
		tip := fmt.Sprintf("%s: %s", p.Name, p.Verdict)
		switch {
		case p.Verdict == "Failed":
			fmt.Fprintf(&b, `<text class="failed" x="%.1f" y="%.1f" font-size="15" font-weight="700" text-anchor="middle" fill="#7f7f7f"><title>%s</title>×</text>`, cx, y(0)-4, esc(tip+" "+p.Note))
		case math.IsNaN(p.Ratio):
			fmt.Fprintf(&b, `<circle class="untested" cx="%.1f" cy="%.1f" r="2.5" fill="#bbb"><title>%s</title></circle>`, cx, y(0)-4, esc(tip))
		default:
			color := verdictColors[p.Verdict]
			if color == "" {
				color = "#7f7f7f"
			}
			top := y(p.Ratio)
			stroke := ""
			if i == c.FirstBad {
				stroke = ` stroke="#000" stroke-width="2.5"`
			}
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"%s><title>%s, ratio %s</title></rect>`,
				cx-barW/2, top, barW, math.Max(y(0)-top, 0.8), color, stroke, esc(tip), fmtTick(p.Ratio))
			if !math.IsNaN(p.Low) && !math.IsInf(p.High, 0) {
				fmt.Fprintf(&b, `<line class="whisker" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#222"/>`, cx, y(p.Low), cx, y(math.Min(p.High, hi)))
			}
		}
		if i == c.FirstBad {
			fmt.Fprintf(&b, `<text class="first-bad" x="%.1f" y="%d" font-size="11" font-weight="700" text-anchor="middle">first bad</text>`, cx, marginT-4)
		}
		label := p.Name
		if r := []rune(label); len(r) > 28 {
			label = "…" + string(r[len(r)-27:])
		}
		ly := barFrame.h - barFrame.mb + 14
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="10" text-anchor="end" transform="rotate(-35 %.1f %d)">%s</text>`, cx, ly, cx, ly, esc(label))
	}
	fmt.Fprintf(&b, `<line class="baseline" x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#000" stroke-width="1.5" stroke-dasharray="6 3"/>`, marginL, y(1), chartW-marginR, y(1))
	fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="11">good 1.0</text>`, chartW-marginR+4, y(1)+4)
	b.WriteString("</svg>")
	b.WriteString("<figcaption>The y-axis starts at 0. Bars: green good, red bad, orange inconclusive; whiskers are 95 % intervals; × failed to run, · not measured. The first bad point is outlined.</figcaption></figure>\n")
	return b.String()
}
