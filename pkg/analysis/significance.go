package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/stats"
)

// Significance tunes the intervals and markers of a relative table built
// over repeats. The zero value means 95 % intervals, Holm's correction and
// a 5 % magnitude (the regression verdict's default minMagnitudePercent).
type Significance struct {
	// Level of the intervals; 0 means 0.95. A difference is significant at
	// α = 1 − Level after the correction.
	Level float64 `json:"level"`
	// Magnitude is the smallest |ratio − 1| that a "*" marks; 0 means
	// 0.05, a negative value means no floor.
	Magnitude float64 `json:"magnitude"`
	// Correction over a column's (step, threads) tests; "" means Holm.
	Correction inference.Correction `json:"correction"`
}

func (s Significance) withDefaults() Significance {
	if s.Level == 0 {
		s.Level = inference.DefaultLevel
	}
	switch {
	case s.Magnitude == 0:
		s.Magnitude = 0.05
	case s.Magnitude < 0:
		s.Magnitude = 0
	}
	if s.Correction == "" {
		s.Correction = inference.DefaultCorrection
	}
	return s
}

// Validate checks the options.
func (s Significance) Validate() error {
	if !(s.Level == 0 || (s.Level > 0 && s.Level < 1)) || math.IsNaN(s.Magnitude) || s.Magnitude >= 1 {
		return fmt.Errorf("significance: level %v must be in (0, 1) and magnitude %v below 1", s.Level, s.Magnitude)
	}
	return s.Correction.Validate()
}

// Marker flags a ratio of a relative table built over repeats.
type Marker string

const (
	// MarkerSignificant: the ratio differs from 1 by at least the
	// magnitude and is significant after the multiple-comparison
	// correction over its column.
	MarkerSignificant Marker = "*"
	// MarkerNoise: the interval contains 1 (Fieller's confidence set, also
	// when it is unbounded); the difference is within the run-to-run noise.
	MarkerNoise Marker = "~"
	// MarkerNone: the interval excludes 1, but the difference is smaller
	// than the magnitude or does not survive the correction.
	MarkerNone Marker = ""
	// MarkerUnconfirmed marks a ratio of two single runs that lies beyond
	// the runs' own per-second noise: it may still be run-to-run noise,
	// which one run per side cannot measure.
	MarkerUnconfirmed Marker = "?"
)

// MethodWithinRun is the interval of a ratio of two single runs from
// their per-second samples (Fieller's method on the steady samples): the
// jitter within the runs, narrower than the variation between runs.
const MethodWithinRun inference.Method = "within-run"

// withinRun is the within-run interval and mark of the ratio o/b of two
// single runs, from their steady per-second samples; nil when either has
// fewer than two. Its marks are one-directional: an interval that contains
// 1 means the difference is within even the runs' own jitter, so it is
// noise (MarkerNoise); one that excludes 1 proves nothing, because runs
// differ by more than their jitter (a fresh server and data load), so the
// ratio is MarkerUnconfirmed, never significant. The samples' positive
// autocorrelation makes the interval narrower still, which errs toward
// MarkerUnconfirmed, the mark that claims nothing.
func withinRun(b, o *Observation) *RatioInference {
	xb, xo := b.Series.Steady(), o.Series.Steady()
	if len(xb) < 2 || len(xo) < 2 {
		return nil
	}
	iv, err := inference.RatioOfMeans(xb, xo, inference.DefaultLevel)
	if err != nil {
		return nil // a zero or invalid series: no interval, the ratio stays unmarked
	}
	ri := &RatioInference{Low: Num(iv.Low), High: Num(iv.High), Method: MethodWithinRun,
		FiellerUnbounded: iv.FiellerUnbounded, NBase: iv.NA, N: iv.NB, P: Num(iv.PRatioOne),
		PAdjusted: Num(math.NaN()), Marker: MarkerUnconfirmed}
	if iv.FiellerUnbounded || iv.Contains(1) {
		ri.Marker = MarkerNoise
	}
	return ri
}

