package results

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// qualityStep is a step result of a run of duration seconds after warm
// seconds of warm-up, with the per-second QPS qps (the TPS column equal),
// the sample end times ends (nil: every second), a final report of final
// QPS over elapsed seconds, and the latency max and p95 in ms.
type qualityStep struct {
	duration, warm, elapsed float64
	qps, ends               []float64
	final                   float64
	maxMs, p95Ms            float64
	queryless               bool
}

func (q qualityStep) result() *StepResult {
	s := &StepResult{Step: "read-only-count", Threads: 8, DurationSeconds: q.duration, WarmupSeconds: q.warm,
		FinalQPS: q.final, FinalTPS: q.final, LatencyMaxMs: q.maxMs}
	if q.elapsed > 0 {
		el := q.elapsed
		s.ElapsedSeconds = &el
	}
	if q.p95Ms > 0 {
		p := q.p95Ms
		s.LatencyP95Ms = &p
	}
	if q.qps != nil {
		s.Series = &Series{IntervalSeconds: 1, QPS: q.qps, TPS: q.qps, Seconds: q.ends}
	}
	if q.queryless {
		s.FinalQPS = 0
		s.Series.QPS = make([]float64, len(q.qps))
	}
	return s
}

// flat is n samples around level: ±1 % alternating, the spread of a quiet
// machine.
func flat(n int, level float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = level * (1 + 0.01*float64(1-2*(i%2)))
	}
	return out
}

// with returns xs with xs[i] = v for i in [from, to).
func with(xs []float64, from, to int, v float64) []float64 {
	out := append([]float64(nil), xs...)
	for i := from; i < to; i++ {
		out[i] = v
	}
	return out
}

// verdict is the part of Quality the table checks.
type verdict struct {
	Valid             bool
	Reasons           []QualityReason
	MinSteadySamples  int
	StallSeconds      float64
	UnreportedSeconds float64
}

