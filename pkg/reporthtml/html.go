package reporthtml

import (
	_ "embed"
	"fmt"
	"hash/fnv"
	"html"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/stats"
)

// HTMLOptions tune WriteHTML.
type HTMLOptions struct {
	Title string
	// Grouping splits the relative-throughput bar charts (one chart per
	// group); nil means CatalogGrouping().
	Grouping *analysis.Grouping
	// MaxSeriesCharts bounds the throughput-over-time charts (one per step
	// and thread count); 0 means 12.
	MaxSeriesCharts int
	// Paired, when set, is drawn first (compare: run B / run A per cell);
	// PairedName names run B.
	Paired     *analysis.RelativeTable
	PairedName string
	// History, when set, is drawn as one line chart per series with change
	// points marked.
	History *analysis.HistoryReport
	// Profiles, when set, are drawn last: per profiled step, the table of
	// the functions whose share changed and the differential flame graph
	// (explain; the caller renders both).
	Profiles []HTMLProfile
	// Regression, when set, is drawn first: the run's verdict, what it
	// named and links to where the chain goes on (its bisection).
	Regression *HTMLRegression
	// Nav, when set, are links drawn above everything (the suite's site).
	Nav []Link
}

// HTMLRegression is a run's regression verdict as its report shows it.
type HTMLRegression struct {
	// Verdict is the Regressed condition's message; Items the regressed
	// pairs and what followed (the bisection's state).
	Verdict string
	Items   []string
	Links   []Link
}

