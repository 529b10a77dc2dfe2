package benchmarkrun

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/runverdict"
	"github.com/dbbench/dbbench/pkg/specs"
	"github.com/dbbench/dbbench/pkg/store"
)

// suiteHistory returns the suite's other successful runs in the namespace
// that have a readable manifest, in completion order.
func (p *runPass) suiteHistory(ctx context.Context) ([]runverdict.Run, error) {
	var runs dbbenchv1alpha1.BenchmarkRunList
	if err := p.r.List(ctx, &runs, client.InNamespace(p.run.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the suite's runs: %w", err)
	}
	var out []runverdict.Run
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
		out = append(out, runverdict.Run{Name: r.Name, Finished: *r.Status.CompletionTime, Manifest: m})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Finished.Before(&out[j].Finished) })
	return out, nil
}

// storeHistory reads the suite's runs from the run's object store, when it
// has one: the history that outlives the run objects (a GitOps suite prunes
// them, a namespace is recreated). Only runs whose every cell succeeded
// count. A store that cannot be read does not hold the verdict back: the
// note says the verdict used the cluster's history only.
func (p *runPass) storeHistory(ctx context.Context) ([]runverdict.Run, *store.Store, string) {
	if p.run.Spec.Output.S3 == nil {
		return nil, nil, ""
	}
	ctx, cancel := context.WithTimeout(ctx, framework.UploadPassTimeout)
	defer cancel()
	s, uerr := p.openStore(ctx)
	if uerr != nil {
		p.log.Info("Judged on the cluster's history only", "error", uerr.Err.Error())
		return nil, nil, fmt.Sprintf(" (history from the cluster only: %v)", uerr.Err)
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
	var out []runverdict.Run
	for _, m := range manifests {
		if m.Run.Name == p.run.Name || !manifestSucceeded(m) {
			continue
		}
		out = append(out, runverdict.Run{Name: m.Run.Name, Finished: metav1.NewTime(m.UpdatedAt), Manifest: m, FromStore: true})
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
func mergeHistory(cluster, remote []runverdict.Run) []runverdict.Run {
	seen := map[string]bool{}
	out := make([]runverdict.Run, 0, len(cluster)+len(remote))
	for _, r := range cluster {
		seen[r.Name] = true
		out = append(out, r)
	}
	for _, r := range remote {
		if !seen[r.Name] {
			seen[r.Name] = true
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Finished.Equal(&out[j].Finished) {
			return out[i].Finished.Before(&out[j].Finished)
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// setVerdict copies the run's verdict into its status: status.regression
// and the Regressed condition, and announces a regression with a Warning
// event. It is the one place the verdict reaches the status.
func (p *runPass) setVerdict(v runverdict.Outcome) {
	if v.Condition.Type == "" {
		return
	}
	if v.Status != nil {
		p.run.Status.Regression = v.Status
	}
	p.setCondition(v.Condition.Type, v.Condition.Status, v.Condition.Reason, v.Condition.Message)
	if v.Announce {
		p.Event(true, v.Condition.Reason, "Judge", v.Condition.Message)
	}
}
