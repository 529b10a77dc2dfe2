package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
)

func TestRateRuns(t *testing.T) {
	closed := results.StepResult{Step: "point-query", Threads: 4, SteadyTPS: 1234.4}
	for _, tc := range []struct {
		name string
		fr   *agentapi.FixedRate
		step string
		want []rateRun
	}{
		{"no fixed rate", nil, "point-query", nil},
		{"fractions then rates, rounded", &agentapi.FixedRate{FractionsOfPeak: []string{"0.5", "0.9"}, Rates: []int{100}}, "point-query",
			[]rateRun{{fraction: "0.5", target: 617, peakTPS: 1234.4}, {fraction: "0.9", target: 1111, peakTPS: 1234.4}, {target: 100}}},
		{"another step than the ones listed", &agentapi.FixedRate{Rates: []int{100}, Steps: []string{"update-index"}}, "point-query", nil},
		{"a listed step", &agentapi.FixedRate{Rates: []int{100}, Steps: []string{"point-query"}}, "point-query", []rateRun{{target: 100}}},
		{"a tiny fraction still runs at 1/s", &agentapi.FixedRate{FractionsOfPeak: []string{"0.0001"}}, "point-query",
			[]rateRun{{fraction: "0.0001", target: 1, peakTPS: 1234.4}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Agent{Plan: testPlan(tc.step)}
			a.Plan.Workload.FixedRate = tc.fr
			got := a.rateRuns(RunStep{Name: tc.step}, closed)
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(rateRun{})); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// A fixed-rate run is runStep with --rate: the variant's name, the rate and
// queue reports recorded, the histogram's percentiles read, on the real
// output of sysbench 1.0.20 at --rate=500.
func TestRunStepFixedRate(t *testing.T) {
	out, err := os.ReadFile(filepath.Join("..", "sysbench", "testdata", "1.0.20", "point_select_rate.txt"))
	if err != nil {
		t.Fatal(err)
	}
	bin, runs := fakeSysbench(t, string(out), 0)
	p := testPlan("mine")
	p.Workload.Custom = []agentapi.CustomStep{{Name: "mine", Script: "mine.lua", DurationSeconds: 2}}
	p.Workload.WarmupSeconds = 1
	resolved, err := ResolveSteps(&p)
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{Plan: p, sb: &Sysbench{Binary: bin, Engine: agentapi.MariaDB}}
	rate := &rateRun{fraction: "0.5", target: 500, peakTPS: 1000}

	res := a.runStep(context.Background(), &customStep{a: a, s: resolved[0]}, 2, rate)

	if res.Error != "" {
		t.Fatal(res.Error)
	}
	argv, _ := os.ReadFile(runs)
	for _, want := range []string{"--rate=500", "--histogram=on", "--percentile=95", "--threads=2"} {
		if !slices.Contains(strings.Fields(string(argv)), want) {
			t.Errorf("argv %q lacks %s", argv, want)
		}
	}
	if res.Step != "mine@0.5peak" {
		t.Errorf("step %q, want mine@0.5peak", res.Step)
	}
	want := &results.Rate{Step: "mine", TargetTPS: 500, FractionOfPeak: "0.5", PeakTPS: 1000, PollIntervalMs: 2}
	if d := cmp.Diff(want, res.Rate); d != "" {
		t.Errorf("rate (-want +got):\n%s", d)
	}
	if se := res.Series; se == nil || len(se.QueueLength) != 3 || len(se.Concurrency) != 3 {
		t.Errorf("series %+v: want 3 queue samples", se)
	}
	// The fixture's final report prints 95th 2.48 ms, max 48.28 ms.
	if res.LatencyP95Ms == nil || *res.LatencyP95Ms != 2.48 {
		t.Errorf("p95 %v, want the printed 2.48", res.LatencyP95Ms)
	}
	for name, v := range map[string]*float64{"p50": res.LatencyP50Ms, "p99": res.LatencyP99Ms, "p99.9": res.LatencyP999Ms} {
		if v == nil || *v <= 0 || *v > res.LatencyMaxMs {
			t.Errorf("%s = %v: want a histogram value in (0, max %v]", name, v, res.LatencyMaxMs)
		}
	}
	if !(*res.LatencyP50Ms <= *res.LatencyP95Ms && *res.LatencyP95Ms <= *res.LatencyP99Ms && *res.LatencyP99Ms <= *res.LatencyP999Ms) {
		t.Errorf("percentiles out of order: p50 %v p95 %v p99 %v p99.9 %v", *res.LatencyP50Ms, *res.LatencyP95Ms, *res.LatencyP99Ms, *res.LatencyP999Ms)
	}
}

func TestExpandedStepsCountsFixedRateRuns(t *testing.T) {
	w := agentapi.Workload{Steps: []string{"point-query", "update-index"}, Threads: []int{1, 4},
		FixedRate: &agentapi.FixedRate{FractionsOfPeak: []string{"0.5", "0.9"}, Steps: []string{"point-query"}}}
	// point-query: (1 + 2) runs x 2 thread counts; update-index: 2.
	if got := w.ExpandedSteps(); got != 8 {
		t.Errorf("ExpandedSteps = %d, want 8", got)
	}
}

func TestRateRecordQueue(t *testing.T) {
	iv := func(s float64) sysbench.Interval { return sysbench.Interval{Second: s, TPS: 10, QPS: 10} }
	q := func(s float64, length, conc int64) sysbench.QueueSample {
		return sysbench.QueueSample{Second: s, Length: length, Concurrency: conc}
	}
	for _, tc := range []struct {
		name              string
		queue             []sysbench.QueueSample
		wantMax, wantEnd  int64
		wantQueue, wantCc []float64
		wantSamples       int
	}{
		{"backlog after the warm-up", []sysbench.QueueSample{q(1, 50, 4), q(2, 3, 4), q(3, 7, 4), q(4, 2, 3)}, 7, 2,
			[]float64{50, 3, 7, 2}, []float64{4, 4, 4, 3}, 4},
		{"a missing report leaves the columns out", []sysbench.QueueSample{q(1, 0, 1), q(2, 1, 1), q(4, 0, 1)}, 1, 0, nil, nil, 4},
		{"the last report cut off drops the last second", []sysbench.QueueSample{q(1, 0, 1), q(2, 1, 1), q(3, 5, 2)}, 5, 5,
			[]float64{0, 1, 5}, []float64{1, 1, 2}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &sysbench.Output{Intervals: []sysbench.Interval{iv(1), iv(2), iv(3), iv(4)}, Queue: tc.queue}
			res := &results.StepResult{Series: &results.Series{QPS: []float64{10, 10, 10, 10}, TPS: []float64{10, 10, 10, 10}}}
			(&rateRun{target: 100}).record(res, "point-query", out, 8, 1)
			if res.Rate.MaxQueueLength != tc.wantMax || res.Rate.EndQueueLength != tc.wantEnd || res.Rate.PollIntervalMs != 40 {
				t.Errorf("rate %+v: want max %d (warm-up second left out), end %d, poll 40 ms", res.Rate, tc.wantMax, tc.wantEnd)
			}
			if !slices.Equal(res.Series.QueueLength, tc.wantQueue) || !slices.Equal(res.Series.Concurrency, tc.wantCc) {
				t.Errorf("queue %v, concurrency %v; want %v, %v", res.Series.QueueLength, res.Series.Concurrency, tc.wantQueue, tc.wantCc)
			}
			if len(res.Series.QPS) != tc.wantSamples || len(res.Series.TPS) != tc.wantSamples {
				t.Errorf("series of %d/%d samples, want %d", len(res.Series.QPS), len(res.Series.TPS), tc.wantSamples)
			}
		})
	}
}

func TestLocalOptionsFixedRate(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "pw")
	_ = os.WriteFile(pw, []byte("pw\n"), 0o600)
	for _, tc := range []struct {
		name, fractions, rates string
		want                   *agentapi.FixedRate
		wantErr                string
	}{
		{"none", "", "", nil, ""},
		{"both", "0.5,0.9", "100,200", &agentapi.FixedRate{FractionsOfPeak: []string{"0.5", "0.9"}, Rates: []int{100, 200}}, ""},
		{"bad fraction", "2", "", nil, "fractionsOfPeak[0]"},
		{"bad rate", "", "fast", nil, "fixed-rates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := LocalOptions{Engine: "mariadb", Steps: "point-query", PasswordFile: pw, Out: t.TempDir()}
			if err := o.Workload.Parse("--fixed-rate-fractions="+tc.fractions, "--fixed-rates="+tc.rates); err != nil {
				t.Fatal(err)
			}
			p, _, err := o.Build()
			if err == nil {
				err = p.Validate()
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, p.Workload.FixedRate); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// A fixed-rate run whose queue overflowed is recorded with its error and
// the cell goes on; any other failure still stops the cell.
func TestMeasureRunQueueOverflow(t *testing.T) {
	full, err := os.ReadFile(filepath.Join("..", "sysbench", "testdata", "1.0.20", "fatal_rate_queue_full.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		output     string
		rate       *rateRun
		wantFailed bool
	}{
		{"overflow at a fixed rate", string(full), &rateRun{fraction: "0.9", target: 200000, peakTPS: 1000}, false},
		{"the same output without a rate", string(full), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, _ := fakeSysbench(t, tc.output, 1)
			p := testPlan("mine")
			p.Workload.Custom = []agentapi.CustomStep{{Name: "mine", Script: "mine.lua", DurationSeconds: 2}}
			p.Results = agentapi.Results{Dir: t.TempDir()}
			resolved, err := ResolveSteps(&p)
			if err != nil {
				t.Fatal(err)
			}
			a := &Agent{Plan: p, Sink: DirSink{Dir: p.Results.Dir}, sb: &Sysbench{Binary: bin, Engine: agentapi.MariaDB}}
			a.initDocument()
			res, _, failed := a.measureRun(context.Background(), &customStep{a: a, s: resolved[0]}, 2, tc.rate)
			if failed != tc.wantFailed {
				t.Errorf("failed = %v, want %v (error %q)", failed, tc.wantFailed, res.Error)
			}
			if !strings.Contains(res.Error, "event queue is full") || len(a.doc.Steps) != 1 {
				t.Errorf("error %q, %d results recorded", res.Error, len(a.doc.Steps))
			}
			if tc.rate != nil && (res.Rate == nil || !res.Rate.QueueOverflow) {
				t.Errorf("rate %+v: want queueOverflow", res.Rate)
			}
		})
	}
}
