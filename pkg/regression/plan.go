package regression

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
)

// PlanDefaults are the components a point without history takes.
type PlanDefaults struct {
	// RunCV is the run-to-run CV of one run on one node at steps of
	// Seconds (0: no default, a point without history is an error).
	// Without WithinCV it includes the within-run noise at that length,
	// so the plan goes no shorter than Seconds.
	RunCV   float64 `json:"runCv"`
	Seconds float64 `json:"seconds"`
	// WithinCV is the per-second series' long-run CV (√σ²_w); 0 unknown.
	WithinCV float64 `json:"withinCv,omitempty"`
	// NodeCV is the CV between nodes; NodeKnown says it was given (a plan
	// without it keeps every cell on one node).
	NodeCV    float64 `json:"nodeCv,omitempty"`
	NodeKnown bool    `json:"nodeKnown,omitempty"`
}

// DefaultPlanDefaults are this project's measurements: a 7 % run-to-run CV
// on one node at 5-s steps (docs/benchmarks.md, make bench-verdicts: 5–9 %
// on a quota-bound local MariaDB, 5- and 10-s steps, the same at both
// lengths), no within-run or node level measured.
var DefaultPlanDefaults = PlanDefaults{RunCV: 0.07, Seconds: 5}

// Sources of a planned point's components.
const (
	PlanSourceHistory = "history"
	PlanSourceDefault = "default"
)

// PlanPointRow is a planned point with where its components came from.
type PlanPointRow struct {
	inference.PlanPoint
	// Source is PlanSourceHistory or PlanSourceDefault; Note says what was
	// filled in or left out ("node: default", "history: 2 df < 4").
	Source string `json:"source"`
	Note   string `json:"note,omitempty"`
	// RunDF and NodeDF are the history's df behind Run and Node (0 for a
	// default).
	RunDF  int `json:"runDf,omitempty"`
	NodeDF int `json:"nodeDf,omitempty"`
}

func logVar(cv float64) float64 { return math.Log1p(cv * cv) }

// PlanPoints gives every key its components: the suite's (rows, from
// SuiteComponents) where the run level rests on MinFloorDF df or more,
// else the defaults; a node level the history does not have comes from
// the defaults when they have one. write says which steps run for the
// write duration. A key with neither history nor a default RunCV is an
// error that names it.
func PlanPoints(keys []inference.Key, rows []ComponentsRow, def PlanDefaults, write func(step string) bool) ([]PlanPointRow, error) {
	byKey := map[inference.Key]ComponentsRow{}
	for _, r := range rows {
		byKey[inference.Key{Step: r.Step, Threads: r.Threads}] = r
	}
	var out []PlanPointRow
	var missing []string
	for _, k := range keys {
		p := PlanPointRow{PlanPoint: inference.PlanPoint{Key: k, Write: write(k.Step)}}
		r, ok := byKey[k]
		var notes []string
		switch {
		case ok && r.Run.Known && r.Run.DF >= MinFloorDF:
			p.Source, p.Run, p.RunDF = PlanSourceHistory, r.Run.Variance, r.Run.DF
			switch {
			case r.WithinPerSecond.Known && !r.RunIncludesWithin:
				p.WithinPerSecond = r.WithinPerSecond.Variance
			case r.Seconds > 0:
				p.MinSeconds = r.Seconds
				notes = append(notes, fmt.Sprintf("within unknown: steps of %g s or more", r.Seconds))
			default:
				// Neither the within level nor the history's step length
				// is recorded: the defaults' length bounds the steps.
				p.MinSeconds = def.Seconds
				notes = append(notes, fmt.Sprintf("within and the history's step length unknown: steps of %g s or more", def.Seconds))
			}
			if r.Node.Known {
				p.Node, p.NodeKnown, p.NodeDF = r.Node.Variance, true, r.Node.DF
			}
		case def.RunCV > 0:
			p.Source, p.Run = PlanSourceDefault, logVar(def.RunCV)
			if def.WithinCV > 0 {
				p.WithinPerSecond = logVar(def.WithinCV)
			} else {
				p.MinSeconds = def.Seconds
			}
			if ok && r.Run.Known {
				notes = append(notes, fmt.Sprintf("history: %d df < %d", r.Run.DF, MinFloorDF))
			}
		default:
			missing = append(missing, fmt.Sprintf("%s@%d", k.Step, k.Threads))
			continue
		}
		if !p.NodeKnown && def.NodeKnown {
			p.Node, p.NodeKnown = logVar(def.NodeCV), true
			if p.Source == PlanSourceHistory {
				notes = append(notes, "node: default")
			}
		}
		p.Note = strings.Join(notes, "; ")
		out = append(out, p)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf(
			"plan: no noise estimate for %s (no repeats or A/A runs in the suite's history with %d df or more) and no default run-to-run CV: %w",
			strings.Join(missing, ", "),
			MinFloorDF,
			inference.ErrInvalid,
		)
	}
	return out, nil
}

// ReferenceSeconds are the reference method's step lengths: 300 s per read
// step, 600 s per write step (docs/methodology: the seed studies).
var ReferenceSeconds = [2]float64{300, 600}