// HTMLProfile is one profile comparison of the HTML report.
type HTMLProfile struct {
	Table analysis.Table
	// SVG is the differential flame graph, drawn by pkg/profile, which
	// escapes every name it places.
	SVG template.HTML
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939"}

const (
	chartW  = 1100
	marginL = 64
	marginR = 70
	marginT = 60
)

// frame is a chart's height and bottom margin: bar charts need room for
// rotated step names, line charts only for the x-axis.
type frame struct{ h, mb int }

var (
	barFrame  = frame{h: 390, mb: 110}
	lineFrame = frame{h: 330, mb: 50}
)

// reportTemplate is the page around the charts. The charts themselves are
// SVG drawn by the functions below, whose every text goes through esc, and
// enter the page as chartSVG.
//
//go:embed report.html.tmpl
var reportTemplateText string

var reportTemplate = template.Must(template.New("report").Parse(reportTemplateText))

// htmlPage is what reportTemplate renders.
type htmlPage struct {
	Title    string
	CSS      template.CSS
	Sections []htmlSection
}

// htmlSection is an optional h2 heading and what follows it.
type htmlSection struct {
	Heading string
	Blocks  []htmlBlock
}

// htmlBlock is one of: a chart, a table (with its notes), a note paragraph,
// a bulleted list or a list of links.
type htmlBlock struct {
	Chart template.HTML
	Table *analysis.Table
	Note  string
	Items []string
	Links []Link
}

// Link is a hyperlink of a page: a relative path within the same bucket
// or directory, so the page works from any copy.
type Link struct {
	Label string
	Href  string
}

// chartSVG marks a chart drawn by this file as safe HTML: the chart
// functions escape every text they place (esc) and format every number
// themselves.
func chartSVG(svg string) htmlBlock { return htmlBlock{Chart: template.HTML(svg)} }

func tableBlocks(ts ...analysis.Table) []htmlBlock {
	out := make([]htmlBlock, len(ts))
	for i := range ts {
		out[i] = htmlBlock{Table: &ts[i]}
	}
	return out
}

// WriteHTML writes a self-contained HTML page (inline CSS and SVG, no
// scripts, nothing fetched) with the report's tables and charts:
// relative-throughput bars per group with the base line at 1.0,
// throughput-over-time lines and scale-up curves. r may be nil when only
// opts.Paired or opts.History are drawn.
func WriteHTML(w io.Writer, r *analysis.Report, opts HTMLOptions) error {
	g := analysis.CatalogGrouping()
	if opts.Grouping != nil {
		g = *opts.Grouping
	}
	if opts.MaxSeriesCharts == 0 {
		opts.MaxSeriesCharts = 12
	}
	page := htmlPage{Title: opts.Title, CSS: template.CSS(css)}
	if page.Title == "" && r != nil {
		page.Title = "dbbench report: " + r.Name
	}
	add := func(heading string, blocks ...htmlBlock) {
		page.Sections = append(page.Sections, htmlSection{Heading: heading, Blocks: blocks})
	}
	if len(opts.Nav) > 0 {
		add("", htmlBlock{Links: opts.Nav})
	}
	if rg := opts.Regression; rg != nil {
		blocks := []htmlBlock{{Note: rg.Verdict}}
		if len(rg.Items) > 0 {
			blocks = append(blocks, htmlBlock{Items: rg.Items})
		}
		if len(rg.Links) > 0 {
			blocks = append(blocks, htmlBlock{Links: rg.Links})
		}
		add("Regression verdict", blocks...)
	}
	if opts.Paired != nil {
		p, name := opts.Paired, opts.PairedName
		if name == "" {
			name = "B"
		}
		groups := groupSteps(p.Steps, g)
		blocks := make([]htmlBlock, 0, len(groups))
		for _, grp := range groups {
			blocks = append(blocks, chartSVG(barChart(fmt.Sprintf("%s: QPS(%s) / QPS(%s), %d threads", grp.name, name, p.Base, p.Threads), p, grp.steps)))
		}
		add(fmt.Sprintf("%s compared with %s, cell by cell", name, p.Base), append(blocks, tableBlocks(analysis.PairedTableText(p, p.Base, name))...)...)
	}
	if r != nil {
		addReport(add, r, g, opts.MaxSeriesCharts)
	}
	if opts.History != nil {
		// Series with change points first; at most MaxSeriesCharts charts.
		var with, without []analysis.HistorySeries
		for _, s := range opts.History.Series {
			if len(s.ChangePoints) > 0 {
				with = append(with, s)
			} else {
				without = append(without, s)
			}
		}
		all := append(with, without...)
		var blocks []htmlBlock
		if len(all) > opts.MaxSeriesCharts {
			blocks = append(
				blocks,
				htmlBlock{
					Note: fmt.Sprintf(
						"Charts of the first %d of %d series, those with change points first (%d); the tables below list them all.",
						opts.MaxSeriesCharts,
						len(all),
						len(with),
					),
				},
			)
			all = all[:opts.MaxSeriesCharts]
		}
		for _, s := range all {
			blocks = append(blocks, chartSVG(historyChart(s)))
		}
		add("History and change points", append(blocks, tableBlocks(opts.History.Tables()...)...)...)
	}
	if len(opts.Profiles) > 0 {
		blocks := make([]htmlBlock, 0, 2*len(opts.Profiles))
		for i := range opts.Profiles {
			blocks = append(blocks, htmlBlock{Table: &opts.Profiles[i].Table}, htmlBlock{Chart: opts.Profiles[i].SVG})
		}
		add("Where the CPU went (on-CPU profiles, from unmeasured passes)", blocks...)
	}
	return reportTemplate.Execute(w, page)
}

// addReport adds the sections of a single-run (or merged) report.
func addReport(add func(string, ...htmlBlock), r *analysis.Report, g analysis.Grouping, maxSeries int) {
	for _, rel := range r.Relative {
		if len(rel.Cells) == 0 {
			continue
		}
		var blocks []htmlBlock
		for _, grp := range groupSteps(rel.Steps, g) {
			blocks = append(blocks, chartSVG(barChart(fmt.Sprintf("%s: QPS(cell) / QPS(%s), %d threads", grp.name, rel.Base, rel.Threads), rel, grp.steps)))
		}
		add(fmt.Sprintf("Relative throughput, %d threads (base %s)", rel.Threads, rel.Base), append(blocks, tableBlocks(rel.Table())...)...)
	}
	for _, gt := range r.Groups {
		add(fmt.Sprintf("Group statistics, %d threads", gt.Threads), tableBlocks(gt.Tables()...)...)
	}
	if len(r.Series) > 0 {
		add("Throughput over time", chartSVG(seriesCharts(r, maxSeries)), htmlBlock{Table: ptrTo(analysis.SeriesTable(r.Series))})
	}
	if len(r.ScaleUp) > 0 {
		var blocks []htmlBlock
		for _, s := range r.ScaleUp {
			for _, grp := range groupSteps(s.Steps, g) {
				blocks = append(blocks, chartSVG(scaleUpChart(s, grp)))
			}
			blocks = append(blocks, tableBlocks(s.Tables()...)...)
		}
		add("Scale-up", blocks...)
	}
	for _, h := range r.Hardware {
		if ts := h.Tables(); len(ts) > 0 {
			add(fmt.Sprintf("Hardware efficiency: %s, %d threads", h.Step, h.Threads), tableBlocks(ts...)...)
		}
	}
	for _, c := range r.Counters {
		add(fmt.Sprintf("Engine counters per operation: %s, %d threads", c.Step, c.Threads), tableBlocks(c.Tables()...)...)
	}
	if len(r.Repeats) > 0 {
		add("Repeats", tableBlocks(analysis.RepeatTable(r.Repeats))...)
	}
	addLatency(add, r.Latency, maxSeries)
	if t, ok := analysis.UnverifiedTable(r.Unverified); ok {
		add("Config settings not verified", tableBlocks(t)...)
	}
	if len(r.Notes) > 0 {
		add("Notes", htmlBlock{Items: r.Notes})
	}
}

const css = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#222;max-width:1140px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
figure{margin:16px 0}figcaption{font-size:13px;color:#555}
table{border-collapse:collapse;font-size:12px;margin:8px 0 4px}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
caption{text-align:left;font-weight:600;padding:4px 0}.note{font-size:12px;color:#555;margin:0}
svg text{font-family:system-ui,sans-serif}footer{margin-top:32px;font-size:12px;color:#777}
.pair{display:flex;gap:12px}.pair figure{flex:1;min-width:0}.pair svg{width:100%;height:auto}
`

func esc(s string) string { return html.EscapeString(s) }

type stepGroup struct {
	name  string
	steps []int
}

// groupSteps splits row indices by group, in grouping order; ungrouped steps
// go last under "other".
func groupSteps(steps []string, g analysis.Grouping) []stepGroup {
	idx := map[string]int{}
	var out []stepGroup
	for _, n := range g.Names() {
		idx[n] = len(out)
		out = append(out, stepGroup{name: n})
	}
	var other []int
	for i, s := range steps {
		if n, ok := g.GroupOf(s); ok {
			out[idx[n]].steps = append(out[idx[n]].steps, i)
		} else {
			other = append(other, i)
		}
	}
	if len(other) > 0 {
		out = append(out, stepGroup{name: "other", steps: other})
	}
	var kept []stepGroup
	for _, sg := range out {
		if len(sg.steps) > 0 {
			kept = append(kept, sg)
		}
	}
	return kept
}

// niceRange widens [lo, hi] to multiples of a round step and returns ticks.
func niceRange(lo, hi float64, zero bool) (float64, float64, []float64) {
	if zero {
		lo = math.Min(lo, 0)
	}
	if !(hi > lo) {
		hi = lo + 1
	}
	raw := (hi - lo) / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	lo = math.Floor(lo/step+1e-9) * step
	hi = math.Ceil(hi/step-1e-9) * step
	var ticks []float64
	for v := lo; v <= hi+step/2; v += step {
		ticks = append(ticks, math.Round(v/step)*step)
	}
	return lo, hi, ticks
}

func fmtTick(v float64) string {
	s := strings.TrimRight(strings.TrimRight(analysis.FormatFloat(v, 3), "0"), ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}

// svgFrame draws the axes box, y ticks and grid; it returns the y mapper.
func svgFrame(b *strings.Builder, f frame, lo, hi float64, ticks []float64, ylabel string) func(float64) float64 {
	plotH := float64(f.h - marginT - f.mb)
	y := func(v float64) float64 { return float64(marginT) + plotH*(1-(v-lo)/(hi-lo)) }
	for _, tv := range ticks {
		yy := y(tv)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e5e5"/>`, marginL, yy, chartW-marginR, yy)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" font-size="11" text-anchor="end" fill="#444">%s</text>`, marginL-6, yy+4, fmtTick(tv))
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/>`, marginL, marginT, marginL, f.h-f.mb)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/>`, marginL, f.h-f.mb, chartW-marginR, f.h-f.mb)
	fmt.Fprintf(
		b,
		`<text x="14" y="%d" font-size="11" fill="#444" transform="rotate(-90 14 %d)" text-anchor="middle">%s</text>`,
		(marginT+f.h-f.mb)/2,
		(marginT+f.h-f.mb)/2,
		esc(ylabel),
	)
	return y
}

func svgOpen(b *strings.Builder, f frame, class, title string) {
	fmt.Fprintf(
		b,
		`<figure><svg class="%s" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		class,
		chartW,
		f.h,
		chartW,
		f.h,
		esc(title),
	)
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="#fff"/>`, chartW, f.h)
	fmt.Fprintf(b, `<text x="%d" y="20" font-size="14" font-weight="600">%s</text>`, marginL, esc(title))
}

// legendY is the baseline of a chart's legend row, under its title.
const legendY = 38

func legend(b *strings.Builder, names []string) {
	y := legendY
	x := marginL
	for i, n := range names {
		label := n
		if len(label) > 40 {
			label = label[:39] + "…"
		}
		w := 24 + int(6.6*float64(len([]rune(label))))
		if x+w > chartW-marginR {
			x = marginL
			y += 14
		}
		fmt.Fprintf(
			b,
			`<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d" font-size="10.5">%s</text>`,
			x,
			y-9,
			palette[i%len(palette)],
			x+14,
			y,
			esc(label),
		)
		x += w
	}
}

// barChart draws grouped bars of relative throughput for the given rows: one
// group of bars per step, one bar per cell, the base line at 1.0. Bars grow
// from 1.0 (up: faster, down: slower), so the y-axis need not include 0; the
// caption says where it starts. inf is drawn to the top with an "inf" label,
// a missing value as an "×" marker, never as a bar.
func barChart(title string, t *analysis.RelativeTable, rows []int) string {
	lo, hi, ticks := barRange(t, rows)
	var b strings.Builder
	svgOpen(&b, barFrame, "chart bars", title)
	bp := barPlot{b: &b, t: t, hatch: hatchPatterns(&b, title, len(t.Cells)), lo: lo, hi: hi}
	bp.y = svgFrame(&b, barFrame, lo, hi, ticks, "relative QPS")
	plotW := float64(chartW - marginL - marginR)
	slot := plotW / float64(len(rows))
	n := len(t.Cells)
	bp.barW = math.Max(1, math.Min(28, slot*0.8/float64(n)))
	for k, i := range rows {
		x0 := float64(marginL) + slot*float64(k) + (slot-bp.barW*float64(n))/2
		for j := range t.Ratios[i] {
			bp.ratio(i, j, x0+bp.barW*float64(j))
		}
		// Step label, rotated.
		cx := float64(marginL) + slot*(float64(k)+0.5)
		ly := barFrame.h - barFrame.mb + 14
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="10" text-anchor="end" transform="rotate(-35 %.1f %d)">%s</text>`, cx, ly, cx, ly, esc(t.Steps[i]))
	}
	y := bp.y
	fmt.Fprintf(
		&b,
		`<line class="baseline" x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#000" stroke-width="1.5" stroke-dasharray="6 3"/>`,
		marginL,
		y(1),
		chartW-marginR,
		y(1),
	)
	fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="11">base 1.0</text>`, chartW-marginR+4, y(1)+4)
	legend(&b, t.Cells)
	b.WriteString("</svg>")
	b.WriteString(barCaption(lo, t.Base, bp.marked || t.Inference != nil, bp.paired))
	return b.String()
}

// barRange is the y-axis of a bar chart of rows: every value and 1.0, and
// the bounded intervals, each cut at half and twice its ratio so that one
// wide interval does not flatten every bar (the tooltip has it whole).
func barRange(t *analysis.RelativeTable, rows []int) (lo, hi float64, ticks []float64) {
	lo, hi = 1.0, 1.0
	for _, i := range rows {
		for j, r := range t.Ratios[i] {
			if r.State == analysis.RatioValue || r.State == analysis.RatioZeroOverZero {
				lo, hi = math.Min(lo, r.Value), math.Max(hi, r.Value)
			}
			if ri := inferenceAt(t, i, j); ri != nil && finiteInterval(ri) && r.State == analysis.RatioValue {
				lo = math.Min(lo, math.Max(float64(ri.Low), r.Value/2))
				hi = math.Max(hi, math.Min(float64(ri.High), r.Value*2))
			}
		}
	}
	pad := (hi - lo) * 0.08
	if pad == 0 {
		pad = 0.05
	}
	return niceRange(math.Max(0, lo-pad), hi+pad, false)
}

// barPlot is a bar chart being drawn. marked and paired record whether a
// bar was drawn that the caption must explain.
type barPlot struct {
	b      *strings.Builder
	t      *analysis.RelativeTable
	y      func(float64) float64
	hatch  func(int) string
	lo, hi float64
	barW   float64
	marked bool
	paired bool
}

// ratio draws the ratio of step i, cell j at x: a bar from 1.0, or the
// mark of a value that is not one (missing, invalid, infinite).
func (bp *barPlot) ratio(i, j int, x float64) {
	b, t, y, barW := bp.b, bp.t, bp.y, bp.barW
	r := t.Ratios[i][j]
	color := palette[j%len(palette)]
	tip := fmt.Sprintf("%s, %s: %s", t.Cells[j], t.Steps[i], r.String())
	switch r.State {
	case analysis.RatioMissing:
		fmt.Fprintf(
			b,
			`<text class="missing" x="%.1f" y="%.1f" font-size="15" font-weight="700" text-anchor="middle" fill="%s"><title>%s</title>×</text>`,
			x+barW/2,
			y(1)-4,
			color,
			esc(tip),
		)
	case analysis.RatioInvalid:
		fmt.Fprintf(
			b,
			`<text class="invalid" x="%.1f" y="%.1f" font-size="13" font-weight="700" text-anchor="middle" fill="%s"><title>%s (the quality gate: not a value)</title>!</text>`,
			x+barW/2,
			y(1)-4,
			color,
			esc(tip),
		)
	case analysis.RatioInf:
		fmt.Fprintf(
			b,
			`<rect class="bar" x="%.1f" y="%d" width="%.1f" height="%.1f" fill="%s" opacity="0.5"><title>%s</title></rect>`,
			x,
			marginT,
			barW,
			y(1)-float64(marginT),
			color,
			esc(tip),
		)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="10" text-anchor="middle">inf</text>`, x+barW/2, marginT-2)
	default:
		bp.bar(i, j, x, color, tip)
	}
}

