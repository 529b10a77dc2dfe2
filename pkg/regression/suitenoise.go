package regression

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/results"
)

// MinFloorDF is the fewest degrees of freedom a suite's noise floor must
// rest on before a verdict with one run per side uses it. Below it the
// floor's own uncertainty dominates: the t quantile at 3 df and α/32 is
// more than twice the one at 30 df, so a 1–3 df floor makes almost every
// slowdown undetectable and, estimated from 2–4 runs, it can as easily be
// far too small. Four df are, for example, two A/A pairs and one set of 3
// repeats.
const MinFloorDF = 4

// manifestCombinations groups a manifest's succeeded cells by combination
// (CellMeta.Combination: the identity repeats share), in matrix order. A
// cell without a phase (a manifest built from documents) counts.
func manifestCombinations(m *results.Manifest) (order []string, cells map[string][]*results.ManifestCell) {
	cells = map[string][]*results.ManifestCell{}
	for i := range m.Cells {
		c := &m.Cells[i]
		if c.Phase != "" && c.Phase != results.ManifestPhaseSucceeded {
			continue
		}
		k := analysis.CellMeta{Name: c.Name, Database: c.Database, Engine: c.Engine, Version: c.Version, Config: c.Config}.Combination()
		if _, ok := cells[k]; !ok {
			order = append(order, k)
		}
		cells[k] = append(cells[k], c)
	}
	return order, cells
}

