package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dbbench/dbbench/pkg/workload"
)

// DefaultScaleUpEdges are the bucket edges as fractions of the top
// concurrency: 5/6, 5/8, 5/12 and 5/24. At 48 clients they are exactly the
// edges the scale-up study uses (40, 30, 20, 10); at 16 clients they are
// 13.3, 10, 6.7 and 3.3.
var DefaultScaleUpEdges = []float64{5.0 / 6, 5.0 / 8, 5.0 / 12, 5.0 / 24}

// ScaleUpOptions select a scale-up table.
type ScaleUpOptions struct {
	Cell string
	// BaseThreads is the denominator's concurrency; 0 means 1 when the cell
	// measured 1 thread, otherwise its smallest thread count.
	BaseThreads int
	// Edges are bucket edges as descending fractions of the top
	// concurrency; nil means DefaultScaleUpEdges.
	Edges []float64
	// Steps as in RelativeOptions.
	Steps             []string
	IncludeUnreported bool
}

// ScaleUpTable is QPS(X threads) / QPS(base threads) per step: a value near
// X/base is perfect scaling.
type ScaleUpTable struct {
	Cell        string   `json:"cell"`
	BaseThreads int      `json:"baseThreads"`
	Threads     []int    `json:"threads"`
	Steps       []string `json:"steps"`
	// Ratios[i][k] is step i at Threads[k].
	Ratios [][]Ratio `json:"ratios"`
	// Top is the highest concurrency; Edges the absolute bucket edges.
	Top     int             `json:"top"`
	Edges   []float64       `json:"edges"`
	Buckets []ScaleUpBucket `json:"buckets"`
}

// ScaleUpBucket holds the steps whose ratio at the top concurrency lies in
// (Lower, Upper]; the first bucket has no upper bound, the last no lower.
type ScaleUpBucket struct {
	Label string   `json:"label"`
	Lower *float64 `json:"lower,omitempty"`
	Upper *float64 `json:"upper,omitempty"`
	Steps []string `json:"steps"`
}

// ScaleUp builds the scale-up table of one cell.
func ScaleUp(ds *Dataset, opts ScaleUpOptions) (*ScaleUpTable, error) {
	if err := ds.checkCell("cell", opts.Cell); err != nil {
		return nil, err
	}
	steps, err := reportSteps(ds, opts.Steps, opts.IncludeUnreported)
	if err != nil {
		return nil, err
	}
	threads := scaleUpThreads(ds, opts.Cell, steps)
	if len(threads) < 2 {
		return nil, fmt.Errorf("scale-up of cell %q needs at least two thread counts, it has %s", opts.Cell, intList(threads))
	}
	base := opts.BaseThreads
	if base == 0 {
		base = threads[0]
	} else if !slices.Contains(threads, base) {
		return nil, fmt.Errorf("base threads %d: %w for cell %q (has %s)", base, ErrNoThreadCount, opts.Cell, intList(threads))
	}
	edges := opts.Edges
	if edges == nil {
		edges = DefaultScaleUpEdges
	}
	for i, e := range edges {
		if !(e > 0) || (i > 0 && e >= edges[i-1]) {
			return nil, fmt.Errorf("scale-up edges %v: must be positive and descending", edges)
		}
	}
	top := threads[len(threads)-1]
	t := &ScaleUpTable{Cell: opts.Cell, BaseThreads: base, Threads: threads, Steps: steps, Top: top}
	// The ideal ratio at the top is top/base; edges scale with it.
	ideal := float64(top) / float64(base)
	for _, e := range edges {
		t.Edges = append(t.Edges, e*ideal)
	}
	for k := 0; k <= len(t.Edges); k++ {
		b := ScaleUpBucket{Steps: []string{}}
		switch {
		case k == 0:
			b.Lower = &t.Edges[0]
			b.Label = "> " + TrimFloat(t.Edges[0])
		case k == len(t.Edges):
			b.Upper = &t.Edges[k-1]
			b.Label = "<= " + TrimFloat(t.Edges[k-1])
		default:
			b.Lower, b.Upper = &t.Edges[k], &t.Edges[k-1]
			b.Label = TrimFloat(t.Edges[k]) + "-" + TrimFloat(t.Edges[k-1])
		}
		t.Buckets = append(t.Buckets, b)
	}
	missingTop := ScaleUpBucket{Label: "missing", Steps: []string{}}
	for _, s := range steps {
		row := make([]Ratio, len(threads))
		b, okBase := ds.Get(opts.Cell, s, base)
		_, baseInvalid := ds.Invalid(opts.Cell, s, base)
		for k, th := range threads {
			o, ok := ds.Get(opts.Cell, s, th)
			_, invalid := ds.Invalid(opts.Cell, s, th)
			if !ok || !okBase {
				row[k] = missingOrInvalid(invalid || baseInvalid)
				continue
			}
			row[k] = Divide(o.QPS, b.QPS)
		}
		t.Ratios = append(t.Ratios, row)
		r := row[len(row)-1]
		if r.IsMissing() {
			missingTop.Steps = append(missingTop.Steps, s)
			continue
		}
		k := 0
		for k < len(t.Edges) && !(r.Value > t.Edges[k]) {
			k++
		}
		t.Buckets[k].Steps = append(t.Buckets[k].Steps, s)
	}
	if len(missingTop.Steps) > 0 {
		t.Buckets = append(t.Buckets, missingTop)
	}
	return t, nil
}

