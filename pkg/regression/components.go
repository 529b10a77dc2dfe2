package regression

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/results"
)

// ComponentsRow is the variance components of one (step, threads) of a
// suite, measured on its history (inference.EstimateComponents).
type ComponentsRow struct {
	Step    string `json:"step"`
	Threads int    `json:"threads"`
	inference.VarianceComponents
	// WithinMethods counts the runs whose within-run variance came from
	// each estimator: "batch-means" (the manifest's longRunStddev),
	// "ar1" (its effectiveSamples) or "white" (neither: the per-second
	// samples taken as independent, which understates a positively
	// autocorrelated series' variance).
	WithinMethods map[string]int `json:"withinMethods,omitempty"`
}

// withinMethodWhite names the within-run estimate of a spread without
// autocorrelation figures.
const withinMethodWhite = "white"

// withinOf is a throughput point's within-run variance of ln(mean QPS)
// from a cell's spread, with its df, its measured seconds (1-s samples)
// and the estimator used: batch means where the manifest has them, else
// the AR(1) effective samples, else the samples as independent. The
// spread is of QPS, so the variance of the log mean is the mean's relative
// variance (delta method).
func withinOf(c *results.ManifestCell, k inference.Key) (within float64, df int, seconds float64, method string, ok bool) {
	sp, ok := c.QPSSpread[k.Step][k.Threads]
	q := c.QPS[k.Step][k.Threads]
	if !ok || sp.Samples < 2 || !(q > 0) {
		return 0, 0, 0, "", false
	}
	lrv, df, method := sp.Stddev*sp.Stddev, sp.Samples-1, withinMethodWhite
	switch {
	case sp.LongRunDF > 0:
		lrv, df, method = sp.LongRunStddev*sp.LongRunStddev, sp.LongRunDF, string(inference.MethodBatchMeans)
	case sp.EffectiveSamples > 0:
		lrv *= float64(sp.Samples) / float64(sp.EffectiveSamples)
		df, method = max(1, sp.EffectiveSamples-1), string(inference.MethodAR1)
	}
	n := float64(sp.Samples)
	return lrv / (q * q * n), df, n, method, true
}

// SuiteComponents estimates the variance components of every (step,
// threads) of metric over a suite's runs (oldest first) from the sets the
// noise floor uses (every combination's repeats within a run, and the A/A
// sets across runs, SuiteNoise), each run on the node its manifest entry
// names. The within-run level is throughput's alone (the manifest keeps no
// per-second spread of p99; a latency's run level then includes it).
// Points with fewer than two runs in a set have no row.
func SuiteComponents(history []*results.Manifest, metric analysis.Metric) []ComponentsRow {
	byKey := map[inference.Key][]inference.RunValue{}
	methods := map[inference.Key]map[string]int{}
	for _, set := range historySets(history) {
		for _, k := range pointsOf(set.cells) {
			var rv []inference.RunValue
			for _, c := range set.cells {
				v, ok := metric.Value(c, k.Step, k.Threads)
				if !ok || !(v > 0) {
					continue
				}
				r := inference.RunValue{Set: set.id, Node: c.Node, Value: v}
				if metric == analysis.MetricThroughput {
					if w, df, secs, method, ok := withinOf(c, k); ok {
						r.Within, r.WithinDF, r.Seconds = w, df, secs
						if methods[k] == nil {
							methods[k] = map[string]int{}
						}
						methods[k][method]++
					}
				}
				rv = append(rv, r)
			}
			if len(rv) >= 2 {
				byKey[k] = append(byKey[k], rv...)
			}
		}
	}
	keys := make([]inference.Key, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b inference.Key) int {
		if c := strings.Compare(a.Step, b.Step); c != 0 {
			return c
		}
		return a.Threads - b.Threads
	})
	var out []ComponentsRow
	for _, k := range keys {
		vc, err := inference.EstimateComponents(byKey[k])
		if err != nil {
			panic(fmt.Sprintf("components of %s@%d: %v", k.Step, k.Threads, err)) // positive finite values by construction
		}
		out = append(out, ComponentsRow{Step: k.Step, Threads: k.Threads, VarianceComponents: vc, WithinMethods: methods[k]})
	}
	return out
}

// ComponentsTable renders the components: each level as the CV its
// variance implies on its own, with its df.
func ComponentsTable(suite string, rows []ComponentsRow) analysis.Table {
	t := analysis.Table{ID: "suite-components", Title: fmt.Sprintf("Variance components of suite %s: within a run, between runs on a node, between nodes", suite),
		Columns: []string{"step", "threads", "seconds", "within cv % (1 s)", "df", "within cv % (step)", "run cv %", "df", "node cv %", "df", "nodes", "runs"}}
	truncated, unknownWithin, white := false, false, false
	cv := func(c inference.Component) string {
		switch {
		case !c.Known:
			return "-"
		case c.Truncated:
			truncated = true
			return "0*"
		}
		return analysis.FormatFloat(100*c.CV(), 2)
	}
	df := func(c inference.Component) string {
		if !c.Known {
			return "-"
		}
		return fmt.Sprint(c.DF)
	}
	for _, r := range rows {
		step := "-"
		if r.WithinPerSecond.Known && r.Seconds > 0 {
			step = analysis.FormatFloat(100*math.Sqrt(math.Expm1(r.WithinPerSecond.Variance/r.Seconds)), 2)
		} else {
			unknownWithin = true
		}
		white = white || r.WithinMethods[withinMethodWhite] > 0
		secs := "-"
		if r.Seconds > 0 {
			secs = analysis.FormatFloat(r.Seconds, 0)
		}
		t.Rows = append(t.Rows, []string{r.Step, fmt.Sprint(r.Threads), secs, cv(r.WithinPerSecond), df(r.WithinPerSecond), step,
			cv(r.Run), df(r.Run), cv(r.Node), df(r.Node), fmt.Sprint(r.Nodes), fmt.Sprint(r.Runs)})
	}
	if len(rows) == 0 {
		t.Notes = append(t.Notes, "no evidence: the suite has no run with repeats and no two runs of the same image, settings, config and workload")
	}
	t.Notes = append(t.Notes,
		"model: ln QPS = set + node + run + within, independent normal effects; within (1 s) is the per-second series' long-run variance (batch means, else AR(1) from the lag-1 autocorrelation), so the mean of a T-s step carries a within-run variance of within²/T; run = within-node mean square minus the runs' within part; node = (between-node minus within-node mean square) / n0; each shown as the CV its variance implies; docs/noise.md",
		"df: of each level's mean square (within: batches - 1 summed over the runs; run: sum of n - 1 per set and node; node: sum of nodes - 1 per set, at most the nodes less one)")
	if truncated {
		t.Notes = append(t.Notes, "0*: the moment estimate was negative and is truncated at 0 (the level is not distinguishable from 0 with these runs)")
	}
	if unknownWithin {
		t.Notes = append(t.Notes, "within -: the manifests keep no per-second spread of the point; its run level includes the within-run noise at the runs' step length")
	}
	if white {
		t.Notes = append(t.Notes, "some runs kept neither a batch-means nor an autocorrelation figure: their per-second samples were taken as independent, which understates the within level of an autocorrelated series")
	}
	return t
}
