package runverdict

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"fmt"
	"strings"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
)

// MetricsOf maps regression.metrics to pkg/analysis's metrics; empty (a
// run created before the field, which the API server does not default on
// read) means throughput alone.
func MetricsOf(spec *dbbenchv1alpha1.RegressionSpec) []analysis.Metric {
	out := make([]analysis.Metric, 0, len(spec.Metrics))
	for _, m := range spec.Metrics {
		out = append(out, analysis.Metric(m))
	}
	return analysis.MetricsOrDefault(out)
}

// metricChangeOf is the status figures of one point of a verdict.
func metricChangeOf(f regression.PointVerdict) dbbenchv1alpha1.MetricChange {
	mc := dbbenchv1alpha1.MetricChange{
		Metric: APIMetric(f.Metric),
		Before: formatFigure(f.Metric, f.Before), After: formatFigure(f.Metric, f.After), ChangePercent: fmt.Sprintf("%.1f", f.ChangePercent),
		Method: apiMethod(f.Method), Detail: f.Detail,
	}
	if f.Method != regression.MethodMagnitudeOnly {
		mc.PValue, mc.AdjustedPValue = fmt.Sprintf("%.2g", f.P), fmt.Sprintf("%.2g", f.AdjustedP)
	}
	return mc
}

// formatFigure prints QPS to 0.01 and a latency to the microsecond (a
// point query's p95 is a fraction of a millisecond).
func formatFigure(m analysis.Metric, v float64) string {
	if m.LowerIsBetter() {
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// magnitudeRuleOf maps the API's rule to pkg/analysis's; "" (a run
// stored before the field) is Tested, the default.
func magnitudeRuleOf(r dbbenchv1alpha1.RegressionMagnitudeRule) regression.MagnitudeRule {
	if r == dbbenchv1alpha1.MagnitudeEstimated {
		return regression.MagnitudeEstimated
	}
	return regression.MagnitudeTested
}

// apiMagnitudeRule maps pkg/analysis's rule back for the status.
func apiMagnitudeRule(r regression.MagnitudeRule) dbbenchv1alpha1.RegressionMagnitudeRule {
	if r == regression.MagnitudeEstimated {
		return dbbenchv1alpha1.MagnitudeEstimated
	}
	return dbbenchv1alpha1.MagnitudeTested
}

// apiMethod maps pkg/analysis's verdict methods to the API's; the names
// are the same, the mapping keeps the API independent of the package.
func apiMethod(m regression.VerdictMethod) dbbenchv1alpha1.RegressionMethod {
	switch m {
	case regression.MethodPairedBlocks:
		return dbbenchv1alpha1.MethodPairedBlocks
	case regression.MethodBetweenRuns:
		return dbbenchv1alpha1.MethodBetweenRuns
	case regression.MethodNoiseFloor:
		return dbbenchv1alpha1.MethodNoiseFloor
	case regression.MethodPerSecond:
		return dbbenchv1alpha1.MethodPerSecond
	}
	return dbbenchv1alpha1.MethodMagnitudeOnly
}

// regressionStatusOf is status.regression of a verdict against one run.
func regressionStatusOf(v *regression.Verdict, base string, correction dbbenchv1alpha1.RegressionCorrection) *dbbenchv1alpha1.RegressionStatus {
	if correction == "" {
		correction = dbbenchv1alpha1.CorrectionHolm
	}
	st := &dbbenchv1alpha1.RegressionStatus{ComparedTo: []string{base}, ComparedPairs: int32(v.Pairs()), Correction: correction,
		MagnitudeRule: apiMagnitudeRule(v.MagnitudeRule), InvalidLeftOut: int32(len(v.Invalid))}
	for _, mc := range v.Methods() {
		st.Methods = append(st.Methods, dbbenchv1alpha1.RegressionMethodCount{Method: apiMethod(mc.Method), Pairs: int32(mc.Points), Detail: mc.Detail})
	}
	if p, ok := v.LeastSensitive(); ok {
		st.DetectableChangePercent = fmt.Sprintf("%.1f", 100*p.Detectable)
		st.DetectableAt = fmt.Sprintf("%s %s@%d %s (CV %.1f %%)", p.Cell, p.Step, p.Threads, p.Metric.Label(), 100*p.CV)
	}
	for i, pair := range v.RegressedPairs() {
		if i == MaxRegressedSteps {
			break
		}
		rs := dbbenchv1alpha1.RegressedStep{Cell: pair.Cell, Step: pair.Step, Threads: int32(pair.Threads),
			MetricChange: metricChangeOf(pair.Points[0])}
		for j, f := range pair.Points {
			rs.Metrics = append(rs.Metrics, APIMetric(f.Metric))
			if j > 0 {
				rs.AlsoRegressed = append(rs.AlsoRegressed, metricChangeOf(f))
			}
		}
		st.Regressed = append(st.Regressed, rs)
	}
	return st
}

// judgeAgainstRun sets the verdict of cur against one earlier run with
// the between-run tests (regression.JudgeRuns) and the noise floor recorded
// in cur's manifest. against names the baseline for the message.
func (j *judge) judgeAgainstRun(cur *results.Manifest, base *Run, history []Run, against, storeNote string) {
	spec := j.in.Spec
	v, err := regression.JudgeRuns(cur, base.Manifest, verdictOptionsOf(spec, cur))
	if err != nil {
		j.set(metav1.ConditionUnknown, dbbenchv1alpha1.ReasonAnalysisFailed, err.Error())
		return
	}
	st := regressionStatusOf(v, base.Name, spec.Correction)
	j.out.Status = st
	acked := triageAgainstRun(st, cur, base, history, j.in.Run, j.in.Acks, spec.MinMagnitude())
	j.setVerdict(v, st, acked, against, storeNote)
}

// judgeAgainstBaseline sets the verdict of cur's combinations against
// its own baseline cell's (regression.JudgeBaseline: blocked cells paired
// by block). Both sides ran in this run, under its conditions: there is
// no environment change to triage, and no acknowledgement applies (those
// name a suite's runs).
func (j *judge) judgeAgainstBaseline(cur *results.Manifest) {
	spec := j.in.Spec
	v, err := regression.JudgeBaseline(cur, verdictOptionsOf(spec, cur))
	if err != nil {
		j.set(metav1.ConditionUnknown, dbbenchv1alpha1.ReasonAnalysisFailed, err.Error())
		return
	}
	st := regressionStatusOf(v, j.in.Run, spec.Correction)
	j.out.Status = st
	j.setVerdict(v, st, nil, "baseline "+v.Baseline, "")
}

// verdictOptionsOf is the verdict's rule from regression, with cur's
// noise floor.
func verdictOptionsOf(spec *dbbenchv1alpha1.RegressionSpec, cur *results.Manifest) regression.VerdictOptions {
	return regression.VerdictOptions{
		MinMagnitude:  spec.MinMagnitude(),
		MagnitudeRule: magnitudeRuleOf(spec.MagnitudeRule),
		Alpha:         spec.SignificanceLevel(),
		Correction:    CorrectionOf(spec.Correction),
		Floor:         cur.NoiseFloor,
		Metrics:       MetricsOf(spec),
	}
}

// setVerdict sets the Regressed condition from v (status st), leaving out
// the acknowledged pairs; against names the baseline for the message.
func (j *judge) setVerdict(v *regression.Verdict, st *dbbenchv1alpha1.RegressionStatus, acked map[string]bool, against, storeNote string) {
	spec := j.in.Spec
	j.out.Cases = casesOfVerdict(v, acked)
	how := v.Summary()
	if fallback := fallbackNote(v); fallback != "" {
		how += "; " + fallback
	}
	claim := verdictClaim(worseWording(v.Metrics), spec.MinMagnitudePercent, against, v.MagnitudeRule)
	ackNote := acknowledgedNote(st)
	var pairs []regression.RegressedPair
	for _, pr := range v.RegressedPairs() {
		if !acked[pairKey(pr.Cell, pr.Step, pr.Threads)] {
			pairs = append(pairs, pr)
		}
	}
	if len(pairs) == 0 {
		reason := dbbenchv1alpha1.ReasonNoRegression
		if len(st.Acknowledged) > 0 {
			reason = dbbenchv1alpha1.ReasonRegressionAcknowledged
		}
		j.set(metav1.ConditionFalse, reason,
			fmt.Sprintf("No step significantly %s (%d step × thread pairs: %s)%s%s%s",
				claim, v.Pairs(), how, sensitivityNote(st), ackNote, storeNote))
		return
	}
	var names []string
	for i, f := range pairs {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(pairs)-5))
			break
		}
		names = append(names, f.String())
	}
	reason, what := reportedWhat(st.Regressed, strings.Join(names, ", "))
	msg := fmt.Sprintf("%d step × thread pairs %s: %s (%d pairs: %s)%s%s",
		len(pairs), claim, what, v.Pairs(), how, ackNote, storeNote)
	j.set(metav1.ConditionTrue, reason, msg)
	j.out.Announce = true
}

