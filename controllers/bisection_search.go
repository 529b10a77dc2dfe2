package controllers

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/bisect"
)

// searchState is the search recomputed from the finished rounds.
type searchState struct {
	samples []bisect.Samples
	runs    []int
	// measured counts the finished rounds that measured a point, started
	// those finished or running.
	measured, started []int
	failed            []*roundResult
}

func (p *bisectionPass) reconcile(ctx context.Context) (ctrl.Result, error) {
	st := &p.bis.Status
	if bisectionFinished(p.bis) {
		// The status that ended the search is written: its summary and
		// report go to the object store, if the runs use one.
		return p.syncUpload(ctx)
	}
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Time: p.now}
	}
	st.Phase = dbbenchv1alpha1.BisectionSearching
	s, err := p.setup(ctx)
	if err != nil {
		p.end(metav1.ConditionFalse, dbbenchv1alpha1.BisectionReasonInvalidSpec, err.Error())
		return ctrl.Result{}, nil
	}
	n := len(s.points)
	rounds, err := p.listRounds(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}

	state := searchState{samples: make([]bisect.Samples, n), runs: make([]int, n), measured: make([]int, n), started: make([]int, n), failed: make([]*roundResult, n)}
	for i := range state.samples {
		state.samples[i] = bisect.Samples{}
	}
	st.Rounds, st.CellsUsed = nil, 0
	running := false
	for _, rd := range rounds {
		cells := int32(len(rd.points)) * max(p.bis.Spec.Repeats, 1)
		rs := dbbenchv1alpha1.BisectionRound{Index: int32(rd.index), Run: rd.run.Name, Cells: cells}
		for _, i := range rd.points {
			rs.Points = append(rs.Points, int32(i))
		}
		st.CellsUsed += cells
		for _, i := range rd.points {
			if i >= 0 && i < n {
				state.started[i]++
			}
		}
		if !runFinished(rd.run) {
			running = true
			st.Rounds = append(st.Rounds, rs)
			continue
		}
		if msg, whole := runFailedWhole(rd.run); whole {
			st.Rounds = append(st.Rounds, rs)
			p.end(metav1.ConditionFalse, dbbenchv1alpha1.BisectionReasonRoundFailed, fmt.Sprintf("Round %d (run %s) failed as a whole: %s", rd.index, rd.run.Name, msg))
			return ctrl.Result{}, nil
		}
		res, err := p.readRound(ctx, rd)
		if err != nil {
			return ctrl.Result{}, err
		}
		rs.Finished = true
		st.Rounds = append(st.Rounds, rs)
		for i, r := range res {
			if i < 0 || i >= n {
				continue
			}
			state.measured[i]++
			state.runs[i] += r.runs
			state.samples[i].Add(r.samples)
			if r.failed {
				state.failed[i] = r
			}
		}
	}
	st.RoundCount = int32(len(rounds))
	p.recordPoints(s, state, nil, nil)
	searching := func() {
		p.setLocalized(metav1.ConditionUnknown, dbbenchv1alpha1.BisectionReasonSearching,
			fmt.Sprintf("Round %d of %d cells is running; %d cells so far", len(rounds)-1, st.Rounds[len(st.Rounds)-1].Cells, st.CellsUsed))
	}
	next := len(rounds)
	if next == 0 {
		return ctrl.Result{}, p.startRound(ctx, s, 0, []int{0, n - 1})
	}
	if state.measured[0] == 0 {
		searching()
		return ctrl.Result{}, nil
	}

	// The endpoints first: a bisection of a regression that is not there
	// would name a culprit by noise.
	for _, i := range []int{0, n - 1} {
		if f := state.failed[i]; f != nil {
			p.end(metav1.ConditionFalse, dbbenchv1alpha1.BisectionReasonEndpointFailed,
				fmt.Sprintf("%s %s did not run (%s): %s", pointField(i, n), pointName(s.points[i]), f.reason, f.message))
			return ctrl.Result{}, nil
		}
	}
	var keys []bisect.Key
	for _, k := range state.samples[0].Keys() {
		if s.judge(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		p.end(metav1.ConditionFalse, dbbenchv1alpha1.BisectionReasonInvalidSpec,
			fmt.Sprintf("judge: no measured step@threads is judged (measured: %s)", keyList(state.samples[0].Keys())))
		return ctrl.Result{}, nil
	}
	ep := bisect.CheckEndpoints(state.samples[0], state.samples[n-1], keys, s.rule)
	st.Endpoints = &dbbenchv1alpha1.BisectionEndpoints{
		Reproduced: ep.Check == bisect.Reproduced, Key: ep.Worst.Key.String(), Ratio: fmtRatio(ep.Worst.Ratio), Regressed: keyStrings(ep.Regressed),
	}
	ratioMsg := fmt.Sprintf("bad/good = %s at %s (minMagnitudePercent %g, maxPValue %g, %d and %d runs)",
		st.Endpoints.Ratio, st.Endpoints.Key, s.rule.Magnitude*100, s.rule.MaxPValue, state.runs[0], state.runs[n-1])
	if running && ep.Check != bisect.Reproduced {
		// A re-measure of the endpoints is running.
		searching()
		return ctrl.Result{}, nil
	}
	switch ep.Check {
	case bisect.NotReproduced:
		p.end(metav1.ConditionFalse, dbbenchv1alpha1.BisectionReasonEndpointsNotReproduced, "The bad point is not slower than the good one: "+ratioMsg)
		return ctrl.Result{}, nil
	case bisect.Unsure:
		if state.measured[0] >= bisect.DefaultMaxMeasurements || !p.fits(2) {
			p.end(metav1.ConditionFalse, dbbenchv1alpha1.BisectionReasonEndpointsNotReproduced, "The bad point is not significantly slower than the good one: "+ratioMsg)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, p.startRound(ctx, s, next, []int{0, n - 1})
	}
	if last := rounds[len(rounds)-1]; !running && len(last.points) > 0 && last.points[0] == 0 {
		// The round that just finished measured the endpoints.
		p.event(false, EventEndpointsChecked, "Bisect", "Reproduced the regression: "+ratioMsg)
	}

	points := make([]bisect.Point, n)
	judgements := make([]*bisect.Judgement, n)
	for i := range points {
		points[i].Measured = state.measured[i]
		switch {
		case i == 0:
			points[i].Verdict = bisect.Good
		case i == n-1:
			points[i].Verdict = bisect.Bad
		case state.failed[i] != nil:
			points[i].Verdict = bisect.Failed
		case state.measured[i] > 0:
			j := bisect.Judge(state.samples[0], state.samples[n-1], state.samples[i], ep.Regressed, s.rule)
			judgements[i] = &j
			points[i].Verdict = j.Verdict
		}
	}
	endJ := bisect.Judge(state.samples[0], state.samples[n-1], state.samples[n-1], ep.Regressed, s.rule)
	judgements[n-1] = &endJ
	verdicts := make([]bisect.Verdict, n)
	for i := range points {
		verdicts[i] = points[i].Verdict
	}
	p.recordPoints(s, state, verdicts, judgements)
	if running {
		if plan, err := bisect.Next(points, bisect.Options{Parallelism: 1}); err == nil {
			p.recordChanges(s, plan.Changes)
		}
		searching()
		return ctrl.Result{}, nil
	}

	k := int(p.bis.Spec.Parallelism)
	if free := int(p.bis.Spec.MaxCells-st.CellsUsed) / int(max(p.bis.Spec.Repeats, 1)); free < k {
		k = free
	}
	plan, err := bisect.Next(points, bisect.Options{Parallelism: max(k, 1)})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("planning round %d: %w", next, err)
	}
	p.recordChanges(s, plan.Changes)
	if !plan.Done() {
		if k < 1 {
			p.end(metav1.ConditionFalse, dbbenchv1alpha1.BisectionReasonBudgetExhausted,
				fmt.Sprintf("maxCells %d would be exceeded by round %d; the change is between %s", p.bis.Spec.MaxCells, next, changeText(st.Changes[0])))
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, p.startRound(ctx, s, next, plan.Probes)
	}
	first := plan.Changes[0]
	more := ""
	if len(plan.Changes) > 1 {
		var others []string
		for _, c := range st.Changes[1:] {
			others = append(others, changeText(c))
		}
		more = fmt.Sprintf("; the results are not monotonic, further changes between %s", strings.Join(others, "; "))
	}
	if !first.Localized() {
		p.end(metav1.ConditionFalse, dbbenchv1alpha1.BisectionReasonNarrowed,
			fmt.Sprintf("The change is between %s: the points between could not be judged%s", changeText(st.Changes[0]), more))
		return ctrl.Result{}, nil
	}
	st.FirstBad = pointName(s.points[first.FirstBad])
	fb := st.Points[first.FirstBad]
	p.end(metav1.ConditionTrue, dbbenchv1alpha1.BisectionReasonLocalized,
		fmt.Sprintf("%s is the first bad point (after %s): ratio to good %s at %s%s",
			st.FirstBad, pointName(s.points[first.LastGood]), fb.Ratio, fb.Key, more))
	return ctrl.Result{}, nil
}

// fits reports whether a round of npoints fits the remaining budget.
func (p *bisectionPass) fits(npoints int) bool {
	return p.bis.Status.CellsUsed+int32(npoints)*max(p.bis.Spec.Repeats, 1) <= p.bis.Spec.MaxCells
}

// startRound creates round index and records it as running.
func (p *bisectionPass) startRound(ctx context.Context, s *bisectionSetup, index int, points []int) error {
	run, err := p.createRound(ctx, s, index, points)
	if err != nil {
		return err
	}
	st := &p.bis.Status
	rs := dbbenchv1alpha1.BisectionRound{Index: int32(index), Run: run.Name, Cells: int32(len(points)) * max(p.bis.Spec.Repeats, 1)}
	for _, i := range points {
		rs.Points = append(rs.Points, int32(i))
	}
	st.Rounds = append(st.Rounds, rs)
	st.RoundCount = int32(len(st.Rounds))
	st.CellsUsed += rs.Cells
	for _, i := range points {
		st.Points[i].Measured++
	}
	p.setLocalized(metav1.ConditionUnknown, dbbenchv1alpha1.BisectionReasonSearching,
		fmt.Sprintf("Round %d of %d cells is running; %d cells so far", index, rs.Cells, st.CellsUsed))
	return nil
}

// recordPoints writes the points' status from the state and, when known,
// their verdicts and judgements.
func (p *bisectionPass) recordPoints(s *bisectionSetup, state searchState, verdicts []bisect.Verdict, js []*bisect.Judgement) {
	n := len(s.points)
	out := make([]dbbenchv1alpha1.BisectionPointStatus, n)
	for i, pt := range s.points {
		ps := dbbenchv1alpha1.BisectionPointStatus{
			Index: int32(i), Name: pointName(pt), Verdict: dbbenchv1alpha1.VerdictUntested,
			Runs: int32(state.runs[i]), Measured: int32(state.started[i]),
		}
		if f := state.failed[i]; f != nil {
			ps.Verdict, ps.Reason, ps.Message = dbbenchv1alpha1.VerdictFailed, f.reason, f.message
		}
		if verdicts != nil && verdicts[i] != bisect.Untested {
			ps.Verdict = dbbenchv1alpha1.BisectionVerdict(verdicts[i])
		}
		if js != nil && js[i] != nil {
			ps.Key, ps.Ratio = js[i].Key.String(), fmtRatio(js[i].Ratio)
			if !math.IsNaN(js[i].Low) {
				ps.RatioLow, ps.RatioHigh = fmtRatio(js[i].Low), fmtRatio(js[i].High)
			}
		}
		if i == 0 && state.runs[0] > 0 {
			ps.Ratio = "1"
		}
		out[i] = ps
	}
	p.bis.Status.Points = out
}

func (p *bisectionPass) recordChanges(s *bisectionSetup, changes []bisect.Change) {
	st := &p.bis.Status
	st.Changes = nil
	for _, c := range changes {
		bc := dbbenchv1alpha1.BisectionChange{LastGood: pointName(s.points[c.LastGood]), FirstBad: pointName(s.points[c.FirstBad])}
		for _, i := range c.Between {
			bc.Between = append(bc.Between, pointName(s.points[i]))
		}
		st.Changes = append(st.Changes, bc)
	}
}

func changeText(c dbbenchv1alpha1.BisectionChange) string {
	s := fmt.Sprintf("%s (good) and %s (bad)", c.LastGood, c.FirstBad)
	if len(c.Between) > 0 {
		s += fmt.Sprintf(", undecided: %s", strings.Join(c.Between, ", "))
	}
	return s
}

// fmtRatio prints a ratio with 4 significant digits ("" when undefined).
func fmtRatio(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return ""
	}
	return strconv.FormatFloat(r, 'g', 4, 64)
}

func keyStrings(keys []bisect.Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.String()
	}
	return out
}

func keyList(keys []bisect.Key) string {
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keyStrings(keys), ", ")
}
