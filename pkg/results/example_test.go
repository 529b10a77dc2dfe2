package results_test

import (
	"fmt"
	"os"
	"time"

	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
)

// stepFromSysbench shows how an agent fills a StepResult from parsed sysbench
// output (the results package itself does not depend on the parser).
func stepFromSysbench(out *sysbench.Output, step string, warmup float64, argv []string) (results.StepResult, error) {
	st, err := out.SteadyState(warmup)
	if err != nil {
		return results.StepResult{}, err
	}
	f := out.Final
	r := results.StepResult{
		Step: step, Threads: out.Threads, WarmupSeconds: warmup,
		DurationSeconds: 10, ElapsedSeconds: &f.TotalTimeSeconds,
		Command:   results.RedactCommand(argv),
		SteadyQPS: st.QPS, SteadyTPS: st.TPS, SteadySamples: st.Samples,
		FinalQPS: f.SQL.QueriesPerSec, FinalTPS: f.SQL.TransactionsPerSec,
		Queries: f.SQL.Queries, Transactions: f.SQL.Transactions,
		LatencyAvgMs: f.Latency.AvgMs, LatencyMinMs: &f.Latency.MinMs, LatencyMaxMs: f.Latency.MaxMs,
		Errors: f.SQL.IgnoredErrors, ErrorsPerSecond: f.SQL.IgnoredErrorsPerSec,
		Reconnects: f.SQL.Reconnects, ReconnectsPerSecond: f.SQL.ReconnectsPerSec,
		Series: &results.Series{IntervalSeconds: float64(out.ReportIntervalSeconds), LatencyPercentile: 95},
	}
	if p95, ok := f.Latency.Get(95); ok {
		r.LatencyP95Ms = &p95
	}
	for _, iv := range out.Intervals {
		s := r.Series
		s.QPS, s.TPS = append(s.QPS, iv.QPS), append(s.TPS, iv.TPS)
		s.LatencyMs = append(s.LatencyMs, iv.LatencyMs)
		s.ErrorsPerSecond = append(s.ErrorsPerSecond, iv.ErrorsPerSec)
		s.ReconnectsPerSecond = append(s.ReconnectsPerSecond, iv.ReconnectsPerSec)
	}
	return r, nil
}

func Example() {
	f, err := os.Open("../sysbench/testdata/1.0.20/point_select_10s.txt")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	out, err := sysbench.Parse(f)
	if err != nil {
		panic(err)
	}
	step, err := stepFromSysbench(out, "point-query", 3, []string{"sysbench", "oltp_point_select", "--mysql-password=secret", "run"})
	if err != nil {
		panic(err)
	}
	doc := &results.Document{
		SchemaVersion: results.SchemaV1, Form: results.FormFull,
		Run:        results.Run{Name: "demo"},
		Cell:       results.Cell{Name: "mariadb-10-11-r0", Engine: "mariadb", Version: "10.11", Attempt: 1},
		StartedAt:  time.Date(2026, 11, 21, 6, 15, 0, 0, time.UTC),
		Status:     results.Status{Outcome: results.OutcomeSucceeded},
		Provenance: results.Provenance{ServerVersion: "10.11.19-MariaDB-0+deb12u1", SysbenchVersion: out.Version.String()},
		Steps:      []results.StepResult{step},
	}
	compact, b, err := results.Compact(doc, results.CompactOptions{})
	if err != nil {
		panic(err)
	}
	s := compact.Steps[0]
	fmt.Println(s.Command)
	fmt.Printf("steady %.2f qps, final %.2f qps\n", s.SteadyQPS, s.FinalQPS)
	fmt.Printf("summary: median %.2f, min %.2f, stalls %gs\n", s.Summary.Median, s.Summary.Min, s.Summary.StallSeconds)
	fmt.Println("compact document fits a ConfigMap:", len(b) < results.MaxConfigMapBytes)
	// Output:
	// [sysbench oltp_point_select --mysql-password=REDACTED run]
	// steady 42700.80 qps, final 40494.52 qps
	// summary: median 40241.83, min 21562.01, stalls 0s
	// compact document fits a ConfigMap: true
}