// verdictClaim is what a regressed pair is under the rule: "slower by
// more than 5% than run-a" (Tested) or "slower than run-a, by a measured
// 5% or more" (Estimated).
func verdictClaim(worse string, magnitudePercent int32, against string, rule regression.MagnitudeRule) string {
	if rule == regression.MagnitudeEstimated {
		return fmt.Sprintf("%s than %s, by a measured %d%% or more", worse, against, magnitudePercent)
	}
	return fmt.Sprintf("%s by more than %d%% than %s", worse, magnitudePercent, against)
}

// sensitivityNote says what a Regressed=False verdict could have missed:
// the change its least sensitive pair finds with regression.DetectablePower.
func sensitivityNote(st *dbbenchv1alpha1.RegressionStatus) string {
	if st.DetectableChangePercent == "" {
		return ""
	}
	return fmt.Sprintf("; a change of %s%% or more would have been found with %.0f%% power at the least sensitive pair, %s",
		st.DetectableChangePercent, 100*regression.DetectablePower, st.DetectableAt)
}

// worseWording says what a regression is for the judged metrics:
// "slower" for throughput alone, "slower or with higher p99 latency" with a
// latency.
func worseWording(metrics []analysis.Metric) string {
	var lat []string
	slower := false
	for _, m := range metrics {
		if m.LowerIsBetter() {
			lat = append(lat, strings.TrimSuffix(m.Label(), " latency"))
		} else {
			slower = true
		}
	}
	if len(lat) == 0 {
		return "slower"
	}
	higher := "with higher " + strings.Join(lat, "/") + " latency"
	if !slower {
		return higher
	}
	return "slower or " + higher
}

