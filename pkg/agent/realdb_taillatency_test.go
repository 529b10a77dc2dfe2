package agent

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/plan"
	"github.com/dbbench/dbbench/pkg/results"
)

// tailStallConfig is the configuration under test (B) against the test
// server's own (A), applied with SET GLOBAL between runs so that A and B
// share one server, one data directory and one disk:
//
//   - innodb_log_file_size at its floor here (16 MiB, the log buffer's
//     size) instead of the server's 128 MiB: the redo log fills every few
//     seconds of a write step and InnoDB must then flush dirty pages before
//     it can reuse it;
//   - innodb_adaptive_flushing off, the dirty-page limits at their highest
//     and the background flush held to 100 pages/s (innodb_io_capacity and
//     its max): nothing flushes ahead of time, so the flush comes as a
//     burst when the checkpoint age reaches the log's async and sync
//     points, and in the sync zone user threads wait for it.
//
// The classic result is periodic flush stalls: most transactions never
// meet one and run as fast as before, the few that arrive during a burst
// wait for it. In a closed loop that moves the tail a lot and the mean (so
// throughput, threads / mean latency) a little. tailBaseConfig restores A.
var (
	tailStallConfig = []string{"innodb_log_file_size=16777216", "innodb_adaptive_flushing=OFF",
		"innodb_max_dirty_pages_pct=99", "innodb_max_dirty_pages_pct_lwm=0", "innodb_io_capacity=100", "innodb_io_capacity_max=100"}
	tailBaseConfig = []string{"innodb_log_file_size=134217728", "innodb_adaptive_flushing=ON",
		"innodb_max_dirty_pages_pct=90", "innodb_max_dirty_pages_pct_lwm=0", "innodb_io_capacity_max=2000", "innodb_io_capacity=200"}
)