// bar draws a value's bar from 1.0, styled by its interval's mark, with
// the interval as a whisker.
func (bp *barPlot) bar(i, j int, x float64, color, tip string) {
	t, y, barW := bp.t, bp.y, bp.barW
	r := t.Ratios[i][j]
	top, bot := y(r.Value), y(1)
	if top > bot {
		top, bot = bot, top
	}
	ri := inferenceAt(t, i, j)
	fill, extra := color, ""
	if ri != nil {
		tip = fmt.Sprintf("%s, %s: %s", t.Cells[j], t.Steps[i], analysis.FormatWithInterval(r, ri))
		bp.marked = bp.marked || ri.Marker == analysis.MarkerNoise || ri.Marker == analysis.MarkerUnconfirmed
		bp.paired = bp.paired || ri.Method == inference.MethodPairedLog
		switch ri.Marker {
		case analysis.MarkerNoise:
			// Within noise: faded, so it does not read as a finding.
			extra = fmt.Sprintf(` data-mark="%s" fill-opacity="0.3" stroke="%s" stroke-opacity="0.6"`, analysis.MarkerNoise, color)
		case analysis.MarkerUnconfirmed:
			// Beyond the runs' own jitter but one run per side:
			// hatched, a finding not made yet.
			fill = fmt.Sprintf("url(#%s)", bp.hatch(j))
			extra = fmt.Sprintf(` data-mark="%s" stroke="%s"`, analysis.MarkerUnconfirmed, color)
		case analysis.MarkerSignificant:
			extra = fmt.Sprintf(` data-mark="%s"`, analysis.MarkerSignificant)
		}
	}
	fmt.Fprintf(
		bp.b,
		`<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"%s><title>%s</title></rect>`,
		x,
		top,
		barW,
		math.Max(bot-top, 0.8),
		fill,
		extra,
		esc(tip),
	)
	if ri != nil {
		whisker(bp.b, ri, r.Value, x+barW/2, barW, y, bp.lo, bp.hi)
	}
}

