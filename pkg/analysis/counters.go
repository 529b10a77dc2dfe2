package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
)

// Engine counters per operation (results.Counters): the engine's own view of
// what an operation cost, beside the hardware-efficiency table's OS view.

// CounterOptions select an engine-counters table.
type CounterOptions struct {
	Step    string
	Threads int
	// Cells are the columns in order; nil means every cell that has the
	// step. Base, when set, moves that cell to the first column, the one
	// the ratios divide by.
	Cells []string
	Base  string
}

// CounterRow is one counter: its value per operation in each cell (nil:
// the cell did not report it) and the ratio of each other cell's to the
// first cell's.
type CounterRow struct {
	Name   string     `json:"name"`
	PerOp  []*float64 `json:"perOp"`
	Ratios []Ratio    `json:"ratios"`
}

// CounterTable is the engine counters of one step at one thread count:
// rows are counters (by name), columns cells, the first cell the base.
type CounterTable struct {
	Step    string       `json:"step"`
	Threads int          `json:"threads"`
	Cells   []string     `json:"cells"`
	Rows    []CounterRow `json:"rows"`
	// AllZero counts the counters left out because they are 0 in every
	// cell; NoCounters lists cells that have the step but no counters.
	AllZero    int      `json:"allZero,omitempty"`
	NoCounters []string `json:"noCounters,omitempty"`
}

// checkCounters refuses per-op counter values that are not finite numbers
// >= 0, as Add refuses such a QPS.
func checkCounters(o Observation) error {
	for n, v := range o.Counters {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("counter %s: %v per op must be a finite number >= 0", n, v)
		}
	}
	return nil
}

// hasCounters reports whether any cell has counters for (step, threads).
func hasCounters(ds *Dataset, step string, threads int) bool {
	for _, c := range ds.cells {
		if o, ok := ds.Get(c.Name, step, threads); ok && len(o.Counters) > 0 {
			return true
		}
	}
	return false
}

// stepCells is the cells of a per-step table: opts' cells or every cell
// with the step, the base first.
func stepCells(ds *Dataset, step string, threads int, cells []string, base string) ([]string, error) {
	if !slices.Contains(ds.steps, step) {
		return nil, fmt.Errorf("step %q: %w in dataset %q (steps: %s)", step, ErrNoSuchStep, ds.Name, listNames(ds.Steps(), 8))
	}
	if cells == nil {
		for _, c := range ds.cells {
			if _, ok := ds.Get(c.Name, step, threads); ok {
				cells = append(cells, c.Name)
			}
		}
	}
	for _, c := range cells {
		if err := ds.checkCell("cell", c); err != nil {
			return nil, err
		}
	}
	if base != "" {
		if err := ds.checkCell("base", base); err != nil {
			return nil, err
		}
		i := slices.Index(cells, base)
		if i < 0 {
			return nil, fmt.Errorf("base %q has no result for step %q at %d threads", base, step, threads)
		}
		cells = append([]string{base}, slices.Delete(slices.Clone(cells), i, i+1)...)
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("step %q at %d threads: no cell has a result: %w", step, threads, ErrEmpty)
	}
	return cells, nil
}

