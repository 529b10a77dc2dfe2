package analysis

import (
	"fmt"

	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/workload"
)

// ReportOptions tune BuildReport.
type ReportOptions struct {
	// Base cell of the relative and group tables; "" means the first cell.
	Base string
	// Grouping of the group statistics; nil means CatalogGrouping().
	Grouping *Grouping
	// Stddev of the group statistics; "" means sample.
	Stddev StddevKind
	// Series tune the throughput-over-time statistics.
	Series SeriesOptions
	// IncludeUnreported keeps `.pre` and `.warm` steps.
	IncludeUnreported bool
	// Significance tunes the intervals and markers of the relative tables
	// of a dataset with repeats.
	Significance Significance
}

// Report is every table of one dataset. Sections that do not apply are
// empty: hardware tables need hardware figures, scale-up needs two thread
// counts, series statistics need series, repeats need two cells of one
// combination.
type Report struct {
	Name     string           `json:"name"`
	Cells    []CellMeta       `json:"cells"`
	Base     string           `json:"base"`
	Relative []*RelativeTable `json:"relative"`
	Groups   []*GroupTable    `json:"groups"`
	Hardware []*HWTable       `json:"hardware,omitempty"`
	ScaleUp  []*ScaleUpTable  `json:"scaleUp,omitempty"`
	Series   []SeriesStats    `json:"series,omitempty"`
	Repeats  []RepeatStat     `json:"repeats,omitempty"`
	// Noise is the run-to-run noise floor per (step, threads) measured on
	// the repeats.
	Noise []NoiseFloorRow `json:"noise,omitempty"`
	// Latency is response time: absolute and relative percentiles, against
	// concurrency, over time, fixed-rate runs (latency.go).
	Latency *LatencyReport `json:"latency,omitempty"`
	Notes   []string       `json:"notes,omitempty"`
	// LeftOut are the measured steps the tables leave out because reports
	// do not publish them (`.pre`, `.warm`; see IncludeUnreported), so a
	// caller can say so.
	LeftOut []string `json:"leftOut,omitempty"`
	// Unverified are the config settings, per cell, that the server could
	// not confirm.
	Unverified []UnverifiedSettings `json:"unverified,omitempty"`

	// Counters are the engine counters per operation, per (step, threads)
	// that has them, beside Hardware.
	Counters []*CounterTable `json:"counters,omitempty"`
}

