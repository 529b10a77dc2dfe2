package controllers

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/bisect"
	"github.com/dbbench/dbbench/pkg/results"
)

// qualityStep is a step result with a quality verdict: valid, re-run
// (replaced), and with the unreported (client starved) and stopped
// (server stopped) seconds of an invalid one.
func qualityStep(step string, threads int, valid, rerun bool, unreported, stall float64) results.StepResult {
	q := &results.Quality{Valid: valid, WindowSeconds: 10, MinSteadySamples: 8, StallSeconds: stall, StallLimitSeconds: 2,
		UnreportedSeconds: unreported, Attempts: 1}
	if !valid {
		q.Reasons = []results.QualityReason{results.QualityStalled}
	}
	if rerun {
		q.Attempts, q.Replaced = 2, &results.ReplacedRun{Reasons: []results.QualityReason{results.QualityStalled}, StallSeconds: 5}
	}
	return results.StepResult{Step: step, Threads: threads, DurationSeconds: 12, WarmupSeconds: 2, SteadyQPS: 1000, Quality: q}
}

// resultQualityCases are finished attempts with and without invalid results.
var resultQualityCases = []struct {
	name        string
	steps       []results.StepResult
	want        *dbbenchv1alpha1.CellQuality
	wantStarved bool
}{{
	name:  "written before the gate",
	steps: []results.StepResult{{Step: "point-query", Threads: 1, SteadyQPS: 1000}},
}, {
	name:  "every result valid at once",
	steps: []results.StepResult{qualityStep("point-query", 1, true, false, 0, 0)},
}, {
	name:  "a re-run that came out valid",
	steps: []results.StepResult{qualityStep("point-query", 1, true, true, 0, 0)},
	want:  &dbbenchv1alpha1.CellQuality{Rerun: 1},
}, {
	name:  "the server stopped while the client watched: flagged, not retried",
	steps: []results.StepResult{qualityStep("update-index", 8, false, false, 0, 5)},
	want:  &dbbenchv1alpha1.CellQuality{Invalid: 1, InvalidSteps: []string{"update-index@8: Stalled"}},
}, {
	name:  "the client did not run: retried",
	steps: []results.StepResult{qualityStep("point-query", 1, true, false, 0, 0), qualityStep("read-only-count", 8, false, true, 9.3, 9.76)},
	want:  &dbbenchv1alpha1.CellQuality{Invalid: 1, Rerun: 1, InvalidSteps: []string{"read-only-count@8: Stalled"}}, wantStarved: true,
}, {
	name:  "a late report under the limit is no starvation",
	steps: []results.StepResult{qualityStep("update-index", 8, false, false, 1, 3)},
	want:  &dbbenchv1alpha1.CellQuality{Invalid: 1, InvalidSteps: []string{"update-index@8: Stalled"}},
}}

// TestResultQuality is the rule that decides a finished attempt with
// invalid results: the status summary always, and a retry (ClientStarved,
// an infrastructure failure) only when the client itself did not run.
func TestResultQuality(t *testing.T) {
	for _, tt := range resultQualityCases {
		t.Run(tt.name, func(t *testing.T) {
			got, f := resultQuality(&results.Document{Steps: tt.steps})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("quality (-want +got):\n%s", diff)
			}
			if (f != nil) != tt.wantStarved {
				t.Fatalf("failure %+v, want starved %v", f, tt.wantStarved)
			}
			if f != nil && (f.reason != dbbenchv1alpha1.ReasonClientStarved || !f.retried() || !strings.Contains(f.message, "read-only-count@8 (9.3 s of 10 s unreported)")) {
				t.Errorf("failure %+v: want a retried ClientStarved naming the step", f)
			}
		})
	}
	var many []results.StepResult
	for th := 1; th <= 12; th++ {
		many = append(many, qualityStep("point-query", th, false, false, 0, 5))
	}
	got, _ := resultQuality(&results.Document{Steps: many})
	if got.Invalid != 12 || len(got.InvalidSteps) != maxInvalidSteps {
		t.Errorf("12 invalid results: invalid %d, %d named; want 12 and %d", got.Invalid, len(got.InvalidSteps), maxInvalidSteps)
	}
}

// TestJudgedInvalid: a bisection round counts the invalid step results of
// its cells that it would have judged; the others are not its concern.
func TestJudgedInvalid(t *testing.T) {
	s := &bisectionSetup{judge: func(k bisect.Key) bool { return k.Step == "point-query" && k.Metric == analysis.MetricThroughput }}
	d := &results.Document{Steps: []results.StepResult{
		qualityStep("point-query", 1, false, false, 0, 5), qualityStep("point-query", 8, false, false, 0, 5),
		qualityStep("point-query", 16, true, false, 0, 0), qualityStep("update-index", 8, false, false, 0, 5)}}
	mc := results.NewManifestCell(d, "Succeeded", "", "")
	if n := judgedInvalid(s, &mc); n != 2 {
		t.Errorf("judged invalid %d, want 2 (point-query at 1 and 8 threads)", n)
	}
	if _, ok := mc.QPS["point-query"][8]; ok {
		t.Error("an invalid result has a value the round would observe")
	}
}

// TestRegressionStatusCountsInvalid: the run's regression status says how
// many invalid values its verdict left out.
func TestRegressionStatusCountsInvalid(t *testing.T) {
	v := &analysis.Verdict{Invalid: []analysis.InvalidPoint{{Run: analysis.RunCurrent, Cell: "c", Step: "point-query", Threads: 1},
		{Run: analysis.RunBaseline, Cell: "c", Step: "point-query", Threads: 8}}}
	if st := regressionStatusOf(v, "base", ""); st.InvalidLeftOut != 2 {
		t.Errorf("invalidLeftOut %d, want 2", st.InvalidLeftOut)
	}
}
