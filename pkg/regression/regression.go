package regression

import (
	"fmt"
	"math"
	"sort"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/changepoint"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/results"
)

// StepChange is a (cell, step, threads) whose throughput, or latency,
// moved between a run and what it is judged against.
type StepChange struct {
	Cell    string
	Step    string
	Threads int
	// Metric is what moved; "" is throughput (CompareManifests).
	Metric analysis.Metric
	// Before is the baseline value, QPS or ms (the compared run's, or the
	// mean of the segment before a change point); After this run's (or the
	// segment's).
	Before, After float64
	// ChangePercent is 100 × (After/Before − 1): negative is slower, and
	// positive a higher latency.
	ChangePercent float64
	// PValue is the slowdown's two-sided p-value: the change point's, or
	// Welch's between two runs; NaN when it was not tested.
	PValue float64
	// Status is set by ChangePointRegressions: Confirmed, or Suspected for a
	// drop that only the newest run shows so far. Empty against a run.
	Status changepoint.Status
	// Drift is set when the slowdown is a steady decline that reaches the
	// newest run rather than a step; Before and After are then the fitted
	// line's values at its first and last run.
	Drift *changepoint.Drift
	// Since and LastBefore are set by ChangePointRegressionsOf: the index
	// (into its runs) of the first run of the new level (of a drift: its
	// first run) and of the last run before it that measured the point;
	// the builds of these two runs bound the change. Both are -1 against
	// a run.
	Since, LastBefore int
}

func (c StepChange) String() string {
	s := fmt.Sprintf("%s %s@%d %+.1f%%", c.Cell, c.Step, c.Threads, c.ChangePercent)
	if c.Metric != "" {
		s = fmt.Sprintf("%s %s@%d %s %+.1f%%", c.Cell, c.Step, c.Threads, c.Metric.Label(), c.ChangePercent)
	}
	switch {
	case c.Drift != nil:
		s += fmt.Sprintf(" (drift %+.2f%%/run over %d runs)", c.Drift.SlopePercentPerRun, c.Drift.End-c.Drift.Start)
	case c.Status == changepoint.Suspected:
		s += " (suspected)"
	}
	return s
}

// CompareManifests lists the (cell, step, threads) of cur that are slower
// than in base by at least minMagnitude (0.05 = 5 %). Cells are matched by
// name, which is stable across runs of one suite (same spec, same names).
// Pairs missing on either side, and a zero baseline, are not comparable and
// are left out; the returned count says how many pairs were compared.
//
// When maxPValue > 0 and both runs recorded the spread of their per-second
// samples (ManifestCell.QPSSpread), a slowdown must also be significant:
// Welch's t-test on the two sets of samples must give p < maxPValue.
// Per-second samples are positively autocorrelated: the test counts each
// side's effective samples (Spread.Independent, the AR(1) approximation
// from the lag-1 autocorrelation) rather than its seconds, or the p-value
// would be too small. The magnitude threshold remains the main guard; the
// test removes slowdowns that are within a noisy step's own spread.
func CompareManifests(cur, base *results.Manifest, minMagnitude, maxPValue float64) (regressed []StepChange, compared int) {
	for _, c := range cur.Cells {
		b, ok := base.Cell(c.Name)
		if !ok {
			continue
		}
		for step, byThreads := range c.QPS {
			for threads, after := range byThreads {
				before, ok := b.QPS[step][threads]
				if !ok || before <= 0 {
					continue
				}
				compared++
				change := after/before - 1
				if change > -minMagnitude {
					continue
				}
				sc := StepChange{Cell: c.Name, Step: step, Threads: threads,
					Before: before, After: after, ChangePercent: 100 * change, PValue: math.NaN(), Since: -1, LastBefore: -1}
				sb, okb := b.QPSSpread[step][threads]
				sa, oka := c.QPSSpread[step][threads]
				if maxPValue > 0 && oka && okb && sa.Independent() >= 2 && sb.Independent() >= 2 {
					w := inference.WelchFromMoments(before, sb.Stddev, sb.Independent(), after, sa.Stddev, sa.Independent())
					if w.P >= maxPValue {
						continue
					}
					sc.PValue = w.P
				}
				regressed = append(regressed, sc)
			}
		}
	}
	sortChanges(regressed)
	return regressed, compared
}

