// Package runplan reads a BenchmarkRun spec as the planner's input (the
// points it measures, the verdict its goal is for, what a cell costs) and
// predicts what the spec's own design reaches against its goal. `kubectl
// dbbench plan --for` and the controller (status.plan) use it, so the plan
// shown before a run and the one recorded in it are the same computation.
package runplan

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/workload"
)

// Default step lengths of a spec that sets none (the reference method's).
const (
	DefaultReadSeconds  = 300
	DefaultWriteSeconds = 600
)

// WriteStep says whether a step runs for the write duration: the catalog's
// write steps and pgbench-tpcb; custom steps and tpcc too (their default
// is writeSeconds).
func WriteStep(step string) bool {
	if step == workload.PgbenchSelectStep {
		return false
	}
	s, ok := workload.Lookup(step)
	return !ok || s.Duration == workload.WriteDuration
}

// Steps are the spec's steps: workload.steps, else its step set's.
func Steps(w *dbbenchv1alpha1.WorkloadSpec) ([]string, error) {
	if len(w.Steps) > 0 {
		return w.Steps, nil
	}
	set := workload.SetStandard
	if w.StepSet != "" {
		set = workload.Set(w.StepSet)
	}
	cat, err := workload.BySet(set)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(cat))
	for _, s := range cat {
		out = append(out, s.Name)
	}
	return out, nil
}

// Threads are the spec's thread counts, 1 when it lists none.
func Threads(w *dbbenchv1alpha1.WorkloadSpec) []int {
	out := make([]int, 0, max(len(w.Threads), 1))
	for _, th := range w.Threads {
		out = append(out, int(th))
	}
	if len(out) == 0 {
		out = append(out, 1)
	}
	return out
}

// Keys are the (step, threads) points of the given steps and threads; a
// step that is neither the catalog's, tpcc, a pgbench step nor one of
// custom is an error.
func Keys(steps []string, threads []int, custom []string) ([]inference.Key, error) {
	out := make([]inference.Key, 0, len(steps)*len(threads))
	for _, s := range steps {
		if s != workload.TPCCStep && workload.PgbenchBuiltin(s) == "" && !slices.Contains(custom, s) {
			if _, err := workload.Resolve([]string{s}); err != nil {
				return nil, err
			}
		}
		for _, th := range threads {
			out = append(out, inference.Key{Step: s, Threads: th})
		}
	}
	return out, nil
}

// CustomSteps are the names of the spec's custom steps.
func CustomSteps(w *dbbenchv1alpha1.WorkloadSpec) []string {
	out := make([]string, 0, len(w.CustomSteps))
	for _, c := range w.CustomSteps {
		out = append(out, c.Name)
	}
	return out
}

// SpecKeys are the points a run measures.
func SpecKeys(run *dbbenchv1alpha1.BenchmarkRun) ([]inference.Key, error) {
	w := &run.Spec.Workload
	steps, err := Steps(w)
	if err != nil {
		return nil, err
	}
	return Keys(steps, Threads(w), CustomSteps(w))
}

// Rule is the rule of the verdict a goal is for: the spec's regression
// settings, or the defaults of a run without them (Tested rule, 5 %,
// α 0.05, Holm).
type Rule struct {
	Magnitude  float64
	Alpha      float64
	Estimated  bool
	Correction inference.Correction
	// Metrics are the metrics judged per point.
	Metrics int
}

// SpecRule reads the verdict's rule of a run spec.
func SpecRule(run *dbbenchv1alpha1.BenchmarkRun) Rule {
	v := Rule{Magnitude: 0.05, Alpha: dbbenchv1alpha1.DefaultRunMaxPValue, Correction: inference.CorrectionHolm, Metrics: 1}
	if run == nil || run.Spec.Regression == nil {
		return v
	}
	r := run.Spec.Regression
	v.Magnitude, v.Alpha = r.MinMagnitude(), r.SignificanceLevel()
	v.Estimated = r.MagnitudeRule == dbbenchv1alpha1.MagnitudeEstimated
	if r.Correction == dbbenchv1alpha1.CorrectionBenjaminiHochberg {
		v.Correction = inference.CorrectionBH
	}
	v.Metrics = max(1, len(r.Metrics))
	return v
}

