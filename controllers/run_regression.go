package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/changepoint"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
)

// maxRegressedSteps bounds status.regression.regressed; the full list is in
// the run's results.
const maxRegressedSteps = 50

// judgeRegression sets the Regressed condition and status.regression by
// comparing the finished run's manifest with the suite's earlier successful
// runs in the namespace.
func (p *runPass) judgeRegression(ctx context.Context, cur *results.Manifest) error {
	spec := p.run.Spec.Regression
	if spec == nil {
		return nil
	}
	history, err := p.suiteHistory(ctx)
	if err != nil {
		return err
	}
	minMag := float64(spec.MinMagnitudePercent) / 100
	st := &dbbenchv1alpha1.RegressionStatus{}
	var found []analysis.StepChange
	var against string
	switch spec.Against {
	case dbbenchv1alpha1.RegressAgainstChangePoints:
		n := int(spec.LastRuns)
		if n < 2 {
			n = 30
		}
		if len(history) > n-1 {
			history = history[len(history)-(n-1):]
		}
		if len(history) == 0 {
			p.noHistory()
			return nil
		}
		series := make([]*results.Manifest, 0, len(history)+1)
		for _, h := range history {
			series = append(series, h.manifest)
			st.ComparedTo = append(st.ComparedTo, h.name)
		}
		series = append(series, cur)
		opts := changepoint.DefaultOptions()
		opts.MinMagnitude = minMag
		found, err = analysis.ChangePointRegressions(series, opts)
		if err != nil {
			p.setCondition(dbbenchv1alpha1.ConditionRegressed, metav1.ConditionUnknown, "AnalysisFailed", err.Error())
			return nil
		}
		for _, c := range cur.Cells {
			for _, byThreads := range c.QPS {
				st.ComparedPairs += int32(len(byThreads))
			}
		}
		against = fmt.Sprintf("change points over the last %d runs of suite %s", len(series), p.run.Spec.Suite)
	default:
		var base *suiteRun
		if spec.Against == dbbenchv1alpha1.RegressAgainstRun {
			for i := range history {
				if history[i].name == spec.Run {
					base = &history[i]
				}
			}
			if base == nil {
				p.setCondition(dbbenchv1alpha1.ConditionRegressed, metav1.ConditionUnknown, "BaselineNotFound",
					fmt.Sprintf("regression.run %q is not a successful run of suite %s in this namespace", spec.Run, p.run.Spec.Suite))
				return nil
			}
		} else if len(history) > 0 {
			base = &history[len(history)-1]
		}
		if base == nil {
			p.noHistory()
			return nil
		}
		var compared int
		found, compared = analysis.CompareManifests(cur, base.manifest, minMag)
		st.ComparedTo = []string{base.name}
		st.ComparedPairs = int32(compared)
		against = "run " + base.name
	}
	for i, f := range found {
		if i == maxRegressedSteps {
			break
		}
		st.Regressed = append(st.Regressed, dbbenchv1alpha1.RegressedStep{
			Cell: f.Cell, Step: f.Step, Threads: int32(f.Threads),
			Before: fmt.Sprintf("%.2f", f.Before), After: fmt.Sprintf("%.2f", f.After), ChangePercent: fmt.Sprintf("%.1f", f.ChangePercent),
		})
	}
	p.run.Status.Regression = st
	if len(found) == 0 {
		p.setCondition(dbbenchv1alpha1.ConditionRegressed, metav1.ConditionFalse, "NoRegression",
			fmt.Sprintf("No step slower by %d%% or more than %s (%d step × thread pairs compared)", spec.MinMagnitudePercent, against, st.ComparedPairs))
		return nil
	}
	var names []string
	for i, f := range found {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(found)-5))
			break
		}
		names = append(names, f.String())
	}
	msg := fmt.Sprintf("%d step × thread pairs slower by %d%% or more than %s: %s", len(found), spec.MinMagnitudePercent, against, strings.Join(names, ", "))
	p.setCondition(dbbenchv1alpha1.ConditionRegressed, metav1.ConditionTrue, "Regressed", msg)
	p.event(true, "Regressed", "Judge", msg)
	return nil
}

func (p *runPass) noHistory() {
	p.setCondition(dbbenchv1alpha1.ConditionRegressed, metav1.ConditionFalse, "NoHistory",
		fmt.Sprintf("No earlier successful run of suite %s in this namespace to compare with", p.run.Spec.Suite))
}

// suiteRun is an earlier run of the suite with its manifest.
type suiteRun struct {
	name     string
	finished metav1.Time
	manifest *results.Manifest
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
		m, err := results.UnmarshalManifest([]byte(cm.Data[ManifestKey]))
		if err != nil {
			p.log.Info("Skipped a run of the suite with an unreadable manifest", "run", r.Name, "error", err.Error())
			continue
		}
		out = append(out, suiteRun{name: r.Name, finished: *r.Status.CompletionTime, manifest: m})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].finished.Before(&out[j].finished) })
	return out, nil
}
