package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
)

// The plan benchmark (make bench-plan): the designed plan against the
// reference method's fixed plan for one goal, on the rounds of a real run.
//
// The rounds are split in two. The first half is the suite's history: its
// A and A2 runs give each step's run level (regression.SuiteComponents, A and
// A2 as repeats of one combination), from which the planner
// (inference.ChoosePlan, the code `kubectl dbbench plan` and status.plan
// run) chooses the designed plan at the bench's step length — the only
// length whose noise the bench measured — and the fixed plan at the
// reference method's 300-s read steps, each at the fewest repeats that
// reach the goal: the calibrated slowdown of the slowest cell, found with
// power 0.9 by the rule, Holm over the steps. The second half is held out:
// the designed plan is run on it by drawing its repeats (with replacement)
// from the held-out rounds, A against the slowed cell and A against A2,
// subsampleN times, judged by regression.JudgeRuns like the controller's verdict.
//
// Costs: a cell is the cluster's pod overhead (inference's default), the
// bench's own load (its median run wall time less its steps) and the
// steps. The fixed plan is given the run level measured at the short
// steps: the bench measured it equal at 5- and 10-s steps (docs/noise.md),
// so longer steps are not credited with less noise; the break-even line
// says by how much 300-s steps would have to cut it for the fixed plan to
// cost no more.

// planGoal is the goal for the slowest calibrated cell under r.
func planGoal(c config, r rule) inference.PlanGoal {
	return inference.PlanGoal{Detect: 1 - float64(slices.Min(c.scales))/100, Power: designPower, Magnitude: r.magnitude,
		Estimated: r.how == regression.MagnitudeEstimated, Alpha: defaultAlpha, Tests: len(c.steps)}
}

// historyManifest is rounds' A and A2 runs as one run of repeats.
func historyManifest(cells map[string][]runResult, rounds []int) *results.Manifest {
	docs := make([]*results.Document, 0, 2*len(rounds))
	for _, r := range rounds {
		docs = append(docs, cells[baseCell][r].doc, cells[aaCell][r].doc)
	}
	return manifestOf("history", docs...)
}

// planCosts are a cell's costs beyond its steps: the pods' start and the
// bench's median load (run wall time less the steps' time).
func planCosts(c config, cells map[string][]runResult) inference.PlanCosts {
	load := make([]float64, 0, len(cells[baseCell]))
	for _, r := range cells[baseCell] {
		load = append(load, math.Max(0, r.wall-float64(len(c.steps)*(c.warmup+c.seconds))))
	}
	slices.Sort(load)
	return inference.PlanCosts{OverheadSeconds: inference.DefaultOverheadSeconds, LoadSeconds: load[len(load)/2],
		WarmupSeconds: float64(c.warmup), Combinations: 2}
}

// heldOutRate is the rate of regressed verdicts of cell against A at n+n
// repeats drawn with replacement from the held-out rounds.
func heldOutRate(cells map[string][]runResult, cell string, n int, r rule, held []int, seed uint64) (float64, error) {
	return drawnRate(cells, cell, r, [2]uint64{seed, uint64(n)}, func(rng *rand.Rand) (cur, base []int) {
		for range n {
			cur = append(cur, held[rng.IntN(len(held))])
			base = append(base, held[rng.IntN(len(held))])
		}
		return cur, base
	})
}

// heldOutAA is the A/A rate at n+n repeats: both sides drawn with
// replacement from one pool, the held-out rounds' A and A2 runs. Drawing
// A's side from A's runs and A2's from A2's would make the chance
// difference of the two pools' means a true difference that enough
// repeats always find; one pool is the null the A/A rate is about.
func heldOutAA(cells map[string][]runResult, n int, r rule, held []int, seed uint64) (float64, error) {
	pool := make([]runResult, 0, 2*len(held))
	for _, j := range held {
		pool = append(pool, cells[baseCell][j], cells[aaCell][j])
	}
	pooled := map[string][]runResult{baseCell: pool, aaCell: pool}
	return drawnRate(pooled, aaCell, r, [2]uint64{seed, uint64(n)}, func(rng *rand.Rand) (cur, base []int) {
		for range n {
			cur = append(cur, rng.IntN(len(pool)))
			base = append(base, rng.IntN(len(pool)))
		}
		return cur, base
	})
}

// poolRatio is the ratio of the held-out rounds' mean QPS of cell to A's,
// per step: the slowdown the held-out draws see.
func poolRatio(c config, cells map[string][]runResult, cell string, held []int) []float64 {
	out := make([]float64, 0, len(c.steps))
	for _, step := range c.steps {
		var a, b float64
		for _, j := range held {
			a += qpsOf(cells[baseCell][j], step)
			b += qpsOf(cells[cell][j], step)
		}
		out = append(out, b/a)
	}
	return out
}

