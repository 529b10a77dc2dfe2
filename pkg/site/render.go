package site

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/dbbench/dbbench/pkg/attribution"
	"github.com/dbbench/dbbench/pkg/triage"
)

// The site's files, relative to the suite's directory (<prefix>/<suite>/),
// and the names its links follow. They are the object store's names too
// (pkg/store declares its layout with them, since it publishes the site):
// part of the stored format, never renamed.
const (
	FileIndex = "index.html"
	FileData  = "site.json"
	// ReportFile is a run's and a bisection's page.
	ReportFile = "report.html"
	// BisectionsDir is the suite's bisections' directory.
	BisectionsDir = "_bisections"
)

// RenderOptions tune Render.
type RenderOptions struct {
	// Segment is a name's directory in the store (store.EscapeSegment),
	// for the links; nil escapes the name as a URL path segment, which
	// is the same for Kubernetes names.
	Segment func(string) string
	// MaxCharts bounds the charts (series with change points first); the
	// table lists every change point. 0 means DefaultMaxCharts.
	MaxCharts int
}

// Files renders the site: index.html and site.json.
func Files(idx *Index, opts RenderOptions) (map[string][]byte, error) {
	var page bytes.Buffer
	if err := Render(&page, idx, opts); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", FileData, err)
	}
	return map[string][]byte{FileIndex: page.Bytes(), FileData: append(data, '\n')}, nil
}

//go:embed index.html.tmpl
var indexTemplateText string

var indexTemplate = template.Must(template.New("index").Funcs(template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"pct":   func(v float64) string { return fmt.Sprintf("%+.1f %%", v) },
	"short": attribution.Short,
	"changes": func(cs []attribution.Change) string {
		s := make([]string, len(cs))
		for i, c := range cs {
			s[i] = c.String()
		}
		return strings.Join(s, ", ")
	},
	"pairs": func(ps []triage.VerdictPair) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = p.String()
			if p.Since != "" {
				out[i] += fmt.Sprintf(" since %s (after %s)", p.Since, p.LastBefore)
			}
			if p.Ack != "" {
				out[i] += fmt.Sprintf(" — %s by %s", strings.ToLower(string(p.Resolution)), p.Ack)
			}
			switch {
			case p.EnvironmentOnly:
				out[i] += " — environment only: " + joinChanges(p.CoincidesWith)
			case len(p.CoincidesWith) > 0:
				out[i] += " — coincides with: " + joinChanges(p.CoincidesWith)
			}
		}
		return out
	},
}).Parse(indexTemplateText))

func joinChanges(cs []attribution.Change) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return strings.Join(s, ", ")
}

// page is what the template renders.
type page struct {
	*Index
	CSS        template.CSS
	Legend     template.HTML
	Charts     []template.HTML
	ChartNote  string
	Changes    []changeRow
	RunRows    []runRow
	BisRows    []bisRow
	AckRows    []ackRow
	LatestHref string
	OpenCount  int
	// FirstRun and LastRun are the charted runs' ends.
	FirstRun, LastRun string
}

type changeRow struct {
	ChangePoint
	Class, Series, RunHref, BeforeHref string
	Coincides, BuildChanged            string
	Bisections                         []link
	AckCommand                         string
	AckLink                            string
}

type runRow struct {
	Run
	Href, Builds, Nodes string
}

type bisRow struct {
	Bisection
	Href, RunHref string
}

type ackRow struct {
	triage.Ack
	RunHref, BisectionHref string
	Covers                 int
}

type link struct{ Label, Href string }

// runLinker links a run's name to its report, "" for a run without one.
func runLinker(idx *Index, seg func(string) string) func(string) string {
	return func(run string) string {
		for _, r := range idx.Runs {
			if r.Name == run && r.Report {
				return url.PathEscape(seg(run)) + "/" + ReportFile
			}
		}
		return ""
	}
}

// bisectionLinker links a bisection's name to its report, "" for one
// without.
func bisectionLinker(idx *Index, seg func(string) string) func(string) string {
	return func(name string) string {
		for _, b := range idx.Bisections {
			if b.Name == name && b.Report {
				return BisectionsDir + "/" + url.PathEscape(seg(name)) + "/" + ReportFile
			}
		}
		return ""
	}
}