// barCaption says where the y-axis starts, since bars grow from 1.0 and
// it need not start at 0, and explains the whiskers and marks the chart
// has (uncertain) and the paired ratios' centres (paired).
func barCaption(lo float64, base string, uncertain, paired bool) string {
	note := "The y-axis does not start at 0"
	if lo == 0 {
		note = "The y-axis starts at 0"
	}
	uncertainty := ""
	if uncertain {
		uncertainty = fmt.Sprintf(
			" Whiskers are the ratios' %s %% intervals. Faded bars (%s) are within noise; hatched bars (%s) lie beyond the runs' own per-second jitter but compare one run per side: not a finding until repeated.",
			analysis.FormatPercent(inference.DefaultLevel),
			analysis.MarkerNoise,
			analysis.MarkerUnconfirmed,
		)
	}
	if paired {
		uncertainty += " Ratios paired by block (cells run one after another on one node) are the geometric means of the per-block ratios, at the centre of their intervals."
	}
	return fmt.Sprintf(
		"<figcaption>%s: it starts at %s. Bars grow from the base line at 1.0 (base: %s); above it is faster. × marks a missing result; inf bars reach the top.%s</figcaption></figure>\n",
		note,
		fmtTick(lo),
		esc(base),
		uncertainty,
	)
}