// PlanReport is a plan with the fixed plans it is compared with.
type PlanReport struct {
	Suite    string `json:"suite,omitempty"`
	RunsRead int    `json:"runsRead"`
	// Rule and Correction name the verdict the goal is for.
	Rule       MagnitudeRule        `json:"rule"`
	Correction inference.Correction `json:"correction"`
	Goal       inference.PlanGoal   `json:"goal"`
	Costs      inference.PlanCosts  `json:"costs"`
	Limits     inference.PlanLimits `json:"limits"`
	Points     []PlanPointRow       `json:"points"`
	// Chosen is the cheapest plan that reaches the goal; Unreachable, when
	// none does, says why and Chosen is what the limits reach.
	Chosen      inference.Plan `json:"chosen"`
	Unreachable string         `json:"unreachable,omitempty"`
	// Fixed are the plans at fixed step lengths with the fewest repeats
	// that reach the goal (or MaxRepeats, not met): the reference
	// method's and, when a run spec was given, the spec's.
	Fixed []FixedPlan `json:"fixed"`
}

// FixedPlan is a plan at given step lengths.
type FixedPlan struct {
	Name        string         `json:"name"`
	Plan        inference.Plan `json:"plan"`
	Unreachable string         `json:"unreachable,omitempty"`
}

// FixedLengths names step lengths to compare the chosen plan with.
type FixedLengths struct {
	Name                      string
	ReadSeconds, WriteSeconds float64
}

// BuildPlanReport chooses the plan and the fixed plans at the given step
// lengths (ReferenceSeconds first, then fixed). Errors are those of a bad
// goal or input; a goal out of reach is not one (Unreachable says it).
func BuildPlanReport(
	points []PlanPointRow,
	costs inference.PlanCosts,
	goal inference.PlanGoal,
	lim inference.PlanLimits,
	fixed ...FixedLengths,
) (*PlanReport, error) {
	pts := make([]inference.PlanPoint, len(points))
	for i, p := range points {
		pts[i] = p.PlanPoint
	}
	r := &PlanReport{Goal: goal, Costs: costs, Limits: lim, Points: points, Correction: inference.CorrectionHolm, Rule: MagnitudeTested}
	if goal.Estimated {
		r.Rule = MagnitudeEstimated
	}
	choose := func(l inference.PlanLimits) (inference.Plan, string, error) {
		p, err := inference.ChoosePlan(pts, costs, goal, l)
		switch {
		case errors.Is(err, inference.ErrUnreachable):
			msg := strings.TrimSuffix(strings.TrimPrefix(err.Error(), "plan: "), ": "+inference.ErrUnreachable.Error())
			return p, msg, nil
		case err != nil:
			return p, "", err
		}
		return p, "", nil
	}
	var err error
	if r.Chosen, r.Unreachable, err = choose(lim); err != nil {
		return nil, err
	}
	all := append([]FixedLengths{{Name: fmt.Sprintf("reference (%g/%g s)", ReferenceSeconds[0], ReferenceSeconds[1]),
		ReadSeconds: ReferenceSeconds[0], WriteSeconds: ReferenceSeconds[1]}}, fixed...)
	for _, f := range all {
		l := lim
		l.ReadSeconds, l.WriteSeconds = []float64{f.ReadSeconds}, []float64{f.WriteSeconds}
		p, why, err := choose(l)
		if err != nil {
			return nil, err
		}
		r.Fixed = append(r.Fixed, FixedPlan{Name: f.Name, Plan: p, Unreachable: why})
	}
	return r, nil
}

// goalText says the goal in words.
func (r *PlanReport) goalText() string {
	g := r.Goal
	alpha, tests := g.Alpha, g.Tests
	if alpha == 0 {
		alpha = 0.05
	}
	if tests == 0 {
		tests = len(r.Points)
	}
	if g.HalfWidth > 0 {
		level := g.Level
		if level == 0 {
			level = inference.DefaultLevel
		}
		return fmt.Sprintf("every ratio's %g %% interval within ±%s %%", 100*level, analysis.FormatFloat(100*g.HalfWidth, 1))
	}
	power := g.Power
	if power == 0 {
		power = 0.9
	}
	return fmt.Sprintf("find a %s %% slowdown with power %.2f (%s rule, magnitude %s %%, α %g over %d tests)",
		analysis.FormatFloat(100*g.Detect, 1), power, r.Rule, analysis.FormatFloat(100*g.Magnitude, 1), alpha, tests)
}

