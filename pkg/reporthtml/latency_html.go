package reporthtml

import (
	"fmt"
	"math"
	"strings"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/stats"
)

// addLatency adds the latency sections of WriteHTML: the percentile tables,
// throughput and response time against concurrency (a pair of charts per
// step), latency over time beside throughput over time (a pair per step and
// thread count) and the fixed-rate runs. At most maxCharts pairs of each.
func addLatency(add func(string, ...htmlBlock), r *analysis.LatencyReport, maxCharts int) {
	if r == nil {
		return
	}
	for _, t := range r.Percentiles {
		add(fmt.Sprintf("Response time, %d threads (lower is better)", t.Threads), tableBlocks(t.Tables()...)...)
	}
	if len(r.Concurrency) > 0 {
		blocks := concurrencyCharts(r.Concurrency, maxCharts)
		for _, c := range r.Concurrency {
			blocks = append(blocks, htmlBlock{Table: ptrTo(c.Table())})
		}
		add("Throughput and response time against concurrency", blocks...)
	}
	if len(r.Series) > 0 {
		add("Latency over time beside throughput over time", append(latencySeriesCharts(r.Series, maxCharts), htmlBlock{Table: ptrTo(analysis.LatencySeriesTable(r.Series))})...)
	}
	if len(r.FixedRate) > 0 {
		add("Fixed-rate (open-loop) runs", htmlBlock{Table: ptrTo(analysis.FixedRateTable(r.FixedRate))})
	}
}

// plotLine is one line of linePlot; a NaN y breaks the line.
type plotLine struct {
	name   string
	xs, ys []float64
}

// linePlot draws lines against a numeric x-axis with the y-axis from 0.
func linePlot(class, title, xlabel, ylabel, caption string, lines []plotLine) string {
	xlo, xhi, ymax := math.Inf(1), math.Inf(-1), 0.0
	names := make([]string, 0, len(lines))
	for _, l := range lines {
		names = append(names, l.name)
		for i, x := range l.xs {
			if math.IsNaN(l.ys[i]) {
				continue
			}
			xlo, xhi, ymax = math.Min(xlo, x), math.Max(xhi, x), math.Max(ymax, l.ys[i])
		}
	}
	if math.IsInf(xlo, 0) {
		return ""
	}
	if !(xhi > xlo) {
		xhi = xlo + 1
	}
	var b strings.Builder
	svgOpen(&b, lineFrame, "chart "+class, title)
	lo, hi, ticks := niceRange(0, ymax*1.05, true)
	y := svgFrame(&b, lineFrame, lo, hi, ticks, ylabel)
	x := xAxis(&b, lineFrame, xlo, xhi, xlabel)
	for i, l := range lines {
		color := palette[i%len(palette)]
		var xs, ys []float64
		flush := func() {
			switch len(xs) {
			case 0:
			case 1:
				fmt.Fprintf(&b, `<circle class="point" cx="%.1f" cy="%.1f" r="2.5" fill="%s"><title>%s</title></circle>`, x(xs[0]), y(ys[0]), color, esc(l.name))
			default:
				polyline(&b, xs, ys, x, y, color, "line", l.name)
			}
			xs, ys = xs[:0], ys[:0]
		}
		for k := range l.xs {
			if math.IsNaN(l.ys[k]) {
				flush()
				continue
			}
			xs, ys = append(xs, l.xs[k]), append(ys, l.ys[k])
		}
		flush()
	}
	legend(&b, names)
	fmt.Fprintf(&b, "</svg><figcaption>%s</figcaption></figure>\n", esc(caption))
	return b.String()
}

// chartPair puts two charts side by side.
func chartPair(left, right string) htmlBlock {
	return chartSVG(`<div class="pair">` + left + right + "</div>\n")
}

