package benchmarkrun

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/runplan"
)

// A run with spec.goal is planned before its first cell: the prediction
// of what its design reaches (pkg/runplan, the computation `kubectl
// dbbench plan --for` shows) goes into status.plan, and a design that falls
// short fails the run at once unless the goal says to run anyway. Once the
// last cell ended, status.plan gets the precision achieved.

// startHistory reads the suite's runs when the run starts, for spec.goal's
// prediction and workload.adaptive's suite noise: the cluster's and the
// object store's; the note says what could not be read. Neither asked
// for, it reads nothing.
func (p *runPass) startHistory(ctx context.Context) ([]*results.Manifest, string) {
	ad := p.run.Spec.Workload.Adaptive
	fromSuite := ad != nil && ad.BetweenRunCVFromSuite
	if p.run.Spec.Suite == "" || (p.run.Spec.Goal == nil && !fromSuite) {
		return nil, ""
	}
	var note string
	cluster, err := p.suiteHistory(ctx)
	if err != nil {
		note = fmt.Sprintf("; the cluster's history was not read: %v", err)
	}
	remote, _, storeNote := p.storeHistory(ctx)
	runs := mergeHistory(cluster, remote)
	out := make([]*results.Manifest, len(runs))
	for i, r := range runs {
		out[i] = r.Manifest
	}
	return out, note + strings.TrimSpace(storeNote)
}

// recordPlan predicts spec.goal into status.plan; it reports whether the
// run must stop there (the design falls short and onOutOfReach is Fail, or
// the goal cannot be predicted), having failed it.
func (p *runPass) recordPlan(history []*results.Manifest, note string) (stop bool) {
	goal := p.run.Spec.Goal
	if goal == nil || p.run.Status.Plan != nil {
		return false
	}
	pred, err := runplan.Predict(p.run, history, nil)
	if err != nil {
		msg := fmt.Sprintf("spec.goal: cannot predict what the run reaches: %v", err)
		p.run.Status.Plan = &dbbenchv1alpha1.PlanStatus{Message: msg}
		p.finishFailed(dbbenchv1alpha1.ReasonGoalOutOfReach, msg)
		return true
	}
	ps := planStatusOf(pred)
	if note != "" {
		ps.Message = strings.TrimPrefix(strings.TrimSpace(ps.Message+" "+note), "; ")
	}
	p.run.Status.Plan = ps
	if pred.Reaches() {
		return false
	}
	msg := "spec.goal: " + ps.Message
	if !goal.FailsOutOfReach() {
		p.Event(false, EventGoalOutOfReach, "Plan", msg+" (onOutOfReach: Run)")
		return false
	}
	p.finishFailed(dbbenchv1alpha1.ReasonGoalOutOfReach, msg)
	return true
}

// planStatusOf is a prediction as status.plan, its message saying why the
// design falls short and what reaches the goal.
func planStatusOf(pred *runplan.Prediction) *dbbenchv1alpha1.PlanStatus {
	ps := &dbbenchv1alpha1.PlanStatus{
		Goal:     runplan.GoalText(pred.Goal),
		Source:   dbbenchv1alpha1.PlanSource(pred.Source),
		RunsRead: int32(pred.RunsRead),
		Design:   plannedDesign(pred.Design, pred.Goal),
	}
	if pred.CheapestUnreachable == "" {
		d := plannedDesign(pred.Cheapest, pred.Goal)
		ps.Cheapest = &d
	}
	if pred.Required > 0 {
		ps.RequiredHalfWidthPercent = percentString(100 * pred.Required)
	}
	var parts []string
	switch {
	case pred.DesignNote != "":
		ps.Design.Met = false
		parts = append(parts, "the design falls short: "+pred.DesignNote)
	case !pred.Design.Met:
		parts = append(parts, "the design falls short: "+shortfall(pred))
	}
	if !pred.Reaches() {
		if ps.Cheapest != nil {
			c := ps.Cheapest
			parts = append(parts, fmt.Sprintf("the cheapest design that reaches the goal: %d repeats of %d-s read and %d-s write steps, %s cell-hours",
				c.Repeats, c.ReadSeconds, c.WriteSeconds, c.CellHours))
		} else {
			parts = append(parts, "no design of 10–600-s steps and up to 20 repeats reaches it: "+pred.CheapestUnreachable)
		}
	}
	if pred.Source != runplan.SourceHistory {
		parts = append(parts, "noise from the defaults where the suite has no history (7 % run-to-run CV at 5-s steps; kubectl dbbench noise)")
	}
	ps.Message = strings.Join(parts, "; ")
	return ps
}

// shortfall says what the design reaches at its least favourable point.
func shortfall(pred *runplan.Prediction) string {
	d := pred.Design
	at := fmt.Sprintf("%s@%d", d.Worst.Step, d.Worst.Threads)
	if pred.Goal.HalfWidth > 0 {
		return fmt.Sprintf("%d repeats of %g-s read and %g-s write steps reach ±%s %% at %s, the goal is ±%s %%",
			d.Repeats, d.ReadSeconds, d.WriteSeconds, percentString(100*d.HalfWidth), at, percentString(100*pred.Goal.HalfWidth))
	}
	return fmt.Sprintf("%d repeats of %g-s read and %g-s write steps find a %s %% slowdown at %s with power %s (they find %s %% with power %s)",
		d.Repeats, d.ReadSeconds, d.WriteSeconds, percentString(100*pred.Goal.Detect), at, decimalString(d.Power),
		percentString(100*d.MDE), decimalString(pred.Goal.Power))
}

