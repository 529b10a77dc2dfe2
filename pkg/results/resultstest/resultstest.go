// Package resultstest holds the results documents that the tests of
// pkg/analysis and of the packages above it (pkg/regression,
// pkg/reporthtml) build their datasets and manifests from: a cell document
// with flat series, the same as the agent's compact form, and a step
// stalled as the quality gate's issue saw it. It is imported by tests only
// and has no Kubernetes imports.
package resultstest

import (
	"testing"
	"time"

	"github.com/dbbench/dbbench/pkg/results"
)

// T0 is when the test documents started.
var T0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Doc makes a valid full document with the given steps at one thread
// count; qps maps step → steady QPS.
func Doc(cell, version string, repeat int, qps map[string]float64, steps ...string) *results.Document {
	d := &results.Document{
		SchemaVersion: results.SchemaV1, Form: results.FormFull,
		Run:       results.Run{Name: "r1", Suite: "nightly"},
		Cell:      results.Cell{Name: cell, Database: "maria", Engine: "mariadb", Version: version, Config: "base", Repeat: repeat, Attempt: 1},
		StartedAt: T0, Status: results.Status{Outcome: results.OutcomeSucceeded},
	}
	for _, s := range steps {
		q := qps[s]
		cpu, cs := 55.0, 1000.0
		series := &results.Series{IntervalSeconds: 1, LatencyPercentile: 95}
		for i := 0; i < 20; i++ {
			series.QPS = append(series.QPS, q)
			series.TPS = append(series.TPS, q)
			series.LatencyMs = append(series.LatencyMs, 1)
			series.ErrorsPerSecond = append(series.ErrorsPerSecond, 0)
			series.ReconnectsPerSecond = append(series.ReconnectsPerSecond, 0)
		}
		h := &results.Hardware{OpsPerSecond: q, OpsBasis: "steadyQps", CPUs: 4, CPUPercent: &cpu, ContextSwitchesPerSecond: &cs}
		h.Derive()
		d.Steps = append(d.Steps, results.StepResult{Step: s, Threads: 1, DurationSeconds: 20, WarmupSeconds: 2,
			SteadyQPS: q, SteadyTPS: q, FinalQPS: q, LatencyAvgMs: 1, LatencyMaxMs: 2, Series: series, Hardware: h})
	}
	return d
}

// IssueStep is the step of the issue, as an agent without the quality
// gate wrote it: a 12 s read-only-count step whose client reported at 2 s
// and 3 s and then not at all (a 9.8 s stall, latencyMaxMs 9,759),
// accepted with steadySamples 1 and steadyQps 1,547 against a finalQps of
// 415. Its series has 2 samples, which a report reads as seconds 1 and 2:
// none after the 2 s warm-up.
func IssueStep(threads int) results.StepResult {
	el := 12.3
	return results.StepResult{Step: "read-only-count", Group: "range-agg", Threads: threads, DurationSeconds: 12, WarmupSeconds: 2,
		ElapsedSeconds: &el, SteadyQPS: 1547, SteadyTPS: 1547, SteadySamples: 1, FinalQPS: 415, FinalTPS: 415,
		LatencyAvgMs: 19, LatencyMaxMs: 9759,
		Series: &results.Series{IntervalSeconds: 1, LatencyPercentile: 95, QPS: []float64{1400, 1547}, TPS: []float64{1400, 1547},
			LatencyMs: []float64{5, 5}, ErrorsPerSecond: []float64{0, 0}, ReconnectsPerSecond: []float64{0, 0}}}
}

// Stalled marks a document's step invalid as the agent does: the issue's
// figures, with its late reports' times and the quality gate's verdict.
func Stalled(d *results.Document, i int) {
	s := IssueStep(d.Steps[i].Threads)
	s.Step = d.Steps[i].Step
	s.Series.Seconds = []float64{2, 3}
	q := results.AssessStep(&s)
	q.Attempts = 2
	s.Quality = &q
	d.Steps[i] = s
}

// ReadCompact is d as the compact document the agent writes
// (results.Compact), read back.
func ReadCompact(t *testing.T, d *results.Document) *results.Document {
	t.Helper()
	_, data, err := results.Compact(d, results.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := results.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
