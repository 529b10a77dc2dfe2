package benchmarkbisection

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/bisect"
	"github.com/dbbench/dbbench/pkg/results"
)

// runFinished reports whether a round's run reached a terminal condition.
func runFinished(run *dbbenchv1alpha1.BenchmarkRun) bool {
	return meta.IsStatusConditionTrue(run.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) ||
		meta.IsStatusConditionTrue(run.Status.Conditions, dbbenchv1alpha1.ConditionFailed)
}

// runFailedWhole reports whether a finished run failed as a whole (an
// invalid spec) rather than cell by cell, with the condition's message.
func runFailedWhole(run *dbbenchv1alpha1.BenchmarkRun) (string, bool) {
	c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionFailed)
	if c == nil || c.Status != "True" || c.Reason != dbbenchv1alpha1.ReasonInvalidSpec {
		return "", false
	}
	return c.Message, true
}

// readRound turns a round's run into the search's round: its kind,
// points and references, and once the run finished, every succeeded
// cell's figures (the run-level manifest's, or a cell's own document when
// the manifest was slimmed down) and the points none of whose cells
// succeeded, with the last failed cell's reason.
func (p *bisectionPass) readRound(ctx context.Context, s *bisectionSetup, rd round) (bisect.Round, error) {
	r := bisect.Round{Kind: rd.kind, Points: rd.points, Refs: rd.refs, Cells: len(rd.points) * s.limits.Repeats}
	if !runFinished(rd.run) {
		return r, nil
	}
	r.Finished = true
	if msg, whole := runFailedWhole(rd.run); whole {
		r.FailedWhole = msg
		return r, nil
	}
	run := rd.run
	manifest, err := p.roundManifest(ctx, run)
	if err != nil {
		return r, err
	}
	succeeded := map[int]bool{}
	last := map[int]bisect.Failure{}
	for _, cs := range run.Status.Cells {
		i, ok := roundPoint(cs.Database, rd.points)
		if !ok {
			continue
		}
		if cs.Phase != dbbenchv1alpha1.CellSucceeded {
			if cs.Phase == dbbenchv1alpha1.CellFailed {
				last[i] = bisect.Failure{Reason: string(cs.Reason), Message: cs.Message}
			}
			continue
		}
		values, invalid, err := p.cellValues(ctx, s, manifest, cs)
		if err != nil {
			return r, fmt.Errorf("run %s: %w", run.Name, err)
		}
		r.Invalid += invalid
		if len(values) == 0 {
			continue
		}
		succeeded[i] = true
		r.Observations = append(r.Observations, bisect.Observation{Point: i, Values: values})
	}
	r.Failures = roundFailures(rd.points, succeeded, last)
	return r, nil
}

// roundPoint is the point a round's cell of database measured. Only the
// names buildRound gives (p<i>) of the round's own points count: a cell
// of another database says nothing about the search's points.
func roundPoint(database string, points []int) (int, bool) {
	var i int
	if _, err := fmt.Sscanf(database, "p%d", &i); err != nil || pointDatabase(i) != database || !slices.Contains(points, i) {
		return 0, false
	}
	return i, true
}

// roundManifest is a finished round's run manifest from its results
// ConfigMap, nil when the run wrote none.
func (p *bisectionPass) roundManifest(ctx context.Context, run *dbbenchv1alpha1.BenchmarkRun) (*results.Manifest, error) {
	if run.Status.Results == nil || run.Status.Results.ConfigMap == "" {
		return nil, nil
	}
	data, err := p.configMapKey(ctx, run.Status.Results.ConfigMap, agentapi.RunResultKeyManifest)
	if err != nil || data == "" {
		return nil, err
	}
	manifest, err := results.UnmarshalManifest([]byte(data))
	if err != nil {
		return nil, fmt.Errorf("run %s: reading its manifest: %w", run.Name, err)
	}
	return manifest, nil
}

// roundFailures are the failures of the round's points none of whose
// cells succeeded: the last failed cell's reason, or ReasonNoResults when
// none failed (the cells succeeded without figures, or never ran); nil
// when every point succeeded.
func roundFailures(points []int, succeeded map[int]bool, last map[int]bisect.Failure) map[int]bisect.Failure {
	var out map[int]bisect.Failure
	for _, i := range points {
		if succeeded[i] {
			continue
		}
		f, ok := last[i]
		if !ok {
			f = bisect.Failure{Reason: string(dbbenchv1alpha1.ReasonNoResults), Message: "no cell of the point succeeded with results"}
		}
		if out == nil {
			out = map[int]bisect.Failure{}
		}
		out[i] = f
	}
	return out
}

// cellValues are a succeeded cell's judged figures per step, thread count
// and metric: the run manifest's cell (steady QPS, latency percentiles),
// else the cell's own results document; and how many of its judged step
// results are invalid (they have no figure there).
func (p *bisectionPass) cellValues(
	ctx context.Context,
	s *bisectionSetup,
	m *results.Manifest,
	cs dbbenchv1alpha1.CellStatus,
) (map[bisect.Key]float64, int, error) {
	out := map[bisect.Key]float64{}
	add := func(k bisect.Key, v float64) {
		if v > 0 && s.judge(k) {
			out[k] = v
		}
	}
	if m != nil {
		if mc, ok := m.Cell(cs.Name); ok && len(mc.QPS) > 0 {
			for step, byThreads := range mc.QPS {
				for th := range byThreads {
					for _, metric := range analysis.Metrics {
						if v, ok := metric.Value(mc, step, th); ok {
							add(bisect.Key{Step: step, Threads: th, Metric: metric}, v)
						}
					}
				}
			}
			return out, judgedInvalid(s, mc), nil
		}
	}
	if cs.ResultConfigMap == "" {
		return out, 0, nil
	}
	raw, err := p.configMapKey(ctx, cs.ResultConfigMap, agentapi.ResultKeyDocument)
	if err != nil || raw == "" {
		return out, 0, err
	}
	doc, err := results.Unmarshal([]byte(raw))
	if err != nil {
		return nil, 0, fmt.Errorf("cell %s: reading its results document: %w", cs.Name, err)
	}
	mc := results.NewManifestCell(doc, string(cs.Phase), "", "")
	for _, st := range doc.Steps {
		for _, metric := range analysis.Metrics {
			if v, ok := metric.Value(&mc, st.Step, st.Threads); ok {
				add(bisect.Key{Step: st.Step, Threads: st.Threads, Metric: metric}, v)
			}
		}
	}
	return out, judgedInvalid(s, &mc), nil
}

// judgedInvalid counts a cell's invalid step results at (step, threads)
// the bisection judges.
func judgedInvalid(s *bisectionSetup, mc *results.ManifestCell) int {
	n := 0
	for step, byThreads := range mc.Invalid {
		for th := range byThreads {
			for _, metric := range analysis.Metrics {
				if s.judge(bisect.Key{Step: step, Threads: th, Metric: metric}) {
					n++
					break
				}
			}
		}
	}
	return n
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