// Render writes the index page.
func Render(w io.Writer, idx *Index, opts RenderOptions) error {
	seg := opts.Segment
	if seg == nil {
		seg = url.PathEscape
	}
	runHref, bisHref := runLinker(idx, seg), bisectionLinker(idx, seg)
	p := page{Index: idx, CSS: template.CSS(css), Legend: template.HTML(legendHTML())}
	if idx.Latest != nil {
		p.LatestHref = runHref(idx.Latest.Run)
	}
	if n := len(idx.Runs); n > 0 {
		p.FirstRun, p.LastRun = idx.Runs[0].Name, idx.Runs[n-1].Name
	}
	// Change points: open slowdowns first, then by series.
	cps := make([]int, len(idx.ChangePoints))
	for i := range cps {
		cps[i] = i
	}
	sort.SliceStable(cps, func(a, b int) bool {
		ca, cb := idx.ChangePoints[cps[a]], idx.ChangePoints[cps[b]]
		return ca.open() && !cb.open()
	})
	for _, i := range cps {
		c := idx.ChangePoints[i]
		if c.open() {
			p.OpenCount++
		}
		r := changeRow{ChangePoint: c, Class: cpClass(c), Series: fmt.Sprintf("%s %s@%d", c.Combination, c.Step, c.Threads),
			RunHref: runHref(c.Run), BeforeHref: runHref(c.LastBefore), Coincides: c.Attribution.CoincidesWith(),
			BuildChanged: c.Attribution.BuildChanged()}
		for _, b := range c.Bisections {
			r.Bisections = append(r.Bisections, link{b, bisHref(b)})
		}
		if c.open() {
			r.AckCommand = c.AckCommand(idx.Suite)
		}
		if c.Ack != nil {
			r.AckLink = c.Ack.Link
		}
		p.Changes = append(p.Changes, r)
	}
	// Charts: series with change points first.
	order := make([]int, len(idx.Series))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return len(idx.Series[order[a]].ChangePoints) > 0 && len(idx.Series[order[b]].ChangePoints) == 0
	})
	limit := opts.MaxCharts
	if limit <= 0 {
		limit = DefaultMaxCharts
	}
	if len(order) > limit {
		p.ChartNote = fmt.Sprintf("Charts of %d of the %d series, those with change points first; the table above lists every change point.", limit, len(order))
		order = order[:limit]
	}
	for _, i := range order {
		p.Charts = append(p.Charts, template.HTML(seriesChart(idx, i, runHref)))
	}
	for i := len(idx.Runs) - 1; i >= 0; i-- {
		r := idx.Runs[i]
		var builds, nodes []string
		for _, c := range r.Cells {
			b := c.Image
			if c.ImageDigest != "" {
				b += " (" + attribution.Short(c.ImageDigest) + ")"
			}
			builds = appendNew(builds, strings.TrimSpace(b))
			n := c.Node
			if c.Kernel != "" {
				n += " · " + c.Kernel
			}
			nodes = appendNew(nodes, n)
		}
		p.RunRows = append(p.RunRows, runRow{Run: r, Href: runHref(r.Name), Builds: strings.Join(builds, ", "), Nodes: strings.Join(nodes, ", ")})
	}
	for _, b := range idx.Bisections {
		p.BisRows = append(p.BisRows, bisRow{Bisection: b, Href: bisHref(b.Name), RunHref: runHref(b.Run)})
	}
	for _, a := range idx.Acks {
		row := ackRow{Ack: a, RunHref: runHref(a.Run), BisectionHref: bisHref(a.Bisection)}
		for _, c := range idx.ChangePoints {
			if c.Ack != nil && c.Ack.Name == a.Name {
				row.Covers++
			}
		}
		p.AckRows = append(p.AckRows, row)
	}
	return indexTemplate.Execute(w, p)
}

