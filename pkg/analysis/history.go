package analysis

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dbbench/dbbench/pkg/changepoint"
)

// HistoryRun is one run of a suite.
type HistoryRun struct {
	Name string
	Time time.Time
	Data *Dataset
}

// HistoryOptions tune History.
type HistoryOptions struct {
	// ChangePoint are the detector's options; the zero value means
	// changepoint.DefaultOptions().
	ChangePoint *changepoint.Options
	// Steps as in RelativeOptions.
	Steps             []string
	IncludeUnreported bool
	// Metrics are the series built per (combination, step, threads); nil
	// means throughput alone. A latency series' regression is a rise.
	Metrics []Metric
}

// HistorySeries is one (combination, step, threads) metric across the runs.
type HistorySeries struct {
	Combination string `json:"combination"`
	Step        string `json:"step"`
	Threads     int    `json:"threads"`
	// Metric is what Values are: QPS for throughput, ms for a latency.
	Metric Metric `json:"metric"`
	// Runs are the runs that measured it, oldest first, with their values;
	// runs that did not are left out (and listed in MissingRuns).
	Runs         []string        `json:"runs"`
	Values       []float64       `json:"values"`
	MissingRuns  []string        `json:"missingRuns,omitempty"`
	ChangePoints []HistoryChange `json:"changePoints"`
	// Drifts are the sustained slopes, which hold no change point.
	Drifts []HistoryDrift `json:"drifts,omitempty"`
}

// HistoryChange is a change point, named by the first run of the new level.
// Its Status says whether the newest runs still have to confirm it.
type HistoryChange struct {
	Run string `json:"run"`
	// Worse is true for a regression: a drop of throughput, a rise of a
	// latency.
	Worse bool `json:"worse"`
	changepoint.ChangePoint
}

// HistoryDrift is a drift, named by its first and last run.
type HistoryDrift struct {
	FirstRun string `json:"firstRun"`
	LastRun  string `json:"lastRun"`
	// Worse is true for a decline of throughput, a rise of a latency.
	Worse bool `json:"worse"`
	changepoint.Drift
}

// HistoryReport is the change-point analysis of a suite.
type HistoryReport struct {
	Runs   []string        `json:"runs"`
	Series []HistorySeries `json:"series"`
}

// History orders runs by time (then name), builds one series per
// (combination, step, threads) and metric across them (QPS, and the p95 or
// p99 latency when opts.Metrics ask), and runs change-point detection on
// every series (changepoint.DetectAll). The detector is direction-blind;
// each change says whether it is a regression (Worse). Cells are matched across runs by
// CellMeta.Combination; repeats in one run are averaged. A run that lacks a
// point is left out of that series rather than filled in.
func History(runs []HistoryRun, opts HistoryOptions) (*HistoryReport, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("history: no runs: %w", ErrEmpty)
	}
	cpo := changepoint.DefaultOptions()
	if opts.ChangePoint != nil {
		cpo = *opts.ChangePoint
	}
	runs = slices.Clone(runs)
	slices.SortStableFunc(runs, func(a, b HistoryRun) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		if a.Name < b.Name {
			return -1
		} else if a.Name > b.Name {
			return 1
		}
		return 0
	})
	metrics := MetricsOrDefault(opts.Metrics)
	for _, m := range metrics {
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
	}
	type key struct {
		comb, step string
		threads    int
		metric     Metric
	}
	var order []key
	type acc struct{ sum, n float64 }
	per := map[key][]acc{}
	rep := &HistoryReport{}
	for ri, r := range runs {
		if r.Data == nil {
			return nil, fmt.Errorf("history: run %q has no data", r.Name)
		}
		rep.Runs = append(rep.Runs, r.Name)
		steps, err := reportSteps(r.Data, nil, opts.IncludeUnreported)
		if err != nil {
			return nil, err
		}
		if opts.Steps != nil {
			steps = slices.DeleteFunc(steps, func(s string) bool { return !slices.Contains(opts.Steps, s) })
		}
		for _, o := range r.Data.obs {
			if !slices.Contains(steps, o.Step) {
				continue
			}
			c, _ := r.Data.Cell(o.Cell)
			for _, m := range metrics {
				v, ok := observed(o, m)
				if !ok {
					continue
				}
				k := key{c.Combination(), o.Step, o.Threads, m}
				if _, ok := per[k]; !ok {
					order = append(order, k)
					per[k] = make([]acc, len(runs))
				}
				per[k][ri].sum += v
				per[k][ri].n++
			}
		}
	}
	series := make([]changepoint.Series, 0, len(order))
	for _, k := range order {
		hs := HistorySeries{Combination: k.comb, Step: k.step, Threads: k.threads, Metric: k.metric, ChangePoints: []HistoryChange{}}
		cs := changepoint.Series{Name: fmt.Sprintf("%s/%s/%d", k.comb, k.step, k.threads)}
		if k.metric != MetricThroughput {
			cs.Name += "/" + string(k.metric)
		}
		for ri, a := range per[k] {
			if a.n == 0 {
				hs.MissingRuns = append(hs.MissingRuns, runs[ri].Name)
				continue
			}
			v := a.sum / a.n
			hs.Runs = append(hs.Runs, runs[ri].Name)
			hs.Values = append(hs.Values, v)
			cs.Values = append(cs.Values, v)
			cs.Labels = append(cs.Labels, runs[ri].Name)
			cs.Times = append(cs.Times, runs[ri].Time)
		}
		rep.Series = append(rep.Series, hs)
		series = append(series, cs)
	}
	results, err := changepoint.DetectAll(series, cpo)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	for i, r := range results {
		hs := &rep.Series[i]
		for _, cp := range r.ChangePoints {
			hs.ChangePoints = append(hs.ChangePoints, HistoryChange{Run: hs.Runs[cp.Index],
				Worse: hs.Metric.Worsened(cp.MeanBefore, cp.MeanAfter), ChangePoint: cp})
		}
		for _, d := range r.Drifts {
			hs.Drifts = append(hs.Drifts, HistoryDrift{FirstRun: hs.Runs[d.Start], LastRun: hs.Runs[d.End-1],
				Worse: hs.Metric.Worsened(d.FittedStart, d.FittedEnd), Drift: d})
		}
	}
	return rep, nil
}