// scaleUpThreads are the thread counts of a cell at which one of steps
// that reports publish ran: a thread count only a `.warm` or `.pre` step
// ran at (a warm-up at the table count's concurrency) would be a column,
// and the top the buckets are drawn at, of nothing but missing ratios, even
// when IncludeUnreported keeps those steps as rows. When steps names no
// published step (the caller chose only such steps), every thread count
// of theirs counts.
func scaleUpThreads(ds *Dataset, cell string, steps []string) []int {
	var published []string
	for _, s := range steps {
		if workload.Reported(s) {
			published = append(published, s)
		}
	}
	if len(published) == 0 {
		published = steps
	}
	var out []int
	for _, th := range ds.CellThreads(cell) {
		for _, s := range published {
			if _, ok := ds.Get(cell, s, th); ok {
				out = append(out, th)
				break
			}
		}
	}
	return out
}

// ScaleUpPoints is how many thread counts a scale-up table of the cell
// would have: below 2 there is none.
func ScaleUpPoints(ds *Dataset, cell string, includeUnreported bool) int {
	steps, err := reportSteps(ds, nil, includeUnreported)
	if err != nil {
		return 0
	}
	return len(scaleUpThreads(ds, cell, steps))
}

func TrimFloat(v float64) string {
	s := FormatFloat(v, 1)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}

// Tables renders the ratio table and the buckets.
func (t *ScaleUpTable) Tables() []Table {
	cols := make([]string, 0, 1+len(t.Threads))
	cols = append(cols, "step")
	for _, th := range t.Threads {
		cols = append(cols, fmt.Sprint(th))
	}
	rt := Table{
		ID:      "scaleup." + t.Cell,
		Title:   fmt.Sprintf("Scale-up of %s: QPS(X threads) / QPS(%d thread(s)); perfect is X/%d", t.Cell, t.BaseThreads, t.BaseThreads),
		Columns: cols,
	}
	for i, s := range t.Steps {
		row := []string{s}
		for _, r := range t.Ratios[i] {
			row = append(row, r.String())
		}
		rt.Rows = append(rt.Rows, row)
	}
	edges := make([]string, 0, len(t.Edges))
	for _, e := range t.Edges {
		edges = append(edges, TrimFloat(e))
	}
	bt := Table{
		ID:      "scaleup-buckets." + t.Cell,
		Title:   fmt.Sprintf("Scale-up of %s at %d threads, by bucket", t.Cell, t.Top),
		Columns: []string{fmt.Sprintf("ratio at %d", t.Top), "steps"},
		Notes:   []string{fmt.Sprintf("edges are 5/6, 5/8, 5/12, 5/24 of the ideal %s: %s; a bucket a-b holds a < ratio <= b", TrimFloat(float64(t.Top)/float64(t.BaseThreads)), strings.Join(edges, ", "))},
	}
	for _, b := range t.Buckets {
		steps := "none"
		if len(b.Steps) > 0 {
			steps = listNames(b.Steps, 100)
		}
		bt.Rows = append(bt.Rows, []string{b.Label, steps})
	}
	return []Table{rt, bt}
}
