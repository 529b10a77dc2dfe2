package runverdict

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"fmt"
	"math"
	"strings"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/changepoint"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/triage"
)

// Input is what a finished run's verdict is judged from.
type Input struct {
	// Spec is the run's spec.regression; nil: the run is not judged.
	Spec *dbbenchv1alpha1.RegressionSpec
	// Suite and Run name the run's suite and the run.
	Suite, Run string
	// Current is the run's manifest, its noise floor recorded.
	Current *results.Manifest
	// History is the suite's earlier successful runs, the namespace's and
	// the object store's, in completion order.
	History []Run
	// Acks are the suite's acknowledgements the verdict honours.
	Acks []triage.Ack
	// StoreNote ends every message: what of the history could not be read.
	StoreNote string
}

// Outcome is a run's verdict as its status carries it: the controller
// copies it into the status in one place (and repeats a Regressed=True
// condition as a Warning event).
type Outcome struct {
	// Status is status.regression; nil when the verdict has none (no
	// history, a baseline not found, an analysis that failed).
	Status *dbbenchv1alpha1.RegressionStatus
	// Condition is the Regressed condition's status, reason and message;
	// its Type is empty when the run is not judged (Spec nil).
	Condition metav1.Condition
	// Announce: the condition reports a regression, which the controller
	// announces with a Warning event of the condition's reason.
	Announce bool
	// Cases are every judged (cell, step, threads, metric) with its result
	// (the verdict document's cases; its JUnit form's test cases); none
	// when nothing was compared.
	Cases []triage.VerdictCase
}

// Judge is the verdict of in: against the suite's change points, one run,
// or the run's baseline cell, as in.Spec says. It reads nothing and writes
// nothing: the caller gathered the history and the acks.
func Judge(in Input) Outcome {
	j := &judge{in: in}
	j.judgeRegression(in.Current, in.History, in.StoreNote)
	return j.out
}

// judge is one Judge call: its input and the outcome it builds.
type judge struct {
	in  Input
	out Outcome
}

// set sets the Regressed condition of the outcome.
func (j *judge) set(status metav1.ConditionStatus, reason, msg string) {
	j.out.Condition = metav1.Condition{Type: dbbenchv1alpha1.ConditionRegressed, Status: status, Reason: reason, Message: msg}
}

// MaxRegressedSteps bounds status.regression.regressed; the full list is in
// the run's results.
const MaxRegressedSteps = 50

// judgeRegression sets the Regressed condition and status.regression by
// comparing the finished run's manifest with the suite's earlier successful
// runs (the namespace's and the object store's): against its change
// points, against one run, or against the run's own baseline cell.
func (j *judge) judgeRegression(cur *results.Manifest, history []Run, storeNote string) {
	spec := j.in.Spec
	if spec == nil {
		return
	}
	switch spec.Against {
	case dbbenchv1alpha1.RegressAgainstChangePoints:
		j.judgeChangePoints(cur, history, storeNote)
		return
	case dbbenchv1alpha1.RegressAgainstBaseline:
		j.judgeAgainstBaseline(cur)
		return
	}
	var base *Run
	if spec.Against == dbbenchv1alpha1.RegressAgainstRun {
		for i := range history {
			if history[i].Name == spec.Run {
				base = &history[i]
			}
		}
		if base == nil {
			j.set(metav1.ConditionUnknown,
				dbbenchv1alpha1.ReasonBaselineNotFound,
				fmt.Sprintf(
					"regression.run %q is not a successful run of suite %s in this namespace or the object store%s",
					spec.Run,
					j.in.Suite,
					storeNote,
				),
			)
			return
		}
	} else if len(history) > 0 {
		base = &history[len(history)-1]
	}
	if base == nil {
		j.noHistory(storeNote)
		return
	}
	against := "run " + base.Name
	if base.FromStore {
		against += " (from the object store)"
	}
	// Between-run tests with the suite's noise floor (status.go).
	j.judgeAgainstRun(cur, base, history, against, storeNote)
}

// changePointSeries is the manifests change-point detection runs over (the
// suite's last regression.lastRuns runs, cur last) and their run names.
type changePointSeries struct {
	runs  []*results.Manifest
	names []string
}

// name is the run name of the series' i-th run, "" outside it.
func (s changePointSeries) name(i int) string {
	if i < 0 || i >= len(s.names) {
		return ""
	}
	return s.names[i]
}

