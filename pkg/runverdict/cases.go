package runverdict

import (
	"fmt"
	"math"
	"sort"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/triage"
)

// casesOfVerdict lists every point a verdict against a run or the
// baseline compared, in its order (cell, step, threads, metric): a
// regressed point is Regressed, or Acknowledged when an ack covers its
// pair; every other point Passed.
func casesOfVerdict(v *regression.Verdict, acked map[string]bool) []triage.VerdictCase {
	out := make([]triage.VerdictCase, 0, len(v.Points))
	for _, p := range v.Points {
		mc := metricChangeOf(p)
		c := triage.VerdictCase{Cell: p.Cell, Step: p.Step, Threads: p.Threads, Metric: string(mc.Metric), Result: triage.CasePassed,
			Before: mc.Before, After: mc.After, ChangePercent: mc.ChangePercent, PValue: mc.AdjustedPValue, Method: p.Detail}
		if p.Regressed {
			c.Result, c.Message = triage.CaseRegressed, p.String()
			if acked[pairKey(p.Cell, p.Step, p.Threads)] {
				c.Result = triage.CaseAcknowledged
			}
		}
		out = append(out, c)
	}
	return out
}

// casesOfChangePoints lists every (cell, step, threads) of the run times
// every judged metric, sorted: a confirmed change is Regressed, one only
// this run shows Suspected, one an ack covers Acknowledged, and every
// other Passed (no change point the rule reports).
func casesOfChangePoints(cur *results.Manifest, metrics []analysis.Metric, found, suspected []regression.StepChange,
	acked []dbbenchv1alpha1.AcknowledgedStep, method string) []triage.VerdictCase {
	type key struct {
		cell, step string
		threads    int
		metric     string
	}
	index := map[key]int{}
	var out []triage.VerdictCase
	for _, c := range cur.Cells {
		for step, byThreads := range c.QPS {
			for threads := range byThreads {
				for _, m := range metrics {
					name := string(APIMetric(m))
					index[key{c.Name, step, threads, name}] = len(out)
					out = append(out, triage.VerdictCase{Cell: c.Name, Step: step, Threads: threads, Metric: name,
						Result: triage.CasePassed, Method: method})
				}
			}
		}
	}
	mark := func(ch regression.StepChange, result triage.CaseResult) {
		m := metricOfChange(ch)
		k := key{ch.Cell, ch.Step, ch.Threads, string(APIMetric(m))}
		i, ok := index[k]
		if !ok {
			// A change of a pair this run did not measure cannot be: the
			// series ends with this run. Kept, so nothing found is lost.
			i = len(out)
			index[k] = i
			out = append(out, triage.VerdictCase{Cell: ch.Cell, Step: ch.Step, Threads: ch.Threads, Metric: k.metric, Method: method})
		}
		c := &out[i]
		c.Result, c.Message = result, ch.String()
		c.Before, c.After = formatFigure(m, ch.Before), formatFigure(m, ch.After)
		c.ChangePercent = fmt.Sprintf("%.1f", ch.ChangePercent)
		if !math.IsNaN(ch.PValue) {
			c.PValue = fmt.Sprintf("%.2g", ch.PValue)
		}
	}
	for _, ch := range suspected {
		mark(ch, triage.CaseSuspected)
	}
	for _, ch := range found {
		mark(ch, triage.CaseRegressed)
	}
	for _, a := range acked {
		metric := a.Metric
		if metric == "" {
			metric = dbbenchv1alpha1.MetricThroughput
		}
		if i, ok := index[key{a.Cell, a.Step, int(a.Threads), string(metric)}]; ok {
			out[i].Result = triage.CaseAcknowledged
			out[i].ChangePercent = a.ChangePercent
			out[i].Message = fmt.Sprintf("%s %s@%d %s%%: %s by %s", a.Cell, a.Step, a.Threads, a.ChangePercent, a.Resolution, a.Ack)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Cell != b.Cell {
			return a.Cell < b.Cell
		}
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		if a.Threads != b.Threads {
			return a.Threads < b.Threads
		}
		return metricRank(a.Metric) < metricRank(b.Metric)
	})
	return out
}

// metricRank orders a pair's metrics as the verdict judges them:
// throughput first.
func metricRank(m string) int {
	switch dbbenchv1alpha1.RegressionMetric(m) {
	case dbbenchv1alpha1.MetricThroughput:
		return 0
	case dbbenchv1alpha1.MetricP95Latency:
		return 1
	}
	return 2
}
