package pgbench

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
)

func fixture(t *testing.T, name string) *Output {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "15", name))
	if err != nil {
		t.Fatal(err)
	}
	out, err := ParseString(string(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// TestParseRealOutput reads every fixture (testdata/15/README.md) for what
// it shows.
func TestParseRealOutput(t *testing.T) {
	type want struct {
		script            string
		clients, progress int
		transactions      int64
		tps, latencyAvgMs float64
		errors            int
		noSummary         bool
		firstSecond       float64
	}
	for _, tc := range []struct {
		file string
		want want
	}{
		{"tpcb.txt", want{script: "TPC-B (sort of)", clients: 2, progress: 3, transactions: 17127, tps: 4294.594057, latencyAvgMs: 0.465, firstSecond: 1}},
		{"select_only.txt", want{script: "select only", clients: 2, progress: 4, transactions: 186488, tps: 46689.594861, latencyAvgMs: 0.043, firstSecond: 1}},
		{"select_only_prepared.txt", want{script: "select only", clients: 1, progress: 3, firstSecond: 1}},
		{"stall_server_stop.txt", want{script: "select only", clients: 2, progress: 8, transactions: 256071, tps: 32030.792069, latencyAvgMs: 0.062, firstSecond: 1}},
		{"fatal_nodb.txt", want{errors: 2, noSummary: true}},
		{"init.txt", want{noSummary: true}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			out := fixture(t, tc.file)
			w := tc.want
			if out.Script != w.script || out.Clients != w.clients || len(out.Progress) != w.progress || len(out.Errors) != w.errors || (out.Summary == nil) != w.noSummary {
				t.Fatalf("script %q clients %d progress %d errors %v summary %+v; want %+v", out.Script, out.Clients, len(out.Progress), out.Errors, out.Summary, w)
			}
			if w.progress > 0 && out.Progress[0].Second != w.firstSecond {
				t.Errorf("first progress at %v s, want %v", out.Progress[0].Second, w.firstSecond)
			}
			if s := out.Summary; s != nil && w.transactions > 0 && (s.Transactions != w.transactions || s.TPS != w.tps || s.LatencyAvgMs != w.latencyAvgMs) {
				t.Errorf("summary %+v, want %d transactions, %v tps, %v ms", s, w.transactions, w.tps, w.latencyAvgMs)
			}
			if out.Version == "" && !w.noSummary {
				t.Error("no version")
			}
		})
	}
}

// TestSysbenchShape: a TPC-B-like run in sysbench's shape has 7 queries per
// transaction (BEGIN and END counted, as sysbench counts them), its final
// report's time the transactions over the TPS.
func TestSysbenchShape(t *testing.T) {
	out := fixture(t, "tpcb.txt").Sysbench(0)
	if len(out.Intervals) != 3 || out.Intervals[1].Second != 2 || out.Intervals[1].TPS != 4276.3 || math.Abs(out.Intervals[1].QPS-7*4276.3) > 1e-6 {
		t.Errorf("intervals %+v", out.Intervals)
	}
	f := out.Final
	if f == nil || f.SQL == nil || f.SQL.Queries != 7*17127 || f.SQL.TransactionsPerSec != 4294.594057 {
		t.Fatalf("final %+v", f)
	}
	if got := f.TotalTimeSeconds; got < 3.98 || got > 3.99 {
		t.Errorf("elapsed %v s, want 17127 / 4294.59 ≈ 3.988", got)
	}
	if got := fixture(t, "select_only.txt").Sysbench(5).Intervals[0]; got.QPS != got.TPS {
		t.Errorf("select only: QPS %v, TPS %v: one statement per transaction whatever the caller says", got.QPS, got.TPS)
	}
}

// TestQualityGateOnPgbench runs the stall fixtures through the steady state
// and the quality gate a sysbench step goes through: the server stopped
// 3 s shows as zero seconds (Stalled), the client stopped as one late line
// whose 2.9 s no report covered (Stalled; its 5 steady samples are enough
// for the 7-s window); a clean run is valid.
func TestQualityGateOnPgbench(t *testing.T) {
	for _, tc := range []struct {
		file string
		warm float64
		want []results.QualityReason
	}{
		{"select_only.txt", 1, nil},
		{"stall_server_stop.txt", 1, []results.QualityReason{results.QualityStalled}},
		{"stall_client_stop.txt", 1, []results.QualityReason{results.QualityStalled}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			o := fixture(t, tc.file)
			sb := o.Sysbench(0)
			res := results.StepResult{Step: "pgbench-select", Threads: o.Clients, DurationSeconds: o.DurationSeconds, WarmupSeconds: tc.warm,
				FinalQPS: sb.Final.SQL.QueriesPerSec, FinalTPS: sb.Final.SQL.TransactionsPerSec}
			el := sb.Final.TotalTimeSeconds
			res.ElapsedSeconds = &el
			se := &results.Series{IntervalSeconds: 1}
			for i, iv := range sb.Intervals {
				if iv.Second != float64(i+1) && se.Seconds == nil {
					se.Seconds = []float64{}
					for _, jv := range sb.Intervals {
						se.Seconds = append(se.Seconds, jv.Second)
					}
				}
				se.QPS, se.TPS = append(se.QPS, iv.QPS), append(se.TPS, iv.TPS)
			}
			res.Series = se
			st, err := sysbench.SteadyStateOf(sb.Intervals, tc.warm)
			if err != nil {
				t.Fatal(err)
			}
			res.SteadyQPS = st.QPS
			q := results.AssessStep(&res)
			if diff := cmp.Diff(tc.want, q.Reasons); diff != "" {
				t.Errorf("reasons (-want +got):\n%s\nquality %+v", diff, q)
			}
		})
	}
}

// TestAggregateLogs: the two threads' aggregated logs of a real run give
// the run's latency extremes in ms (the summary prints neither), and they
// reach the final report in sysbench's shape.
func TestAggregateLogs(t *testing.T) {
	var e Extremes
	for _, f := range []string{"aggregate_thread0.log", "aggregate_thread1.log"} {
		r, err := os.Open(filepath.Join("testdata", "15", f))
		if err != nil {
			t.Fatal(err)
		}
		err = e.ReadAggregateLog(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if e.MinMs != 0.023 || e.MaxMs != 11.791 || e.Transactions != 36522+38351+38146+36668+37954+37786 {
		t.Errorf("extremes %+v: want 0.023 and 11.791 ms over six seconds' transactions", e)
	}
	out := fixture(t, "select_only.txt")
	out.Summary.Extremes = &e
	if l := out.Sysbench(0).Final.Latency; l.MinMs != 0.023 || l.MaxMs != 11.791 {
		t.Errorf("final latency %+v", l)
	}
	var bad Extremes
	if err := bad.ReadAggregateLog(strings.NewReader("1795764314 36522 954235\n")); err == nil {
		t.Error("a short line was read")
	}
}
