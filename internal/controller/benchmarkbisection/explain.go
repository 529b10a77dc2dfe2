package benchmarkbisection

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/bisect"
	"github.com/dbbench/dbbench/pkg/explain"
	"github.com/dbbench/dbbench/pkg/results"
)

// explainTop is how many counters and functions status.explanation keeps;
// the report has the rest.
const explainTop = 5

// explained reports whether a finished bisection has nothing more to
// explain: it did not localize, or its Explained condition has a verdict.
func explained(bis *dbbenchv1alpha1.BenchmarkBisection) bool {
	if !meta.IsStatusConditionTrue(bis.Status.Conditions, dbbenchv1alpha1.BisectionConditionLocalized) {
		return true
	}
	c := meta.FindStatusCondition(bis.Status.Conditions, dbbenchv1alpha1.BisectionConditionExplained)
	return c != nil && c.Status != metav1.ConditionUnknown
}

// setExplained sets the Explained condition and reports whether it changed.
func (p *bisectionPass) setExplained(status metav1.ConditionStatus, reason, msg string) bool {
	return framework.SetChangedCondition(&p.bis.Status.Conditions, metav1.Condition{
		Type: dbbenchv1alpha1.BisectionConditionExplained, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: p.bis.Generation, LastTransitionTime: metav1.Time{Time: p.now},
	})
}

// explain attaches the explanation of a localized bisection: the engine
// counters per operation of the first bad build against the last good
// one, from every cell the search measured of them, and with
// spec.explain.profile the functions whose share of the server's CPU moved,
// from an explain round that profiles both. It returns whether the
// explanation is done (the upload may follow).
func (p *bisectionPass) explain(ctx context.Context) (bool, error) {
	st := &p.bis.Status
	ex := st.Explanation
	s, err := p.setup(ctx)
	if err != nil || ex == nil {
		why := "the search recorded no step to explain"
		if err != nil {
			why = err.Error()
		}
		p.setExplained(metav1.ConditionFalse, dbbenchv1alpha1.BisectionReasonNothingToCompare, why)
		return true, nil
	}
	lg := slices.IndexFunc(s.points, func(pt dbbenchv1alpha1.BisectionPoint) bool { return framework.PointName(pt) == st.LastGood })
	fb := slices.IndexFunc(s.points, func(pt dbbenchv1alpha1.BisectionPoint) bool { return framework.PointName(pt) == st.FirstBad })
	if lg < 0 || fb < 0 {
		p.setExplained(metav1.ConditionFalse, dbbenchv1alpha1.BisectionReasonNothingToCompare,
			fmt.Sprintf("lastGood %q or firstBad %q is not a point of the spec", st.LastGood, st.FirstBad))
		return true, nil
	}
	rounds, err := p.listRounds(ctx)
	if err != nil {
		return false, err
	}
	if p.bis.Spec.Explain.Profile {
		i := slices.IndexFunc(rounds, func(r round) bool { return r.kind == bisect.RoundKind(dbbenchv1alpha1.RoundExplain) })
		if i < 0 {
			return false, p.startExplainRound(ctx, s, len(rounds), lg, fb, ex)
		}
		rd := rounds[i]
		if !runFinished(rd.run) {
			return false, nil
		}
		if msg, whole := runFailedWhole(rd.run); whole {
			p.endExplain(metav1.ConditionFalse, dbbenchv1alpha1.BisectionReasonExplainRoundFailed, fmt.Sprintf("Explain round %d failed as a whole: %s", rd.index, msg))
			return true, nil
		}
		idx := int32(rd.index)
		ex.Round = &idx
	}
	good, err := p.pointDocuments(ctx, rounds, lg)
	if err != nil {
		return false, err
	}
	bad, err := p.pointDocuments(ctx, rounds, fb)
	if err != nil {
		return false, err
	}
	e, err := explain.Explain(good, bad, ex.Step, int(ex.Threads), explainTop)
	if e != nil {
		fillExplanation(ex, e)
	}
	if errors.Is(err, explain.ErrNothing) {
		p.endExplain(metav1.ConditionFalse, dbbenchv1alpha1.BisectionReasonNothingToCompare,
			fmt.Sprintf("%s against %s at %s@%d: %s", st.FirstBad, st.LastGood, ex.Step, ex.Threads, strings.Join(ex.Notes, "; ")))
		return true, nil
	}
	if err != nil {
		return false, err
	}
	p.endExplain(metav1.ConditionTrue, dbbenchv1alpha1.BisectionReasonExplained, explanationText(st.FirstBad, st.LastGood, ex))
	return true, nil
}

// endExplain sets the Explained verdict and its event.
func (p *bisectionPass) endExplain(status metav1.ConditionStatus, reason, msg string) {
	if p.setExplained(status, reason, msg) {
		p.Event(status != metav1.ConditionTrue, EventBisectionExplained, "Explain", msg)
	}
}