// concurrencyCharts draws, per step, QPS against threads beside p95
// against threads, a line per cell.
func concurrencyCharts(ts []*analysis.ConcurrencyTable, maxCharts int) []htmlBlock {
	var order []string
	seen := map[string]bool{}
	for _, t := range ts {
		for _, s := range t.Steps {
			if !seen[s] {
				seen[s] = true
				order = append(order, s)
			}
		}
	}
	var out []htmlBlock
	if len(order) > maxCharts {
		out = append(out, htmlBlock{Note: fmt.Sprintf("Charts of the first %d of %d steps; the tables list them all.", maxCharts, len(order))})
		order = order[:maxCharts]
	}
	for _, s := range order {
		var q, p []plotLine
		for _, t := range ts {
			i := indexOf(t.Steps, s)
			if i < 0 {
				continue
			}
			ql, pl := plotLine{name: t.Cell}, plotLine{name: t.Cell}
			for k, th := range t.Threads {
				if t.QPS[i][k] != nil {
					ql.xs, ql.ys = append(ql.xs, float64(th)), append(ql.ys, *t.QPS[i][k])
				}
				if t.P95[i][k] != nil {
					pl.xs, pl.ys = append(pl.xs, float64(th)), append(pl.ys, *t.P95[i][k])
				}
			}
			q, p = append(q, ql), append(p, pl)
		}
		out = append(out, chartPair(
			linePlot("concurrency-qps", s+": throughput against concurrency", "client threads", "QPS", "Higher is better; the y-axis starts at 0.", q),
			linePlot("concurrency-latency", s+": response time against concurrency", "client threads", "p95 ms", "p95 latency of each run; lower is better; the y-axis starts at 0.", p)))
	}
	return out
}

// latencySeriesCharts draws, per (step, threads), QPS per second beside
// latency per second after the warm-up, a line per cell. Long series are
// cut into at most 600 buckets: QPS as the bucket's mean, latency as its
// maximum, so a spike is never averaged away.
func latencySeriesCharts(stats []analysis.LatencySeriesStats, maxCharts int) []htmlBlock {
	type key struct {
		step    string
		threads int
	}
	var order []key
	by := map[key][]analysis.LatencySeriesStats{}
	for _, s := range stats {
		k := key{s.Step, s.Threads}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], s)
	}
	var out []htmlBlock
	if len(order) > maxCharts {
		out = append(out, htmlBlock{Note: fmt.Sprintf("Charts of the first %d of %d step and thread pairs; the table lists them all.", maxCharts, len(order))})
		order = order[:maxCharts]
	}
	for _, k := range order {
		var q, l []plotLine
		pct := 95.0
		for _, s := range by[k] {
			pct = s.Percentile
			qx, qy, ly := latencyPoints(s, 600)
			q = append(q, plotLine{name: s.Cell, xs: qx, ys: qy})
			l = append(l, plotLine{name: s.Cell, xs: qx, ys: ly})
		}
		out = append(out, chartPair(
			linePlot("series-qps", fmt.Sprintf("%s, %d threads: QPS per second", k.step, k.threads), "seconds since the step started", "QPS",
				"After the warm-up; the y-axis starts at 0 so stalls show at their true depth.", q),
			linePlot("series-latency",
				fmt.Sprintf("%s, %d threads: p%s latency per second", k.step, k.threads, analysis.TrimFloat(pct)), "seconds since the step started", "ms",
				"Lower is better; gaps are seconds that completed no event; the y-axis starts at 0.", l)))
	}
	return out
}

// latencyPoints returns s's steady seconds as x, QPS (bucket mean) and latency
// (bucket maximum over the seconds that completed events; NaN when none
// did).
func latencyPoints(s analysis.LatencySeriesStats, limit int) (xs, qps, lat []float64) {
	q, l := s.QPSSeries().Steady(), s.LatencySeries().Steady()
	offset := float64(len(s.QPSSeries().Values)-len(q)) * s.QPSSeries().IntervalSeconds
	f := max(1, (len(q)+limit-1)/limit)
	for i := 0; i < len(q); i += f {
		end := min(i+f, len(q))
		peak := math.NaN()
		for k := i; k < end; k++ {
			if q[k] > 0 && (math.IsNaN(peak) || l[k] > peak) {
				peak = l[k]
			}
		}
		xs = append(xs, offset+(float64(i)+float64(end-i)/2)*s.QPSSeries().IntervalSeconds)
		qps, lat = append(qps, stats.Mean(q[i:end])), append(lat, peak)
	}
	return xs, qps, lat
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}
