package analysis

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/workload"
)

// RelativeOptions select a relative-throughput table.
type RelativeOptions struct {
	// Base is the cell every other cell is divided by; "" means the first
	// cell of the dataset.
	Base string
	// Threads is the concurrency to compare; 0 means the only thread count
	// of the dataset (an error when there are several).
	Threads int
	// Cells are the columns, in order; nil means every cell but the base,
	// in dataset order.
	Cells []string
	// Steps are the rows, in order; nil means every step of the dataset
	// that reports publish (`.pre` and `.warm` left out, unless
	// IncludeUnreported).
	Steps             []string
	IncludeUnreported bool
	// ByCombination makes the columns combinations (CellMeta.Combination)
	// instead of cells: each ratio is the mean over the combination's
	// repeats divided by the mean over the base's, with an interval and a
	// marker wherever both sides have two runs or more. Base and Cells may
	// then name combinations (a cell name stands for its combination).
	ByCombination bool
	// Significance tunes those intervals and markers.
	Significance Significance
}

// RelativeTable is QPS(cell) / QPS(base) per step: rows are steps, columns
// cells; > 1 means the cell is faster than the base.
type RelativeTable struct {
	Base    string   `json:"base"`
	Threads int      `json:"threads"`
	Cells   []string `json:"cells"`
	Steps   []string `json:"steps"`
	// BaseQPS is the base's QPS per step; nil where the base lacks the step.
	BaseQPS []*float64 `json:"baseQps"`
	// Ratios[i][j] is step i, cell j.
	Ratios [][]Ratio `json:"ratios"`
	// Missing lists the (cell, step) pairs without a measurement, the base
	// included, so nothing drops out silently.
	Missing []MissingValue `json:"missing,omitempty"`

	// ByCombination is set when the columns (and the base) are
	// combinations and the ratios means over their repeats; the fields
	// below are set only then.
	ByCombination bool `json:"byCombination,omitempty"`
	// Inference[i][j] is the interval and marker of Ratios[i][j]; nil
	// where a side has fewer than two runs (or the ratio is missing).
	Inference    [][]*RatioInference `json:"inference,omitempty"`
	Significance *Significance       `json:"significance,omitempty"`
	// Runs is the number of repeats of the base and of every column.
	Runs map[string]int `json:"runs,omitempty"`
	// Tests is, per column, how many (step, threads) tests its
	// correction counted (across the tables of a report).
	Tests map[string]int `json:"tests,omitempty"`

	// WithinRun is set on a table of single runs whose Inference holds
	// within-run intervals (withinRun): the per-second samples of the two
	// runs, marked MarkerNoise or MarkerUnconfirmed.
	WithinRun bool `json:"withinRun,omitempty"`
}

// MissingValue is a (cell, step) that was not measured, or whose value
// the quality gate marked invalid (Invalid).
type MissingValue struct {
	Cell    string `json:"cell"`
	Step    string `json:"step"`
	Invalid bool   `json:"invalid,omitempty"`
}

// resolveThreads picks the thread count of a report.
func resolveThreads(ds *Dataset, threads int) (int, error) {
	all := ds.Threads()
	if len(all) == 0 {
		return 0, fmt.Errorf("dataset %q has no observations: %w", ds.Name, ErrEmpty)
	}
	if threads == 0 {
		if len(all) > 1 {
			return 0, fmt.Errorf("dataset %q has results at %s threads: choose one: %w", ds.Name, intList(all), ErrNoThreadCount)
		}
		return all[0], nil
	}
	if !slices.Contains(all, threads) {
		return 0, fmt.Errorf("threads %d: %w in dataset %q (has %s)", threads, ErrNoThreadCount, ds.Name, intList(all))
	}
	return threads, nil
}

func intList(xs []int) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += strconv.Itoa(x)
	}
	return s
}