// fallbackNote explains a verdict that could not test between runs, so
// that a reader knows the verdict is weaker than it looks.
func fallbackNote(v *regression.Verdict) string {
	for _, mc := range v.Methods() {
		if mc.Method == regression.MethodPerSecond || mc.Method == regression.MethodMagnitudeOnly {
			return fmt.Sprintf("no repeats on both sides and no noise floor of %d df or more for some steps: run workload.repeats >= 2 or keep unchanged runs in the suite's history (docs/noise.md)", regression.MinFloorDF)
		}
	}
	return ""
}

// APIMetric maps a pkg/analysis metric to the API's (the names are the
// same; the mapping keeps the API independent of the package).
func APIMetric(m analysis.Metric) dbbenchv1alpha1.RegressionMetric {
	switch m {
	case analysis.MetricP95Latency:
		return dbbenchv1alpha1.MetricP95Latency
	case analysis.MetricP99Latency:
		return dbbenchv1alpha1.MetricP99Latency
	}
	return dbbenchv1alpha1.MetricThroughput
}

// CorrectionOf maps the API's names to pkg/inference's.
func CorrectionOf(c dbbenchv1alpha1.RegressionCorrection) inference.Correction {
	if c == dbbenchv1alpha1.CorrectionBenjaminiHochberg {
		return inference.CorrectionBH
	}
	return inference.CorrectionHolm
}
