package controllers

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/changepoint"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
	"github.com/dbbench/dbbench/pkg/store"
)

// maxRegressedSteps bounds status.regression.regressed; the full list is in
// the run's results.
const maxRegressedSteps = 50

// judgeRegression sets the Regressed condition and status.regression by
// comparing the finished run's manifest with the suite's earlier successful
// runs (verdictHistory: the namespace's and the object store's): against
// its change points, or against one run.
func (p *runPass) judgeRegression(cur *results.Manifest, history []suiteRun, storeNote string) {
	spec := p.run.Spec.Regression
	if spec == nil {
		return
	}
	switch spec.Against {
	case dbbenchv1alpha1.RegressAgainstChangePoints:
		p.judgeChangePoints(cur, history, storeNote)
		return
	case dbbenchv1alpha1.RegressAgainstBaseline:
		p.judgeAgainstBaseline(cur)
		return
	}
	var base *suiteRun
	if spec.Against == dbbenchv1alpha1.RegressAgainstRun {
		for i := range history {
			if history[i].name == spec.Run {
				base = &history[i]
			}
		}
		if base == nil {
			p.setCondition(
				dbbenchv1alpha1.ConditionRegressed,
				metav1.ConditionUnknown,
				dbbenchv1alpha1.ReasonBaselineNotFound,
				fmt.Sprintf(
					"regression.run %q is not a successful run of suite %s in this namespace or the object store%s",
					spec.Run,
					p.run.Spec.Suite,
					storeNote,
				),
			)
			return
		}
	} else if len(history) > 0 {
		base = &history[len(history)-1]
	}
	if base == nil {
		p.noHistory(storeNote)
		return
	}
	against := "run " + base.name
	if base.fromStore {
		against += " (from the object store)"
	}
	// Between-run tests with the suite's noise floor (run_noise.go).
	p.judgeAgainstRun(cur, base, history, against, storeNote)
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
func (p *runPass) judgeChangePoints(cur *results.Manifest, history []suiteRun, storeNote string) {
	spec := p.run.Spec.Regression
	n := spec.LastRunsOrDefault()
	if len(history) > n-1 {
		history = history[len(history)-(n-1):]
	}
	if len(history) == 0 {
		p.noHistory(storeNote)
		return
	}
	st := &dbbenchv1alpha1.RegressionStatus{}
	series := changePointSeries{runs: make([]*results.Manifest, 0, len(history)+1)}
	for _, h := range history {
		series.runs = append(series.runs, h.manifest)
		series.names = append(series.names, h.name)
		st.ComparedTo = append(st.ComparedTo, h.name)
	}
	series.runs = append(series.runs, cur)
	series.names = append(series.names, p.run.Name)
	found, suspected, err := detectChanges(series.runs, spec)
	if err != nil {
		p.setCondition(dbbenchv1alpha1.ConditionRegressed, metav1.ConditionUnknown, dbbenchv1alpha1.ReasonAnalysisFailed, err.Error())
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
	against := fmt.Sprintf("change points over the last %d runs of suite %s", len(series.runs), p.run.Spec.Suite)
	// Changes an ack covers are shown, not reported; the others say what
	// else changed across them.
	tri := changeTriage{cur: cur, series: series.runs, names: series.names, acks: p.acks}
	found, ackedFound := tri.split(found)
	suspected, ackedSuspected := tri.split(suspected)
	for _, a := range append(ackedFound, ackedSuspected...) {
		if len(st.Acknowledged) == maxRegressedSteps {
			break
		}
		st.Acknowledged = append(st.Acknowledged, a)
	}
	pairs := groupChanges(found)
	for i, pair := range pairs {
		if i == maxRegressedSteps {
			break
		}
		st.Regressed = append(st.Regressed, series.regressedStep(pair))
	}
	p.run.Status.Regression = st
	p.setChangePointCondition(st, len(pairs), found, suspected, against, storeNote)
}

// detectChanges runs change-point detection with the spec's rule over
// series for each judged metric and splits what it reports into confirmed
// and suspected changes.
func detectChanges(series []*results.Manifest, spec *dbbenchv1alpha1.RegressionSpec) (found, suspected []regression.StepChange, err error) {
	opts := changepoint.DefaultOptions()
	opts.MinMagnitude = spec.MinMagnitude()
	opts.MaxPValue = spec.SignificanceLevel()
	for _, m := range metricsOf(spec) {
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
		mc := dbbenchv1alpha1.MetricChange{Metric: apiMetric(metricOfChange(f)),
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
func (p *runPass) setChangePointCondition(
	st *dbbenchv1alpha1.RegressionStatus,
	reportedPairs int,
	found, suspected []regression.StepChange,
	against, storeNote string,
) {
	spec := p.run.Spec.Regression
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
	worse := worseWording(metricsOf(spec))
	if len(found) == 0 {
		reason := dbbenchv1alpha1.ReasonNoRegression
		switch {
		case len(suspected) > 0:
			reason = dbbenchv1alpha1.ReasonRegressionSuspected
		case len(st.Acknowledged) > 0:
			reason = dbbenchv1alpha1.ReasonRegressionAcknowledged
		}
		p.setCondition(dbbenchv1alpha1.ConditionRegressed, metav1.ConditionFalse, reason,
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
	p.setCondition(dbbenchv1alpha1.ConditionRegressed, metav1.ConditionTrue, reason, msg)
	p.event(true, reason, "Judge", msg)
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

func (p *runPass) noHistory(storeNote string) {
	p.setCondition(dbbenchv1alpha1.ConditionRegressed, metav1.ConditionFalse, dbbenchv1alpha1.ReasonNoHistory,
		fmt.Sprintf("No earlier successful run of suite %s in this namespace or the object store to compare with%s", p.run.Spec.Suite, storeNote))
}

// suiteRun is an earlier run of the suite with its manifest.
type suiteRun struct {
	name     string
	finished metav1.Time
	manifest *results.Manifest
	// fromStore is true for a run read from the object store only.
	fromStore bool
}

// suiteHistory returns the suite's other successful runs in the namespace
// that have a readable manifest, in completion order.
func (p *runPass) suiteHistory(ctx context.Context) ([]suiteRun, error) {
	var runs dbbenchv1alpha1.BenchmarkRunList
	if err := p.r.List(ctx, &runs, client.InNamespace(p.run.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the suite's runs: %w", err)
	}
	var out []suiteRun
	for i := range runs.Items {
		r := &runs.Items[i]
		if r.Name == p.run.Name || r.Spec.Suite != p.run.Spec.Suite || r.Status.CompletionTime == nil ||
			!meta.IsStatusConditionTrue(r.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) {
			continue
		}
		var cm corev1.ConfigMap
		key := types.NamespacedName{Namespace: r.Namespace, Name: specs.RunResultsConfigMapName(r)}
		if err := p.r.Get(ctx, key, &cm); err != nil {
			p.log.Info("Skipped a run of the suite without a readable results ConfigMap", "run", r.Name, "error", err.Error())
			continue
		}
		m, err := results.UnmarshalManifest([]byte(cm.Data[agentapi.RunResultKeyManifest]))
		if err != nil {
			p.log.Info("Skipped a run of the suite with an unreadable manifest", "run", r.Name, "error", err.Error())
			continue
		}
		out = append(out, suiteRun{name: r.Name, finished: *r.Status.CompletionTime, manifest: m})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].finished.Before(&out[j].finished) })
	return out, nil
}

// storeHistory reads the suite's runs from the run's object store, when it
// has one: the history that outlives the run objects (a GitOps suite prunes
// them, a namespace is recreated). Only runs whose every cell succeeded
// count. A store that cannot be read does not hold the verdict back: the
// note says the verdict used the cluster's history only.
func (p *runPass) storeHistory(ctx context.Context) ([]suiteRun, *store.Store, string) {
	if p.run.Spec.Output.S3 == nil {
		return nil, nil, ""
	}
	ctx, cancel := context.WithTimeout(ctx, uploadPassTimeout)
	defer cancel()
	s, uerr := p.openStore(ctx)
	if uerr != nil {
		p.log.Info("Judged on the cluster's history only", "error", uerr.err.Error())
		return nil, nil, fmt.Sprintf(" (history from the cluster only: %v)", uerr.err)
	}
	manifests, err := s.ListRuns(ctx, p.run.Spec.Suite)
	var note string
	if err != nil {
		p.log.Info("Reading the suite's history from the object store failed", "error", err.Error())
		if len(manifests) == 0 {
			return nil, s, fmt.Sprintf(" (history from the cluster only: reading the object store failed: %v)", err)
		}
		note = fmt.Sprintf(" (some runs in the object store were unreadable: %v)", err)
	}
	var out []suiteRun
	for _, m := range manifests {
		if m.Run.Name == p.run.Name || !manifestSucceeded(m) {
			continue
		}
		out = append(out, suiteRun{name: m.Run.Name, finished: metav1.NewTime(m.UpdatedAt), manifest: m, fromStore: true})
	}
	return out, s, note
}

// manifestSucceeded reports whether every cell of a stored run succeeded,
// the object store's equivalent of the Succeeded condition.
func manifestSucceeded(m *results.Manifest) bool {
	if len(m.Cells) == 0 {
		return false
	}
	for _, c := range m.Cells {
		if c.Phase != string(dbbenchv1alpha1.CellSucceeded) {
			return false
		}
	}
	return true
}

// mergeHistory joins the cluster's and the object store's runs of a suite,
// in completion order. A run in both is taken from the cluster, whose
// manifest and completion time are authoritative while the object exists.
func mergeHistory(cluster, remote []suiteRun) []suiteRun {
	seen := map[string]bool{}
	out := make([]suiteRun, 0, len(cluster)+len(remote))
	for _, r := range cluster {
		seen[r.name] = true
		out = append(out, r)
	}
	for _, r := range remote {
		if !seen[r.name] {
			seen[r.name] = true
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].finished.Equal(&out[j].finished) {
			return out[i].finished.Before(&out[j].finished)
		}
		return out[i].name < out[j].name
	})
	return out
}
