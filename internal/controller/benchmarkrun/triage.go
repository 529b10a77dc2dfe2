package benchmarkrun

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/store"
	"github.com/dbbench/dbbench/pkg/triage"
)

// The verdict reads the suite's acknowledgements in its namespace.
// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkacks,verbs=get;list;watch

// clusterAcks are the namespace's BenchmarkAcks of the run's suite (those
// being deleted left out: deleting un-acknowledges).
func (p *runPass) clusterAcks(ctx context.Context) ([]triage.Ack, error) {
	var list dbbenchv1alpha1.BenchmarkAckList
	if err := p.r.List(ctx, &list, client.InNamespace(p.run.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the suite's acknowledgements: %w", err)
	}
	var out []triage.Ack
	for i := range list.Items {
		a := &list.Items[i]
		if a.Spec.Suite == p.run.Spec.Suite && a.DeletionTimestamp == nil {
			out = append(out, framework.AckOf(a))
		}
	}
	return out, nil
}

// mergeAcks joins the cluster's acks and the object store's: an ack of
// the same name is the cluster's, whose object is authoritative while it
// exists; one only in the store (from another cluster, or mirrored before
// its object was deleted here) counts too, except when its namespace is
// this one: then the cluster's deletion is the newer word.
func mergeAcks(cluster, stored []triage.Ack, namespace string) []triage.Ack {
	seen := map[string]bool{}
	out := append([]triage.Ack(nil), cluster...)
	for _, a := range cluster {
		seen[a.Name] = true
	}
	for _, a := range stored {
		if !seen[a.Name] && a.Namespace != namespace {
			out = append(out, a)
		}
	}
	return out
}

// verdictAcks reads the acknowledgements the verdict honours: the
// namespace's and, with output.s3, the object store's (s may be nil).
func (p *runPass) verdictAcks(ctx context.Context, s *store.Store) []triage.Ack {
	cluster, err := p.clusterAcks(ctx)
	if err != nil {
		p.log.Info("Judged without the cluster's acknowledgements", "error", err.Error())
	}
	var stored []triage.Ack
	if s != nil {
		var notes []string
		stored, notes, err = s.ReadAcks(ctx, p.run.Spec.Suite)
		if err != nil {
			p.log.Info("Judged without the object store's acknowledgements", "error", err.Error())
		}
		for _, n := range notes {
			p.log.Info("Skipped an object among the suite's acknowledgements", "note", n)
		}
	}
	return mergeAcks(cluster, stored, p.run.Namespace)
}