func TestAssessStep(t *testing.T) {
	tests := []struct {
		name string
		step qualityStep
		want verdict
	}{{
		name: "a clean 12 s step stays valid",
		step: qualityStep{duration: 12, warm: 2, elapsed: 12.0, qps: flat(12, 1500), final: 1500, maxMs: 9, p95Ms: 5},
		want: verdict{Valid: true, MinSteadySamples: 8},
	}, {
		// The issue: a 12 s read-only-count step with a 9.8 s stall,
		// accepted with steadySamples 1 and steadyQps 1,547 against a
		// finalQps of 415. Its client reported at 2 s and 3 s, then not
		// at all: the final report's time covers what no report did.
		name: "the issue's stalled step: one steady sample, 9.8 s stall, final far below the series",
		step: qualityStep{duration: 12, warm: 2, elapsed: 12.3, qps: []float64{1400, 1547}, ends: []float64{2, 3},
			final: 415, maxMs: 9759, p95Ms: 5},
		want: verdict{Reasons: []QualityReason{QualityTooFewSteadySamples, QualityStalled, QualitySteadyFinalMismatch},
			MinSteadySamples: 8, StallSeconds: 9.76, UnreportedSeconds: 9.3},
	}, {
		name: "the server stopped 5 s, the client reporting zeros: Stalled only",
		step: qualityStep{duration: 12, warm: 2, elapsed: 12.0, qps: with(flat(12, 30000), 4, 9, 0), final: 17500, maxMs: 5000, p95Ms: 0.07},
		want: verdict{Reasons: []QualityReason{QualityStalled}, MinSteadySamples: 8, StallSeconds: 5},
	}, {
		name: "the client stopped 5 s: one late report for six seconds",
		step: qualityStep{duration: 12, warm: 2, elapsed: 12.0, qps: []float64{28000, 27000, 4600, 43000, 37000, 49000, 66000},
			ends: []float64{1, 2, 8, 9, 10, 11, 12}, final: 23274, maxMs: 5003, p95Ms: 0.07},
		want: verdict{Reasons: []QualityReason{QualityTooFewSteadySamples, QualityStalled}, MinSteadySamples: 8,
			StallSeconds: 5.0, UnreportedSeconds: 5},
	}, {
		name: "the client stopped at the end: no report after 9 s, the final report 15 s long",
		step: qualityStep{duration: 12, warm: 2, elapsed: 14.96, qps: flat(9, 55000), final: 37303, maxMs: 5001, p95Ms: 0.06},
		want: verdict{Reasons: []QualityReason{QualityTooFewSteadySamples, QualityStalled, QualitySteadyFinalMismatch},
			MinSteadySamples: 8, StallSeconds: 5.96, UnreportedSeconds: 5.96},
	}, {
		// Found in the end-to-end suite: a re-run measured 0 steady QPS
		// against a final 1,796. Its median is zero; the final report's
		// rate is what the stopped seconds fall short of.
		name: "the server stopped through a 3 s step's whole window, after a busy warm-up second",
		step: qualityStep{duration: 4, warm: 1, elapsed: 4, qps: []float64{7184, 0, 0, 0}, final: 1796, maxMs: 2900, p95Ms: 1},
		want: verdict{Reasons: []QualityReason{QualityStalled}, MinSteadySamples: 2, StallSeconds: 3},
	}, {
		name: "checkpoint dips to 40 % of the median are waves, not stops",
		step: qualityStep{duration: 310, warm: 10, elapsed: 310, qps: with(with(flat(310, 2000), 50, 60, 800), 200, 215, 800),
			final: 1950, maxMs: 80, p95Ms: 12},
		want: verdict{Valid: true, MinSteadySamples: 240},
	}, {
		name: "a 10 s stop in a 300 s window is under its 15 s limit",
		step: qualityStep{duration: 310, warm: 10, elapsed: 310, qps: with(flat(310, 2000), 100, 110, 0), final: 1935, maxMs: 180, p95Ms: 12},
		want: verdict{Valid: true, MinSteadySamples: 240, StallSeconds: 10},
	}, {
		name: "a 15 s stop in a 300 s window reaches it",
		step: qualityStep{duration: 310, warm: 10, elapsed: 310, qps: with(flat(310, 2000), 100, 115, 0), final: 1903, maxMs: 180, p95Ms: 12},
		want: verdict{Reasons: []QualityReason{QualityStalled}, MinSteadySamples: 240, StallSeconds: 15},
	}, {
		// The final report covers the warm-up too, as the series' whole-run
		// rate it is compared with does: a cold start is no mismatch.
		name: "a stop during the warm-up does not count",
		step: qualityStep{duration: 12, warm: 4, elapsed: 12, qps: with(flat(12, 1500), 0, 4, 0), final: 1000, maxMs: 15, p95Ms: 5},
		want: verdict{Valid: true, MinSteadySamples: 6},
	}, {
		name: "one query 20 × the p95 and over the limit: a stop the series of a slow step cannot show",
		step: qualityStep{duration: 12, warm: 2, elapsed: 12, qps: flat(12, 10), final: 10, maxMs: 3000, p95Ms: 100},
		want: verdict{Reasons: []QualityReason{QualityStalled}, MinSteadySamples: 8, StallSeconds: 3},
	}, {
		name: "a full scan: seconds without a completed query are its granularity",
		step: qualityStep{duration: 12, warm: 2, elapsed: 12, qps: []float64{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}, final: 0.5, maxMs: 2500, p95Ms: 2200},
		want: verdict{Valid: true, MinSteadySamples: 8},
	}, {
		name: "final and series disagree over a complete series",
		step: qualityStep{duration: 12, warm: 2, elapsed: 12.1, qps: flat(12, 1500), final: 1050, maxMs: 9, p95Ms: 5},
		want: verdict{Reasons: []QualityReason{QualitySteadyFinalMismatch}, MinSteadySamples: 8},
	}, {
		name: "the same gap within a noisy series' standard error",
		step: qualityStep{duration: 12, warm: 0, elapsed: 12, qps: []float64{500, 2500, 500, 2500, 500, 2500, 500, 2500, 500, 2500, 500, 2500},
			final: 1275, maxMs: 9, p95Ms: 5},
		want: verdict{Valid: true, MinSteadySamples: 9},
	}, {
		name: "an end-to-end test's 3 s step: 1 s warm-up, 2 s window",
		step: qualityStep{duration: 3, warm: 1, elapsed: 3.0, qps: flat(3, 800), final: 800, maxMs: 40, p95Ms: 4},
		want: verdict{Valid: true, MinSteadySamples: 1},
	}, {
		name: "a 2 s step without an interval report: nothing steady, nothing reported",
		step: qualityStep{duration: 2, elapsed: 2.0, final: 900, maxMs: 30, p95Ms: 4},
		want: verdict{Reasons: []QualityReason{QualityTooFewSteadySamples, QualityStalled}, MinSteadySamples: 1,
			StallSeconds: 2, UnreportedSeconds: 2},
	}, {
		name: "a script without queries is judged on its events",
		step: qualityStep{duration: 12, warm: 2, elapsed: 12, qps: with(flat(12, 400), 5, 8, 0), final: 300, maxMs: 3000, p95Ms: 3,
			queryless: true},
		want: verdict{Reasons: []QualityReason{QualityStalled}, MinSteadySamples: 8, StallSeconds: 3},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := AssessStep(tt.step.result())
			got := verdict{Valid: q.Valid, Reasons: q.Reasons, MinSteadySamples: q.MinSteadySamples,
				StallSeconds: q.StallSeconds, UnreportedSeconds: q.UnreportedSeconds}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s\nquality: %+v", diff, q)
			}
			if q.Attempts != 1 {
				t.Errorf("attempts %d, want 1", q.Attempts)
			}
		})
	}
}

