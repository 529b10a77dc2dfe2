package runverdict

import (
	"fmt"
	"strings"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/attribution"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/triage"
)

// changeOf is a change of the verdict as acks are matched to it.
func changeOf(cur *results.Manifest, cell, step string, threads int, metric dbbenchv1alpha1.RegressionMetric, lastBefore, since string) triage.Change {
	c := triage.Change{Cell: cell, Step: step, Threads: threads, Metric: string(metric), LastBefore: lastBefore, Since: since}
	if mc, ok := cur.Cell(cell); ok {
		c.Combination = analysis.CellMeta{Name: mc.Name, Database: mc.Database, Engine: mc.Engine, Version: mc.Version, Config: mc.Config}.Combination()
	}
	return c
}

// attributeAt compares the cell's snapshots in the runs of series up to
// lastBefore with those from since on (indices into series; -1 when
// unknown): what else changed at the change.
func attributeAt(series []*results.Manifest, names []string, cell string, lastBefore, since int) attribution.Attribution {
	if lastBefore < 0 || since < 0 || since >= len(series) {
		return attribution.Attribution{}
	}
	var before, after []attribution.Snapshot
	for i, m := range series {
		c, ok := m.Cell(cell)
		if !ok {
			continue
		}
		switch {
		case i <= lastBefore:
			before = append(before, attribution.FromManifestCell(names[i], c))
		case i >= since:
			after = append(after, attribution.FromManifestCell(names[i], c))
		}
	}
	return attribution.Attribute(before, after)
}

// apiChanges are an attribution's environment changes for the status.
func apiChanges(cs []attribution.Change) []dbbenchv1alpha1.EnvironmentChange {
	var out []dbbenchv1alpha1.EnvironmentChange
	for _, c := range cs {
		out = append(out, dbbenchv1alpha1.EnvironmentChange{Field: string(c.Field), Before: c.Before, After: c.After})
	}
	return out
}

// ackedList names up to five acknowledged pairs with their acks.
func ackedList(st []dbbenchv1alpha1.AcknowledgedStep) string {
	var names []string
	for i, a := range st {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(st)-5))
			break
		}
		names = append(names, fmt.Sprintf("%s %s@%d %s%% (%s %s)", a.Cell, a.Step, a.Threads, a.ChangePercent, strings.ToLower(string(a.Resolution)), a.Ack))
	}
	return strings.Join(names, ", ")
}

// acknowledgedNote is "; acknowledged, not reported: ..." or "".
func acknowledgedNote(st *dbbenchv1alpha1.RegressionStatus) string {
	if st == nil || len(st.Acknowledged) == 0 {
		return ""
	}
	return "; acknowledged, not reported: " + ackedList(st.Acknowledged)
}

// reportedWhat is a Regressed=True verdict's reason and the pairs' text
// (names) completed with what else changed: EnvironmentChanged when every
// reported pair is the environment's alone, else Regressed.
func reportedWhat(rs []dbbenchv1alpha1.RegressedStep, names string) (reason, what string) {
	notes := coincidences(rs)
	switch {
	case allEnvironmentOnly(rs):
		return dbbenchv1alpha1.ReasonEnvironmentChanged, names + fmt.Sprintf(
			"; every one coincides with a change of the environment and none of the build (%s): not the build's regression",
			strings.Join(notes, "; "),
		)
	case len(notes) > 0:
		return dbbenchv1alpha1.ReasonRegressed, names + "; coinciding with " + strings.Join(notes, "; ")
	}
	return dbbenchv1alpha1.ReasonRegressed, names
}

// allEnvironmentOnly reports whether every regressed pair coincides with
// a change of the environment alone.
func allEnvironmentOnly(rs []dbbenchv1alpha1.RegressedStep) bool {
	for _, r := range rs {
		if !r.EnvironmentOnly {
			return false
		}
	}
	return len(rs) > 0
}

func changesOf(cs []dbbenchv1alpha1.EnvironmentChange) []attribution.Change {
	var out []attribution.Change
	for _, c := range cs {
		out = append(out, attribution.Change{Field: attribution.Field(c.Field), Before: c.Before, After: c.After})
	}
	return out
}

// changeTriage matches a ChangePoints verdict's changes to the suite's
// acks: series are the judged runs' manifests (the current run last),
// names their run names.
type changeTriage struct {
	cur    *results.Manifest
	series []*results.Manifest
	names  []string
	acks   []triage.Ack
}

// split returns the changes no ack covers, and those an ack covers as the
// status lists them.
func (t changeTriage) split(changes []regression.StepChange) ([]regression.StepChange, []dbbenchv1alpha1.AcknowledgedStep) {
	if len(t.acks) == 0 {
		return changes, nil
	}
	order := triage.NewOrder(t.names)
	name := func(i int) string {
		if i < 0 || i >= len(t.names) {
			return ""
		}
		return t.names[i]
	}
	var kept []regression.StepChange
	var acked []dbbenchv1alpha1.AcknowledgedStep
	for _, f := range changes {
		metric := APIMetric(metricOfChange(f))
		a, ok := triage.Match(t.acks, changeOf(t.cur, f.Cell, f.Step, f.Threads, metric, name(f.LastBefore), name(f.Since)), order)
		if !ok {
			kept = append(kept, f)
			continue
		}
		attr := attributeAt(t.series, t.names, f.Cell, f.LastBefore, f.Since)
		acked = append(acked, dbbenchv1alpha1.AcknowledgedStep{Cell: f.Cell, Step: f.Step, Threads: int32(f.Threads), Metric: metric,
			ChangePercent: fmt.Sprintf("%.1f", f.ChangePercent), Since: name(f.Since), LastBefore: name(f.LastBefore),
			Ack: a.Name, Resolution: dbbenchv1alpha1.AckResolution(a.Resolution),
			CoincidesWith: apiChanges(attr.Environment), EnvironmentOnly: attr.EnvironmentOnly})
	}
	return kept, acked
}

