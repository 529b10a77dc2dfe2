package analysis

import (
	"fmt"
	"math"

	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/stats"
)

// RepeatStat is the spread of one step across the repeats of a combination.
type RepeatStat struct {
	Combination string   `json:"combination"`
	Step        string   `json:"step"`
	Threads     int      `json:"threads"`
	Cells       []string `json:"cells"`
	N           int      `json:"n"`
	Mean        float64  `json:"mean"`
	// Stddev is the sample standard deviation (n−1); CV is Stddev / Mean.
	Stddev Num     `json:"stddev"`
	CV     Num     `json:"cv"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CILow and CIHigh are the 95 % confidence interval of the mean
	// (Student's t with n−1 degrees of freedom); undefined for fewer than
	// MinIntervalRuns repeats.
	CILow  Num `json:"ciLow"`
	CIHigh Num `json:"ciHigh"`
}

// repeatGroups maps combinations to their cells, in dataset order.
func repeatGroups(ds *Dataset) (order []string, cells map[string][]string) {
	cells = map[string][]string{}
	for _, c := range ds.cells {
		k := c.Combination()
		if _, ok := cells[k]; !ok {
			order = append(order, k)
		}
		cells[k] = append(cells[k], c.Name)
	}
	return order, cells
}

// RepeatStats computes the spread of every step at every thread count for
// each combination that has at least two cells (repeats).
func RepeatStats(ds *Dataset) []RepeatStat {
	order, groups := repeatGroups(ds)
	var out []RepeatStat
	for _, comb := range order {
		cells := groups[comb]
		if len(cells) < 2 {
			continue
		}
		for _, th := range ds.Threads() {
			for _, s := range ds.steps {
				var xs []float64
				var have []string
				for _, c := range cells {
					if o, ok := ds.Get(c, s, th); ok {
						xs = append(xs, o.QPS)
						have = append(have, c)
					}
				}
				if len(xs) == 0 {
					continue
				}
				out = append(out, repeatStat(comb, s, th, have, xs))
			}
		}
	}
	return out
}

func repeatStat(comb, step string, threads int, cells []string, xs []float64) RepeatStat {
	s := sortedCopy(xs)
	r := RepeatStat{Combination: comb, Step: step, Threads: threads, Cells: cells, N: len(xs),
		Mean: stats.Mean(xs), Min: s[0], Max: s[len(s)-1]}
	sd := stddev(xs, StddevSample)
	r.Stddev, r.CV, r.CILow, r.CIHigh = Num(sd), Num(math.NaN()), Num(math.NaN()), Num(math.NaN())
	if !math.IsNaN(sd) {
		if r.Mean != 0 {
			r.CV = Num(sd / r.Mean)
		}
		// With fewer than MinIntervalRuns repeats the t quantile (12.7 at
		// one degree of freedom) makes bounds no reader can use.
		if len(xs) >= MinIntervalRuns {
			h := stats.StudentQuantile(0.975, float64(len(xs)-1)) * sd / math.Sqrt(float64(len(xs)))
			r.CILow, r.CIHigh = Num(r.Mean-h), Num(r.Mean+h)
		}
	}
	return r
}

// RepeatTable renders repeat statistics.
func RepeatTable(stats []RepeatStat) Table {
	t := Table{ID: "repeats", Title: "Repeats: spread per step",
		Columns: []string{"combination", "step", "threads", "n", "mean", "stddev", "cv %", "min", "max", "95% CI"}}
	for _, r := range stats {
		cv := "n/a"
		if !math.IsNaN(float64(r.CV)) {
			cv = FormatFloat(100*float64(r.CV), 2)
		}
		ci := "n/a"
		if !math.IsNaN(float64(r.CILow)) {
			ci = r.CILow.Format(2) + " .. " + r.CIHigh.Format(2)
		}
		t.Rows = append(t.Rows, []string{r.Combination, r.Step, fmt.Sprint(r.Threads), fmt.Sprint(r.N),
			FormatFloat(r.Mean, 2), r.Stddev.Format(2), cv, FormatFloat(r.Min, 2), FormatFloat(r.Max, 2), ci})
	}
	t.Notes = []string{fmt.Sprintf("stddev is the sample stddev (n-1); the CI is Student's t with n-1 degrees of freedom, n/a with fewer than %d repeats (too few degrees of freedom for bounds that mean anything)", MinIntervalRuns)}
	return t
}

// CompareOptions tune CompareRepeats.
type CompareOptions struct {
	// Alpha is the significance level; 0 means 0.05.
	Alpha float64
	// MinChange is the smallest relative change of the mean that counts
	// as a difference even when significant; 0 means 0.01 (1 %).
	MinChange float64
}

// Verdicts of a comparison.
const (
	VerdictFaster     = "faster"
	VerdictSlower     = "slower"
	VerdictNoise      = "within noise"
	VerdictTooFew     = "too few repeats"
	VerdictIncomplete = "missing"
)

// Comparison says whether combination B differs from A on one step.
type Comparison struct {
	A       string           `json:"a"`
	B       string           `json:"b"`
	Step    string           `json:"step"`
	Threads int              `json:"threads"`
	NA      int              `json:"nA"`
	NB      int              `json:"nB"`
	MeanA   float64          `json:"meanA"`
	MeanB   float64          `json:"meanB"`
	Ratio   Ratio            `json:"ratio"`
	Welch   *inference.Welch `json:"welch,omitempty"`
	// Overlap says whether the min..max ranges of the repeats overlap.
	Overlap bool   `json:"overlap"`
	Verdict string `json:"verdict"`
}

// CompareRepeats compares two combinations (as CellMeta.Combination names
// them) step by step with Welch's t-test on their repeats. B is "faster" or
// "slower" when p < Alpha and the means differ by more than MinChange;
// otherwise "within noise". With fewer than two repeats on a side there is
// no test: the verdict is "too few repeats" (the ratio is still given).
func CompareRepeats(ds *Dataset, a, b string, opts CompareOptions) ([]Comparison, error) {
	if opts.Alpha == 0 {
		opts.Alpha = 0.05
	}
	if opts.MinChange == 0 {
		opts.MinChange = 0.01
	}
	if !(opts.Alpha > 0 && opts.Alpha < 1) || opts.MinChange < 0 {
		return nil, fmt.Errorf("compare options: alpha must be in (0, 1) and min change >= 0")
	}
	_, groups := repeatGroups(ds)
	for _, name := range []string{a, b} {
		if _, ok := groups[name]; !ok {
			keys := make([]string, 0, len(groups))
			for k := range groups {
				keys = append(keys, k)
			}
			return nil, fmt.Errorf("combination %q: %w in dataset %q (combinations: %s)", name, ErrNoSuchCell, ds.Name, listNames(keys, 8))
		}
	}
	var out []Comparison
	for _, th := range ds.Threads() {
		for _, s := range ds.steps {
			get := func(cells []string) []float64 {
				var xs []float64
				for _, c := range cells {
					if o, ok := ds.Get(c, s, th); ok {
						xs = append(xs, o.QPS)
					}
				}
				return xs
			}
			xa, xb := get(groups[a]), get(groups[b])
			if len(xa) == 0 && len(xb) == 0 {
				continue
			}
			c := Comparison{A: a, B: b, Step: s, Threads: th, NA: len(xa), NB: len(xb)}
			if len(xa) == 0 || len(xb) == 0 {
				c.Ratio, c.Verdict = Missing(), VerdictIncomplete
				out = append(out, c)
				continue
			}
			c.MeanA, c.MeanB = stats.Mean(xa), stats.Mean(xb)
			c.Ratio = Divide(c.MeanB, c.MeanA)
			sa, sb := sortedCopy(xa), sortedCopy(xb)
			c.Overlap = sa[0] <= sb[len(sb)-1] && sb[0] <= sa[len(sa)-1]
			w, err := inference.WelchTTest(xa, xb)
			if err != nil {
				c.Verdict = VerdictTooFew
				out = append(out, c)
				continue
			}
			c.Welch = &w
			change := math.Abs(c.Ratio.Value - 1)
			switch {
			case w.P < opts.Alpha && change > opts.MinChange && c.MeanB > c.MeanA:
				c.Verdict = VerdictFaster
			case w.P < opts.Alpha && change > opts.MinChange:
				c.Verdict = VerdictSlower
			default:
				c.Verdict = VerdictNoise
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// ComparisonTable renders comparisons.
func ComparisonTable(cs []Comparison) Table {
	t := Table{ID: "compare-repeats", Title: "Repeats compared (Welch's t-test)",
		Columns: []string{"step", "threads", "a", "b", "n a/b", "mean a", "mean b", "b/a", "p", "ranges overlap", "verdict"}}
	for _, c := range cs {
		p := "n/a"
		if c.Welch != nil {
			p = fmt.Sprintf("%.3g", c.Welch.P)
		}
		t.Rows = append(t.Rows, []string{c.Step, fmt.Sprint(c.Threads), c.A, c.B, fmt.Sprintf("%d/%d", c.NA, c.NB),
			FormatFloat(c.MeanA, 2), FormatFloat(c.MeanB, 2), c.Ratio.String(), p, fmt.Sprint(c.Overlap), c.Verdict})
	}
	return t
}