// EngineCounters builds the counters table of one step: every counter some
// cell reported, by name, except those 0 in every cell.
func EngineCounters(ds *Dataset, opts CounterOptions) (*CounterTable, error) {
	threads, err := resolveThreads(ds, opts.Threads)
	if err != nil {
		return nil, err
	}
	cells, err := stepCells(ds, opts.Step, threads, opts.Cells, opts.Base)
	if err != nil {
		return nil, err
	}
	t := &CounterTable{Step: opts.Step, Threads: threads, Cells: cells}
	per := make([]map[string]float64, len(cells))
	var names []string
	for i, c := range cells {
		o, ok := ds.Get(c, opts.Step, threads)
		if !ok || len(o.Counters) == 0 {
			if ok {
				t.NoCounters = append(t.NoCounters, c)
			}
			continue
		}
		per[i] = o.Counters
		for n := range o.Counters {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	for _, n := range names {
		row := CounterRow{Name: n, PerOp: make([]*float64, len(cells))}
		zero := true
		for i, m := range per {
			if v, ok := m[n]; ok {
				row.PerOp[i] = &v
				zero = zero && v == 0
			}
		}
		if zero {
			t.AllZero++
			continue
		}
		for _, v := range row.PerOp[1:] {
			row.Ratios = append(row.Ratios, DivideOpt(v, row.PerOp[0]))
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// baseIfMeasured is base when it measured step at threads, else "" (the
// per-step tables then fall back to their first cell).
func baseIfMeasured(ds *Dataset, base, step string, threads int) string {
	if _, ok := ds.Get(base, step, threads); ok {
		return base
	}
	return ""
}

// appendCounterTables adds the counters table of each step (at threads) some
// cell has counters for, relative to base where base has the step.
func appendCounterTables(out []*CounterTable, ds *Dataset, steps []string, threads int, base string) ([]*CounterTable, error) {
	for _, s := range steps {
		if !hasCounters(ds, s, threads) {
			continue
		}
		t, err := EngineCounters(ds, CounterOptions{Step: s, Threads: threads, Base: baseIfMeasured(ds, base, s, threads)})
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// formatPerOp prints a per-op value with about four significant digits
// (counters per op range from 1e-5 to 1e5), never in exponent form.
func formatPerOp(v float64) string {
	if v == 0 {
		return "0"
	}
	d := 3 - int(math.Floor(math.Log10(math.Abs(v))))
	return FormatFloat(v, min(max(d, 0), 8))
}

// Tables renders the absolute block (per-op values, one column per cell)
// and the block relative to the first cell.
func (t *CounterTable) Tables() []Table {
	abs := Table{
		ID:      fmt.Sprintf("counters.t%d.%s.absolute", t.Threads, t.Step),
		Title:   fmt.Sprintf("Engine counters per operation: %s, %d threads --- absolute", t.Step, t.Threads),
		Columns: append([]string{"counter"}, t.Cells...),
	}
	for _, r := range t.Rows {
		row := []string{r.Name}
		for _, v := range r.PerOp {
			if v == nil {
				row = append(row, "missing")
			} else {
				row = append(row, formatPerOp(*v))
			}
		}
		abs.Rows = append(abs.Rows, row)
	}
	abs.Notes = append(abs.Notes, "per operation as the hardware table's o/s counts them (queries; rows for scans)")
	if t.AllZero > 0 {
		abs.Notes = append(abs.Notes, fmt.Sprintf("%d counter(s) 0 in every cell left out", t.AllZero))
	}
	if len(t.NoCounters) > 0 {
		abs.Notes = append(abs.Notes, "no engine counters for "+listNames(t.NoCounters, 8))
	}
	out := make([]Table, 1, 2) // the absolute table, then maybe the relative one
	out[0] = abs
	if len(t.Cells) < 2 {
		return out
	}
	rel := Table{
		ID:      fmt.Sprintf("counters.t%d.%s.relative", t.Threads, t.Step),
		Title:   fmt.Sprintf("Engine counters per operation: %s, %d threads --- relative to %s", t.Step, t.Threads, t.Cells[0]),
		Columns: append([]string{"counter"}, t.Cells[1:]...),
		Notes:   []string{"0/0 is printed 1, x/0 inf; > 1 means more per operation than the base"},
	}
	for _, r := range t.Rows {
		row := []string{r.Name}
		for _, q := range r.Ratios {
			row = append(row, q.String())
		}
		rel.Rows = append(rel.Rows, row)
	}
	return append(out, rel)
}

// CounterMoveOptions tune CounterMoves.
type CounterMoveOptions struct {
	// MinChange is how far QPS(b)/QPS(a) must be from 1 for a step to
	// count as moved, and a counter's per-op ratio to be listed (0.05 when
	// 0).
	MinChange float64
	// Top is how many counters to list per moved step (5 when 0).
	Top int
}

// CounterMove is one counter of a moved (cell, step): its per-op value in
// both runs and their ratio.
type CounterMove struct {
	Cell    string  `json:"cell"`
	Step    string  `json:"step"`
	Threads int     `json:"threads"`
	QPS     Ratio   `json:"qps"`
	Counter string  `json:"counter"`
	A       float64 `json:"a"`
	B       float64 `json:"b"`
	Ratio   Ratio   `json:"ratio"`
}

// CounterMoves lists, for each cell both runs have and each step whose
// throughput moved (QPS(b)/QPS(a) at least MinChange away from 1), the
// counters per op that moved most (by |log ratio|; a counter from 0 to
// more first; those within MinChange of their value in a are not listed),
// so a throughput change comes with the engine's reasons.
// Steps without counters in both runs are skipped.
func CounterMoves(a, b *Dataset, threads int, opts CounterMoveOptions) []CounterMove {
	if opts.MinChange == 0 {
		opts.MinChange = 0.05
	}
	if opts.Top == 0 {
		opts.Top = 5
	}
	var out []CounterMove
	for _, c := range a.cells {
		if _, ok := b.Cell(c.Name); !ok {
			continue
		}
		for _, s := range a.steps {
			oa, okA := a.Get(c.Name, s, threads)
			ob, okB := b.Get(c.Name, s, threads)
			if !okA || !okB || len(oa.Counters) == 0 || len(ob.Counters) == 0 {
				continue
			}
			q := Divide(ob.QPS, oa.QPS)
			if q.State == RatioValue && math.Abs(q.Value-1) < opts.MinChange || q.State == RatioZeroOverZero {
				continue
			}
			var moves []CounterMove
			for n, va := range oa.Counters {
				vb, ok := ob.Counters[n]
				r := Divide(vb, va)
				if !ok || r.State == RatioZeroOverZero || r.State == RatioValue && math.Abs(r.Value-1) < opts.MinChange {
					continue
				}
				moves = append(moves, CounterMove{Cell: c.Name, Step: s, Threads: threads, QPS: q, Counter: n, A: va, B: vb, Ratio: r})
			}
			sort.Slice(moves, func(i, j int) bool {
				mi, mj := moveSize(moves[i].Ratio), moveSize(moves[j].Ratio)
				if mi != mj {
					return mi > mj
				}
				return moves[i].Counter < moves[j].Counter
			})
			out = append(out, moves[:min(opts.Top, len(moves))]...)
		}
	}
	return out
}

// moveSize is how far a ratio is from 1 on a log scale; from zero is the
// farthest.
func moveSize(r Ratio) float64 {
	switch r.State {
	case RatioInf:
		return math.Inf(1)
	case RatioValue:
		if r.Value == 0 {
			return math.Inf(1)
		}
		return math.Abs(math.Log(r.Value))
	}
	return 0
}

// CounterMovesTable renders CounterMoves of runs named a and b.
func CounterMovesTable(moves []CounterMove, a, b string) Table {
	th := 0
	if len(moves) > 0 {
		th = moves[0].Threads
	}
	t := Table{
		ID:      "compare.counters.t" + strconv.Itoa(th),
		Title:   fmt.Sprintf("%s vs %s: engine counters per op that moved most, for steps whose QPS moved (%d threads)", b, a, th),
		Columns: []string{"cell", "step", "QPS " + b + "/" + a, "counter", a + " per op", b + " per op", b + "/" + a},
		Notes:   []string{"0/0 is printed 1, x/0 inf"},
	}
	for _, m := range moves {
		t.Rows = append(t.Rows, []string{m.Cell, m.Step, m.QPS.String(), m.Counter, formatPerOp(m.A), formatPerOp(m.B), m.Ratio.String()})
	}
	return t
}
