package runverdict

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/triage"
	"k8s.io/apimachinery/pkg/api/meta"
)

// Document is the run's verdict as the object store keeps it
// (verdict.json), from its status; nil without a verdict. The status
// holds no cases: the document the controller wrote beside the run's
// manifest (DocumentOf) has them.
func Document(run *dbbenchv1alpha1.BenchmarkRun) *triage.Verdict {
	c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionRegressed)
	if c == nil || run.Spec.Regression == nil {
		return nil
	}
	return document(run, *c, run.Status.Regression)
}

// DocumentOf is the verdict document of out, the Outcome Judge gave for
// run, with its cases, judged at judgedAt: what the controller writes
// beside the manifest before the status says it. Nil when out judged
// nothing.
func DocumentOf(run *dbbenchv1alpha1.BenchmarkRun, out Outcome, judgedAt time.Time) *triage.Verdict {
	if out.Condition.Type == "" || run.Spec.Regression == nil {
		return nil
	}
	c := out.Condition
	c.LastTransitionTime = metav1.NewTime(judgedAt)
	v := document(run, c, out.Status)
	v.Cases = out.Cases
	return v
}

// document builds the verdict document from the Regressed condition c and
// status.regression st (nil: none).
func document(run *dbbenchv1alpha1.BenchmarkRun, c metav1.Condition, st *dbbenchv1alpha1.RegressionStatus) *triage.Verdict {
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