// Costs are what a cell of the spec costs beyond its steps, with a note on
// where the load time came from: the median of loads (the history's
// documents' load phases) when there are any, else the reference method's
// flush wait for the spec's rows, min(1200, 60 + rows/1e6) s, or its cap.
func Costs(run *dbbenchv1alpha1.BenchmarkRun, loads []float64) (inference.PlanCosts, string) {
	c := inference.PlanCosts{OverheadSeconds: inference.DefaultOverheadSeconds, WarmupSeconds: 10}
	rows := int64(1_000_000)
	var flushCap int32
	if run != nil {
		w := &run.Spec.Workload
		c.WarmupSeconds = float64(w.Warmup())
		if w.TableSize > 0 {
			rows = w.TableSize * int64(max(w.Tables, 1))
		}
		flushCap = w.FlushWaitSeconds
		c.Combinations = len(matrix.ExpandRounds(run, 1))
	}
	if len(loads) > 0 {
		s := slices.Clone(loads)
		slices.Sort(s)
		c.LoadSeconds = s[len(s)/2]
		return c, fmt.Sprintf("load: %.0f s per cell, the median of the history's %d documents' load phase", c.LoadSeconds, len(s))
	}
	wait := math.Min(1200, 60+float64(rows)/1e6)
	if flushCap > 0 {
		wait = float64(flushCap)
	}
	c.LoadSeconds = wait
	return c, fmt.Sprintf("load: %.0f s per cell, the flush wait alone for %d rows (the insert, index and warm-up read come on top)", wait, rows)
}

// SpecGoal is the spec's goal (spec.goal) for its verdict; ok is false for
// a spec without one.
func SpecGoal(run *dbbenchv1alpha1.BenchmarkRun) (inference.PlanGoal, bool) {
	g := run.Spec.Goal
	if g == nil {
		return inference.PlanGoal{}, false
	}
	v := SpecRule(run)
	goal := inference.PlanGoal{Magnitude: v.Magnitude, Alpha: v.Alpha, Estimated: v.Estimated}
	if d := g.Detect(); d > 0 {
		goal.Detect, goal.Power = d/100, g.Power()
	} else {
		goal.HalfWidth, goal.Level = g.HalfWidth()/100, inference.DefaultLevel
	}
	return goal, true
}

// Lengths are the spec's step lengths (its maxima with adaptive steps).
func Lengths(w *dbbenchv1alpha1.WorkloadSpec) (read, write float64) {
	return float64(cmp.Or(w.ReadSeconds, DefaultReadSeconds)), float64(cmp.Or(w.WriteSeconds, DefaultWriteSeconds))
}

// Source of a prediction's components.
type Source string

const (
	// SourceHistory: every point's run level from the suite's history.
	SourceHistory Source = "History"
	// SourceDefaults: every point from the defaults (a suite with no
	// usable history, or none).
	SourceDefaults Source = "Defaults"
	// SourceMixed: some points from each.
	SourceMixed Source = "Mixed"
)

// Prediction is what a spec's design is predicted to reach against its
// goal, and the cheapest design that reaches it.
type Prediction struct {
	Goal     inference.PlanGoal
	Rule     Rule
	Source   Source
	RunsRead int
	// Design is the spec's own: its step lengths, its repeats (a
	// precision target's maxRepeats), one node. DesignNote says why it
	// falls short whatever its predicted figures: a single repeat, or
	// steps shorter than the noise estimate holds for.
	Design     inference.Plan
	DesignNote string
	// Cheapest is the least cell-hours design within Limits that reaches
	// the goal; CheapestUnreachable says why none does.
	Cheapest            inference.Plan
	CheapestUnreachable string
	// Required is the widest ratio interval half-width the goal allows:
	// the goal's own, or for a detection goal the cheapest reaching
	// design's predicted half-width (0 when nothing reaches it).
	Required float64
	Notes    []string
}

// Reaches says the spec's design reaches the goal.
func (p *Prediction) Reaches() bool { return p.DesignNote == "" && p.Design.Met }

// Limits are the designs the controller's prediction considers for the
// cheapest: step lengths of 10 s to 600 s, up to 20 repeats (precision's
// maximum), one node.
var Limits = inference.PlanLimits{ReadSeconds: inference.PlanDurations(10, 600), WriteSeconds: inference.PlanDurations(10, 600), MaxRepeats: 20, Nodes: 1}