// Tables renders the plans and the points' components.
func (r *PlanReport) Tables() []analysis.Table {
	title := "Plan: " + r.goalText()
	if r.Suite != "" {
		title = fmt.Sprintf("Plan for suite %s (%d runs read): %s", r.Suite, r.RunsRead, r.goalText())
	}
	power := "power"
	if r.Goal.HalfWidth > 0 {
		power = "mde power"
	}
	t := analysis.Table{ID: "plan", Title: title,
		Columns: []string{
			"plan",
			"read s",
			"write s",
			"repeats/side",
			"nodes",
			"cells/node",
			"cell-hours",
			"wall h",
			power,
			"mde %",
			"±%",
			"least favourable",
			"met",
		}}
	row := func(name string, p inference.Plan) {
		pw := "0.80"
		if r.Goal.Detect > 0 {
			pw = fmt.Sprintf("%.2f", p.Power)
		}
		met := "yes"
		if !p.Met {
			met = "no"
		}
		cells := make([]string, len(p.CellsPerNode))
		for i, c := range p.CellsPerNode {
			cells[i] = fmt.Sprint(c)
		}
		secs := func(s float64, group bool) string {
			if !group {
				return "-"
			}
			return analysis.FormatFloat(s, 0)
		}
		reads, writes := false, false
		for _, q := range r.Points {
			reads, writes = reads || !q.Write, writes || q.Write
		}
		t.Rows = append(t.Rows, []string{name, secs(p.ReadSeconds, reads), secs(p.WriteSeconds, writes), fmt.Sprint(p.Repeats), fmt.Sprint(p.Nodes),
			strings.Join(cells, ","), analysis.FormatFloat(p.CellHours, 2), analysis.FormatFloat(p.WallSeconds/3600, 2), pw,
			analysis.Num(100 * p.MDE).Format(1), analysis.Num(100 * p.HalfWidth).Format(1), fmt.Sprintf("%s@%d", p.Worst.Step, p.Worst.Threads), met})
	}
	row("chosen", r.Chosen)
	for _, f := range r.Fixed {
		row(f.Name, f.Plan)
	}
	combos := r.Costs.Combinations
	if combos == 0 {
		combos = 2
	}
	objective := r.Limits.Objective
	if objective == "" {
		objective = inference.ObjectiveCellHours
	}
	if r.Unreachable != "" {
		t.Notes = append(t.Notes, r.Unreachable+"; the chosen row is what the limits reach")
	}
	for _, f := range r.Fixed {
		if f.Unreachable != "" {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: not reached within %d repeats per side", f.Name, r.Limits.MaxRepeats))
		}
	}
	t.Notes = append(
		t.Notes,
		fmt.Sprintf(
			"chosen: the least %s over step lengths %s s (read) and %s s (write), 2..%d repeats per side and 1..%d nodes; fixed rows: the fewest repeats at their step lengths",
			objective,
			secondsRange(r.Limits.ReadSeconds),
			secondsRange(r.Limits.WriteSeconds),
			r.Limits.MaxRepeats,
			max(r.Limits.Nodes, 1),
		),
		fmt.Sprintf(
			"cost: a cell is %g s overhead + %g s load + per point (%d points) %g s warm-up + its step; cell-hours = %d combinations × repeats × cell; wall = on the nodes, one cell per node at a time",
			r.Costs.OverheadSeconds,
			r.Costs.LoadSeconds,
			len(r.Points),
			r.Costs.WarmupSeconds,
			combos,
		),
		"cells/node: each node runs that many cells of every combination (balanced blocks; spec.placement.blocks: Repeats places them, a repeat per block on one node: the node effect cancels from the comparison and the run's relative tables pair by block, but the between-run verdict's test, which does not know the blocks, sees it in its variance and loses power)",
		"power and mde: at the least favourable point, the verdict's between-run test on log QPS at the correction's first level (α / tests); ±%: the expected interval half-width there; docs/noise.md",
	)
	pt := analysis.Table{ID: "plan-points", Title: "Components the plan used (per point)",
		Columns: []string{"step", "threads", "duration", "source", "within cv % (1 s)", "run cv %", "df", "node cv %", "df", "note"}}
	for _, p := range r.Points {
		dur := "read"
		if p.Write {
			dur = "write"
		}
		cv := func(v float64, known bool) string {
			if !known {
				return "-"
			}
			return analysis.FormatFloat(100*math.Sqrt(math.Expm1(v)), 2)
		}
		df := func(d int) string {
			if d == 0 {
				return "-"
			}
			return fmt.Sprint(d)
		}
		pt.Rows = append(pt.Rows, []string{p.Key.Step, fmt.Sprint(p.Key.Threads), dur, p.Source, cv(p.WithinPerSecond, p.MinSeconds == 0),
			cv(p.Run, true), df(p.RunDF), cv(p.Node, p.NodeKnown), df(p.NodeDF), p.Note})
	}
	pt.Notes = append(
		pt.Notes,
		"model: ln QPS of a run = its point's mean + node + run + within/√T; - : not measured (within: the run level holds it at the history's step length, which the plan does not go below; node: the plan keeps every cell on one node)",
	)
	return []analysis.Table{t, pt}
}

func secondsRange(ss []float64) string {
	if len(ss) == 0 {
		return "-"
	}
	lo, hi := ss[0], ss[0]
	for _, s := range ss {
		lo, hi = math.Min(lo, s), math.Max(hi, s)
	}
	if lo == hi {
		return analysis.FormatFloat(lo, 0)
	}
	return analysis.FormatFloat(lo, 0) + ".." + analysis.FormatFloat(hi, 0)
}