// reportSteps returns the steps a report covers.
func reportSteps(ds *Dataset, steps []string, includeUnreported bool) ([]string, error) {
	if steps != nil {
		known := map[string]bool{}
		for _, s := range ds.Steps() {
			known[s] = true
		}
		for _, s := range steps {
			if !known[s] {
				return nil, fmt.Errorf("step %q: %w in dataset %q (steps: %s)", s, ErrNoSuchStep, ds.Name, listNames(ds.Steps(), 8))
			}
		}
		return steps, nil
	}
	var out []string
	for _, s := range ds.Steps() {
		// Fixed-rate variants are left out: their throughput is their target.
		if (includeUnreported || workload.Reported(s)) && !IsFixedRateStep(s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// Relative builds a relative-throughput table.
func Relative(ds *Dataset, opts RelativeOptions) (*RelativeTable, error) {
	if len(ds.cells) == 0 {
		return nil, fmt.Errorf("dataset %q has no cells: %w", ds.Name, ErrEmpty)
	}
	if opts.ByCombination {
		return relativeCombinations(ds, opts)
	}
	base := opts.Base
	if base == "" {
		base = ds.cells[0].Name
	}
	if err := ds.checkCell("base", base); err != nil {
		return nil, err
	}
	threads, err := resolveThreads(ds, opts.Threads)
	if err != nil {
		return nil, err
	}
	cells := opts.Cells
	if cells == nil {
		for _, c := range ds.cells {
			if c.Name != base {
				cells = append(cells, c.Name)
			}
		}
	}
	for _, c := range cells {
		if err := ds.checkCell("cell", c); err != nil {
			return nil, err
		}
	}
	steps, err := reportSteps(ds, opts.Steps, opts.IncludeUnreported)
	if err != nil {
		return nil, err
	}
	t := &RelativeTable{Base: base, Threads: threads, Cells: cells, Steps: steps,
		BaseQPS: make([]*float64, len(steps)), Ratios: make([][]Ratio, len(steps))}
	for i, s := range steps {
		row := make([]Ratio, len(cells))
		b, okBase := ds.Get(base, s, threads)
		_, baseInvalid := ds.Invalid(base, s, threads)
		if okBase {
			q := b.QPS
			t.BaseQPS[i] = &q
		} else {
			t.Missing = append(t.Missing, MissingValue{Cell: base, Step: s, Invalid: baseInvalid})
		}
		for j, c := range cells {
			o, ok := ds.Get(c, s, threads)
			_, invalid := ds.Invalid(c, s, threads)
			switch {
			case !ok:
				row[j] = missingOrInvalid(invalid)
				t.Missing = append(t.Missing, MissingValue{Cell: c, Step: s, Invalid: invalid})
			case !okBase:
				row[j] = missingOrInvalid(baseInvalid)
			default:
				row[j] = Divide(o.QPS, b.QPS)
				if ri := withinRun(b, o); ri != nil {
					if t.Inference == nil {
						t.Inference = make([][]*RatioInference, len(steps))
					}
					if t.Inference[i] == nil {
						t.Inference[i] = make([]*RatioInference, len(cells))
					}
					t.Inference[i][j] = ri
					t.WithinRun = true
				}
			}
		}
		t.Ratios[i] = row
	}
	for i := range t.Inference {
		if t.Inference[i] == nil {
			t.Inference[i] = make([]*RatioInference, len(cells))
		}
	}
	return t, nil
}

// Column returns the ratios of one cell, in step order.
func (t *RelativeTable) Column(cell string) ([]Ratio, bool) {
	j := slices.Index(t.Cells, cell)
	if j < 0 {
		return nil, false
	}
	out := make([]Ratio, len(t.Steps))
	for i := range t.Steps {
		out[i] = t.Ratios[i][j]
	}
	return out, true
}

// Table renders the relative table: a step column, the base's absolute QPS,
// then one column per cell with 2-decimal ratios.
func (t *RelativeTable) Table() Table {
	cols := append([]string{"step", "base qps"}, t.Cells...)
	out := Table{
		ID:      fmt.Sprintf("relative.t%d", t.Threads),
		Title:   fmt.Sprintf("Relative throughput: QPS(cell) / QPS(%s), %d threads (> 1 is faster)", t.Base, t.Threads),
		Columns: cols,
	}
	for i, s := range t.Steps {
		row := []string{s, "missing"}
		if t.BaseQPS[i] != nil {
			row[1] = FormatFloat(*t.BaseQPS[i], 2)
		} else if slices.Contains(t.Missing, MissingValue{Cell: t.Base, Step: s, Invalid: true}) {
			row[1] = "invalid"
		}
		for j, r := range t.Ratios[i] {
			switch {
			case t.ByCombination:
				row = append(row, FormatWithInterval(r, t.Inference[i][j]))
			case t.WithinRun && t.Inference[i] != nil && t.Inference[i][j] != nil:
				row = append(row, r.String()+string(t.Inference[i][j].Marker))
			default:
				row = append(row, r.String())
			}
		}
		out.Rows = append(out.Rows, row)
	}
	out.Notes = missingNotes(t.Missing)
	if t.ByCombination {
		out.ID = fmt.Sprintf("relative-repeats.t%d", t.Threads)
		ratio := fmt.Sprintf("mean QPS(combination) / mean QPS(%s)", t.Base)
		if t.allPaired() {
			ratio = fmt.Sprintf("QPS(combination) / QPS(%s) in each block, geometric mean over the blocks", t.Base)
		}
		out.Title = fmt.Sprintf("Relative throughput over repeats: %s, %d threads (> 1 is faster)", ratio, t.Threads)
		out.Columns[1] = "base mean qps"
		out.Notes = append(out.Notes, t.intervalNotes()...)
	} else if t.WithinRun {
		out.Notes = append(out.Notes, t.withinRunNotes()...)
	} else if len(t.Cells) > 0 {
		out.Notes = append(out.Notes, noIntervalNote)
	}
	return out
}

// allPaired reports whether every ratio of t with an interval was paired
// by block, and at least one was.
func (t *RelativeTable) allPaired() bool {
	n := 0
	for _, row := range t.Inference {
		for _, ri := range row {
			if ri == nil {
				continue
			}
			if ri.Method != inference.MethodPairedLog {
				return false
			}
			n++
		}
	}
	return n > 0
}

// relativeCombinations is Relative with ByCombination.
func relativeCombinations(ds *Dataset, opts RelativeOptions) (*RelativeTable, error) {
	if err := opts.Significance.Validate(); err != nil {
		return nil, err
	}
	sig := opts.Significance.withDefaults()
	order, groups := repeatGroups(ds)
	comb := func(role, name string) (string, error) {
		if _, ok := groups[name]; ok {
			return name, nil
		}
		if c, ok := ds.Cell(name); ok {
			return c.Combination(), nil
		}
		return "", fmt.Errorf("%s %q: %w in dataset %q (combinations: %s)", role, name, ErrNoSuchCell, ds.Name, listNames(order, 8))
	}
	base := ds.cells[0].Combination()
	if opts.Base != "" {
		var err error
		if base, err = comb("base", opts.Base); err != nil {
			return nil, err
		}
	}
	threads, err := resolveThreads(ds, opts.Threads)
	if err != nil {
		return nil, err
	}
	var cols []string
	if opts.Cells == nil {
		for _, c := range order {
			if c != base {
				cols = append(cols, c)
			}
		}
	}
	for _, name := range opts.Cells {
		c, err := comb("cell", name)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	steps, err := reportSteps(ds, opts.Steps, opts.IncludeUnreported)
	if err != nil {
		return nil, err
	}
	t := &RelativeTable{Base: base, Threads: threads, Cells: cols, Steps: steps, ByCombination: true,
		BaseQPS: make([]*float64, len(steps)), Ratios: make([][]Ratio, len(steps)),
		Significance: &sig, Tests: map[string]int{}}
	relativeByCombination(ds, t, sig)
	markSignificance([]*RelativeTable{t}, sig)
	return t, nil
}

func missingNotes(m []MissingValue) []string {
	if len(m) == 0 {
		return nil
	}
	type key struct {
		cell    string
		invalid bool
	}
	byCell := map[key][]string{}
	var order []key
	for _, v := range m {
		k := key{v.Cell, v.Invalid}
		if _, ok := byCell[k]; !ok {
			order = append(order, k)
		}
		byCell[k] = append(byCell[k], v.Step)
	}
	var notes []string
	for _, k := range order {
		if k.invalid {
			notes = append(notes, fmt.Sprintf("%s's result for %s is invalid: the quality gate found it stalled or starved, so it is not a value (shown as invalid; docs/reports.md)", k.cell, listNames(byCell[k], 6)))
			continue
		}
		notes = append(notes, fmt.Sprintf("%s has no result for %s (shown as missing)", k.cell, listNames(byCell[k], 6)))
	}
	return notes
}

// missingOrInvalid is the ratio of a value that is not there: invalid
// when the quality gate marked it so.
func missingOrInvalid(invalid bool) Ratio {
	if invalid {
		return Invalid()
	}
	return Missing()
}

// sortSteps orders step names by the catalog's run order (the 42-step
// variant's), then unknown names alphabetically.
func sortSteps(steps []string) {
	pos := map[string]int{}
	for i, s := range workload.Extended() {
		pos[s.Name] = i
	}
	sort.SliceStable(steps, func(i, j int) bool {
		pi, oki := pos[steps[i]]
		pj, okj := pos[steps[j]]
		switch {
		case oki && okj:
			return pi < pj
		case oki != okj:
			return oki
		}
		return steps[i] < steps[j]
	})
}