// judgeChangePoints judges the run against change points over the suite's
// last runs: confirmed changes are reported, suspected ones (in this run
// only) noted, acknowledged ones shown and not reported.
func (j *judge) judgeChangePoints(cur *results.Manifest, history []Run, storeNote string) {
	spec := j.in.Spec
	n := spec.LastRunsOrDefault()
	if len(history) > n-1 {
		history = history[len(history)-(n-1):]
	}
	if len(history) == 0 {
		j.noHistory(storeNote)
		return
	}
	st := &dbbenchv1alpha1.RegressionStatus{}
	series := changePointSeries{runs: make([]*results.Manifest, 0, len(history)+1)}
	for _, h := range history {
		series.runs = append(series.runs, h.Manifest)
		series.names = append(series.names, h.Name)
		st.ComparedTo = append(st.ComparedTo, h.Name)
	}
	series.runs = append(series.runs, cur)
	series.names = append(series.names, j.in.Run)
	found, suspected, err := detectChanges(series.runs, spec)
	if err != nil {
		j.set(metav1.ConditionUnknown, dbbenchv1alpha1.ReasonAnalysisFailed, err.Error())
		return
	}
	for _, c := range cur.Cells {
		for _, byThreads := range c.QPS {
			st.ComparedPairs += int32(len(byThreads))
		}
	}
	for _, m := range series.runs {
		for i := range m.Cells {
			st.InvalidLeftOut += int32(m.Cells[i].InvalidCount())
		}
	}
	against := fmt.Sprintf("change points over the last %d runs of suite %s", len(series.runs), j.in.Suite)
	// Changes an ack covers are shown, not reported; the others say what
	// else changed across them.
	tri := changeTriage{cur: cur, series: series.runs, names: series.names, acks: j.in.Acks}
	found, ackedFound := tri.split(found)
	suspected, ackedSuspected := tri.split(suspected)
	for _, a := range append(ackedFound, ackedSuspected...) {
		if len(st.Acknowledged) == MaxRegressedSteps {
			break
		}
		st.Acknowledged = append(st.Acknowledged, a)
	}
	j.out.Cases = casesOfChangePoints(cur, MetricsOf(spec), found, suspected, append(ackedFound, ackedSuspected...),
		fmt.Sprintf("change points over the last %d runs", len(series.runs)))
	pairs := groupChanges(found)
	for i, pair := range pairs {
		if i == MaxRegressedSteps {
			break
		}
		st.Regressed = append(st.Regressed, series.regressedStep(pair))
	}
	j.out.Status = st
	j.setChangePointCondition(st, len(pairs), found, suspected, against, storeNote)
}

// detectChanges runs change-point detection with the spec's rule over
// series for each judged metric and splits what it reports into confirmed
// and suspected changes.
func detectChanges(series []*results.Manifest, spec *dbbenchv1alpha1.RegressionSpec) (found, suspected []regression.StepChange, err error) {
	opts := changepoint.DefaultOptions()
	opts.MinMagnitude = spec.MinMagnitude()
	opts.MaxPValue = spec.SignificanceLevel()
	for _, m := range MetricsOf(spec) {
		all, err := regression.ChangePointRegressionsOf(series, opts, m)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range all {
			if f.Status == changepoint.Suspected {
				suspected = append(suspected, f)
			} else {
				found = append(found, f)
			}
		}
	}
	return found, suspected, nil
}

// regressedStep is the status entry of one (cell, step, threads) pair's
// changes (groupChanges), its largest first, with what else changed
// across them.
func (s changePointSeries) regressedStep(pair []regression.StepChange) dbbenchv1alpha1.RegressedStep {
	attr := attributeAt(s.runs, s.names, pair[0].Cell, pair[0].LastBefore, pair[0].Since)
	rs := dbbenchv1alpha1.RegressedStep{Cell: pair[0].Cell, Step: pair[0].Step, Threads: int32(pair[0].Threads),
		Since: s.name(pair[0].Since), LastBefore: s.name(pair[0].LastBefore),
		CoincidesWith: apiChanges(attr.Environment), EnvironmentOnly: attr.EnvironmentOnly}
	for j, f := range pair {
		mc := dbbenchv1alpha1.MetricChange{Metric: APIMetric(metricOfChange(f)),
			Before: formatFigure(
				metricOfChange(f),
				f.Before,
			), After: formatFigure(metricOfChange(f), f.After), ChangePercent: fmt.Sprintf("%.1f", f.ChangePercent)}
		if !math.IsNaN(f.PValue) {
			mc.PValue = fmt.Sprintf("%.2g", f.PValue)
		}
		rs.Metrics = append(rs.Metrics, mc.Metric)
		if j == 0 {
			rs.MetricChange = mc
		} else {
			rs.AlsoRegressed = append(rs.AlsoRegressed, mc)
		}
	}
	return rs
}

