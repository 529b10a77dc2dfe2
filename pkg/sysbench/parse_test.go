package sysbench

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func readFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParseGoldenFull compares whole parses of real (1.0.20) and
// hand-written (1.1) output with values read off the files by eye.
func TestParseGoldenFull(t *testing.T) {
	v1020 := &Version{Major: 1, Minor: 0, Patch: 20, LuaJIT: "using system LuaJIT 2.1.0-beta3", Raw: "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)"}
	tests := []struct {
		file string
		want *Output
	}{{
		file: "1.0.20/read_write.txt",
		want: &Output{
			Version: v1020, Threads: 2, ReportIntervalSeconds: 1,
			Intervals: []Interval{
				{Second: 1, Threads: 2, TPS: 1016.09, QPS: 20356.70, ReadQPS: 14253.19, WriteQPS: 4069.34, OtherQPS: 2034.17, LatencyMs: 3.96, LatencyPercentile: 95},
				{Second: 2, Threads: 2, TPS: 789.12, QPS: 15773.31, ReadQPS: 11043.61, WriteQPS: 3151.46, OtherQPS: 1578.23, LatencyMs: 4.57, LatencyPercentile: 95},
				{Second: 3, Threads: 2, TPS: 772.95, QPS: 15451.97, ReadQPS: 10811.28, WriteQPS: 3095.79, OtherQPS: 1544.90, LatencyMs: 5.47, LatencyPercentile: 95},
			},
			Final: &Report{
				Layout: LayoutGeneral,
				SQL: &SQLStatistics{Read: 36120, Write: 10320, Other: 5160, Total: 51600,
					Transactions: 2580, TransactionsPerSec: 859.35, Queries: 51600, QueriesPerSec: 17186.93},
				TotalTimeSeconds: 3.0019, TotalEvents: 2580, EventsPerSec: 2580 / 3.0019,
				Latency:  Latency{MinMs: 0.94, AvgMs: 2.32, MaxMs: 15.31, SumMs: 5996.85, Percentiles: []Percentile{{95, 4.74}}},
				Fairness: &Fairness{EventsAvg: 1290, EventsStddev: 22, ExecTimeAvgSeconds: 2.9984, ExecTimeStddevSec: 0},
			},
		},
	}, {
		file: "1.0.20/prepare.txt",
		want: &Output{Version: v1020, Prepared: []PreparedTable{
			{Table: "sbtest1", Rows: 10000, SecondaryIndex: true},
			{Table: "sbtest2", Rows: 10000, SecondaryIndex: true},
		}},
	}, {
		file: "1.0.20/point_select_p0.txt",
		want: &Output{
			Version: v1020, Threads: 2, ReportIntervalSeconds: 1,
			Intervals: []Interval{
				{Second: 1, Threads: 2, TPS: 64263.92, QPS: 64263.92, ReadQPS: 64263.92},
				{Second: 2, Threads: 2, TPS: 55563.24, QPS: 55563.24, ReadQPS: 55563.24},
				{Second: 3, Threads: 2, TPS: 25052.49, QPS: 25052.49, ReadQPS: 25052.49},
			},
			Final: &Report{
				Layout: LayoutGeneral,
				SQL: &SQLStatistics{Read: 144917, Total: 144917, Transactions: 144917, TransactionsPerSec: 48241.02,
					Queries: 144917, QueriesPerSec: 48241.02},
				TotalTimeSeconds: 3.0037, TotalEvents: 144917, EventsPerSec: 144917 / 3.0037,
				Latency:  Latency{MinMs: 0.03, AvgMs: 0.04, MaxMs: 12.01, SumMs: 5994.08},
				Fairness: &Fairness{EventsAvg: 72458.5, EventsStddev: 4587.5, ExecTimeAvgSeconds: 2.9970},
			},
		},
	}, {
		file: "1.1/read_only_p99.txt",
		want: nil, // checked by invariants only; see TestParse11
	}}
	for _, tt := range tests {
		if tt.want == nil {
			continue
		}
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParseString(readFixture(t, tt.file))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParse11(t *testing.T) {
	got, err := ParseString(readFixture(t, "1.1/read_write.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Report{
		Layout: LayoutThroughput,
		SQL: &SQLStatistics{Read: 158718, Write: 45348, Other: 22674, Total: 226740,
			Transactions: 11337, TransactionsPerSec: 1133.22, Queries: 226740, QueriesPerSec: 22664.48,
			IgnoredErrors: 3, IgnoredErrorsPerSec: 0.30},
		TotalTimeSeconds: 10.0042, TotalEvents: 11337, EventsPerSec: 1133.2240,
		Latency:  Latency{MinMs: 2.41, AvgMs: 6.63, MaxMs: 87.20, SumMs: 75164.31, Percentiles: []Percentile{{95, 8.90}}},
		Fairness: &Fairness{EventsAvg: 1417.125, EventsStddev: 12.41, ExecTimeAvgSeconds: 9.9939},
	}
	if diff := cmp.Diff(want, got.Final); diff != "" {
		t.Errorf("final report (-want +got):\n%s", diff)
	}
	if got.Version == nil || got.Version.String() != "1.1.0-df89d34" || !got.Version.HasWarmupTime() {
		t.Errorf("version = %+v, want 1.1.0-df89d34", got.Version)
	}
	if len(got.Intervals) != 10 || got.Intervals[9].Second != 10 || got.Intervals[9].QPS != 24061.60 {
		t.Errorf("intervals: got %d, last %+v", len(got.Intervals), got.Intervals[len(got.Intervals)-1])
	}
}

// TestParseInvariants checks, for every fixture with a final report, facts
// that hold for any correct parse whatever the numbers.
func TestParseInvariants(t *testing.T) {
	files, _ := filepath.Glob("testdata/*/*.txt")
	if len(files) < 8 {
		t.Fatalf("expected the committed fixtures, found %d", len(files))
	}
	for _, f := range files {
		name := strings.TrimPrefix(f, "testdata/")
		if strings.Contains(name, "version") || strings.Contains(name, "prepare") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			out, err := ParseString(readFixture(t, name))
			var fe *FatalError
			if strings.Contains(name, "fatal") {
				if !errors.As(err, &fe) {
					t.Fatalf("want *FatalError, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if out.Version == nil {
				t.Error("no version banner parsed")
			}
			for i, iv := range out.Intervals {
				if iv.Threads != out.Threads {
					t.Errorf("interval %d: thds %d, header says %d", i, iv.Threads, out.Threads)
				}
				if d := math.Abs(iv.ReadQPS + iv.WriteQPS + iv.OtherQPS - iv.QPS); d > 0.03 {
					t.Errorf("interval %d: r+w+o = %.2f, qps %.2f", i, iv.ReadQPS+iv.WriteQPS+iv.OtherQPS, iv.QPS)
				}
				switch {
				case strings.Contains(name, "stall"):
					// A stalled client reports late: the seconds skip
					// but never go back.
					if i > 0 && iv.Second <= out.Intervals[i-1].Second {
						t.Errorf("interval %d at %gs, after %gs", i, iv.Second, out.Intervals[i-1].Second)
					}
				case iv.Second != float64(i+1):
					t.Errorf("interval %d at %gs", i, iv.Second)
				}
			}
			rep := out.Final
			if rep == nil {
				if strings.Contains(name, "killed") {
					return
				}
				t.Fatal("no final report")
			}
			s := rep.SQL
			if s.Read+s.Write+s.Other != s.Total || s.Total != s.Queries {
				t.Errorf("queries: r %d + w %d + o %d, total %d, queries %d", s.Read, s.Write, s.Other, s.Total, s.Queries)
			}
			if rel := math.Abs(s.QueriesPerSec*rep.TotalTimeSeconds/float64(s.Queries) - 1); rel > 0.001 {
				t.Errorf("queries/s %.2f × time %.4f does not give %d queries", s.QueriesPerSec, rep.TotalTimeSeconds, s.Queries)
			}
			if s.Transactions != rep.TotalEvents {
				t.Errorf("transactions %d != events %d", s.Transactions, rep.TotalEvents)
			}
			if rep.Latency.MinMs > rep.Latency.AvgMs || rep.Latency.AvgMs > rep.Latency.MaxMs {
				t.Errorf("latency min/avg/max out of order: %+v", rep.Latency)
			}
		})
	}
}

func TestParseFatal(t *testing.T) {
	out, err := ParseString(readFixture(t, "1.0.20/fatal_nodb.txt"))
	var fe *FatalError
	if !errors.As(err, &fe) {
		t.Fatalf("want *FatalError, got %T %v", err, err)
	}
	if len(fe.Lines) != 7 || fe.Lines[0].Number != 11 {
		t.Errorf("fatal lines: %+v", fe.Lines)
	}
	msg := err.Error()
	for _, want := range []string{"line 11", "unable to connect to MySQL server", "and 6 more FATAL lines"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not contain %q", msg, want)
		}
	}
	if out == nil || out.Threads != 2 || out.Final != nil {
		t.Errorf("partial output: %+v", out)
	}
}

func TestParseErrors(t *testing.T) {
	good := readFixture(t, "1.0.20/read_write.txt")
	tests := []struct {
		name     string
		in       string
		wantLine int
		wantIn   []string
	}{
		{"bad tps", strings.Replace(good, "tps: 789.12", "tps: 78x.12", 1), 14, []string{"line 14", "tps", `78x.12`}},
		{"negative qps", strings.Replace(good, "qps: 15773.31", "qps: -1", 1), 14, []string{"qps", "out of range"}},
		{"interval without thds", strings.Replace(good, "thds: 2 tps: 772.95", "tps: 772.95", 1), 15, []string{`"thds:" missing`}},
		{"bad r/w/o", strings.Replace(good, "(r/w/o: 14253.19/4069.34/2034.17)", "(r/w/o: 14253.19/4069.34)", 1), 13, []string{"r/w/o"}},
		{"time goes back", strings.Replace(good, "[ 3s ]", "[ 1s ]", 1), 15, []string{"does not come after"}},
		{"bad queries line", strings.Replace(good, "51600  (17186.93 per sec.)", "51600 per sec", 1), 23, []string{"queries", "N (X per sec.)"}},
		{"bad latency", strings.Replace(good, "2.32", "two", 1), 33, []string{"avg", "not a number"}},
		{"bad percentile", strings.Replace(good, "95th percentile", "xxth percentile", 1), 35, []string{"percentile"}},
		{"bad total time", strings.Replace(good, "3.0019s", "3.00.19s", 1), 28, []string{"total time"}},
		{"duplicate report", good + "\n" + good[strings.Index(good, "SQL statistics:"):], 0, []string{"printed twice"}},
		{"report cut short", good[:strings.Index(good, "General statistics:")], 0, []string{"without", `"General statistics:" or "Throughput:"`, `"total number of events"`, "cut short"}},
		{"both layouts", strings.Replace(good, "General statistics:", "Throughput:\n    time elapsed: 3.0s\nGeneral statistics:", 1), 29, []string{"layouts"}},
		{"bad thread count", strings.Replace(good, "Number of threads: 2", "Number of threads: two", 1), 4, []string{"threads"}},
		{"bad banner", "sysbench x.y\n", 1, []string{"version"}},
		{"bad prepare count", "Inserting many records into 'sbtest1'\n", 1, []string{"row count"}},
		{"long line", strings.Repeat("x", maxLine+10), 1, []string{"longer than"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseString(tt.in)
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("want *ParseError, got %T %v", err, err)
			}
			if tt.wantLine != 0 && pe.Line != tt.wantLine {
				t.Errorf("error on line %d, want %d (%v)", pe.Line, tt.wantLine, err)
			}
			for _, s := range tt.wantIn {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestParseToleratesNoise(t *testing.T) {
	good := readFixture(t, "1.0.20/read_write.txt")
	noisy := strings.Replace(good, "Threads started!", "Threads started!\nWARNING: the --test option is deprecated\nmy script says: hello\n[ not an interval ]", 1)
	noisy = strings.Replace(noisy, "Latency (ms):", "Extra section from a newer sysbench:\n    gizmos: 12\n\nLatency (ms):", 1)
	noisy = strings.ReplaceAll(noisy, "\n", "\r\n")
	got, err := ParseString(noisy)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ParseString(good)
	want.Warnings = []Line{{Number: 12, Text: "WARNING: the --test option is deprecated"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("noise changed the parse (-want +got):\n%s", diff)
	}
}

func TestParseInterval(t *testing.T) {
	tests := []struct {
		line    string
		want    Interval
		wantErr string
	}{
		{"[ 10s ] thds: 16 tps: 1402.97 qps: 22447.53 (r/w/o: 19641.58/0.00/2805.95) lat (ms,95%): 12.08 err/s: 0.00 reconn/s: 0.00",
			Interval{Second: 10, Threads: 16, TPS: 1402.97, QPS: 22447.53, ReadQPS: 19641.58, OtherQPS: 2805.95, LatencyMs: 12.08, LatencyPercentile: 95}, ""},
		{"[ 2s ] thds: 2 tps: 64823.05 qps: 64823.05 (r/w/o: 64823.05/0.00/0.00) lat (ms,95%): 0.03 err/s 1.50 reconn/s: 0.25",
			Interval{Second: 2, Threads: 2, TPS: 64823.05, QPS: 64823.05, ReadQPS: 64823.05, LatencyMs: 0.03, LatencyPercentile: 95, ErrorsPerSec: 1.5, ReconnectsPerSec: 0.25}, ""},
		{"[ 1s ] thds: 1 tps: 751.47 qps: 12037.44 (r/w/o: 10533.51/0.00/1503.93) lat (ms,99%): 6.43 err/s: 0.00 reconn/s: 0.00",
			Interval{Second: 1, Threads: 1, TPS: 751.47, QPS: 12037.44, ReadQPS: 10533.51, OtherQPS: 1503.93, LatencyMs: 6.43, LatencyPercentile: 99}, ""},
		{"[ 53.0s ] thds: 16 tps: 557.81 qps: 11146.19 (r/w/o: 7798.34/2232.24/1115.62) lat (ms,99.9%): 89.16 err/s: 0.00 reconn/s: 0.00",
			Interval{Second: 53, Threads: 16, TPS: 557.81, QPS: 11146.19, ReadQPS: 7798.34, WriteQPS: 2232.24, OtherQPS: 1115.62, LatencyMs: 89.16, LatencyPercentile: 99.9}, ""},
		{"[ 3s ] thds: 4 eps: 3555.12 lat (ms,95%): 1.12",
			Interval{Second: 3, Threads: 4, TPS: 3555.12, LatencyMs: 1.12, LatencyPercentile: 95}, ""},
		{"[ 3s ] thds: 4 tps: 1 qps: 2 new-field: 7 (r/w/o: 1/1/0)",
			Interval{Second: 3, Threads: 4, TPS: 1, QPS: 2, ReadQPS: 1, WriteQPS: 1}, ""},
		{"[ 1s ] thds: 2 qps: 3", Interval{}, `"tps:"`},
		{"[ 1s ] thds: 2.5 tps: 3", Interval{}, "whole number"},
		{"[ 1s ] thds: 2 tps:", Interval{}, "value missing"},
		{"[ 1s ] thds: 2 tps: NaN", Interval{}, "not a number"},
		{"[ 1s ] thds: 2 tps: 1e999", Interval{}, "out of range"},
		{"[ 1s ] thds: 2 tps: 1 lat (ms,x%): 3", Interval{}, "percentile"},
		{"thds: 2 tps: 1", Interval{}, "not an interval line"},
	}
	for _, tt := range tests {
		got, err := ParseInterval(tt.line)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseInterval(%q) error = %v, want one containing %q", tt.line, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseInterval(%q): %v", tt.line, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseInterval(%q) (-want +got):\n%s", tt.line, diff)
		}
	}
}

func TestLatencyPercentiles11(t *testing.T) {
	in := strings.Replace(readFixture(t, "1.1/read_only_p99.txt"), "         sum:",
		"        999th percentile:                       27.17\n         sum:", 1)
	out, err := ParseString(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Percentile{{99, 8.90}, {99.9, 27.17}}
	if diff := cmp.Diff(want, out.Final.Latency.Percentiles); diff != "" {
		t.Errorf("percentiles (-want +got):\n%s", diff)
	}
	if ms, ok := out.Final.Latency.Get(99.9); !ok || ms != 27.17 {
		t.Errorf("Get(99.9) = %v, %v", ms, ok)
	}
	if _, ok := out.Final.Latency.Get(95); ok {
		t.Error("Get(95) found a percentile that was not printed")
	}
}

// sysbench 1.0.20 can label two consecutive reports with the same second when
// its report thread wakes late; the repeat is left out of Intervals (and
// recorded), a second that goes back stays an error.
func TestRepeatedIntervalSecond(t *testing.T) {
	head := "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\nThreads started!\n\n"
	line := func(sec int, qps string) string {
		return fmt.Sprintf("[ %ds ] thds: 2 tps: 300.00 qps: %s (r/w/o: 4200.00/0.00/600.00) lat (ms,95%%): 11.04 err/s: 0.00 reconn/s: 0.00\n", sec, qps)
	}
	out := head + line(8, "4800.00") + line(9, "381.96") + line(9, "5224.66") + line(10, "4960.00")
	p, err := ParseString(out)
	if err != nil {
		t.Fatal(err)
	}
	var qps []float64
	for _, iv := range p.Intervals {
		qps = append(qps, iv.QPS)
	}
	if fmt.Sprint(qps) != "[4800 381.96 4960]" {
		t.Errorf("intervals' QPS %v, want the first line of second 9 kept", qps)
	}
	if len(p.RepeatedIntervals) != 1 || p.RepeatedIntervals[0].Number != 7 || !strings.Contains(p.RepeatedIntervals[0].Text, "5224.66") {
		t.Errorf("repeated intervals %+v, want line 7 with 5224.66", p.RepeatedIntervals)
	}
	if _, err := p.SteadyState(1); err != nil {
		t.Errorf("steady state over the kept intervals: %v", err)
	}
	if _, err := ParseString(head + line(8, "4800.00") + line(7, "4900.00")); err == nil || !strings.Contains(err.Error(), "does not come after") {
		t.Errorf("a second that goes back: %v, want an error", err)
	}
}