// ErrNoGoal is returned by Predict for a spec without spec.goal.
var ErrNoGoal = errors.New("the run has no goal")

// Predict predicts the spec's design against its goal from the history's
// components (regression.SuiteComponents) or regression.DefaultPlanDefaults.
// loads are the history's documents' load seconds.
func Predict(run *dbbenchv1alpha1.BenchmarkRun, history []*results.Manifest, loads []float64) (*Prediction, error) {
	goal, ok := SpecGoal(run)
	if !ok {
		return nil, ErrNoGoal
	}
	keys, err := SpecKeys(run)
	if err != nil {
		return nil, err
	}
	rows := regression.SuiteComponents(history, analysis.MetricThroughput)
	points, err := regression.PlanPoints(keys, rows, regression.DefaultPlanDefaults, WriteStep)
	if err != nil {
		return nil, err
	}
	v := SpecRule(run)
	goal.Tests = len(points) * v.Metrics
	costs, loadNote := Costs(run, loads)
	pred := &Prediction{Goal: goal, Rule: v, RunsRead: len(history), Source: sourceOf(points), Notes: []string{loadNote}}
	pts := make([]inference.PlanPoint, len(points))
	for i, p := range points {
		pts[i] = p.PlanPoint
	}
	read, write := Lengths(&run.Spec.Workload)
	n := int(matrix.MaxRounds(run))
	if n < 2 {
		pred.DesignNote = fmt.Sprintf("%d repeat: the between-run test needs 2 runs a side (workload.repeats or workload.precision)", n)
		pred.Design = inference.Plan{ReadSeconds: read, WriteSeconds: write, Repeats: n}
	} else if pred.Design, err = inference.EvaluatePlan(pts, costs, goal, read, write, n, 1); err != nil {
		return nil, err
	}
	for _, p := range points {
		s := read
		if p.Write {
			s = write
		}
		if s < p.MinSeconds {
			pred.DesignNote = fmt.Sprintf("%s@%d: %g-s steps are shorter than the %g s its noise estimate holds for (a shorter step adds noise the estimate does not see)",
				p.Key.Step, p.Key.Threads, s, p.MinSeconds)
			break
		}
	}
	pred.Cheapest, err = inference.ChoosePlan(pts, costs, goal, Limits)
	switch {
	case errors.Is(err, inference.ErrUnreachable):
		pred.CheapestUnreachable = strings.TrimSuffix(strings.TrimPrefix(err.Error(), "plan: "), ": "+inference.ErrUnreachable.Error())
	case err != nil:
		return nil, err
	default:
		pred.Required = pred.Cheapest.HalfWidth
	}
	if goal.HalfWidth > 0 {
		pred.Required = goal.HalfWidth
	}
	for _, p := range points {
		if p.Note != "" {
			pred.Notes = append(pred.Notes, fmt.Sprintf("%s@%d: %s", p.Key.Step, p.Key.Threads, p.Note))
		}
	}
	return pred, nil
}

func sourceOf(points []regression.PlanPointRow) Source {
	var hist, def int
	for _, p := range points {
		if p.Source == regression.PlanSourceHistory {
			hist++
		} else {
			def++
		}
	}
	switch {
	case def == 0:
		return SourceHistory
	case hist == 0:
		return SourceDefaults
	}
	return SourceMixed
}

// GoalText says the goal in words.
func GoalText(g inference.PlanGoal) string {
	if g.HalfWidth > 0 {
		return fmt.Sprintf("every ratio's %g %% interval within ±%s %%", 100*cmp.Or(g.Level, inference.DefaultLevel), trim(100*g.HalfWidth))
	}
	rule := "Tested"
	if g.Estimated {
		rule = "Estimated"
	}
	return fmt.Sprintf("a %s %% slowdown found with power %s (%s rule, %s %% magnitude, α %g over %d tests)",
		trim(100*g.Detect), trim(cmp.Or(g.Power, 0.9)), rule, trim(100*g.Magnitude), cmp.Or(g.Alpha, 0.05), g.Tests)
}

func trim(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}