// inferenceAt is the interval and mark of t's ratio (step i, cell j), or
// nil.
func inferenceAt(t *analysis.RelativeTable, i, j int) *analysis.RatioInference {
	if i >= len(t.Inference) || j >= len(t.Inference[i]) {
		return nil
	}
	return t.Inference[i][j]
}

func finiteInterval(ri *analysis.RatioInference) bool {
	l, h := float64(ri.Low), float64(ri.High)
	return !math.IsNaN(l) && !math.IsNaN(h) && !math.IsInf(l, 0) && !math.IsInf(h, 0) && h >= l
}

// whisker draws a ratio's interval at x, cut at the chart's range [lo,
// hi]; an open end (unbounded, or beyond the range) gets no cap.
func whisker(b *strings.Builder, ri *analysis.RatioInference, v, x, barW float64, y func(float64) float64, lo, hi float64) {
	l, h := float64(ri.Low), float64(ri.High)
	if math.IsNaN(l) || math.IsNaN(h) {
		if ri.TooFew {
			// No interval to draw: too few runs; the mark says so.
			fmt.Fprintf(b, `<text class="mark" x="%.1f" y="%.1f" font-size="10" font-weight="700" text-anchor="middle" fill="#222">?</text>`, x, y(math.Max(v, 1))-3)
		}
		return
	}
	if ri.FiellerUnbounded || math.IsInf(h, 1) {
		h = math.Inf(1)
	}
	cl, ch := math.Max(l, lo), math.Min(h, hi)
	if ch < cl {
		return
	}
	fmt.Fprintf(b, `<line class="whisker" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#222" stroke-width="1.2"/>`, x, y(cl), x, y(ch))
	half := math.Min(barW*0.6, 8) / 2
	if l >= lo {
		fmt.Fprintf(b, `<line class="whisker-cap" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#222"/>`, x-half, y(l), x+half, y(l))
	}
	if h <= hi {
		fmt.Fprintf(b, `<line class="whisker-cap" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#222"/>`, x-half, y(h), x+half, y(h))
	}
	if ri.Marker == analysis.MarkerUnconfirmed {
		top := math.Min(y(ch), y(math.Max(v, 1)))
		fmt.Fprintf(b, `<text class="mark" x="%.1f" y="%.1f" font-size="10" font-weight="700" text-anchor="middle" fill="#222">?</text>`, x, top-3)
	}
}