// ChangePointRegressions runs change-point detection over the series of each
// (cell, step, threads) across runs (oldest first; the run being judged is
// the last) and reports the slowdowns whose new segment includes the last
// run: the regressions that are still in effect now, and the steady
// declines (drifts) that reach the last run. With the default options a
// drop in the newest run is reported at once with Status Suspected, and
// Confirmed once the next run holds it; a single outlier run is never
// Confirmed.
func ChangePointRegressions(runs []*results.Manifest, opts changepoint.Options) ([]StepChange, error) {
	return ChangePointRegressionsOf(runs, opts, analysis.MetricThroughput)
}

// ChangePointRegressionsOf is ChangePointRegressions over a metric's
// series: for a latency (lower is better) a rise, or a rising drift, is the
// regression. The detector itself is direction-blind; only the side that
// counts differs. Fixed-rate steps have no throughput series to judge (it
// is the rate they were given).
func ChangePointRegressionsOf(runs []*results.Manifest, opts changepoint.Options, metric analysis.Metric) ([]StepChange, error) {
	if err := metric.Validate(); err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, nil
	}
	type key struct {
		cell, step string
		threads    int
	}
	last := runs[len(runs)-1]
	var keys []key
	for i := range last.Cells {
		c := &last.Cells[i]
		for step, byThreads := range metric.Values(c) {
			if !metric.Judged(step) {
				continue
			}
			for threads := range byThreads {
				keys = append(keys, key{c.Name, step, threads})
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.cell != b.cell {
			return a.cell < b.cell
		}
		if a.step != b.step {
			return a.step < b.step
		}
		return a.threads < b.threads
	})
	d, err := changepoint.NewDetector(opts)
	if err != nil {
		return nil, err
	}
	worse := metric.Worsened
	label := metric
	if metric == analysis.MetricThroughput {
		label = "" // throughput's changes read as they always have
	}
	var out []StepChange
	for _, k := range keys {
		// A run that lacks the point is left out of the series, never
		// filled in.
		var values []float64
		var runOf []int // runOf[i]: the run of values[i]
		for r, m := range runs {
			if c, ok := m.Cell(k.cell); ok {
				if v, ok := metric.Value(c, k.step, k.threads); ok && !math.IsNaN(v) {
					values = append(values, v)
					runOf = append(runOf, r)
				}
			}
		}
		// bounds are the runs of the first value of a new level at i and
		// of the value before it.
		bounds := func(i int) (since, before int) {
			if i <= 0 || i >= len(runOf) {
				return -1, -1
			}
			return runOf[i], runOf[i-1]
		}
		res, err := d.DetectSeries(changepoint.Series{Values: values})
		if err != nil {
			return nil, fmt.Errorf("%s %s@%d: %w", k.cell, k.step, k.threads, err)
		}
		// A drift that reaches the last run is the latest change: no
		// change point lies inside it.
		if nd := len(res.Drifts); nd > 0 && res.Drifts[nd-1].End == len(values) {
			dr := res.Drifts[nd-1]
			if worse(dr.FittedStart, dr.FittedEnd) {
				since, before := bounds(dr.Start)
				out = append(out, StepChange{Cell: k.cell, Step: k.step, Threads: k.threads, Metric: label,
					Before: dr.FittedStart, After: dr.FittedEnd, ChangePercent: dr.ChangePercent, PValue: dr.PValue,
					Status: changepoint.Confirmed, Drift: &dr, Since: since, LastBefore: before})
			}
			continue
		}
		if len(res.ChangePoints) == 0 {
			continue
		}
		cp := res.ChangePoints[len(res.ChangePoints)-1] // the latest change: its segment runs to the end
		if worse(cp.MeanBefore, cp.MeanAfter) {
			since, before := bounds(cp.Index)
			out = append(out, StepChange{Cell: k.cell, Step: k.step, Threads: k.threads, Metric: label,
				Before: cp.MeanBefore, After: cp.MeanAfter, ChangePercent: cp.ChangePercent, PValue: cp.PValue,
				Status: cp.Status, Since: since, LastBefore: before})
		}
	}
	sortChanges(out)
	return out, nil
}

// sortChanges puts the largest regressions first: the largest slowdowns,
// and for a latency the largest rises.
func sortChanges(c []StepChange) {
	bad := func(x StepChange) float64 {
		if x.Metric.LowerIsBetter() {
			return x.ChangePercent
		}
		return -x.ChangePercent
	}
	sort.SliceStable(c, func(i, j int) bool {
		if bi, bj := bad(c[i]), bad(c[j]); bi != bj {
			return bi > bj
		}
		return c[i].String() < c[j].String()
	})
}