// cpClass is a change point's CSS classes: its status, its state, its
// direction and whether the environment alone changed.
func cpClass(c ChangePoint) string {
	cls := []string{"cp", c.Status, c.State}
	if c.Worse {
		cls = append(cls, "worse")
	} else {
		cls = append(cls, "better")
	}
	if c.Attribution.EnvironmentOnly {
		cls = append(cls, "env-only")
	}
	return strings.Join(cls, " ")
}

// cpColor is the color of a change point's mark.
func cpColor(c ChangePoint) string {
	switch {
	case c.State != StateOpen:
		return colAck
	case c.Attribution.EnvironmentOnly:
		return colEnv
	case c.Worse:
		return colWorse
	}
	return colBetter
}

const (
	colLine   = "#1f77b4"
	colWorse  = "#d62728"
	colBetter = "#2ca02c"
	colAck    = "#7f7f7f"
	colEnv    = "#9467bd"
	chartW    = 560
	chartH    = 260
	mL, mR    = 56, 14
	mT, mB    = 44, 40
)

func esc(s string) string { return html.EscapeString(s) }

// cpLabel is the text at a change point's mark.
func cpLabel(c ChangePoint) string {
	s := fmt.Sprintf("%s %+.0f%%", c.Run, c.ChangePercent)
	switch {
	case c.State == StateAcknowledged:
		s += " ✓ ack"
	case c.State == StateInvalid:
		s += " ✗ invalid"
	case c.Attribution.EnvironmentOnly:
		s += " env"
	case c.Status == "suspected":
		s += " ?"
	}
	return s
}

// cpTitle is a change point's hover text.
func cpTitle(c ChangePoint) string {
	lines := []string{fmt.Sprintf("change point at %s (after %s): %.2f → %.2f QPS, %+.1f %%, p = %.2g, %s", c.Run, c.LastBefore, c.Before, c.After, c.ChangePercent, c.PValue, c.Status)}
	if b := c.Attribution.BuildChanged(); b != "" {
		lines = append(lines, "build: "+b)
	}
	if e := c.Attribution.CoincidesWith(); e != "" {
		w := "coincides with: "
		if c.Attribution.EnvironmentOnly {
			w = "environment only: "
		}
		lines = append(lines, w+e)
	}
	if c.Ack != nil {
		lines = append(lines, fmt.Sprintf("%s by %s: %s", strings.ToLower(string(c.Ack.Resolution)), c.Ack.Name, c.Ack.Reason))
	}
	return strings.Join(lines, "\n")
}