// pointsOf lists the (step, threads) of cells, by step then threads.
func pointsOf(cells []*results.ManifestCell) []inference.Key {
	seen := map[inference.Key]bool{}
	var out []inference.Key
	for _, c := range cells {
		for step, byThreads := range c.QPS {
			for th := range byThreads {
				k := inference.Key{Step: step, Threads: th}
				if !seen[k] {
					seen[k] = true
					out = append(out, k)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b inference.Key) int {
		return cmp.Or(cmp.Compare(a.Step, b.Step), cmp.Compare(a.Threads, b.Threads))
	})
	return out
}

// metricValues is the positive value of metric m at k in each of cells
// (log throughput and log latency need > 0; a cell without k is left out,
// never filled in).
func metricValues(cells []*results.ManifestCell, m analysis.Metric, k inference.Key) []float64 {
	var xs []float64
	for _, c := range cells {
		if v, ok := m.Value(c, k.Step, k.Threads); ok && v > 0 {
			xs = append(xs, v)
		}
	}
	return xs
}

// addRepeatSets adds every combination of m with two runs or more of a
// point as a repeat set; it reports whether m contributed.
func addRepeatSets(model *inference.NoiseModel, m *results.Manifest, metric analysis.Metric) bool {
	order, groups := manifestCombinations(m)
	used := false
	for _, comb := range order {
		cells := groups[comb]
		if len(cells) < 2 {
			continue
		}
		for _, k := range pointsOf(cells) {
			if xs := metricValues(cells, metric, k); len(xs) >= 2 {
				if err := model.AddRepeats(k, xs); err != nil {
					panic(fmt.Sprintf("%s: %v", m.Run.Name, err)) // positive finite values by construction
				}
				used = true
			}
		}
	}
	return used
}

// SuiteNoise measures a suite's noise floor per (step, threads) for the
// verdict of cur (nil for a suite-wide measurement: every run is history)
// from:
//
//   - repeats: every combination with two cells or more in a run (cur's and
//     the history's) is a repeat set, n − 1 df;
//   - A/A sets: the history's runs of a combination with one cell each,
//     grouped by ManifestCell.AAKey (same database, version and config name,
//     image digest or reported server version, settings digest, config text
//     and workload digest): k runs of one identity are a set of k − 1 df (a
//     pair is 1 df). cur never joins an A/A set, because the floor judges
//     it: a pair that includes the run being judged would measure the
//     slowdown in question as noise. Runs whose identity is not recorded
//     (AAKey "") form no set. Runs with repeats give their repeat sets
//     instead: the mean of n repeats has a smaller variance than one run
//     and would not pool with single runs.
//   - inheritance: when the newest history manifest carries a stored floor
//     for a point that rests on more df than the readable history gives it
//     (pruned run objects, no object store), the stored floor replaces the
//     history's evidence for that point, and InheritedFrom says whose it
//     was. cur's repeats are added on top (they are never in it).
//
// history is oldest first and must not include cur. alpha is recorded in
// the result (the verdict's level); the result is nil when no point has
// evidence.
func SuiteNoise(history []*results.Manifest, cur *results.Manifest, alpha float64) *results.NoiseFloors {
	return SuiteNoiseOf(history, cur, alpha, nil)
}

// SuiteNoiseOf is SuiteNoise with the floors of latency metrics as well
// (the variance of log latency, measured the same way, in points whose
// Metric names them); throughput's floor is always measured.
func SuiteNoiseOf(history []*results.Manifest, cur *results.Manifest, alpha float64, metrics []analysis.Metric) *results.NoiseFloors {
	out := &results.NoiseFloors{Alpha: alpha}
	used := map[string]bool{}
	judged := []analysis.Metric{analysis.MetricThroughput}
	for _, m := range metrics {
		if m.LowerIsBetter() && !slices.Contains(judged, m) {
			judged = append(judged, m)
		}
	}
	for _, m := range judged {
		out.Points = append(out.Points, suiteNoisePoints(history, cur, m, used)...)
	}
	if len(out.Points) == 0 {
		return nil
	}
	for _, m := range history {
		if used[m.Run.Name] {
			out.Runs = append(out.Runs, m.Run.Name)
		}
	}
	return out
}

// noiseSet is a set of a history's cells that measure one configuration:
// a combination's repeats in one run, or an A/A set (single cells of
// several runs with one ManifestCell.AAKey).
type noiseSet struct {
	id    string
	runs  []string // each cell's run
	cells []*results.ManifestCell
}

// historySets lists history's repeat sets (every combination with two
// cells or more in a run), then its A/A sets of two runs or more, in the
// history's order. Runs whose identity is not recorded (AAKey "") form no
// A/A set.
func historySets(history []*results.Manifest) []noiseSet {
	var out []noiseSet
	for _, m := range history {
		order, groups := manifestCombinations(m)
		for _, comb := range order {
			if cells := groups[comb]; len(cells) >= 2 {
				s := noiseSet{id: m.Run.Name + "\x00" + comb, cells: cells}
				for range cells {
					s.runs = append(s.runs, m.Run.Name)
				}
				out = append(out, s)
			}
		}
	}
	var ids []string
	sets := map[string]*noiseSet{}
	for _, m := range history {
		order, groups := manifestCombinations(m)
		for _, comb := range order {
			if len(groups[comb]) != 1 {
				continue
			}
			c := groups[comb][0]
			id := c.AAKey(m.WorkloadSHA256)
			if id == "" {
				continue
			}
			if _, ok := sets[id]; !ok {
				ids = append(ids, id)
				sets[id] = &noiseSet{id: id}
			}
			sets[id].cells = append(sets[id].cells, c)
			sets[id].runs = append(sets[id].runs, m.Run.Name)
		}
	}
	for _, id := range ids {
		if len(sets[id].cells) >= 2 {
			out = append(out, *sets[id])
		}
	}
	return out
}

// suiteNoisePoints measures one metric's floors; used collects the runs
// they rest on.
func suiteNoisePoints(history []*results.Manifest, cur *results.Manifest, metric analysis.Metric, used map[string]bool) []results.NoisePoint {
	var hist inference.NoiseModel
	for _, set := range historySets(history) {
		for _, k := range pointsOf(set.cells) {
			var xs []float64
			var runs []string
			for i, c := range set.cells {
				if v, ok := metric.Value(c, k.Step, k.Threads); ok && v > 0 {
					xs = append(xs, v)
					runs = append(runs, set.runs[i])
				}
			}
			if len(xs) < 2 {
				continue
			}
			if err := hist.AddRepeats(k, xs); err != nil {
				panic(fmt.Sprintf("%s: %v", set.runs[0], err)) // positive finite values by construction
			}
			for _, r := range runs {
				used[r] = true
			}
		}
	}

	type chosen struct {
		floor     inference.NoiseFloor
		inherited string
	}
	base := map[inference.Key]chosen{}
	for _, k := range hist.Keys() {
		f, _ := hist.Floor(k)
		base[k] = chosen{floor: f}
	}
	if n := len(history); n > 0 && history[n-1].NoiseFloor != nil {
		last := history[n-1]
		for _, p := range last.NoiseFloor.Points {
			if p.Metric != floorMetric(metric) {
				continue // another metric's floor
			}
			k := inference.Key{Step: p.Step, Threads: p.Threads}
			if p.DF <= base[k].floor.DF {
				continue
			}
			from := p.InheritedFrom
			if from == "" {
				from = last.Run.Name
			}
			base[k] = chosen{floor: inference.NoiseFloor{SigmaLog: p.SigmaLog, DF: p.DF, Runs: p.Runs, Sets: p.Sets}, inherited: from}
		}
	}

	var model inference.NoiseModel
	for k, c := range base {
		if err := model.AddFloor(k, c.floor); err != nil {
			panic(fmt.Sprintf("history floor: %v", err)) // validated when read, pooled here
		}
	}
	if cur != nil {
		addRepeatSets(&model, cur, metric)
	}
	var points []results.NoisePoint
	for _, k := range model.Keys() {
		f, _ := model.Floor(k)
		p := results.NoisePoint{Step: k.Step, Threads: k.Threads,
			SigmaLog: f.SigmaLog, CV: f.CV(), DF: f.DF, Runs: f.Runs, Sets: f.Sets, InheritedFrom: base[k].inherited}
		if metric != analysis.MetricThroughput {
			p.Metric = string(metric) // throughput's points stay unnamed, as older manifests have them
		}
		points = append(points, p)
	}
	return points
}

// FloorOf is a stored point as the floor pkg/inference tests with.
func FloorOf(p results.NoisePoint) inference.NoiseFloor {
	return inference.NoiseFloor{SigmaLog: p.SigmaLog, DF: p.DF, Runs: p.Runs, Sets: p.Sets}
}

// SuiteNoiseRow is the noise floor of one (step, threads) of a suite and
// the slowdown a verdict with one run per side can detect with it.
type SuiteNoiseRow struct {
	results.NoisePoint
	// Usable says whether a verdict uses the floor (DF >= MinFloorDF);
	// otherwise it falls back to the per-second test.
	Usable bool `json:"usable"`
	// MDE is the slowdown the one-sided floor test at Alpha finds with
	// 80 % power with one run per side; MDEHolm the same at Alpha/m, the
	// level Holm's correction tests a run's smallest p-value at, m the
	// table's points. NaN when the floor has no variance to go by.
	MDE     analysis.Num `json:"mde"`
	MDEHolm analysis.Num `json:"mdeHolm"`
}

// SuiteNoiseSummary is the noise floor of a suite measured on all its runs
// (SuiteNoise with no run being judged).
type SuiteNoiseSummary struct {
	Suite string `json:"suite"`
	// RunsRead counts the runs read; FloorRuns names those the floor rests
	// on.
	RunsRead  int             `json:"runsRead"`
	FloorRuns []string        `json:"floorRuns"`
	Alpha     float64         `json:"alpha"`
	Rows      []SuiteNoiseRow `json:"rows"`
	// Components split each point's noise into its levels (within a run,
	// between runs on a node, between nodes): what a plan rests on.
	Components []ComponentsRow `json:"components"`
}

// mdePower is the power of the minimum detectable effects reported.
const mdePower = 0.8

// SuiteNoiseReport measures the floor of a suite from its runs (oldest
// first) and the minimum detectable slowdown of each point at alpha.
func SuiteNoiseReport(suite string, runs []*results.Manifest, alpha float64) *SuiteNoiseSummary {
	s := &SuiteNoiseSummary{Suite: suite, RunsRead: len(runs), Alpha: alpha, Components: SuiteComponents(runs, analysis.MetricThroughput)}
	f := SuiteNoise(runs, nil, alpha)
	if f == nil {
		return s
	}
	s.FloorRuns = f.Runs
	m := float64(len(f.Points))
	for _, p := range f.Points {
		row := SuiteNoiseRow{NoisePoint: p, Usable: p.DF >= MinFloorDF, MDE: analysis.Num(math.NaN()), MDEHolm: analysis.Num(math.NaN())}
		if p.CV > 0 {
			for _, x := range []struct {
				level float64
				dst   *analysis.Num
			}{{alpha, &row.MDE}, {alpha / m, &row.MDEHolm}} {
				if mde, err := (inference.Design{CV: p.CV, Alpha: x.level, FloorDF: p.DF}).MDE(1, mdePower); err == nil {
					*x.dst = analysis.Num(mde)
				}
			}
		}
		s.Rows = append(s.Rows, row)
	}
	return s
}

// Tables renders the floor, then the components.
func (s *SuiteNoiseSummary) Tables() []analysis.Table {
	return []analysis.Table{s.Table(), ComponentsTable(s.Suite, s.Components)}
}

// Table renders the floor.
func (s *SuiteNoiseSummary) Table() analysis.Table {
	t := analysis.Table{ID: "suite-noise", Title: fmt.Sprintf("Noise floor of suite %s: run-to-run variation over %d runs", s.Suite, s.RunsRead),
		Columns: []string{"step", "threads", "cv %", "df", "runs", "sets",
			fmt.Sprintf("mde %% (1 run/side, α %g)", s.Alpha), fmt.Sprintf("mde %% (holm over %d)", len(s.Rows)), "verdict uses"}}
	for _, r := range s.Rows {
		uses := "floor"
		if !r.Usable {
			uses = fmt.Sprintf("per-second (df < %d)", MinFloorDF)
		}
		if r.InheritedFrom != "" {
			uses += " (inherited from " + r.InheritedFrom + ")"
		}
		t.Rows = append(t.Rows, []string{r.Step, fmt.Sprint(r.Threads), analysis.FormatFloat(100*r.CV, 2), fmt.Sprint(r.DF), fmt.Sprint(r.Runs),
			fmt.Sprint(r.Sets), analysis.Num(100 * float64(r.MDE)).Format(1), analysis.Num(100 * float64(r.MDEHolm)).Format(1), uses})
	}
	if len(s.Rows) == 0 {
		t.Notes = append(t.Notes, "no evidence: the suite has no run with repeats and no two runs of the same image, settings, config and workload")
	}
	t.Notes = append(t.Notes,
		"cv is sqrt(exp(s^2) - 1) of the pooled variance s^2 of log QPS over the runs' repeats and the suite's A/A sets (runs of the same image, settings, config and workload); df = sum of n - 1",
		fmt.Sprintf("mde: the slowdown a one-sided test of \"slower\" against the floor finds with %.0f %% power with one run per side (the verdict's minMagnitudePercent comes on top); holm: at α/m, as a run's verdict tests its smallest p-value; docs/noise.md", 100*mdePower))
	return t
}
