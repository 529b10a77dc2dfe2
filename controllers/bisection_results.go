package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/bisect"
	"github.com/dbbench/dbbench/pkg/plan"
	"github.com/dbbench/dbbench/pkg/results"
)

// roundResult is what one finished round measured of one point.
type roundResult struct {
	samples bisect.Samples
	// runs counts the point's cells that succeeded with results.
	runs int
	// failed is set when none of the point's cells succeeded; reason and
	// message are the last failed cell's.
	failed  bool
	reason  dbbenchv1alpha1.FailureReason
	message string
}

// runFinished reports whether a round's run reached a terminal condition.
func runFinished(run *dbbenchv1alpha1.BenchmarkRun) bool {
	return meta.IsStatusConditionTrue(run.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) ||
		meta.IsStatusConditionTrue(run.Status.Conditions, dbbenchv1alpha1.ConditionFailed)
}

// runFailedWhole reports whether a finished run failed as a whole (an
// invalid spec) rather than cell by cell, with the condition's message.
func runFailedWhole(run *dbbenchv1alpha1.BenchmarkRun) (string, bool) {
	c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionFailed)
	if c == nil || c.Status != "True" || c.Reason != ReasonInvalidSpec {
		return "", false
	}
	return c.Message, true
}

// readRound reads a finished round's results per point: the run-level
// manifest's per-cell QPS, or a cell's own document when the manifest was
// slimmed down. Cell phases come from the run's status.
func (p *bisectionPass) readRound(ctx context.Context, rd round) (map[int]*roundResult, error) {
	run := rd.run
	out := map[int]*roundResult{}
	for _, i := range rd.points {
		out[i] = &roundResult{samples: bisect.Samples{}}
	}
	pointOf := func(database string) (*roundResult, bool) {
		var i int
		if _, err := fmt.Sscanf(database, "p%d", &i); err != nil || pointDatabase(i) != database {
			return nil, false
		}
		r, ok := out[i]
		return r, ok
	}
	var manifest *results.Manifest
	if run.Status.Results != nil && run.Status.Results.ConfigMap != "" {
		data, err := p.configMapKey(ctx, run.Status.Results.ConfigMap, plan.RunResultKeyManifest)
		if err != nil {
			return nil, err
		}
		if data != "" {
			if manifest, err = results.UnmarshalManifest([]byte(data)); err != nil {
				return nil, fmt.Errorf("run %s: reading its manifest: %w", run.Name, err)
			}
		}
	}
	for _, cs := range run.Status.Cells {
		r, ok := pointOf(cs.Database)
		if !ok {
			continue
		}
		if cs.Phase != dbbenchv1alpha1.CellSucceeded {
			if cs.Phase == dbbenchv1alpha1.CellFailed {
				r.reason, r.message = cs.Reason, cs.Message
			}
			continue
		}
		qps, err := p.cellQPS(ctx, manifest, cs)
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", run.Name, err)
		}
		if len(qps) == 0 {
			continue
		}
		r.runs++
		for k, v := range qps {
			r.samples[k] = append(r.samples[k], v)
		}
	}
	for _, r := range out {
		if r.runs == 0 {
			r.failed = true
			if r.reason == "" {
				r.reason = dbbenchv1alpha1.ReasonNoResults
				r.message = "no cell of the point succeeded with results"
			}
		}
	}
	return out, nil
}

// cellQPS is a succeeded cell's steady-state QPS per step and thread count.
func (p *bisectionPass) cellQPS(ctx context.Context, m *results.Manifest, cs dbbenchv1alpha1.CellStatus) (map[bisect.Key]float64, error) {
	out := map[bisect.Key]float64{}
	if m != nil {
		if mc, ok := m.Cell(cs.Name); ok && len(mc.QPS) > 0 {
			for step, byThreads := range mc.QPS {
				for th, v := range byThreads {
					if v > 0 {
						out[bisect.Key{Step: step, Threads: th}] = v
					}
				}
			}
			return out, nil
		}
	}
	if cs.ResultConfigMap == "" {
		return out, nil
	}
	raw, err := p.configMapKey(ctx, cs.ResultConfigMap, plan.ResultKeyDocument)
	if err != nil || raw == "" {
		return out, err
	}
	doc, err := results.Unmarshal([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("cell %s: reading its results document: %w", cs.Name, err)
	}
	for _, s := range doc.Steps {
		if s.SteadyQPS > 0 {
			out[bisect.Key{Step: s.Step, Threads: s.Threads}] = s.SteadyQPS
		}
	}
	return out, nil
}

// configMapKey reads one key of a ConfigMap in the bisection's namespace;
// a missing ConfigMap or key is "".
func (p *bisectionPass) configMapKey(ctx context.Context, name, key string) (string, error) {
	var cm corev1.ConfigMap
	err := p.r.Get(ctx, types.NamespacedName{Namespace: p.bis.Namespace, Name: name}, &cm)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading ConfigMap %s: %w", name, err)
	}
	return strings.TrimSpace(cm.Data[key]), nil
}