// seriesChart draws one series: its runs (hover: build, node, date), the
// level of each segment with its noise band, the change points by status
// and triage, and the runs whose environment changed.
func seriesChart(idx *Index, si int, runHref func(string) string) string {
	s := idx.Series[si]
	var b strings.Builder
	title := fmt.Sprintf("%s · %s · %d threads", s.Combination, s.Step, s.Threads)
	if s.Threads == 1 {
		title = fmt.Sprintf("%s · %s · 1 thread", s.Combination, s.Step)
	}
	cls := "chart"
	for _, ci := range s.ChangePoints {
		cls += " has-" + idx.ChangePoints[ci].State
	}
	fmt.Fprintf(&b, `<figure class="series"><svg class="%s" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="%s">`, cls, chartW, chartH, esc(title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/><text x="%d" y="18" font-size="13" font-weight="600">%s</text>`, chartW, chartH, mL, esc(title))
	segs := s.segments(idx.ChangePoints)
	ymax := 0.0
	for _, v := range s.Values {
		ymax = math.Max(ymax, v)
	}
	for _, sg := range segs {
		ymax = math.Max(ymax, sg[2]*(1+2*s.NoiseCV))
	}
	hi := niceCeil(ymax * 1.08)
	plotW, plotH := float64(chartW-mL-mR), float64(chartH-mT-mB)
	n := len(s.Values)
	x := func(i float64) float64 {
		if n <= 1 {
			return float64(mL) + plotW/2
		}
		return float64(mL) + plotW*i/float64(n-1)
	}
	y := func(v float64) float64 { return float64(mT) + plotH*(1-v/hi) }
	// Grid and axes.
	for k := 0; k <= 4; k++ {
		v := hi * float64(k) / 4
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" font-size="10" text-anchor="end" fill="#555">%s</text>`,
			mL, y(v), chartW-mR, y(v), mL-4, y(v)+3, tick(v))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/>`, mL, chartH-mB, chartW-mR, chartH-mB)
	fmt.Fprintf(&b, `<text x="12" y="%d" font-size="10" fill="#555" transform="rotate(-90 12 %d)" text-anchor="middle">QPS</text>`, (mT+chartH-mB)/2, (mT+chartH-mB)/2)
	// Levels and noise bands.
	// A band reaches half the gap between runs past its first and last run.
	half := plotW / 2
	if n > 1 {
		half = plotW / float64(n-1) / 2
	}
	for _, sg := range segs {
		x0, x1 := x(sg[0])-half, x(sg[1]-1)+half
		x0, x1 = math.Max(x0, float64(mL)), math.Min(x1, float64(chartW-mR))
		lo, up := sg[2]*(1-2*s.NoiseCV), sg[2]*(1+2*s.NoiseCV)
		fmt.Fprintf(&b, `<rect class="band" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.12"><title>level %.2f QPS ± 2 × noise (CV %.1f %%): runs inside the band are within noise</title></rect>`,
			x0, y(up), x1-x0, math.Max(y(lo)-y(up), 1), colLine, sg[2], 100*s.NoiseCV)
		fmt.Fprintf(&b, `<line class="level" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-opacity="0.5" stroke-dasharray="5 3"/>`, x0, y(sg[2]), x1, y(sg[2]), colLine)
	}
	// The line and the runs.
	pts := make([]string, 0, len(s.Values))
	for i, v := range s.Values {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(float64(i)), y(v)))
	}
	fmt.Fprintf(&b, `<polyline class="line" points="%s" fill="none" stroke="%s" stroke-width="1.5"/>`, strings.Join(pts, " "), colLine)
	for i, v := range s.Values {
		tip := runTip(idx, s.Runs[i], s.Combination, fmt.Sprintf("%s@%d: %.2f QPS", s.Step, s.Threads, v))
		circle := fmt.Sprintf(`<circle class="run" cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s</title></circle>`, x(float64(i)), y(v), colLine, esc(tip))
		if h := runHref(s.Runs[i]); h != "" {
			circle = fmt.Sprintf(`<a href="%s">%s</a>`, esc(h), circle)
		}
		b.WriteString(circle)
	}
	// Environment (and build) changes between consecutive runs.
	for _, e := range s.EnvironmentChanges {
		if len(e.Environment) == 0 {
			continue
		}
		cx := x(float64(e.Index))
		yb := float64(chartH - mB)
		fmt.Fprintf(&b, `<path class="env-change" d="M%.1f %.1f l-5 9 h10 z" fill="%s"><title>%s</title></path>`, cx, yb+2, colEnv,
			esc(fmt.Sprintf("the environment changed at %s: %s", e.Run, joinChanges(e.Environment))))
	}
	// Change points.
	for k, ci := range s.ChangePoints {
		c := idx.ChangePoints[ci]
		cx := x(float64(c.Index) - 0.5)
		col := cpColor(c)
		dash := ""
		if c.Status == "suspected" {
			dash = ` stroke-dasharray="4 3"`
		}
		ly := mT - 6 + 12*(k%2)
		anchor := "start"
		if cx > float64(chartW)*0.7 {
			anchor = "end"
		}
		fmt.Fprintf(&b, `<g class="%s"><title>%s</title><line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2"%s/><text x="%.1f" y="%d" font-size="10.5" fill="%s" text-anchor="%s">%s</text></g>`,
			cpClass(c), esc(cpTitle(c)), cx, mT-2, cx, chartH-mB, col, dash, cx+3, ly, col, anchor, esc(cpLabel(c)))
	}
	// The x axis: first and last run.
	if n > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" fill="#555">%s</text>`, mL, chartH-mB+26, esc(s.Runs[0]))
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" fill="#555" text-anchor="end">%s</text>`, chartW-mR, chartH-mB+26, esc(s.Runs[n-1]))
	}
	b.WriteString("</svg></figure>")
	return b.String()
}