// setChangePointCondition sets Regressed from a change-point judgement:
// True naming the reported pairs (reportedPairs of them), else False with
// why (suspected, acknowledged, or none), with the notes on suspected
// changes, invalid results left out, acknowledgements and the store.
func (j *judge) setChangePointCondition(
	st *dbbenchv1alpha1.RegressionStatus,
	reportedPairs int,
	found, suspected []regression.StepChange,
	against, storeNote string,
) {
	spec := j.in.Spec
	var suspectNote string
	if len(suspected) > 0 {
		suspectNote = fmt.Sprintf("; suspected in this run only, not confirmed yet: %s", stepChangeList(suspected))
	}
	var invalidNote string
	if st.InvalidLeftOut > 0 {
		// Invalid results have no value in the manifests the series reads.
		invalidNote = fmt.Sprintf("; %d invalid step result(s) of the series left out", st.InvalidLeftOut)
	}
	ackNote := acknowledgedNote(st)
	worse := worseWording(MetricsOf(spec))
	if len(found) == 0 {
		reason := dbbenchv1alpha1.ReasonNoRegression
		switch {
		case len(suspected) > 0:
			reason = dbbenchv1alpha1.ReasonRegressionSuspected
		case len(st.Acknowledged) > 0:
			reason = dbbenchv1alpha1.ReasonRegressionAcknowledged
		}
		j.set(metav1.ConditionFalse, reason,
			fmt.Sprintf("No step significantly %s (p < %g) by %d%% or more than %s (%d step × thread pairs compared)%s%s%s%s",
				worse, spec.SignificanceLevel(), spec.MinMagnitudePercent, against, st.ComparedPairs, suspectNote, invalidNote, ackNote, storeNote))
		return
	}
	reason, what := reportedWhat(st.Regressed, stepChangeList(found))
	msg := fmt.Sprintf(
		"%d step × thread pairs %s by %d%% or more than %s: %s%s%s%s%s",
		reportedPairs,
		worse,
		spec.MinMagnitudePercent,
		against,
		what,
		suspectNote,
		invalidNote,
		ackNote,
		storeNote,
	)
	j.set(metav1.ConditionTrue, reason, msg)
	j.out.Announce = true
}

// metricOfChange is a change's metric; throughput's changes are unnamed.
func metricOfChange(c regression.StepChange) analysis.Metric {
	if c.Metric == "" {
		return analysis.MetricThroughput
	}
	return c.Metric
}

// groupChanges gathers the changes of one (cell, step, threads) into one
// pair, in the order of each pair's first (largest) change; within a pair
// the metrics keep the order they were judged in.
func groupChanges(changes []regression.StepChange) [][]regression.StepChange {
	var out [][]regression.StepChange
	index := map[string]int{}
	for _, c := range changes {
		k := fmt.Sprintf("%s\x00%s\x00%d", c.Cell, c.Step, c.Threads)
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], c)
	}
	return out
}

// stepChangeList names up to five changes (a drift says so, with its slope).
func stepChangeList(changes []regression.StepChange) string {
	var names []string
	for i, f := range changes {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(changes)-5))
			break
		}
		names = append(names, f.String())
	}
	return strings.Join(names, ", ")
}

func (j *judge) noHistory(storeNote string) {
	j.set(metav1.ConditionFalse, dbbenchv1alpha1.ReasonNoHistory,
		fmt.Sprintf("No earlier successful run of suite %s in this namespace or the object store to compare with%s", j.in.Suite, storeNote))
}

// Run is an earlier run of the suite with its manifest.
type Run struct {
	Name     string
	Finished metav1.Time
	Manifest *results.Manifest
	// FromStore is true for a run read from the object store only.
	FromStore bool
}