// hatchPatterns defines a diagonal hatching per palette colour for the
// chart (ids unique to its title, so charts of one page do not share
// them) and returns the id of colour j's.
func hatchPatterns(b *strings.Builder, title string, n int) func(int) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(title))
	prefix := fmt.Sprintf("hatch-%08x-", h.Sum32())
	n = min(n, len(palette))
	b.WriteString("<defs>")
	for j := 0; j < n; j++ {
		fmt.Fprintf(
			b,
			`<pattern id="%s%d" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect width="6" height="6" fill="%s" fill-opacity="0.18"/><line x1="0" y1="0" x2="0" y2="6" stroke="%s" stroke-width="3"/></pattern>`,
			prefix,
			j,
			palette[j],
			palette[j],
		)
	}
	b.WriteString("</defs>")
	return func(j int) string { return fmt.Sprintf("%s%d", prefix, j%len(palette)) }
}

// polyline draws one series.
func polyline(b *strings.Builder, xs, ys []float64, x, y func(float64) float64, color, class, tip string) {
	var pts strings.Builder
	for i := range xs {
		fmt.Fprintf(&pts, "%.1f,%.1f ", x(xs[i]), y(ys[i]))
	}
	fmt.Fprintf(
		b,
		`<polyline class="%s" points="%s" fill="none" stroke="%s" stroke-width="1.3"><title>%s</title></polyline>`,
		class,
		strings.TrimSpace(pts.String()),
		color,
		esc(tip),
	)
}