// runTip is a run's hover text: its name, date, build, node and value.
func runTip(idx *Index, run, comb, value string) string {
	for _, r := range idx.Runs {
		if r.Name != run {
			continue
		}
		lines := []string{fmt.Sprintf("%s · %s", run, r.Time.UTC().Format("2006-01-02 15:04 UTC")), value}
		for _, c := range r.Cells {
			if c.Combination != comb {
				continue
			}
			build := c.Image
			if c.ImageDigest != "" {
				build += " @ " + attribution.Short(c.ImageDigest)
			}
			if c.ServerVersion != "" {
				build += " (" + c.ServerVersion + ")"
			}
			lines = append(lines, "build: "+strings.TrimSpace(build))
			if c.Node != "" || c.Kernel != "" {
				lines = append(lines, fmt.Sprintf("node: %s, kernel %s", c.Node, c.Kernel))
			}
			break
		}
		if r.Verdict != "" {
			lines = append(lines, "verdict: Regressed="+r.Verdict)
		}
		return strings.Join(lines, "\n")
	}
	return run + ": " + value
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if !(v > 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func tick(v float64) string {
	switch {
	case v >= 10000:
		return fmt.Sprintf("%.0fk", v/1000)
	case v >= 100 || v == 0:
		return fmt.Sprintf("%.0f", v)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

// legendHTML explains the marks: a list the browser lays out, each label
// beside its mark, wrapping on a narrow window (labels placed by estimated
// text width in one SVG ran into each other).
func legendHTML() string {
	mark := func(svg string) string {
		return `<svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true">` + svg + `</svg>`
	}
	line := func(color, dash string) string {
		if dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
		}
		return mark(fmt.Sprintf(`<line x1="8" y1="0" x2="8" y2="16" stroke="%s" stroke-width="2"%s/>`, color, dash))
	}
	items := []struct{ mark, label string }{
		{line(colWorse, ""), "slowdown, open"},
		{line(colWorse, "4 3"), "suspected (newest runs only)"},
		{line(colBetter, ""), "improvement"},
		{line(colEnv, ""), "the environment alone changed"},
		{line(colAck, ""), "acknowledged or invalid"},
		{mark(fmt.Sprintf(`<rect x="1" y="2" width="14" height="12" fill="%s" fill-opacity="0.12"/>`, colLine)), "noise band (level ± 2σ)"},
		{mark(fmt.Sprintf(`<path d="M8 3 l-5 9 h10 z" fill="%s"/>`, colEnv)), "environment changed since the run before"},
	}
	var b strings.Builder
	b.WriteString(`<ul class="legend" aria-label="legend">`)
	for _, it := range items {
		fmt.Fprintf(&b, `<li>%s<span>%s</span></li>`, it.mark, esc(it.label))
	}
	b.WriteString("</ul>")
	return b.String()
}

const css = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#222;max-width:1180px}
h1{font-size:22px;margin-bottom:4px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
.meta{color:#555;font-size:13px;margin:0}.note{font-size:12px;color:#555}
table{border-collapse:collapse;font-size:12px;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f4f4f4}code{font-size:11px;background:#f6f6f6;padding:1px 3px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:12px}
figure{margin:0}figure svg{width:100%;height:auto;border:1px solid #eee}
ul.legend{list-style:none;display:flex;flex-wrap:wrap;gap:4px 18px;padding:0;margin:8px 0;font-size:12px}
ul.legend li{display:flex;align-items:center;gap:6px;white-space:nowrap}
.verdict{border-left:4px solid #999;padding:6px 12px;background:#fafafa}
.verdict.True{border-color:#d62728}.verdict.False{border-color:#2ca02c}
tr.open.worse td:first-child{border-left:4px solid #d62728}tr.acknowledged td:first-child,tr.invalid td:first-child{border-left:4px solid #7f7f7f}
tr.env-only td:first-child{border-left:4px solid #9467bd}
.state{font-weight:600}footer{margin-top:32px;font-size:12px;color:#777}
`
