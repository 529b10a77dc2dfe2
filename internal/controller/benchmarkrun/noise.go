package benchmarkrun

import (
	"context"
	"encoding/json"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/runverdict"
)

// verdictHistory reads the suite's earlier successful runs (the cluster's
// and the object store's) when the run asks for a regression verdict; the
// note says what of the history could not be read.
func (p *runPass) verdictHistory(ctx context.Context) ([]runverdict.Run, string, error) {
	reg := p.run.Spec.Regression
	if reg == nil || (reg.Against == dbbenchv1alpha1.RegressAgainstBaseline && p.run.Spec.Suite == "") {
		return nil, "", nil
	}
	history, err := p.suiteHistory(ctx)
	if err != nil {
		return nil, "", err
	}
	remote, s, note := p.storeHistory(ctx)
	p.acks = p.verdictAcks(ctx, s)
	return mergeHistory(history, remote), note, nil
}

// workloadDigest identifies what the run measured for A/A matching: the
// workload spec without repeats or a precision target (three repeats of a
// step measure what one does).
func workloadDigest(w dbbenchv1alpha1.WorkloadSpec) string {
	w.Repeats, w.Precision = 0, nil
	b, err := json.Marshal(w)
	if err != nil {
		return "" // plain data: cannot fail; an unknown workload matches nothing
	}
	return results.ContentDigest(string(b))
}

// recordNoise puts the run's workload digest and, with a regression
// verdict, the suite's noise floor (this run's repeats and the history's
// A/A sets, regression.SuiteNoise) into the manifest before it is written,
// so that later runs and `kubectl dbbench noise` read the floor this
// verdict used.
func (p *runPass) recordNoise(m *results.Manifest, history []runverdict.Run) {
	m.WorkloadSHA256 = workloadDigest(p.run.Spec.Workload)
	spec := p.run.Spec.Regression
	if spec == nil || spec.Against == dbbenchv1alpha1.RegressAgainstChangePoints {
		return
	}
	hist := make([]*results.Manifest, len(history))
	for i, h := range history {
		hist[i] = h.Manifest
	}
	m.NoiseFloor = regression.SuiteNoiseOf(hist, m, spec.SignificanceLevel(), runverdict.MetricsOf(spec))
}