// TestRealTailLatency runs a short write step on real MariaDB, three times
// with the server's configuration (A) and three times with periodic flush
// stalls (B, tailStallConfig), interleaved A B B A A B so that drift of the
// machine falls on both sides, and feeds the two sides as two runs with
// repeats into the verdict the controller uses (analysis.JudgeRuns with
// Throughput and P99Latency, minMagnitudePercent's default 5 %):
//
//	DBBENCH_REAL_DB=1 DBBENCH_REAL_DB_ENGINES=mariadb go test ./pkg/agent -run RealTailLatency -v
//
// The verdict must test the closed loop's throughput and p99 and the fixed
// rate's p99 alone, between runs; then B must regress on p99 latency at the
// fixed rate while its closed-loop throughput change stays under the
// magnitude, unless A's own runs vary too much to judge a 5 % change (the
// test then skips, saying so). Every run's figures and the verdict are
// printed either way.
func TestRealTailLatency(t *testing.T) {
	needRealDB(t)
	e := plan.MariaDB
	if !strings.Contains(" "+strings.Join(enginesAsStrings(), " ")+" ", " mariadb ") {
		t.Skip("MariaDB is not among DBBENCH_REAL_DB_ENGINES")
	}
	const (
		step     = "update-nonindex"
		threads  = 4
		tailRate = 600
	)
	rateStep := results.RateStepName(step, "", tailRate)
	s := &Server{Engine: e, Host: "127.0.0.1", Port: realPorts[e], Database: "sbtest", User: realUser, Password: realPassword}
	db, err := s.open()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	apply := func(settings []string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, kv := range settings {
			// Resizing the redo log returns at once and completes in the
			// background; the agent's load and flush take longer than that.
			if _, err := db.ExecContext(ctx, "SET GLOBAL "+kv); err != nil {
				t.Fatalf("SET GLOBAL %s: %v", kv, err)
			}
		}
	}
	defer apply(tailBaseConfig)

	sides := map[string]*results.Manifest{}
	for _, name := range []string{"A", "B"} {
		sides[name] = &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: results.Run{Name: "tail-" + name, Suite: "tail"}}
	}
	repeat := map[string]int{}
	for i, side := range []string{"A", "B", "B", "A", "A", "B"} {
		if side == "A" {
			apply(tailBaseConfig)
		} else {
			apply(tailStallConfig)
		}
		p := realPlan(e, filepath.Join(t.TempDir(), "out"), step)
		// 30,000 rows (≈ 7 MB of redo to load) and 6 s of writes at a few
		// thousand QPS (≈ 8 MB more) bring a 16 MiB redo log to its flush
		// points by the fixed-rate run; A's 128 MiB log never gets there.
		p.Workload.TableSize = 30000
		p.Workload.WriteSeconds, p.Workload.WarmupSeconds = 6, 1
		p.Workload.Threads = []int{threads}
		// The same step open-loop at a fixed rate, the same for A and B:
		// a closed loop hides a stall (its few clients just wait; only
		// `threads` events meet it), arrivals at a fixed rate pile up
		// behind it and every one of them counts (docs/reports.md,
		// "Fixed-rate steps").
		p.Workload.FixedRate = &plan.FixedRate{Rates: []int{tailRate}}
		res, compact, _ := runReal(t, p, realPassword)
		if res.ExitCode != plan.ExitOK {
			t.Fatalf("run %d (%s): exit %d: %v", i, side, res.ExitCode, res.Err)
		}
		// The cell as the controller's manifest has it: one repeat of one
		// combination per run.
		repeat[side]++
		compact.Cell.Repeat = repeat[side]
		mc := results.NewManifestCell(compact, "Succeeded", "", "")
		mc.Name = fmt.Sprintf("mariadb-test-r%d", repeat[side])
		sides[side].Cells = append(sides[side].Cells, mc)
		for _, r := range compact.Steps {
			if r.LatencyP99Ms == nil || r.LatencyP95Ms == nil {
				t.Fatalf("run %d (%s) %s: no p95/p99 latency (%s)", i, side, r.Step, r.Error)
			}
			t.Logf("run %d %s %s: %.0f QPS, p95 %.2f ms, p99 %.2f ms, max %.1f ms", i, side, r.Step, r.SteadyQPS, *r.LatencyP95Ms, *r.LatencyP99Ms, r.LatencyMaxMs)
		}
	}

	v, err := analysis.JudgeRuns(sides["B"], sides["A"], analysis.VerdictOptions{MinMagnitude: 0.05,
		Metrics: []analysis.Metric{analysis.MetricThroughput, analysis.MetricP99Latency}})
	if err != nil {
		t.Fatal(err)
	}
	// A 5 % magnitude means nothing on a machine whose identical runs
	// differ by more: measured on the A side (its three closed-loop runs),
	// above maxAACV the machine is too noisy for this test, which says so
	// and skips after printing the verdict. On the shared 2-core machine of
	// this repository's sessions (load average 11–25) A's CV was 19–42 %
	// in three of four runs and 6 % in the fourth, which failed:
	// docs/reports.md, "Verdicts on latency".
	var qps []float64
	for _, c := range sides["A"].Cells {
		qps = append(qps, c.QPS[step][threads])
	}
	aaCV := cvOf(qps)
	points := map[string]analysis.PointVerdict{}
	for _, p := range v.Points {
		points[p.Step+" "+string(p.Metric)] = p
		t.Logf("%s %s: %.2f → %.2f %s (%+.1f %%), p %.2g, adjusted %.2g, %s, regressed %v",
			p.Step, p.Metric.Label(), p.Before, p.After, p.Metric.Unit(), p.ChangePercent, p.P, p.AdjustedP, p.Detail, p.Regressed)
	}
	for _, pair := range v.RegressedPairs() {
		t.Logf("regressed: %s", pair)
	}
	tp, ok1 := points[step+" "+string(analysis.MetricThroughput)]
	tail, ok2 := points[rateStep+" "+string(analysis.MetricP99Latency)]
	// Throughput and p99 of the closed loop, p99 alone at the fixed rate.
	if len(v.Points) != 3 || !ok1 || !ok2 || tp.Method != analysis.MethodBetweenRuns || tail.Method != analysis.MethodBetweenRuns {
		t.Fatalf("points %v: want the closed loop's throughput and p99 and the fixed rate's p99, tested between runs", v.Points)
	}
	if aaCV > maxAACV {
		t.Skipf("A's three closed-loop runs of one configuration vary by CV %.0f %% (> %.0f %%): too noisy a machine to judge a 5 %% magnitude", 100*aaCV, 100*maxAACV)
	}
	if !tail.Regressed {
		t.Errorf("%s p99 %+.1f %% (adjusted p %.2g): want Regressed on p99 latency", rateStep, tail.ChangePercent, tail.AdjustedP)
	}
	if tp.ChangePercent <= -5 || tp.Regressed {
		t.Errorf("%s throughput changed %+.1f %% (regressed %v): want a change under the 5 %% magnitude", step, tp.ChangePercent, tp.Regressed)
	}
}

// maxAACV is the run-to-run CV of the A side's throughput above which
// TestRealTailLatency does not judge.
const maxAACV = 0.10

// cvOf is the sample coefficient of variation.
func cvOf(xs []float64) float64 {
	var sum, ss float64
	for _, x := range xs {
		sum += x
	}
	m := sum / float64(len(xs))
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss/float64(len(xs)-1)) / m
}
