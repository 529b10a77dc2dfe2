package benchmarkbisection

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/bisect"
)

// bisectionReasons are the Localized condition's reasons of the search's
// outcomes; a search that judged nothing is an invalid spec.
var bisectionReasons = map[bisect.Outcome]string{
	bisect.OutcomeLocalized:              dbbenchv1alpha1.BisectionReasonLocalized,
	bisect.OutcomeEndpointsNotReproduced: dbbenchv1alpha1.BisectionReasonEndpointsNotReproduced,
	bisect.OutcomeEndpointFailed:         dbbenchv1alpha1.BisectionReasonEndpointFailed,
	bisect.OutcomeNarrowed:               dbbenchv1alpha1.BisectionReasonNarrowed,
	bisect.OutcomeBudgetExhausted:        dbbenchv1alpha1.BisectionReasonBudgetExhausted,
	bisect.OutcomeAmbiguous:              dbbenchv1alpha1.BisectionReasonAmbiguous,
	bisect.OutcomeEnvironmentUnstable:    dbbenchv1alpha1.BisectionReasonEnvironmentUnstable,
	bisect.OutcomeNothingJudged:          dbbenchv1alpha1.BisectionReasonInvalidSpec,
	bisect.OutcomeRoundFailed:            dbbenchv1alpha1.BisectionReasonRoundFailed,
}