// withinRunNotes explain the marks of a table of single runs.
func (t *RelativeTable) withinRunNotes() []string {
	notes := []string{fmt.Sprintf("one run per cell, so no interval between runs; %s: within noise (the ratio's %s %% interval from the two runs' per-second samples contains 1); "+
		"%s: beyond the runs' own per-second jitter, but runs differ by more than that (a fresh server, a fresh load): not a finding until repeated (workload.repeats >= 2 gives intervals; docs/noise.md)",
		MarkerNoise, FormatPercent(inference.DefaultLevel), MarkerUnconfirmed)}
	var none []string
	for i, s := range t.Steps {
		for j, c := range t.Cells {
			if !t.Ratios[i][j].IsMissing() && (t.Inference[i] == nil || t.Inference[i][j] == nil) {
				none = append(none, c+" "+s)
			}
		}
	}
	if len(none) > 0 {
		notes = append(notes, "no per-second samples, no mark: "+listNames(none, 6))
	}
	return notes
}

// RatioInference is the interval and verdict of one ratio of means.
type RatioInference struct {
	// Low and High bound the interval of the ratio at the table's level.
	Low  Num `json:"low"`
	High Num `json:"high"`
	// Method is how the interval was computed (fieller, or delta when
	// Fieller's set is unbounded: then FiellerUnbounded is set; paired-log
	// when the repeats were paired by block: then the ratio is the
	// geometric mean of the per-block ratios).
	Method           inference.Method `json:"method"`
	FiellerUnbounded bool             `json:"fiellerUnbounded,omitempty"`
	// NBase and N are the runs of the base and of the column (the pairs
	// when paired by block).
	NBase int `json:"nBase"`
	N     int `json:"n"`
	// P is the two-sided p-value of "the ratio is 1"; PAdjusted after the
	// correction over the column's (step, threads) tests.
	P         Num    `json:"p"`
	PAdjusted Num    `json:"pAdjusted"`
	Marker    Marker `json:"marker"`
	// TooFew: fewer than MinIntervalRuns runs (or blocks) on a side, so
	// the interval has too few degrees of freedom to mean anything (with
	// two blocks the t quantile is 12.7 and the bounds span orders of
	// magnitude): Low and High are NaN, the ratio is marked
	// MarkerUnconfirmed, not tested, and the notes say what is missing.
	TooFew bool `json:"tooFew,omitempty"`
}

// MinIntervalRuns is the fewest runs per side (blocks, when paired) a ratio
// of a table over repeats gets an interval and a test with: two degrees of
// freedom at least.
const MinIntervalRuns = 3

// tooFew marks ri as having too few runs for an interval.
func (ri *RatioInference) tooFew() {
	ri.TooFew, ri.Low, ri.High, ri.P, ri.Marker = true, Num(math.NaN()), Num(math.NaN()), Num(math.NaN()), MarkerUnconfirmed
}