// planSection prints, per rule, the two plans, their cost and what the
// designed one reached on the held-out rounds.
func planSection(w *os.File, c config, cells map[string][]runResult) {
	half := c.rounds / 2
	history, held := make([]int, 0, half), make([]int, 0, c.rounds-half)
	for r := range c.rounds {
		if r < half {
			history = append(history, r)
		} else {
			held = append(held, r)
		}
	}
	rows := regression.SuiteComponents([]*results.Manifest{historyManifest(cells, history)}, analysis.MetricThroughput)
	keys := make([]inference.Key, 0, len(c.steps))
	for _, s := range c.steps {
		keys = append(keys, inference.Key{Step: s, Threads: c.threads})
	}
	points, err := regression.PlanPoints(keys, rows, regression.PlanDefaults{}, func(string) bool { return false })
	if err != nil {
		fmt.Fprintf(w, "plan: %v\n", err)
		return
	}
	pts := make([]inference.PlanPoint, len(points))
	for i, p := range points {
		pts[i] = p.PlanPoint
		fmt.Fprintf(w, "plan, history (rounds 1–%d): %s run CV %.2f %% over %d df\n", half, p.Key.Step, 100*math.Sqrt(math.Expm1(p.Run)), p.RunDF)
	}
	costs := planCosts(c, cells)
	fmt.Fprintf(w, "plan, cell costs: %.0f s pods (default) + %.1f s load (median of the runs) + %d s warm-up per step\n",
		costs.OverheadSeconds, costs.LoadSeconds, c.warmup)
	slow := slowCell(slices.Min(c.scales))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rule\tplan\tstep s\trepeats/side\tcell-hours\tpredicted power\theld-out detection\theld-out A/A\tcell-hours / fixed's")
	for i, r := range rules[:2] {
		goal := planGoal(c, r)
		lim := inference.PlanLimits{ReadSeconds: []float64{float64(c.seconds)}, WriteSeconds: []float64{float64(c.seconds)}, MaxRepeats: 400}
		designed, derr := inference.ChoosePlan(pts, costs, goal, lim)
		lim.ReadSeconds, lim.WriteSeconds = []float64{300}, []float64{600}
		fixed, ferr := inference.ChoosePlan(pts, costs, goal, lim)
		if derr != nil || ferr != nil {
			fmt.Fprintf(tw, "%s\t%v\n", r, errDesc(derr, ferr))
			continue
		}
		det, err1 := heldOutRate(cells, slow, designed.Repeats, r, held, uint64(101+i))
		aa, err2 := heldOutAA(cells, designed.Repeats, r, held, uint64(201+i))
		if err1 != nil || err2 != nil {
			fmt.Fprintf(tw, "%s\theld-out verdicts: %v %v\n", r, err1, err2)
			continue
		}
		fmt.Fprintf(tw, "%s\tdesigned\t%g\t%d\t%.2f\t%.2f\t%.3f (%s)\t%.3f (α %.2f)\t%.3f\n", r, designed.ReadSeconds, designed.Repeats,
			designed.CellHours, designed.Power, det, slow, aa, defaultAlpha, designed.CellHours/fixed.CellHours)
		fmt.Fprintf(tw, "%s\tfixed (reference)\t%g\t%d\t%.2f\t%.2f\t-\t-\t1\n", r, fixed.ReadSeconds, fixed.Repeats, fixed.CellHours, fixed.Power)
		// The fixed plan costs no more than the designed one only if its
		// steps cut the run level's variance enough that its repeats fall
		// to designed.CellHours / its cell's hours.
		nEven := designed.CellHours * 3600 / (fixed.CellSeconds * float64(2))
		even := fmt.Sprintf("needs the run-level variance cut %.0f× by 300-s steps", float64(fixed.Repeats)/nEven)
		if nEven < 2 {
			even = fmt.Sprintf("none: 2 repeats, the fewest, of 300-s steps cost %.1f× the designed plan", 2/nEven)
		}
		fmt.Fprintf(tw, "%s\tbreak-even\t300\t%.1f\t%.2f\t-\t-\t-\t%s\n", r, nEven, designed.CellHours, even)
	}
	tw.Flush()
	fmt.Fprintf(w, "plan, held-out rounds %d–%d: %s / A mean QPS per step %.3f\n", half+1, c.rounds, slow, poolRatio(c, cells, slow, held))
}

func errDesc(a, b error) string {
	if a != nil {
		return "designed: " + a.Error()
	}
	return "fixed: " + b.Error()
}
