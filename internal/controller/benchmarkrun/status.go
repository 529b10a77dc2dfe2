package benchmarkrun

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// summarize derives the printable summary (phase, progress, current step and
// the Progressing condition) from the cells.
func (p *runPass) summarize() {
	st := &p.run.Status
	done, running, pending, first := countCellPhases(st.Cells)
	st.CurrentStep = ""
	if first >= 0 {
		st.CurrentStep = st.Cells[first].CurrentStep
	}
	st.Progress = fmt.Sprintf("%d/%d", done, len(st.Cells))
	if st.Finished() {
		return
	}
	if preflightRunning(st) {
		st.Phase = dbbenchv1alpha1.RunRunning
		st.CurrentStep = preflightStep
		p.setCondition(dbbenchv1alpha1.ConditionProgressing, metav1.ConditionTrue, dbbenchv1alpha1.ReasonPreflightRunning, preflightSummary(st.Preflight))
		return
	}
	st.Phase = dbbenchv1alpha1.RunRunning
	if running == 0 && done == 0 {
		st.Phase = dbbenchv1alpha1.RunPending
	}
	p.setCondition(dbbenchv1alpha1.ConditionProgressing, metav1.ConditionTrue, dbbenchv1alpha1.ReasonCellsRunning,
		fmt.Sprintf("%d running, %d pending, %d finished", running, pending, done))
}

// countCellPhases counts cells (or pre-flight pairs) by phase: ended, started
// and not yet ended, pending. first is the index of the first started one,
// -1 when none is.
func countCellPhases(cells []dbbenchv1alpha1.CellStatus) (done, running, pending, first int) {
	first = -1
	for i, cs := range cells {
		switch cs.Phase {
		case dbbenchv1alpha1.CellSucceeded, dbbenchv1alpha1.CellFailed:
			done++
		case dbbenchv1alpha1.CellPending:
			pending++
		default:
			running++
			if first < 0 {
				first = i
			}
		}
	}
	return done, running, pending, first
}

// finish sets the terminal conditions. reason, when set, fails the run as a
// whole (an invalid spec); otherwise the outcome follows from the cells.
func (p *runPass) finish(invalid string) {
	st := &p.run.Status
	var failed []string
	for _, cs := range st.Cells {
		if cs.Phase == dbbenchv1alpha1.CellFailed {
			failed = append(failed, cs.Name)
		}
	}
	if st.CompletionTime == nil {
		st.CompletionTime = &metav1.Time{Time: p.now}
	}
	st.CurrentStep = ""
	p.setCondition(dbbenchv1alpha1.ConditionProgressing, metav1.ConditionFalse, dbbenchv1alpha1.ReasonFinished, "No cells are running")
	switch {
	case invalid != "":
		p.finishFailed(dbbenchv1alpha1.ReasonInvalidSpec, invalid)
	case len(failed) > 0:
		msg := fmt.Sprintf("%d of %d cells failed: %s", len(failed), len(st.Cells), strings.Join(failed, ", "))
		st.Phase = dbbenchv1alpha1.RunFailed
		p.setCondition(dbbenchv1alpha1.ConditionFailed, metav1.ConditionTrue, dbbenchv1alpha1.ReasonCellsFailed, msg)
		p.setCondition(dbbenchv1alpha1.ConditionSucceeded, metav1.ConditionFalse, dbbenchv1alpha1.ReasonCellsFailed, msg)
		p.Event(true, EventRunFailed, "Finish", msg)
	default:
		msg := fmt.Sprintf("All %d cells succeeded", len(st.Cells))
		if n, cells := invalidResults(st.Cells); n > 0 {
			msg += fmt.Sprintf("; %d step result(s) of %d cell(s) invalid, flagged and left out of verdicts (status.cells[].quality)", n, cells)
		}
		st.Phase = dbbenchv1alpha1.RunSucceeded
		p.setCondition(dbbenchv1alpha1.ConditionSucceeded, metav1.ConditionTrue, dbbenchv1alpha1.ReasonAllCellsSucceeded, msg)
		p.setCondition(dbbenchv1alpha1.ConditionFailed, metav1.ConditionFalse, dbbenchv1alpha1.ReasonAllCellsSucceeded, msg)
		p.Event(false, EventRunSucceeded, "Finish", msg)
	}
}

// invalidResults counts the invalid step results of cells and the cells
// that have any.
func invalidResults(cells []dbbenchv1alpha1.CellStatus) (n, withInvalid int) {
	for _, cs := range cells {
		if q := cs.Quality; q != nil && q.Invalid > 0 {
			n += int(q.Invalid)
			withInvalid++
		}
	}
	return n, withInvalid
}

// finishFailed fails the run as a whole, before or without its cells: an
// invalid spec (no event: the spec is the user's to fix, and the condition
// says it) or a failed pre-flight (with a Warning event).
func (p *runPass) finishFailed(reason, msg string) {
	st := &p.run.Status
	if st.CompletionTime == nil {
		st.CompletionTime = &metav1.Time{Time: p.now}
	}
	st.CurrentStep = ""
	st.Phase = dbbenchv1alpha1.RunFailed
	p.setCondition(dbbenchv1alpha1.ConditionProgressing, metav1.ConditionFalse, dbbenchv1alpha1.ReasonFinished, "No cells are running")
	p.setCondition(dbbenchv1alpha1.ConditionFailed, metav1.ConditionTrue, reason, msg)
	p.setCondition(dbbenchv1alpha1.ConditionSucceeded, metav1.ConditionFalse, reason, msg)
	if reason != dbbenchv1alpha1.ReasonInvalidSpec {
		p.Event(true, EventRunFailed, "Finish", msg)
	}
}

// preflightStep is status.currentStep (the Step column) during the
// pre-flight.
const preflightStep = "pre-flight"

func (p *runPass) setCondition(t string, s metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&p.run.Status.Conditions, metav1.Condition{
		Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: p.run.Generation,
	})
}

func allDone(st *dbbenchv1alpha1.BenchmarkRunStatus) bool {
	for _, cs := range st.Cells {
		if cs.Phase != dbbenchv1alpha1.CellSucceeded && cs.Phase != dbbenchv1alpha1.CellFailed {
			return false
		}
	}
	return len(st.Cells) > 0
}