// stepsMeasuredAt is those of steps that some cell measured at th threads
// (an invalid value was measured: its row says so).
func stepsMeasuredAt(ds *Dataset, steps []string, th int) []string {
	var out []string
	for _, s := range steps {
		for _, c := range ds.cells {
			_, ok := ds.Get(c.Name, s, th)
			_, invalid := ds.Invalid(c.Name, s, th)
			if ok || invalid {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// BuildReport computes every report of ds.
func BuildReport(ds *Dataset, opts ReportOptions) (*Report, error) {
	if len(ds.obs) == 0 {
		return nil, fmt.Errorf("dataset %q has no observations: %w", ds.Name, ErrEmpty)
	}
	g := CatalogGrouping()
	if opts.Grouping != nil {
		g = *opts.Grouping
	}
	base := opts.Base
	if base == "" {
		base = ds.cells[0].Name
	}
	if err := ds.checkCell("base", base); err != nil {
		return nil, err
	}
	if err := opts.Significance.Validate(); err != nil {
		return nil, err
	}
	// With repeats, the relative tables compare combinations (means over
	// their repeats, with intervals); per-repeat columns would divide one
	// run by another run and hide the noise the repeats measure.
	byComb := hasRepeats(ds)
	r := &Report{Name: ds.Name, Cells: ds.Cells(), Base: base, Notes: append([]string(nil), ds.Notes...),
		Unverified: append([]UnverifiedSettings(nil), ds.Unverified...)}
	steps, err := reportSteps(ds, nil, opts.IncludeUnreported)
	if err != nil {
		return nil, err
	}
	if !opts.IncludeUnreported {
		reported := func(step string) bool {
			b, _ := results.SplitRateStep(step)
			return workload.Reported(b)
		}
		for _, s := range ds.Steps() {
			if !reported(s) {
				r.LeftOut = append(r.LeftOut, s)
			}
		}
		if len(r.LeftOut) > 0 {
			// Drop them from every table, so the thread counts at which
			// only they ran (a .warm step's) do not show up as columns and
			// scale-up points of nothing but missing cells.
			if ds, err = ds.subset(ds.CellNames(), func(o Observation) bool { return reported(o.Step) }); err != nil {
				return nil, err
			}
		}
	}
	for _, th := range ds.Threads() {
		thSteps := stepsMeasuredAt(ds, steps, th)
		if len(thSteps) == 0 {
			// Only left-out steps ran at this concurrency; an empty step
			// list would mean every step to Relative, each one missing.
			continue
		}
		rel, err := Relative(ds, RelativeOptions{Base: base, Threads: th, Steps: thSteps,
			ByCombination: byComb, Significance: opts.Significance})
		if err != nil {
			return nil, err
		}
		r.Relative = append(r.Relative, rel)
		if len(rel.Cells) > 0 {
			gt, err := GroupStats(rel, g, opts.Stddev)
			if err != nil {
				return nil, err
			}
			r.Groups = append(r.Groups, gt)
		}
		for _, s := range thSteps {
			if !hasHardware(ds, s, th) {
				continue
			}
			hw, err := HWEfficiency(ds, HWOptions{Step: s, Threads: th, Base: baseIfMeasured(ds, base, s, th)})
			if err != nil {
				return nil, err
			}
			r.Hardware = append(r.Hardware, hw)
		}
		if r.Counters, err = appendCounterTables(r.Counters, ds, thSteps, th, base); err != nil {
			return nil, err
		}
	}
	for _, c := range ds.cells {
		if ScaleUpPoints(ds, c.Name, opts.IncludeUnreported) < 2 {
			continue
		}
		su, err := ScaleUp(ds, ScaleUpOptions{Cell: c.Name, Steps: steps})
		if err != nil {
			return nil, err
		}
		r.ScaleUp = append(r.ScaleUp, su)
	}
	if byComb {
		// One multiple-comparison family per column across the thread
		// counts: a run's (step, threads) tests of that comparison.
		markSignificance(r.Relative, opts.Significance.withDefaults())
	}
	var seriesNotes []string
	if r.Series, seriesNotes, err = SeriesReport(ds, opts.Series); err != nil {
		return nil, err
	}
	r.Notes = append(r.Notes, seriesNotes...)
	r.Repeats = RepeatStats(ds)
	r.Noise = NoiseFloors(ds)
	if r.Latency, err = BuildLatencyReport(ds, LatencyOptions{Base: base, StallFraction: opts.Series.StallFraction,
		IncludeUnreported: opts.IncludeUnreported}); err != nil {
		return nil, err
	}
	return r, nil
}

func hasHardware(ds *Dataset, step string, threads int) bool {
	for _, c := range ds.cells {
		if o, ok := ds.Get(c.Name, step, threads); ok && o.HW != nil {
			return true
		}
	}
	return false
}

// Tables renders the whole report in a fixed order: relative throughput,
// group statistics, hardware efficiency, engine counters, scale-up, throughput over time,
// repeats, noise floor, latency.
func (r *Report) Tables() []Table {
	var out []Table
	for _, t := range r.Relative {
		out = append(out, t.Table())
	}
	for _, g := range r.Groups {
		out = append(out, g.Tables()...)
	}
	for _, h := range r.Hardware {
		out = append(out, h.Tables()...)
	}
	for _, c := range r.Counters {
		out = append(out, c.Tables()...)
	}
	for _, s := range r.ScaleUp {
		out = append(out, s.Tables()...)
	}
	if len(r.Series) > 0 {
		out = append(out, SeriesTable(r.Series))
	}
	if len(r.Repeats) > 0 {
		out = append(out, RepeatTable(r.Repeats))
	}
	if len(r.Noise) > 0 {
		out = append(out, NoiseTable(r.Noise))
	}
	if r.Latency != nil {
		out = append(out, r.Latency.Tables()...)
	}
	if t, ok := UnverifiedTable(r.Unverified); ok {
		out = append(out, t)
	}
	if len(r.Notes) > 0 && len(out) > 0 {
		out[0].Notes = append(out[0].Notes, r.Notes...)
	}
	return out
}

// PairedTable is the side-by-side view of two runs: for every cell name the
// two share, QPS(b) / QPS(a) per step.
func PairedTable(a, b *Dataset, threads int) (*RelativeTable, error) {
	m, err := Merge(a.Name+" vs "+b.Name, a, b)
	if err != nil {
		return nil, err
	}
	th, err := resolveThreads(m, threads)
	if err != nil {
		return nil, err
	}
	// One column per shared cell: b's cell divided by a's cell.
	t := &RelativeTable{Base: a.Name, Threads: th}
	var shared []string
	for _, c := range a.cells {
		if _, ok := b.Cell(c.Name); ok {
			shared = append(shared, c.Name)
		}
	}
	if len(shared) == 0 {
		return nil, fmt.Errorf("runs %q and %q share no cell name (%s vs %s)", a.Name, b.Name, listNames(a.CellNames(), 5), listNames(b.CellNames(), 5))
	}
	steps, err := reportSteps(m, nil, false)
	if err != nil {
		return nil, err
	}
	t.Cells, t.Steps = shared, steps
	t.BaseQPS = make([]*float64, len(steps))
	for _, s := range steps {
		row := make([]Ratio, len(shared))
		for j, c := range shared {
			oa, okA := a.Get(c, s, th)
			ob, okB := b.Get(c, s, th)
			_, badA := a.Invalid(c, s, th)
			_, badB := b.Invalid(c, s, th)
			switch {
			case !okA:
				row[j] = missingOrInvalid(badA)
				t.Missing = append(t.Missing, MissingValue{Cell: a.Name + "/" + c, Step: s, Invalid: badA})
			case !okB:
				row[j] = missingOrInvalid(badB)
				t.Missing = append(t.Missing, MissingValue{Cell: b.Name + "/" + c, Step: s, Invalid: badB})
			default:
				row[j] = Divide(ob.QPS, oa.QPS)
			}
		}
		t.Ratios = append(t.Ratios, row)
	}
	return t, nil
}

// PairedTableText renders a PairedTable (it has no base column).
func PairedTableText(t *RelativeTable, a, b string) Table {
	out := Table{
		ID:      fmt.Sprintf("paired.t%d", t.Threads),
		Title:   fmt.Sprintf("%s vs %s: QPS(%s) / QPS(%s) per cell, %d threads (> 1: %s is faster)", b, a, b, a, t.Threads, b),
		Columns: append([]string{"step"}, t.Cells...),
	}
	for i, s := range t.Steps {
		row := []string{s}
		for _, r := range t.Ratios[i] {
			row = append(row, r.String())
		}
		out.Rows = append(out.Rows, row)
	}
	out.Notes = append(missingNotes(t.Missing), noIntervalNote)
	return out
}