// reconcile is one pass of the search: read the rounds, recompute the
// state (bisect.Assess), decide (bisect.Decide), carry the decision out.
// Everything the search knows is recomputed from the rounds' runs, so a
// lost status write loses nothing.
func (p *bisectionPass) Reconcile(ctx context.Context) (ctrl.Result, error) {
	st := &p.bis.Status
	if bisectionFinished(p.bis) {
		// The status that ended the search is written: a localized
		// build is explained, then the summary and report go to the
		// object store, if the runs use one.
		if !explained(p.bis) {
			if done, err := p.explain(ctx); !done || err != nil {
				return ctrl.Result{}, err
			}
		}
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
	st.Rule = &s.apiRule
	rounds, err := p.listRounds(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	// An explain round comes after the search; it is not one of its
	// rounds.
	rounds = slices.DeleteFunc(rounds, func(r round) bool { return r.kind == bisect.RoundKind(dbbenchv1alpha1.RoundExplain) })
	in := make([]bisect.Round, len(rounds))
	for i, rd := range rounds {
		if in[i], err = p.readRound(ctx, s, rd); err != nil {
			return ctrl.Result{}, err
		}
	}
	state := bisect.Assess(in, len(s.points), s.rule, s.judge)
	p.recordState(s, rounds, in, state)
	d := bisect.Decide(state, s.limits)
	switch d.Action {
	case bisect.Wait:
		p.searching(state)
	case bisect.Measure:
		p.announce(s, rounds, state)
		return ctrl.Result{}, p.startRound(ctx, s, len(rounds), d.Round)
	case bisect.Stop:
		p.announce(s, rounds, state)
		p.stop(s, state, d)
		return ctrl.Result{}, p.uploadPending(ctx)
	}
	return ctrl.Result{}, nil
}

// uploadPending marks, in the status that ends the search, an upload still
// to come (the explanation first, if any): the terminal status says what
// is pending rather than gaining a condition later.
func (p *bisectionPass) uploadPending(ctx context.Context) error {
	o, _, err := p.bisectionOutput(ctx)
	if err != nil || o == nil {
		return err
	}
	p.setUploaded(metav1.ConditionFalse, dbbenchv1alpha1.ReasonUploadPending, "The summary and the report go to the object store once the search and its explanation have ended")
	return nil
}

// searching says which round is running.
func (p *bisectionPass) searching(state bisect.State) {
	st := &p.bis.Status
	last := st.Rounds[len(st.Rounds)-1]
	p.setLocalized(metav1.ConditionUnknown, dbbenchv1alpha1.BisectionReasonSearching,
		fmt.Sprintf("Round %d (%s) of %d cells is running; %d cells so far", last.Index, strings.ToLower(string(last.Kind)), last.Cells, state.CellsUsed))
}

// announce emits the events of what the last finished round showed: the
// endpoints reproduced, the environment changed.
func (p *bisectionPass) announce(s *bisectionSetup, rounds []round, state bisect.State) {
	if len(rounds) == 0 {
		return
	}
	last := len(rounds) - 1
	if rounds[last].kind == bisect.RoundEndpoints && state.Endpoints.Check == bisect.Reproduced {
		p.Event(false, EventEndpointsChecked, "Bisect", "Reproduced the regression: "+endpointText(s, state))
	}
	for _, sh := range state.Shifts {
		if sh.Round == last {
			p.Event(!sh.Held, EventEnvironmentChanged, "Bisect", shiftText(sh))
		}
	}
}

// stop ends the search with the outcome's reason and message.
func (p *bisectionPass) stop(s *bisectionSetup, state bisect.State, d bisect.Decision) {
	st := &p.bis.Status
	msg := outcomeMessage(s, state, d, p.bis.Spec.CellBudget())
	if d.Outcome != bisect.OutcomeLocalized {
		p.end(metav1.ConditionFalse, bisectionReasons[d.Outcome], msg)
		return
	}
	st.FirstBad, st.LastGood = framework.PointName(s.points[d.Change.FirstBad]), framework.PointName(s.points[d.Change.LastGood])
	st.Confidence = fmtProbability(state.Points[d.Change.FirstBad].Probability)
	p.end(metav1.ConditionTrue, dbbenchv1alpha1.BisectionReasonLocalized, msg)
	// What to explain: the key the posterior named the build on.
	k := state.PosteriorKey
	st.Explanation = &dbbenchv1alpha1.BisectionExplanation{Step: k.Step, Threads: int32(k.Threads)}
	p.setExplained(metav1.ConditionUnknown, dbbenchv1alpha1.BisectionReasonExplaining,
		fmt.Sprintf("Comparing %s with %s at %s@%d", st.FirstBad, st.LastGood, k.Step, k.Threads))
}

// outcomeMessage is the Localized condition's message for a search that
// ended: what was found, with the figures behind it.
func outcomeMessage(s *bisectionSetup, state bisect.State, d bisect.Decision, maxCells int32) string {
	name := func(i int) string { return framework.PointName(s.points[i]) }
	more := ""
	if len(state.Changes) > 1 {
		others := make([]string, 0, len(state.Changes)-1)
		for _, c := range state.Changes[1:] {
			others = append(others, changeText(changeStatus(s, c)))
		}
		more = fmt.Sprintf("; the results are not monotonic, further changes between %s", strings.Join(others, "; "))
	}
	var between string
	if d.Change != nil {
		between = changeText(changeStatus(s, *d.Change))
	}
	switch d.Outcome {
	case bisect.OutcomeLocalized:
		fb := state.Points[d.Change.FirstBad]
		ratio := ""
		if fb.Judgement != nil {
			ratio = fmt.Sprintf(": ratio to good %s at %s", fmtRatio(fb.Judgement.Ratio), fb.Judgement.Key)
		}
		return fmt.Sprintf("%s is the first bad point (after %s) with probability %s%s%s",
			name(d.Change.FirstBad), name(d.Change.LastGood), fmtProbability(fb.Probability), ratio, more)
	case bisect.OutcomeEndpointsNotReproduced:
		return "The bad point is not worse than the good one by the rule: " + endpointText(s, state)
	case bisect.OutcomeEndpointFailed:
		e := state.EndpointFailed
		f := state.Points[e].Failure
		why := "no cell succeeded"
		if f != nil {
			why = fmt.Sprintf("%s: %s", f.Reason, f.Message)
		}
		return fmt.Sprintf("%s %s did not run (%s)", pointField(e, len(s.points)), name(e), why)
	case bisect.OutcomeNarrowed:
		return fmt.Sprintf("The change is between %s: the points between could not be judged%s", between, more)
	case bisect.OutcomeBudgetExhausted:
		return fmt.Sprintf("maxCells %d would be exceeded by the next round; the change is between %s", maxCells, between)
	case bisect.OutcomeAmbiguous:
		var parts []string
		for _, i := range d.Likely {
			parts = append(parts, fmt.Sprintf("%s (%s)", name(i), fmtProbability(state.Points[i].Probability)))
		}
		return fmt.Sprintf("Ambiguous between %s: no build reached probability %g within the budget (the change is between %s)",
			strings.Join(parts, " and "), state.Target, between)
	case bisect.OutcomeEnvironmentUnstable:
		return fmt.Sprintf(
			"The regression changed its size between rounds %d times (status.environment): the environment is too unstable to bisect in",
			state.Epochs-1,
		)
	case bisect.OutcomeNothingJudged:
		return "judge: no judged step@threads was measured on both endpoints"
	case bisect.OutcomeRoundFailed:
		return fmt.Sprintf("Round %d failed as a whole: %s", state.FailedWhole, state.FailedWholeMessage)
	}
	return string(d.Outcome)
}

// endpointText gives the endpoint figures and the rule.
func endpointText(s *bisectionSetup, state bisect.State) string {
	w := state.Endpoints.Worst
	runs := func(i int) int { return state.Points[i].Runs }
	return fmt.Sprintf("bad/good = %s at %s (minMagnitudePercent %g, magnitudeRule %s, maxPValue %g, %d and %d runs)",
		fmtRatio(w.Ratio), w.Key, s.rule.Magnitude*100, s.apiRule.MagnitudeRule, s.rule.MaxPValue, runs(0), runs(len(s.points)-1))
}

// shiftText describes an environment change.
func shiftText(sh bisect.Shift) string {
	if sh.Held {
		return fmt.Sprintf(
			"Round %d measured every build %+.0f%% at %s: the environment changed; the comparisons are within rounds and the regression held its size",
			sh.Round,
			sh.Percent,
			sh.Key,
		)
	}
	return fmt.Sprintf(
		"Round %d: the regression changed its size (bad/good %s before, %s in the round, at %s): the environment changed; the rounds before are set aside and the endpoints measured again",
		sh.Round,
		fmtRatio(sh.RatioBefore),
		fmtRatio(sh.RatioIn),
		sh.Key,
	)
}

// startRound creates round index and records it as running.
func (p *bisectionPass) startRound(ctx context.Context, s *bisectionSetup, index int, r bisect.Round) error {
	run, err := p.createRound(ctx, s, index, r)
	if err != nil {
		return err
	}
	st := &p.bis.Status
	rs := roundStatus(index, run.Name, r)
	st.Rounds = append(st.Rounds, rs)
	st.RoundCount = int32(len(st.Rounds))
	st.CellsUsed += rs.Cells
	for _, i := range r.Points {
		st.Points[i].Measured++
	}
	p.setLocalized(metav1.ConditionUnknown, dbbenchv1alpha1.BisectionReasonSearching,
		fmt.Sprintf("Round %d (%s) of %d cells is running; %d cells so far", index, strings.ToLower(string(r.Kind)), rs.Cells, st.CellsUsed))
	return nil
}

func roundStatus(index int, run string, r bisect.Round) dbbenchv1alpha1.BisectionRound {
	rs := dbbenchv1alpha1.BisectionRound{
		Index:          int32(index),
		Run:            run,
		Kind:           dbbenchv1alpha1.BisectionRoundKind(r.Kind),
		Cells:          int32(r.Cells),
		Finished:       r.Finished,
		InvalidLeftOut: int32(r.Invalid),
	}
	for _, i := range r.Points {
		rs.Points = append(rs.Points, int32(i))
	}
	for _, i := range r.Refs {
		rs.References = append(rs.References, int32(i))
	}
	return rs
}

// recordState writes the search state into the status: the rounds, the
// points with their verdicts, figures and probabilities, the endpoints,
// the changes, the environment and the confidence.
func (p *bisectionPass) recordState(s *bisectionSetup, rounds []round, in []bisect.Round, state bisect.State) {
	st := &p.bis.Status
	st.Rounds = nil
	for i, rd := range rounds {
		st.Rounds = append(st.Rounds, roundStatus(rd.index, rd.run.Name, in[i]))
	}
	st.RoundCount, st.CellsUsed, st.Epoch = int32(len(rounds)), int32(state.CellsUsed), int32(state.Epoch)
	st.Points = make([]dbbenchv1alpha1.BisectionPointStatus, len(s.points))
	for i, pt := range s.points {
		ps := state.Points[i]
		out := dbbenchv1alpha1.BisectionPointStatus{
			Index: int32(i), Name: framework.PointName(pt), Verdict: dbbenchv1alpha1.VerdictUntested, Runs: int32(ps.Runs),
			Probability: fmtProbability(ps.Probability),
		}
		for _, rd := range rounds {
			for _, q := range rd.points {
				if q == i {
					out.Measured++
				}
			}
		}
		if ps.Verdict != bisect.Untested {
			out.Verdict = dbbenchv1alpha1.BisectionVerdict(ps.Verdict)
		}
		if f := ps.Failure; f != nil {
			out.Reason, out.Message = dbbenchv1alpha1.FailureReason(f.Reason), f.Message
		}
		if j := ps.Judgement; j != nil {
			out.Key, out.Ratio = j.Key.String(), fmtRatio(j.Ratio)
			if !math.IsNaN(j.Low) {
				out.RatioLow, out.RatioHigh = fmtRatio(j.Low), fmtRatio(j.High)
			}
		}
		st.Points[i] = out
	}
	st.Endpoints = nil
	if len(state.Keys) > 0 {
		w := state.Endpoints.Worst
		st.Endpoints = &dbbenchv1alpha1.BisectionEndpoints{
			Reproduced: state.Endpoints.Check == bisect.Reproduced, Key: w.Key.String(), Ratio: fmtRatio(w.Ratio),
			Regressed: keyStrings(state.Endpoints.Regressed),
		}
	}
	st.Changes = nil
	for _, c := range state.Changes {
		st.Changes = append(st.Changes, changeStatus(s, c))
	}
	st.Environment = nil
	for _, sh := range state.Shifts {
		ec := dbbenchv1alpha1.BisectionEnvironmentChange{Round: int32(sh.Round), Key: sh.Key.String(), Held: sh.Held,
			RatioBefore: fmtRatio(sh.RatioBefore), RatioIn: fmtRatio(sh.RatioIn)}
		if !math.IsNaN(sh.Percent) {
			ec.ShiftPercent = strconv.FormatFloat(sh.Percent, 'f', 0, 64)
		}
		st.Environment = append(st.Environment, ec)
	}
	st.Confidence, st.Likely = "", nil
	if state.Named > 0 {
		st.Confidence = fmtProbability(state.Confidence)
	}
	for _, i := range bisect.LikelyPoints(state) {
		st.Likely = append(st.Likely, framework.PointName(s.points[i]))
	}
}

func changeStatus(s *bisectionSetup, c bisect.Change) dbbenchv1alpha1.BisectionChange {
	bc := dbbenchv1alpha1.BisectionChange{LastGood: framework.PointName(s.points[c.LastGood]), FirstBad: framework.PointName(s.points[c.FirstBad])}
	for _, i := range c.Between {
		bc.Between = append(bc.Between, framework.PointName(s.points[i]))
	}
	return bc
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

// fmtProbability prints a probability with 3 decimals ("" when unknown
// or below 0.001).
func fmtProbability(p float64) string {
	if math.IsNaN(p) || p < 0.0005 {
		return ""
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

func keyStrings(keys []bisect.Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.String()
	}
	return out
}
