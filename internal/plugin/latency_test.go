package plugin

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbbench/dbbench/pkg/results"
)

// latencyCells is twoCells with p95/p99 latency (scaled by slow) and a
// fixed-rate variant of point-query.
func latencyCells(run string, start time.Time, slow float64) []*results.Document {
	docs := twoCells(run, "s", start, 1)
	for i, d := range docs {
		k := slow * (1 + float64(i)) // the second cell is twice as slow
		for j := range d.Steps {
			s := &d.Steps[j]
			p95, p99 := 2*k, 5*k
			s.LatencyP95Ms, s.LatencyP99Ms, s.LatencyMaxMs = &p95, &p99, 10*k
		}
		p95, p99 := 1*k, 3*k
		d.Steps = append(d.Steps, results.StepResult{Step: "point-query@0.5peak", Threads: 1, DurationSeconds: 60,
			SteadyQPS: 500, SteadyTPS: 500, FinalQPS: 500, LatencyAvgMs: 1, LatencyMaxMs: 9 * k, LatencyP95Ms: &p95, LatencyP99Ms: &p99,
			Rate: &results.Rate{Step: "point-query", TargetTPS: 500, FractionOfPeak: "0.5", PeakTPS: 1000, PollIntervalMs: 1}})
	}
	return docs
}

func TestReportAndCompareLatency(t *testing.T) {
	root := t.TempDir()
	writeDocs(t, filepath.Join(root, "before"), latencyCells("before", t0, 1)...)
	writeDocs(t, filepath.Join(root, "after"), latencyCells("after", t0.Add(24*time.Hour), 1.5)...)

	out, _, err := runCmd(t, noCluster{}, "report", "--from-dir", filepath.Join(root, "before"))
	if err != nil {
		t.Fatal(err)
	}
	flat := squash(out)
	checkContains(t, "report", flat, out, []string{
		"Response time, 1 threads: p95 and p99 latency in ms per cell (lower is better)",
		"Relative response time, 1 threads: latency(cell) / latency(mariadb-10-11-base), LOWER IS BETTER",
		// point-query: 11.4 is twice as slow: p95 2 → 4, p99 5 → 10.
		"point-query 2.00 5.00 4.00 10.00",
		"point-query@0.5peak 1.00 1.00 2.00 2.00",
		"Fixed-rate (open-loop) runs: response time at a target rate",
	})
	// Throughput tables leave the fixed-rate variant out.
	rel := out[:strings.Index(out, "Group statistics")]
	if strings.Contains(rel, "@0.5peak") {
		t.Errorf("relative throughput lists the fixed-rate variant:\n%s", rel)
	}

	out, _, err = runCmd(t, noCluster{}, "compare", "before", "after", "--from-dir", root)
	if err != nil {
		t.Fatal(err)
	}
	flat = squash(out)
	checkContains(t, "compare", flat, out, []string{
		"after vs before: p99 latency per cell, 1 threads, ratio p99(after) / p99(before), LOWER IS BETTER",
		// after is 1.5 times slower everywhere.
		"point-query 5.00 7.50 1.50 10.00 15.00 1.50",
	})
}

// squash collapses runs of spaces, so expectations do not depend on the
// text table's column widths.
func squash(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}