func xAxis(b *strings.Builder, f frame, lo, hi float64, label string) func(float64) float64 {
	plotW := float64(chartW - marginL - marginR)
	x := func(v float64) float64 { return float64(marginL) + plotW*(v-lo)/(hi-lo) }
	_, _, ticks := niceRange(lo, hi, false)
	for _, tv := range ticks {
		if tv < lo-1e-9 || tv > hi+1e-9 {
			continue
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="11" text-anchor="middle" fill="#444">%s</text>`, x(tv), f.h-f.mb+16, fmtTick(tv))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="11" text-anchor="middle" fill="#444">%s</text>`, (marginL+chartW-marginR)/2, f.h-f.mb+34, esc(label))
	return x
}

// seriesCharts draws one chart per (step, threads) with a line per cell,
// downsampled to at most 600 points per line.
func seriesCharts(r *analysis.Report, maxCharts int) string {
	type key struct {
		step    string
		threads int
	}
	var order []key
	by := map[key][]analysis.SeriesStats{}
	for _, s := range r.Series {
		k := key{s.Step, s.Threads}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], s)
	}
	var b strings.Builder
	if len(order) > maxCharts {
		fmt.Fprintf(&b, "<p class=\"note\">Showing the first %d of %d step charts.</p>\n", maxCharts, len(order))
		order = order[:maxCharts]
	}
	for _, k := range order {
		stats := by[k]
		var lines [][2][]float64
		var names []string
		xmax, ymax := 0.0, 0.0
		for _, s := range stats {
			xs, ys := plotPoints(s, 600)
			if len(xs) == 0 {
				continue
			}
			lines = append(lines, [2][]float64{xs, ys})
			names = append(names, s.Cell)
			xmax = math.Max(xmax, xs[len(xs)-1])
			for _, v := range ys {
				ymax = math.Max(ymax, v)
			}
		}
		if len(lines) == 0 {
			continue
		}
		title := fmt.Sprintf("%s, %d threads: QPS per second", k.step, k.threads)
		svgOpen(&b, lineFrame, "chart series", title)
		lo, hi, ticks := niceRange(0, ymax*1.05, true)
		y := svgFrame(&b, lineFrame, lo, hi, ticks, "QPS")
		_, xhi, _ := niceRange(0, math.Max(xmax, 1), true)
		x := xAxis(&b, lineFrame, 0, xhi, "seconds since the step started")
		for i, l := range lines {
			polyline(&b, l[0], l[1], x, y, palette[i%len(palette)], "line", names[i])
		}
		legend(&b, names)
		b.WriteString(
			"</svg><figcaption>Per-second throughput after the warm-up; the y-axis starts at 0 so stalls show at their true depth.</figcaption></figure>\n",
		)
	}
	return b.String()
}