// observed is an observation's value of m; false when it has none (a
// latency not recorded, or 0, which a log-scale series cannot hold).
func observed(o Observation, m Metric) (float64, bool) {
	var p *float64
	switch m {
	case MetricThroughput:
		return o.QPS, true
	case MetricP95Latency:
		if o.Latency != nil {
			p = o.Latency.P95Ms
		}
	case MetricP99Latency:
		if o.Latency != nil {
			p = o.Latency.P99Ms
		}
	}
	if p == nil || !(*p > 0) {
		return 0, false
	}
	return *p, true
}

// verdictWord is the verdict column of a change.
func verdictWord(worse bool) string {
	if worse {
		return "regression"
	}
	return "improvement"
}

// Tables renders the series (one row per series: its latest value, its
// change points) and a table of all change points.
func (h *HistoryReport) Tables() []Table {
	st := Table{ID: "history.series", Title: fmt.Sprintf("History of %d runs: QPS (throughput) or ms (latency) per series", len(h.Runs)),
		Columns: []string{"combination", "step", "threads", "metric", "runs", "first", "last", "last/first", "change points"}}
	ct := Table{ID: "history.changes", Title: "Change points (E-divisive means, t-test) and drifts",
		Columns: []string{"combination", "step", "threads", "metric", "run", "status", "before", "after", "change %", "p", "verdict"}}
	latency := false
	for _, s := range h.Series {
		latency = latency || s.Metric.LowerIsBetter()
		first, last := s.Values[0], s.Values[len(s.Values)-1]
		metric := s.Metric.Label()
		st.Rows = append(st.Rows, []string{s.Combination, s.Step, fmt.Sprint(s.Threads), metric, fmt.Sprint(len(s.Values)),
			FormatFloat(first, 2), FormatFloat(last, 2), Divide(last, first).String(), fmt.Sprint(len(s.ChangePoints))})
		for _, c := range s.ChangePoints {
			ct.Rows = append(ct.Rows, []string{s.Combination, s.Step, fmt.Sprint(s.Threads), metric, c.Run, changeStatus(c.Status),
				FormatFloat(c.MeanBefore, 2), FormatFloat(c.MeanAfter, 2), fmt.Sprintf("%+.1f", c.ChangePercent), fmt.Sprintf("%.2g", c.PValue),
				verdictWord(c.Worse)})
		}
		// A drift is one row: its runs, its slope, and the line's values at
		// its ends as before/after.
		for _, d := range s.Drifts {
			ct.Rows = append(ct.Rows, []string{s.Combination, s.Step, fmt.Sprint(s.Threads), metric, d.FirstRun + ".." + d.LastRun,
				fmt.Sprintf("drift %+.2f %%/run", d.SlopePercentPerRun),
				FormatFloat(d.FittedStart, 2), FormatFloat(d.FittedEnd, 2), fmt.Sprintf("%+.1f", d.ChangePercent), fmt.Sprintf("%.2g", d.PValue),
				verdictWord(d.Worse)})
		}
		if len(s.MissingRuns) > 0 {
			st.Notes = append(st.Notes, fmt.Sprintf("%s %s %d threads: not measured in %s", s.Combination, s.Step, s.Threads, listNames(s.MissingRuns, 6)))
		}
	}
	if len(ct.Rows) == 0 {
		ct.Notes = append(ct.Notes, "no change points")
	}
	if latency {
		ct.Notes = append(ct.Notes, "latency is lower-is-better: a rise is a regression, a fall an improvement; latencies are whole-run percentiles, warm-up included (docs/reports.md)")
	}
	return []Table{st, ct}
}

// changeStatus is the status column of a change point: "confirmed", or
// "suspected" for a change in the newest runs that they do not hold yet.
func changeStatus(s changepoint.Status) string {
	return strings.ToLower(string(s))
}