// startExplainRound creates the explain round: the last good and the first
// bad build once each, the judged step alone, with a profiled pass of it.
func (p *bisectionPass) startExplainRound(ctx context.Context, s *bisectionSetup, index, lg, fb int, ex *dbbenchv1alpha1.BisectionExplanation) error {
	prof := &dbbenchv1alpha1.ProfileSpec{Steps: []string{ex.Step}, Threads: ex.Threads, Seconds: p.bis.Spec.Explain.ProfileSeconds(),
		FrequencyHz: dbbenchv1alpha1.DefaultProfileFrequencyHz}
	es := *s
	es.base = *s.base.DeepCopy()
	es.base.Workload.Steps = []string{ex.Step}
	es.base.Workload.Threads = []int32{ex.Threads}
	es.base.Workload.Repeats = 1
	es.base.Workload.Profile = prof
	r := bisect.Round{Kind: bisect.RoundKind(dbbenchv1alpha1.RoundExplain), Points: []int{lg, fb}, Cells: 2}
	run, err := p.createRound(ctx, &es, index, r)
	if err != nil {
		return err
	}
	p.bis.Status.Rounds = append(p.bis.Status.Rounds, roundStatus(index, run.Name, r))
	p.bis.Status.RoundCount = int32(len(p.bis.Status.Rounds))
	p.setExplained(metav1.ConditionUnknown, dbbenchv1alpha1.BisectionReasonExplaining,
		fmt.Sprintf("Round %d profiles %s and %s at %s@%d", index, p.bis.Status.LastGood, p.bis.Status.FirstBad, ex.Step, ex.Threads))
	return nil
}

// pointDocuments are the results documents of every succeeded cell of
// point i in the rounds.
func (p *bisectionPass) pointDocuments(ctx context.Context, rounds []round, i int) ([]*results.Document, error) {
	var out []*results.Document
	for _, rd := range rounds {
		if !slices.Contains(rd.points, i) {
			continue
		}
		for _, cs := range rd.run.Status.Cells {
			if cs.Database != pointDatabase(i) || cs.Phase != dbbenchv1alpha1.CellSucceeded || cs.ResultConfigMap == "" {
				continue
			}
			raw, err := p.configMapKey(ctx, cs.ResultConfigMap, agentapi.ResultKeyDocument)
			if err != nil {
				return nil, err
			}
			if raw == "" {
				continue
			}
			doc, err := results.Unmarshal([]byte(raw))
			if err != nil {
				p.log.Info("Skipped an unreadable results document", "run", rd.run.Name, "cell", cs.Name, "error", err.Error())
				continue
			}
			out = append(out, doc)
		}
	}
	return out, nil
}

// fillExplanation writes the explanation's figures into the status.
func fillExplanation(ex *dbbenchv1alpha1.BisectionExplanation, e *explain.Explanation) {
	ex.Counters, ex.Functions, ex.Notes = nil, nil, e.Notes
	for _, c := range e.Counters {
		ratio := "inf"
		if !math.IsInf(c.Ratio, 1) {
			ratio = strconv.FormatFloat(c.Ratio, 'g', 3, 64)
		}
		ex.Counters = append(ex.Counters, dbbenchv1alpha1.ExplainedCounter{Name: c.Name,
			LastGood: strconv.FormatFloat(c.Good, 'g', 4, 64), FirstBad: strconv.FormatFloat(c.Bad, 'g', 4, 64), Ratio: ratio})
	}
	for _, f := range e.Functions {
		ex.Functions = append(ex.Functions, dbbenchv1alpha1.ExplainedFunction{Function: f.Function,
			LastGoodSelfPercent: strconv.FormatFloat(100*f.A.Self, 'f', 2, 64), FirstBadSelfPercent: strconv.FormatFloat(100*f.B.Self, 'f', 2, 64),
			ChangePoints: fmt.Sprintf("%+.2f", 100*f.SelfDelta)})
	}
	ex.ProfileThreads = int32(e.ProfileThreads)
}

// explanationText is the Explained condition's message: the top counter
// and function.
func explanationText(firstBad, lastGood string, ex *dbbenchv1alpha1.BisectionExplanation) string {
	var parts []string
	if len(ex.Counters) > 0 {
		c := ex.Counters[0]
		parts = append(parts, fmt.Sprintf("%s per operation ×%s (%s → %s)", c.Name, c.Ratio, c.LastGood, c.FirstBad))
	}
	if len(ex.Functions) > 0 {
		f := ex.Functions[0]
		parts = append(parts, fmt.Sprintf("%s %s points of the server's CPU (%s%% → %s%%)", f.Function, f.ChangePoints, f.LastGoodSelfPercent, f.FirstBadSelfPercent))
	}
	return fmt.Sprintf("%s against %s at %s@%d: %s", firstBad, lastGood, ex.Step, ex.Threads, strings.Join(parts, "; "))
}
