package runverdict

import (
	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/triage"
	"k8s.io/apimachinery/pkg/api/meta"
)

// Document is the run's verdict as the object store keeps it
// (verdict.json), from its status; nil without a verdict.
func Document(run *dbbenchv1alpha1.BenchmarkRun) *triage.Verdict {
	c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionRegressed)
	if c == nil || run.Spec.Regression == nil {
		return nil
	}
	against := string(run.Spec.Regression.Against)
	if against == "" {
		against = string(dbbenchv1alpha1.RegressAgainstPreviousRun)
	}
	v := &triage.Verdict{SchemaVersion: triage.VerdictSchemaV1, Run: run.Name, Suite: run.Spec.Suite, Against: against,
		Status: string(c.Status), Reason: c.Reason, Message: c.Message, JudgedAt: c.LastTransitionTime.UTC()}
	if run.Spec.Regression.Against == dbbenchv1alpha1.RegressAgainstChangePoints {
		// The change-point rule, for the site's change points.
		v.MaxPValue, v.MinMagnitude = run.Spec.Regression.SignificanceLevel(), run.Spec.Regression.MinMagnitude()
	}
	st := run.Status.Regression
	if st == nil {
		return v
	}
	v.ComparedTo, v.Bisection = st.ComparedTo, st.Bisection
	for _, r := range st.Regressed {
		v.Regressed = append(v.Regressed, triage.VerdictPair{Cell: r.Cell, Step: r.Step, Threads: int(r.Threads), Metric: string(r.Metric),
			Before: r.Before, After: r.After, ChangePercent: r.ChangePercent, Since: r.Since, LastBefore: r.LastBefore,
			CoincidesWith: changesOf(r.CoincidesWith), EnvironmentOnly: r.EnvironmentOnly})
	}
	for _, a := range st.Acknowledged {
		v.Acknowledged = append(v.Acknowledged, triage.VerdictPair{Cell: a.Cell, Step: a.Step, Threads: int(a.Threads), Metric: string(a.Metric),
			ChangePercent: a.ChangePercent, Since: a.Since, LastBefore: a.LastBefore, CoincidesWith: changesOf(a.CoincidesWith),
			EnvironmentOnly: a.EnvironmentOnly, Ack: a.Ack, Resolution: triage.Resolution(a.Resolution)})
	}
	return v
}