// coincidences name, per regressed pair, the environment changes it
// coincides with ("cell step@1: kernel a → b").
func coincidences(rs []dbbenchv1alpha1.RegressedStep) []string {
	var out []string
	for _, r := range rs {
		if len(r.CoincidesWith) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s@%d: %s", r.Cell, r.Step, r.Threads, JoinChanges(r.CoincidesWith)))
	}
	return out
}

// JoinChanges words environment changes as one list ("kernel a → b, ...").
func JoinChanges(cs []dbbenchv1alpha1.EnvironmentChange) string {
	changes := changesOf(cs)
	s := make([]string, 0, len(changes))
	for _, c := range changes {
		s = append(s, c.String())
	}
	return strings.Join(s, ", ")
}

func pairKey(cell, step string, threads int) string {
	return fmt.Sprintf("%s\x00%s\x00%d", cell, step, threads)
}

// triageAgainstRun moves the regressed pairs of a verdict against a run
// that acks cover to st.Acknowledged and says what else changed between
// the baseline and this run. A pair is covered when an ack covers every
// metric it regressed on and the pair has not become worse since the
// acked run by more than the magnitude (a fixed baseline would otherwise
// hide a second slowdown behind the first one's ack). It returns the
// covered pairs' keys.
func triageAgainstRun(st *dbbenchv1alpha1.RegressionStatus, cur *results.Manifest, base *Run, history []Run, run string,
	acks []triage.Ack, magnitude float64) map[string]bool {
	names := make([]string, 0, len(history)+1)
	manifests := map[string]*results.Manifest{run: cur}
	for _, h := range history {
		names = append(names, h.Name)
		manifests[h.Name] = h.Manifest
	}
	names = append(names, run)
	order := triage.NewOrder(names)
	acked := map[string]bool{}
	var kept []dbbenchv1alpha1.RegressedStep
	for _, r := range st.Regressed {
		var before, after []attribution.Snapshot
		if c, ok := base.Manifest.Cell(r.Cell); ok {
			before = append(before, attribution.FromManifestCell(base.Name, c))
		}
		if c, ok := cur.Cell(r.Cell); ok {
			after = append(after, attribution.FromManifestCell(run, c))
		}
		attr := attribution.Attribute(before, after)
		r.CoincidesWith, r.EnvironmentOnly = apiChanges(attr.Environment), attr.EnvironmentOnly
		metrics := r.Metrics
		if len(metrics) == 0 {
			metrics = []dbbenchv1alpha1.RegressionMetric{dbbenchv1alpha1.MetricThroughput}
		}
		var cover triage.Ack
		covered := len(acks) > 0
		for _, m := range metrics {
			a, ok := triage.Match(acks, changeOf(cur, r.Cell, r.Step, int(r.Threads), m, base.Name, run), order)
			if !ok || worseSince(manifests[a.Run], cur, r.Cell, r.Step, int(r.Threads), m, magnitude) {
				covered = false
				break
			}
			cover = a
		}
		if !covered {
			kept = append(kept, r)
			continue
		}
		acked[pairKey(r.Cell, r.Step, int(r.Threads))] = true
		if len(st.Acknowledged) < MaxRegressedSteps {
			st.Acknowledged = append(st.Acknowledged, dbbenchv1alpha1.AcknowledgedStep{Cell: r.Cell, Step: r.Step, Threads: r.Threads,
				Metric: r.Metric, ChangePercent: r.ChangePercent, Ack: cover.Name, Resolution: dbbenchv1alpha1.AckResolution(cover.Resolution),
				CoincidesWith: r.CoincidesWith, EnvironmentOnly: r.EnvironmentOnly})
		}
	}
	st.Regressed = kept
	return acked
}

// worseSince reports whether cur's figure of the point is worse than the
// acked run's by more than the magnitude; false when either is unknown.
func worseSince(acked, cur *results.Manifest, cell, step string, threads int, metric dbbenchv1alpha1.RegressionMetric, magnitude float64) bool {
	if acked == nil || acked == cur {
		return false
	}
	m := analysis.Metric(metric)
	ca, oka := acked.Cell(cell)
	cc, okc := cur.Cell(cell)
	if !oka || !okc {
		return false
	}
	va, oka := m.Value(ca, step, threads)
	vc, okc := m.Value(cc, step, threads)
	if !oka || !okc || va <= 0 {
		return false
	}
	if m.LowerIsBetter() {
		return vc > va*(1+magnitude)
	}
	return vc < va*(1-magnitude)
}