// TestAssessStepLimits pins the thresholds where they bite: a stall of
// exactly the limit is Stalled, a hair less is not; the minimum of steady
// samples is 80 % of the window's seconds.
func TestAssessStepLimits(t *testing.T) {
	for _, tt := range []struct {
		name         string
		stopped      int
		samples      int
		wantStalled  bool
		wantTooFew   bool
		wantMinimum  int
		wantLimitSec float64
	}{
		{name: "1 stopped second of a 12 s step", stopped: 1, samples: 12, wantMinimum: 8, wantLimitSec: 2},
		{name: "2 stopped seconds: the floor", stopped: 2, samples: 12, wantStalled: true, wantMinimum: 8, wantLimitSec: 2},
		{name: "8 steady samples of 10: enough", samples: 10, wantMinimum: 8, wantLimitSec: 2},
		{name: "7 steady samples of 10: too few", samples: 9, wantTooFew: true, wantMinimum: 8, wantLimitSec: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			qps := with(flat(tt.samples, 1000), 4, 4+tt.stopped, 0)
			var sum float64
			for _, v := range qps {
				sum += v
			}
			q := AssessStep(qualityStep{duration: 12, warm: 2, elapsed: float64(tt.samples), qps: qps, final: sum / float64(tt.samples), maxMs: 9, p95Ms: 5}.result())
			stalled, tooFew := false, false
			for _, r := range q.Reasons {
				stalled = stalled || r == QualityStalled
				tooFew = tooFew || r == QualityTooFewSteadySamples
			}
			if stalled != tt.wantStalled || tooFew != tt.wantTooFew || q.MinSteadySamples != tt.wantMinimum || q.StallLimitSeconds != tt.wantLimitSec {
				t.Errorf("stalled %v (want %v), too few %v (want %v), minimum %d (want %d), limit %v (want %v): %+v",
					stalled, tt.wantStalled, tooFew, tt.wantTooFew, q.MinSteadySamples, tt.wantMinimum, q.StallLimitSeconds, tt.wantLimitSec, q)
			}
		})
	}
}