func plannedDesign(pl inference.Plan, goal inference.PlanGoal) dbbenchv1alpha1.PlannedDesign {
	d := dbbenchv1alpha1.PlannedDesign{
		ReadSeconds: int32(math.Round(pl.ReadSeconds)), WriteSeconds: int32(math.Round(pl.WriteSeconds)),
		Repeats: int32(pl.Repeats), CellHours: strconv.FormatFloat(pl.CellHours, 'f', 2, 64), Met: pl.Met,
	}
	if pl.Worst.Step != "" {
		d.Worst = fmt.Sprintf("%s@%d", pl.Worst.Step, pl.Worst.Threads)
		d.MDEPercent = percentString(100 * pl.MDE)
		d.HalfWidthPercent = percentString(100 * pl.HalfWidth)
		if goal.Detect > 0 {
			d.Power = decimalString(pl.Power)
		}
	}
	return d
}

func decimalString(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// recordAchieved puts the precision the run's cells reached into
// status.plan: the widest 95 % interval of the compared ratios, as the
// precision target judges them (precisionSamples, Fieller's interval of a
// ratio of means); a run of one combination has no ratio, so its mean's
// half-width ×√2 stands for the ratio against a like run (equal noise,
// independent sides).
func (p *runPass) recordAchieved(cells []matrix.Cell, m *results.Manifest) {
	ps := p.run.Status.Plan
	if ps == nil || p.run.Spec.Goal == nil || ps.Met != nil {
		return
	}
	ratios := precisionSamples(p.run, cells, m, p.steps)
	hws, err := inference.RatioHalfWidths(ratios, 0)
	if err != nil || len(hws) == 0 {
		ps.Message = strings.TrimPrefix(ps.Message+"; the precision achieved is unknown: no compared values", "; ")
		return
	}
	worst, at := achievedWorst(hws, len(ratios) > 0 && ratios[0].Base == nil)
	ps.AchievedHalfWidthPercent, ps.AchievedAt = percentString(worst), fmt.Sprintf("%s@%d", at.Step, at.Threads)
	req, err := strconv.ParseFloat(ps.RequiredHalfWidthPercent, 64)
	met := err == nil && worst <= req
	ps.Met = &met
}

// achievedWorst is the widest half-width (percent) and where; single says
// the half-widths are of one combination's mean, scaled by √2 to a ratio's.
func achievedWorst(hws []inference.HalfWidth, single bool) (float64, inference.Key) {
	var worst float64
	var at inference.Key
	for _, h := range hws {
		v := h.Percent
		if single {
			v *= math.Sqrt2
		}
		if !(v <= worst) {
			worst, at = v, h.Key
		}
	}
	return worst, at
}

// recordAdaptiveNoise puts the suite's between-run noise per point into
// status.adaptive for workload.adaptive.betweenRunCVFromSuite; the cells'
// plans read it from there (specs.Plan), so every cell of the run, and a
// restarted controller, stops its steps against the same figures.
func (p *runPass) recordAdaptiveNoise(history []*results.Manifest, note string) {
	ad := p.run.Spec.Workload.Adaptive
	if ad == nil || !ad.BetweenRunCVFromSuite || p.run.Status.Adaptive != nil {
		return
	}
	p.run.Status.Adaptive = adaptiveStatusOf(regression.SuiteComponents(history, analysis.MetricThroughput), len(history), note)
}

// maxAdaptivePoints bounds status.adaptive.betweenRunCV (its schema's
// MaxItems).
const maxAdaptivePoints = 512

// adaptiveStatusOf keeps the points whose run level rests on
// regression.MinFloorDF df or more, as the planner does.
func adaptiveStatusOf(rows []regression.ComponentsRow, runs int, note string) *dbbenchv1alpha1.AdaptiveStatus {
	st := &dbbenchv1alpha1.AdaptiveStatus{RunsRead: int32(runs)}
	short := 0
	for _, r := range rows {
		if !r.Run.Known || r.Run.DF < regression.MinFloorDF || len(st.BetweenRunCV) == maxAdaptivePoints {
			short++
			continue
		}
		st.BetweenRunCV = append(st.BetweenRunCV, dbbenchv1alpha1.PointCV{Step: r.Step, Threads: int32(r.Threads),
			CVPercent: percentString(100 * math.Sqrt(math.Expm1(r.Run.Variance))), DF: int32(r.Run.DF)})
	}
	var parts []string
	if short > 0 {
		parts = append(parts, fmt.Sprintf("%d points of the history rest on fewer than %d df: they use betweenRunCVPercent", short, regression.MinFloorDF))
	}
	if len(st.BetweenRunCV) == 0 {
		parts = append(parts, "the suite's history measured no point's between-run noise (repeats or A/A runs): every step uses betweenRunCVPercent")
	}
	if note != "" {
		parts = append(parts, strings.TrimPrefix(note, "; "))
	}
	st.Message = strings.Join(parts, "; ")
	return st
}
