package analysis

import (
	"errors"
	"fmt"
	"math"

	"github.com/dbbench/dbbench/pkg/inference"
)

// NoiseFloorRow is the run-to-run noise of one (step, threads) measured on
// a dataset's repeats, and what it implies for the next comparison.
type NoiseFloorRow struct {
	Step    string `json:"step"`
	Threads int    `json:"threads"`
	inference.NoiseFloor
	// CV is the run-to-run coefficient of variation (NoiseFloor.CV()).
	CV float64 `json:"cv"`
	// Repeats is the runs per side the MDE assumes: the most repeats any
	// combination of the dataset has.
	Repeats int `json:"repeats"`
	// MDE is the smallest slowdown found with 80 % power by a one-sided
	// test at 5 % with Repeats runs per side whose variance is estimated
	// from those runs (inference.Design).
	MDE Num `json:"mde"`
	// RepeatsFor5Pct is the runs per side for a ±5 % interval of the
	// ratio; 0 when more than maxRepeatsSearched are needed.
	RepeatsFor5Pct int `json:"repeatsFor5Pct"`
}

// maxRepeatsSearched bounds RepeatsFor5Pct.
const maxRepeatsSearched = 50

// NoiseFloors pools the repeats of every combination per (step, threads)
// into a noise floor (inference.NoiseModel: the variance of log QPS,
// pooled over combinations, with Σ(n − 1) degrees of freedom). Steps with
// no combination of two runs or more have no row; a repeat whose QPS is 0
// is left out of its set (log throughput).
func NoiseFloors(ds *Dataset) []NoiseFloorRow {
	order, groups := repeatGroups(ds)
	var model inference.NoiseModel
	maxRepeats := 0
	type key = inference.Key
	var keys []key
	seen := map[key]bool{}
	for _, th := range ds.Threads() {
		for _, s := range ds.steps {
			for _, comb := range order {
				var xs []float64
				for _, c := range groups[comb] {
					if o, ok := ds.Get(c, s, th); ok && o.QPS > 0 {
						xs = append(xs, o.QPS)
					}
				}
				if len(xs) < 2 {
					continue
				}
				k := key{Step: s, Threads: th}
				if err := model.AddRepeats(k, xs); err != nil {
					panic(err) // positive finite values by construction
				}
				if !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
				maxRepeats = max(maxRepeats, len(xs))
			}
		}
	}
	var out []NoiseFloorRow
	for _, k := range keys {
		f, _ := model.Floor(k)
		row := NoiseFloorRow{Step: k.Step, Threads: k.Threads, NoiseFloor: f, CV: f.CV(), Repeats: maxRepeats, MDE: Num(math.NaN())}
		if f.SigmaLog > 0 {
			if mde, err := (inference.Design{CV: row.CV}).MDE(maxRepeats, 0.8); err == nil {
				row.MDE = Num(mde)
			}
			n, err := inference.RequiredRepeats(row.CV, 0.05, inference.DefaultLevel, 0, maxRepeatsSearched)
			switch {
			case err == nil:
				row.RepeatsFor5Pct = n
			case !errors.Is(err, inference.ErrTooFew):
				panic(err) // the arguments are valid by construction
			}
		} else {
			row.MDE, row.RepeatsFor5Pct = 0, 2
		}
		out = append(out, row)
	}
	return out
}

// NoiseTable renders noise floors.
func NoiseTable(rows []NoiseFloorRow) Table {
	n := 0
	if len(rows) > 0 {
		n = rows[0].Repeats
	}
	t := Table{ID: "noise", Title: "Noise floor: run-to-run variation per step, pooled over the repeats",
		Columns: []string{"step", "threads", "cv %", "df", "runs", fmt.Sprintf("mde %% (n=%d)", n), "repeats for ±5 %"}}
	for _, r := range rows {
		need := fmt.Sprint(r.RepeatsFor5Pct)
		if r.RepeatsFor5Pct == 0 {
			need = fmt.Sprintf("> %d", maxRepeatsSearched)
		}
		t.Rows = append(t.Rows, []string{r.Step, fmt.Sprint(r.Threads), FormatFloat(100*r.CV, 2), fmt.Sprint(r.DF),
			fmt.Sprint(r.Runs), Num(100 * float64(r.MDE)).Format(1), need})
	}
	t.Notes = []string{
		"cv is sqrt(exp(s^2) - 1) of the pooled variance s^2 of log QPS over every combination's repeats (df = sum of n - 1)",
		"mde: the slowdown a one-sided test at 5 % finds with 80 % power with n runs per side (log-normal runs, variance from those runs); docs/noise.md",
	}
	return t
}