// scaleUpChart draws QPS(X)/QPS(base) against X, a line per step, and the
// ideal X/base dashed.
func scaleUpChart(t *analysis.ScaleUpTable, grp stepGroup) string {
	var b strings.Builder
	title := fmt.Sprintf("Scale-up of %s, %s: QPS(X threads) / QPS(%d)", t.Cell, grp.name, t.BaseThreads)
	svgOpen(&b, lineFrame, "chart scaleup", title)
	ideal := float64(t.Top) / float64(t.BaseThreads)
	ymax := ideal
	for _, i := range grp.steps {
		for _, r := range t.Ratios[i] {
			if r.State == analysis.RatioValue {
				ymax = math.Max(ymax, r.Value)
			}
		}
	}
	lo, hi, ticks := niceRange(0, ymax*1.05, true)
	y := svgFrame(&b, lineFrame, lo, hi, ticks, "relative QPS")
	x := xAxis(&b, lineFrame, float64(t.Threads[0]), float64(t.Top), "client threads")
	polyline(
		&b,
		[]float64{float64(t.Threads[0]), float64(t.Top)},
		[]float64{float64(t.Threads[0]) / float64(t.BaseThreads), ideal},
		x,
		y,
		"#000",
		"ideal",
		"ideal",
	)
	b.WriteString(`<text x="` + fmt.Sprintf("%.1f", x(float64(t.Top))-40) + `" y="` + fmt.Sprintf("%.1f", y(ideal)+14) + `" font-size="11">ideal</text>`)
	names := make([]string, 0, len(grp.steps))
	for n, i := range grp.steps {
		s := t.Steps[i]
		names = append(names, s)
		var xs, ys []float64
		for k, th := range t.Threads {
			if r := t.Ratios[i][k]; r.State == analysis.RatioValue || r.State == analysis.RatioZeroOverZero {
				xs = append(xs, float64(th))
				ys = append(ys, r.Value)
			}
		}
		if len(xs) > 1 {
			polyline(&b, xs, ys, x, y, palette[n%len(palette)], "line", s)
		}
	}
	legend(&b, names)
	b.WriteString("</svg><figcaption>A line near the dashed ideal scales perfectly; hover a line for its step.</figcaption></figure>\n")
	// The dashed style goes on the ideal line.
	return strings.Replace(b.String(), `class="ideal" points=`, `class="ideal" stroke-dasharray="6 3" points=`, 1)
}

// historyChart draws one history series with its change points.
func historyChart(s analysis.HistorySeries) string {
	var b strings.Builder
	title := fmt.Sprintf("%s / %s / %d threads across %d runs", s.Combination, s.Step, s.Threads, len(s.Values))
	unit := "QPS"
	if s.Metric.LowerIsBetter() {
		title = fmt.Sprintf("%s / %s / %d threads, %s (lower is better) across %d runs", s.Combination, s.Step, s.Threads, s.Metric.Label(), len(s.Values))
		unit = s.Metric.Label() + " (ms)"
	}
	svgOpen(&b, lineFrame, "chart history", title)
	ymax := 0.0
	for _, v := range s.Values {
		ymax = math.Max(ymax, v)
	}
	lo, hi, ticks := niceRange(0, ymax*1.05, true)
	y := svgFrame(&b, lineFrame, lo, hi, ticks, unit)
	x := xAxis(&b, lineFrame, 0, math.Max(1, float64(len(s.Values)-1)), "run (oldest first)")
	xs := make([]float64, len(s.Values))
	for i := range xs {
		xs[i] = float64(i)
	}
	polyline(&b, xs, s.Values, x, y, palette[0], "line", s.Step)
	for i, v := range s.Values {
		fmt.Fprintf(
			&b,
			`<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"><title>%s: %s</title></circle>`,
			x(xs[i]),
			y(v),
			palette[0],
			esc(s.Runs[i]),
			analysis.FormatFloat(v, 2),
		)
	}
	for _, c := range s.ChangePoints {
		cx := x(float64(c.Index))
		fmt.Fprintf(
			&b,
			`<line class="changepoint" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#d62728" stroke-dasharray="4 3"/>`,
			cx,
			marginT,
			cx,
			lineFrame.h-lineFrame.mb,
		)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11" fill="#d62728">%s %+.1f%%</text>`, cx+4, marginT+12, esc(c.Run), c.ChangePercent)
	}
	b.WriteString("</svg><figcaption>Red dashed lines mark change points (first run of the new level); the y-axis starts at 0.</figcaption></figure>\n")
	return b.String()
}

// plotPoints returns s's steady series as (second, qps) points, averaged
// down to at most max points.
func plotPoints(s analysis.SeriesStats, maxPoints int) ([]float64, []float64) {
	if s.Source() == nil {
		return nil, nil
	}
	steady := s.Source().Steady()
	offset := float64(len(s.Source().Values)-len(steady)) * s.IntervalSeconds
	f := (len(steady) + maxPoints - 1) / maxPoints
	if f < 1 {
		f = 1
	}
	var xs, ys []float64
	for i := 0; i < len(steady); i += f {
		w := steady[i:min(i+f, len(steady))]
		xs = append(xs, offset+(float64(i)+float64(len(w))/2)*s.IntervalSeconds)
		ys = append(ys, stats.Mean(w))
	}
	return xs, ys
}
func ptrTo[T any](v T) *T { return &v }
