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
}

// HistorySeries is one (combination, step, threads) metric across the runs.
type HistorySeries struct {
	Combination string `json:"combination"`
	Step        string `json:"step"`
	Threads     int    `json:"threads"`
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
	changepoint.ChangePoint
}

// HistoryDrift is a drift, named by its first and last run.
type HistoryDrift struct {
	FirstRun string `json:"firstRun"`
	LastRun  string `json:"lastRun"`
	changepoint.Drift
}

// HistoryReport is the change-point analysis of a suite.
type HistoryReport struct {
	Runs   []string        `json:"runs"`
	Series []HistorySeries `json:"series"`
}

// History orders runs by time (then name), builds one QPS series per
// (combination, step, threads) across them, and runs change-point detection
// on every series (changepoint.DetectAll). Cells are matched across runs by
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
	type key struct {
		comb, step string
		threads    int
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
			k := key{c.Combination(), o.Step, o.Threads}
			if _, ok := per[k]; !ok {
				order = append(order, k)
				per[k] = make([]acc, len(runs))
			}
			per[k][ri].sum += o.QPS
			per[k][ri].n++
		}
	}
	series := make([]changepoint.Series, 0, len(order))
	for _, k := range order {
		hs := HistorySeries{Combination: k.comb, Step: k.step, Threads: k.threads, ChangePoints: []HistoryChange{}}
		cs := changepoint.Series{Name: fmt.Sprintf("%s/%s/%d", k.comb, k.step, k.threads)}
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
		for _, cp := range r.ChangePoints {
			rep.Series[i].ChangePoints = append(rep.Series[i].ChangePoints, HistoryChange{Run: rep.Series[i].Runs[cp.Index], ChangePoint: cp})
		}
		for _, d := range r.Drifts {
			rep.Series[i].Drifts = append(rep.Series[i].Drifts, HistoryDrift{FirstRun: rep.Series[i].Runs[d.Start], LastRun: rep.Series[i].Runs[d.End-1], Drift: d})
		}
	}
	return rep, nil
}

// Tables renders the series (one row per series: its latest value, its
// change points) and a table of all change points.
func (h *HistoryReport) Tables() []Table {
	st := Table{ID: "history.series", Title: fmt.Sprintf("History of %d runs: QPS per series", len(h.Runs)),
		Columns: []string{"combination", "step", "threads", "runs", "first", "last", "last/first", "change points"}}
	ct := Table{ID: "history.changes", Title: "Change points (E-divisive means, t-test) and drifts",
		Columns: []string{"combination", "step", "threads", "run", "status", "before", "after", "change %", "p"}}
	for _, s := range h.Series {
		first, last := s.Values[0], s.Values[len(s.Values)-1]
		st.Rows = append(st.Rows, []string{s.Combination, s.Step, fmt.Sprint(s.Threads), fmt.Sprint(len(s.Values)),
			formatFloat(first, 2), formatFloat(last, 2), Divide(last, first).String(), fmt.Sprint(len(s.ChangePoints))})
		for _, c := range s.ChangePoints {
			ct.Rows = append(ct.Rows, []string{s.Combination, s.Step, fmt.Sprint(s.Threads), c.Run, changeStatus(c.Status),
				formatFloat(c.MeanBefore, 2), formatFloat(c.MeanAfter, 2), fmt.Sprintf("%+.1f", c.ChangePercent), fmt.Sprintf("%.2g", c.PValue)})
		}
		// A drift is one row: its runs, its slope, and the line's values at
		// its ends as before/after.
		for _, d := range s.Drifts {
			ct.Rows = append(ct.Rows, []string{s.Combination, s.Step, fmt.Sprint(s.Threads), d.FirstRun + ".." + d.LastRun,
				fmt.Sprintf("drift %+.2f %%/run", d.SlopePercentPerRun),
				formatFloat(d.FittedStart, 2), formatFloat(d.FittedEnd, 2), fmt.Sprintf("%+.1f", d.ChangePercent), fmt.Sprintf("%.2g", d.PValue)})
		}
		if len(s.MissingRuns) > 0 {
			st.Notes = append(st.Notes, fmt.Sprintf("%s %s %d threads: not measured in %s", s.Combination, s.Step, s.Threads, listNames(s.MissingRuns, 6)))
		}
	}
	if len(ct.Rows) == 0 {
		ct.Notes = append(ct.Notes, "no change points")
	}
	return []Table{st, ct}
}

// changeStatus is the status column of a change point: "confirmed", or
// "suspected" for a change in the newest runs that they do not hold yet.
func changeStatus(s changepoint.Status) string {
	return strings.ToLower(string(s))
}