// relativeByCombination fills t from the means of each combination's
// repeats: Ratios[i][j] = stats.Mean(column's runs) / stats.Mean(base's runs), with an
// interval wherever both sides have at least two runs. When the two
// sides' cells were blocked (blockPairs), the ratio and its interval are
// paired by block instead.
func relativeByCombination(ds *Dataset, t *RelativeTable, sig Significance) {
	_, groups := repeatGroups(ds)
	values := func(comb, step string) []float64 {
		var xs []float64
		for _, c := range groups[comb] {
			if o, ok := ds.Get(c, step, t.Threads); ok {
				xs = append(xs, o.QPS)
			}
		}
		return xs
	}
	// invalid: a combination without a value at step has an invalid one.
	invalid := func(comb, step string) bool {
		for _, c := range groups[comb] {
			if _, bad := ds.Invalid(c, step, t.Threads); bad {
				return true
			}
		}
		return false
	}
	t.Inference = make([][]*RatioInference, len(t.Steps))
	t.Runs = map[string]int{t.Base: len(groups[t.Base])}
	for _, c := range t.Cells {
		t.Runs[c] = len(groups[c])
	}
	for i, s := range t.Steps {
		row := make([]Ratio, len(t.Cells))
		inf := make([]*RatioInference, len(t.Cells))
		base := values(t.Base, s)
		if len(base) > 0 {
			q := stats.Mean(base)
			t.BaseQPS[i] = &q
		} else {
			t.Missing = append(t.Missing, MissingValue{Cell: t.Base, Step: s, Invalid: invalid(t.Base, s)})
		}
		for j, c := range t.Cells {
			xs := values(c, s)
			switch {
			case len(xs) == 0:
				row[j] = missingOrInvalid(invalid(c, s))
				t.Missing = append(t.Missing, MissingValue{Cell: c, Step: s, Invalid: invalid(c, s)})
				continue
			case len(base) == 0:
				row[j] = missingOrInvalid(invalid(t.Base, s))
				continue
			}
			if pb, pc, ok := blockPairs(ds, groups[t.Base], groups[c], s, t.Threads); ok {
				if iv, err := inference.PairedLogRatio(pb, pc, sig.Level); err == nil {
					// The shown ratio is the paired estimate, the centre
					// of its interval.
					row[j] = Ratio{Value: iv.Estimate}
					inf[j] = &RatioInference{Low: Num(iv.Low), High: Num(iv.High), Method: iv.Method,
						NBase: iv.NA, N: iv.NB, P: Num(iv.PRatioOne), PAdjusted: Num(math.NaN())}
					if len(pb) < MinIntervalRuns {
						inf[j].tooFew()
					}
					continue
				}
				// A zero throughput has no log ratio: compare the means.
			}
			row[j] = Divide(stats.Mean(xs), stats.Mean(base))
			if stats.Mean(base) == 0 {
				continue
			}
			if len(xs) < 2 || len(base) < 2 {
				// One value on a side (a combination not repeated, or a
				// repeat's value invalid): no interval, and like any side
				// with too few runs, not a finding.
				inf[j] = &RatioInference{NBase: len(base), N: len(xs)}
				inf[j].tooFew()
				continue
			}
			iv, err := inference.RatioOfMeans(base, xs, sig.Level)
			if err != nil {
				// The dataset refuses negative and NaN QPS and a zero
				// base mean is excluded above: nothing else can fail.
				panic(fmt.Sprintf("relative %s %s: %v", c, s, err))
			}
			inf[j] = &RatioInference{Low: Num(iv.Low), High: Num(iv.High), Method: iv.Method,
				FiellerUnbounded: iv.FiellerUnbounded, NBase: iv.NA, N: iv.NB, P: Num(iv.PRatioOne),
				PAdjusted: Num(math.NaN())}
			if min(len(xs), len(base)) < MinIntervalRuns {
				inf[j].tooFew()
			}
		}
		t.Ratios[i], t.Inference[i] = row, inf
	}
}

// blockPairs pairs the values at (step, threads) of the base's cells and
// the column's by block: pair k is the base's and the column's value of
// the k-th block (ascending) both sides measured; a block only one side
// measured is left out. It returns false, and the table compares the
// means, unless every cell of either side that has a value there has a
// block, no side has two values in one block, and there are at least two
// pairs.
func blockPairs(ds *Dataset, baseCells, cells []string, step string, threads int) (base, col []float64, ok bool) {
	byBlock := func(names []string) (map[int]float64, bool) {
		m := map[int]float64{}
		for _, n := range names {
			o, have := ds.Get(n, step, threads)
			if !have {
				continue
			}
			c, _ := ds.Cell(n)
			if _, dup := m[c.Block]; c.Block <= 0 || dup {
				return nil, false
			}
			m[c.Block] = o.QPS
		}
		return m, true
	}
	mb, okb := byBlock(baseCells)
	mc, okc := byBlock(cells)
	if !okb || !okc {
		return nil, nil, false
	}
	return PairBlocks(mb, mc)
}

// pairBlocks pairs two sides' values by block (block → value), in block
// order, leaving out blocks only one side has; false with fewer than two
// pairs.
func PairBlocks(a, b map[int]float64) (xa, xb []float64, ok bool) {
	blocks := make([]int, 0, len(a))
	for k := range a {
		if _, both := b[k]; both {
			blocks = append(blocks, k)
		}
	}
	if len(blocks) < 2 {
		return nil, nil, false
	}
	slices.Sort(blocks)
	for _, k := range blocks {
		xa, xb = append(xa, a[k]), append(xb, b[k])
	}
	return xa, xb, true
}