// TestSeriesWithSampleTimes checks that a series with late reports is read
// by its times: the steady samples, the encoding's regular grid.
func TestSeriesWithSampleTimes(t *testing.T) {
	s := &Series{IntervalSeconds: 1, QPS: []float64{10, 20, 30, 40}, Seconds: []float64{2, 3, 8, 9}}
	if got := s.SteadyFrom(2); got != 1 {
		t.Errorf("SteadyFrom(2) = %d, want 1 (the sample (2, 3])", got)
	}
	if got := s.SteadyFrom(3.5); got != 3 {
		t.Errorf("SteadyFrom(3.5) = %d, want 3 (the sample (8, 9])", got)
	}
	want := []float64{10, 10, 20, 30, 30, 30, 30, 30, 40}
	if diff := cmp.Diff(want, s.Regular(s.QPS)); diff != "" {
		t.Errorf("Regular (-want +got):\n%s", diff)
	}
	regular := &Series{IntervalSeconds: 1, QPS: []float64{1, 2, 3}}
	if got := regular.SteadyFrom(2); got != 2 {
		t.Errorf("regular SteadyFrom(2) = %d, want 2", got)
	}
	if got := regular.Ends(); !cmp.Equal(got, []float64{1, 2, 3}) {
		t.Errorf("regular Ends = %v", got)
	}
	d := testDocument(1, []int{1}, 5)
	d.Steps[0].Series.Seconds = []float64{1, 2, 2, 4, 5}
	if err := d.Validate(); err == nil {
		t.Error("a series whose times do not increase validated")
	}
	d.Steps[0].Series.Seconds = []float64{1, 2, 3, 4, 9}
	q := AssessStep(&d.Steps[0])
	if math.IsNaN(q.StallSeconds) {
		t.Error("NaN stall seconds")
	}
	if err := d.Validate(); err != nil {
		t.Errorf("a series with increasing times: %v", err)
	}
}

// TestManifestLeavesInvalidOut checks that an invalid result has no value
// in the manifest (so verdicts, change points and bisections, which read
// the manifest, cannot use it) and is listed with its reasons.
func TestManifestLeavesInvalidOut(t *testing.T) {
	d := testDocument(2, []int{1}, 5)
	d.Steps[0].Quality = &Quality{Valid: false, Reasons: []QualityReason{QualityStalled}, Attempts: 2}
	d.Steps[1].Quality = &Quality{Valid: true, Attempts: 1}
	mc := NewManifestCell(d, "Succeeded", "", "")
	bad, good := d.Steps[0], d.Steps[1]
	if _, ok := mc.QPS[bad.Step][bad.Threads]; ok {
		t.Errorf("invalid %s@%d has a QPS in the manifest", bad.Step, bad.Threads)
	}
	if _, ok := mc.QPSSpread[bad.Step][bad.Threads]; ok {
		t.Errorf("invalid %s@%d has a spread in the manifest", bad.Step, bad.Threads)
	}
	if _, ok := mc.QPS[good.Step][good.Threads]; !ok {
		t.Errorf("valid %s@%d has no QPS in the manifest", good.Step, good.Threads)
	}
	want := map[string]map[int][]QualityReason{bad.Step: {bad.Threads: {QualityStalled}}}
	if diff := cmp.Diff(want, mc.Invalid); diff != "" {
		t.Errorf("invalid (-want +got):\n%s", diff)
	}
	if n := mc.InvalidCount(); n != 1 {
		t.Errorf("InvalidCount %d, want 1", n)
	}
	m := &Manifest{SchemaVersion: ManifestSchemaV1, Run: Run{Name: "r"}, Cells: []ManifestCell{NewManifestCell(d, "Succeeded", "", "")}}
	m.Cells[0].Invalid[bad.Step] = map[int][]QualityReason{0: {QualityStalled}}
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "invalid") {
		t.Errorf("an invalid result at 0 threads: %v", err)
	}
}
