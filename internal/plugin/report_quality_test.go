package plugin

import (
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/results"
)

// stallStep is the read-only-count step (12 s, 2 s warm-up, a
// 9.8 s stall): reports at 2 s and 3 s, steadyQps 1,547 against a
// finalQps of 415. gated says whether the agent that wrote it had the
// quality gate: then its series has its sample times and it is marked
// invalid.
func stallStep(gated bool) results.StepResult {
	el := 12.3
	s := results.StepResult{Step: "read-only-count", Threads: 1, DurationSeconds: 12, WarmupSeconds: 2, ElapsedSeconds: &el,
		SteadyQPS: 1547, SteadyTPS: 1547, SteadySamples: 1, FinalQPS: 415, FinalTPS: 415, LatencyAvgMs: 19, LatencyMaxMs: 9759,
		Series: &results.Series{IntervalSeconds: 1, LatencyPercentile: 95, QPS: []float64{1400, 1547}, TPS: []float64{1400, 1547},
			LatencyMs: []float64{5, 5}, ErrorsPerSecond: []float64{0, 0}, ReconnectsPerSecond: []float64{0, 0}}}
	if gated {
		s.Series.Seconds = []float64{2, 3}
		q := results.AssessStep(&s)
		s.Quality = &q
	}
	return s
}

// TestReportOfAStalledCell is `kubectl dbbench report --from-dir` of a run
// with a stalled cell, as an agent without the quality gate wrote it (the
// report failed as a whole: "series of 2 samples has none after the 2 s
// warm-up: no data") and as one with it (the value is invalid): the report
// is made, the other cells' figures are there, and a note names the cell.
func TestReportOfAStalledCell(t *testing.T) {
	for _, tc := range []struct {
		name  string
		gated bool
		wants []string
	}{
		{name: "written without the gate", wants: []string{
			"point-query      1000.00   1.23",
			"note: cell mariadb-11-4-base step read-only-count (1 threads): throughput over time left out: series of 2 samples has none after the 2 s warm-up: no data",
		}},
		{name: "written with the gate", gated: true, wants: []string{
			"point-query      1000.00   1.23",
			"read-only-count  1500.00   invalid",
			"note: mariadb-11-4-base's result for read-only-count is invalid",
			"note: cell mariadb-11-4-base step read-only-count (1 threads) is invalid (TooFewSteadySamples, Stalled 9.3 s of 10 s, SteadyFinalMismatch): its 1547.0 QPS is not a value",
			"read-only-count (invalid)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps := []string{"point-query@1", "read-only-count@1"}
			a := doc("nightly-1", "nightly", "mariadb-10-11-base", "10.11", t0, map[string]float64{"point-query@1": 1000, "read-only-count@1": 1500}, steps...)
			b := doc("nightly-1", "nightly", "mariadb-11-4-base", "11.4", t0, map[string]float64{"point-query@1": 1234, "read-only-count@1": 1500}, steps...)
			b.Steps[1] = stallStep(tc.gated)
			dir := t.TempDir()
			writeDocs(t, dir, a, b)
			out, _, err := runCmd(t, noCluster{}, "report", "--from-dir", dir)
			if err != nil {
				t.Fatalf("the report failed as a whole: %v", err)
			}
			checkContains(t, "report", out, out, tc.wants)
			if tc.gated && strings.Contains(out, "1.03") {
				t.Errorf("the invalid value's ratio (1547 / 1500) is shown as a number:\n%s", out)
			}
		})
	}
}