// markSignificance adjusts the p-values of every column of tables (one
// family per column name: its steps at every thread count the tables
// cover, so an A/A comparison of 32 steps is flagged with probability at
// most α) and sets the markers.
func markSignificance(tables []*RelativeTable, sig Significance) {
	type ref struct{ t, i, j int }
	families := map[string][]ref{}
	var order []string
	for ti, t := range tables {
		for i := range t.Inference {
			for j, ri := range t.Inference[i] {
				if ri == nil || ri.TooFew {
					continue
				}
				c := t.Cells[j]
				if _, ok := families[c]; !ok {
					order = append(order, c)
				}
				families[c] = append(families[c], ref{ti, i, j})
			}
		}
	}
	alpha := 1 - sig.Level
	for _, c := range order {
		refs := families[c]
		p := make([]float64, len(refs))
		for k, r := range refs {
			p[k] = float64(tables[r.t].Inference[r.i][r.j].P)
		}
		adj, err := inference.Adjust(sig.Correction, p)
		if err != nil {
			panic(err) // validated by the callers
		}
		for k, r := range refs {
			t := tables[r.t]
			ri := t.Inference[r.i][r.j]
			ri.PAdjusted = Num(adj[k])
			ratio := t.Ratios[r.i][r.j].Value
			switch {
			case adj[k] < alpha && math.Abs(ratio-1) >= sig.Magnitude:
				ri.Marker = MarkerSignificant
			case !(float64(ri.P) < alpha):
				ri.Marker = MarkerNoise
			default:
				ri.Marker = MarkerNone
			}
		}
		for _, t := range tables {
			if slices.Contains(t.Cells, c) {
				t.Tests[c] = len(refs)
			}
		}
	}
}

// formatWithInterval prints a ratio of a table over repeats:
// "0.90* [0.85, 0.95]"; a ratio without an interval prints as before.
func FormatWithInterval(r Ratio, ri *RatioInference) string {
	if ri == nil {
		return r.String()
	}
	if ri.TooFew {
		return r.String() + string(ri.Marker)
	}
	return r.String() + string(ri.Marker) + " [" + ri.Low.Format(2) + ", " + ri.High.Format(2) + "]"
}

// runsOrBlocks says how few runs a side had: "1 run or block", "2 runs or
// blocks".
func runsOrBlocks(n int) string {
	if n == 1 {
		return "1 run or block"
	}
	return fmt.Sprintf("%d runs or blocks", n)
}

// intervalKinds sorts a table's ratios by the interval they have, for its
// notes: "column step" names per kind.
type intervalKinds struct {
	// delta: Fieller's set unbounded; none: one run on a side; paired: by
	// block; tooFew: too few runs or blocks for an interval.
	delta, none, paired, tooFew []string
	// unpaired: some ratio has an unpaired interval.
	unpaired bool
	// minPairs, maxPairs: the paired ratios' blocks; fewest: the fewest
	// runs on a side among the tooFew ones.
	minPairs, maxPairs, fewest int
}

func (t *RelativeTable) intervalKinds() intervalKinds {
	var k intervalKinds
	for i, s := range t.Steps {
		for j, c := range t.Cells {
			ri := t.Inference[i][j]
			switch {
			case ri != nil && ri.TooFew:
				k.tooFew = append(k.tooFew, c+" "+s)
				if n := min(ri.N, ri.NBase); k.fewest == 0 || n < k.fewest {
					k.fewest = n
				}
				continue
			case ri != nil && ri.Method == inference.MethodPairedLog:
				k.paired = append(k.paired, c+" "+s)
				if k.minPairs == 0 || ri.N < k.minPairs {
					k.minPairs = ri.N
				}
				k.maxPairs = max(k.maxPairs, ri.N)
				continue
			case ri != nil && ri.FiellerUnbounded:
				k.delta = append(k.delta, c+" "+s)
			case ri == nil && !t.Ratios[i][j].IsMissing():
				k.none = append(k.none, c+" "+s)
			}
			if ri != nil {
				k.unpaired = true
			}
		}
	}
	return k
}

// intervalNotes explain the intervals and markers of a table over repeats.
func (t *RelativeTable) intervalNotes() []string {
	sig := t.Significance
	runs := make([]string, 0, 1+len(t.Cells))
	for _, c := range append([]string{t.Base}, t.Cells...) {
		runs = append(runs, fmt.Sprintf("%s %d", c, t.Runs[c]))
	}
	k := t.intervalKinds()
	delta, none, paired, tooFew := k.delta, k.none, k.paired, k.tooFew
	unpaired, minPairs, maxPairs, fewest := k.unpaired, k.minPairs, k.maxPairs, k.fewest
	means := "ratios are of the means over repeats"
	switch {
	case len(paired) > 0 && !unpaired && len(none) == 0:
		means = "ratios are paired by block"
	case len(paired) > 0:
		means += ", or paired by block"
	}
	notes := []string{means + "; runs per column: " + strings.Join(runs, ", ")}
	if len(tooFew) > 0 {
		notes = append(notes, fmt.Sprintf("%s: %s on a side, too few for an interval (it needs %d, two degrees of freedom; with 2 the bounds span orders of magnitude): not a finding until repeated more (workload.repeats >= %d): %s",
			MarkerUnconfirmed, runsOrBlocks(fewest), MinIntervalRuns, MinIntervalRuns, listNames(tooFew, 6)))
		if !unpaired && len(paired) == 0 && len(delta) == 0 {
			return notes
		}
	}
	if unpaired || len(paired) == 0 {
		notes = append(notes, fmt.Sprintf("[low, high] is the %s %% interval of the ratio of means by Fieller's method (independent runs, normal per side, unequal variances); docs/noise.md",
			FormatPercent(sig.Level)))
	}
	if len(paired) > 0 {
		blocks := fmt.Sprint(minPairs)
		if maxPairs > minPairs {
			blocks += "-" + fmt.Sprint(maxPairs)
		}
		which := ""
		if unpaired || len(none) > 0 {
			which = " (" + listNames(paired, 6) + ")"
		}
		note := fmt.Sprintf("paired by block (%s blocks)%s: the ratio is the geometric mean of the per-block ratios and [low, high] its %s %% interval (Student's t on the log ratios, blocks - 1 df), so a node's effect shared by a block's cells cancels; docs/noise.md",
			blocks, which, FormatPercent(sig.Level))
		notes = append(notes, note)
	}
	notes = append(notes, fmt.Sprintf("%s: |ratio - 1| >= %s %% and significant at %s %% after %s over the column's step x threads tests; %s: the interval contains 1 (within noise); no marker: the interval excludes 1 but the difference is smaller or does not survive the correction",
		MarkerSignificant, FormatPercent(sig.Magnitude), FormatPercent(1-sig.Level), correctionName(sig.Correction), MarkerNoise))
	if len(delta) > 0 {
		notes = append(notes, "Fieller's interval is unbounded (the base mean is not distinguishable from 0), the delta method's is shown and understates the uncertainty: "+listNames(delta, 6))
	}
	if len(none) > 0 {
		notes = append(notes, "one run on a side, no interval: "+listNames(none, 6))
	}
	return notes
}

func correctionName(c inference.Correction) string {
	switch c {
	case inference.CorrectionBH:
		return "Benjamini-Hochberg (FDR)"
	case inference.CorrectionNone:
		return "no correction"
	}
	return "Holm's correction (FWER)"
}

// noIntervalNote is printed under relative tables of single runs.
const noIntervalNote = "one run per cell: the ratios have no confidence interval (repeat the cells for 95 % intervals; docs/noise.md)"

// hasRepeats reports whether some combination of ds has two cells or more.
func hasRepeats(ds *Dataset) bool {
	_, groups := repeatGroups(ds)
	for _, cells := range groups {
		if len(cells) > 1 {
			return true
		}
	}
	return false
}

// pct prints a fraction as a percentage without binary noise (0.05 → "5").
func FormatPercent(x float64) string { return fmt.Sprintf("%.4g", 100*x) }
