package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
	"github.com/dbbench/dbbench/pkg/workload"
)

// Each kind binds to what differs: the sbtest load, the preflight check, the
// base options and the hooks around the measured window.
func TestBindStep(t *testing.T) {
	script := filepath.Join(t.TempDir(), "mine.lua")
	if err := os.WriteFile(script, []byte("function event() end\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := testPlan("point-query", "scan", "read-write_range=100", "mine", "gone", workload.TPCCStep)
	p.Workload.Custom = []agentapi.CustomStep{{Name: "mine", Script: script}, {Name: "gone", Script: "/nonexistent/gone.lua"}}
	resolved, err := ResolveSteps(&p)
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{Plan: p}
	for i, tc := range []struct {
		name       string
		usesSbtest bool
		checkErr   string // substring; "" for none
		tableArgs  bool   // --tables/--table-size in the base options
		hooks      []string
	}{
		{"point-query", true, "", true, nil},
		{"scan", true, "", true, []string{"*agent.rowsPerScanHook"}},
		{"read-write_range=100", true, "", true, nil},
		{"mine", true, "", true, nil},
		{"gone", true, "custom step gone: stat /nonexistent/gone.lua", true, nil},
		{workload.TPCCStep, false, "", false, []string{"*agent.newOrdersHook"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := a.bindStep(resolved[i])
			if err != nil {
				t.Fatal(err)
			}
			if got := st.spec().Name; got != tc.name {
				t.Fatalf("spec().Name = %q, want %q", got, tc.name)
			}
			if got := st.usesSbtest(); got != tc.usesSbtest {
				t.Errorf("usesSbtest() = %v, want %v", got, tc.usesSbtest)
			}
			err = st.check()
			if (tc.checkErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.checkErr)) {
				t.Errorf("check() = %v, want %q", err, tc.checkErr)
			}
			args := strings.Join(st.baseArgs(), " ")
			if got := strings.Contains(args, "--tables=") || strings.Contains(args, "--table-size="); got != tc.tableArgs {
				t.Errorf("baseArgs() = %s: sbtest table options %v, want %v", args, got, tc.tableArgs)
			}
			if !strings.Contains(args, "--db-ps-mode=") {
				t.Errorf("baseArgs() = %s: no --db-ps-mode", args)
			}
			var hooks []string
			for _, h := range st.hooks() {
				hooks = append(hooks, fmt.Sprintf("%T", h))
			}
			if !slices.Equal(hooks, tc.hooks) {
				t.Errorf("hooks() = %v, want %v", hooks, tc.hooks)
			}
		})
	}
	if _, err := a.bindStep(RunStep{Name: "odd", Kind: "odd"}); err == nil || !strings.Contains(err.Error(), `step odd: unknown step kind "odd"`) {
		t.Errorf("unknown kind: %v", err)
	}
}

// A scan's rows per scan makes it a rows/s step, and the hardware metrics per
// row; without a count the run stays per query.
func TestRowsPerScanHookAfter(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rows      float64
		wantRPS   float64 // 0: no rowsPerSecond
		wantOps   float64
		wantBasis string
	}{
		{"counted", 2000, 100 * 2000, 100 * 2000, opsBasisRowsPerSecond},
		{"no rows", 0, 0, 100, opsBasisSteadyQPS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := results.StepResult{SteadyQPS: 100}
			r := &stepRun{Result: &res, Ext: &StepExtension{RowsPerScan: tc.rows}, Ops: 100, OpsBasis: opsBasisSteadyQPS}
			(&rowsPerScanHook{}).after(context.Background(), r)
			if tc.wantRPS == 0 && res.RowsPerSecond != nil || tc.wantRPS != 0 && (res.RowsPerSecond == nil || *res.RowsPerSecond != tc.wantRPS) {
				t.Errorf("rowsPerSecond = %v, want %v", res.RowsPerSecond, tc.wantRPS)
			}
			if r.Ops != tc.wantOps || r.OpsBasis != tc.wantBasis {
				t.Errorf("ops %v (%s), want %v (%s)", r.Ops, r.OpsBasis, tc.wantOps, tc.wantBasis)
			}
		})
	}
}

// fakeCollector records when it was started and stopped.
type fakeCollector struct {
	mu            sync.Mutex
	start, stop   time.Time
	startErr      error
	sampleSeconds float64
}

func (c *fakeCollector) Start(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.start = time.Now()
	return c.startErr
}

func (c *fakeCollector) Stop(context.Context) (HWSample, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stop = time.Now()
	return HWSample{Seconds: c.sampleSeconds, CPUs: 2, CPUUserSysPct: 50}, nil
}

// timedMeasure has a measure a run that takes run (after a warm-up of warm
// seconds) and returns when it began, when the run ended, and what measure
// returned; the run's invocation is the command "fake".
func timedMeasure(a *Agent, warm int, run time.Duration, bounds ...windowBounds) (begin, ranUntil time.Time, inv *Invocation, hw HWSample) {
	begin = time.Now()
	inv, hw = a.measure(context.Background(), warm, func() *Invocation {
		time.Sleep(run)
		ranUntil = time.Now()
		return &Invocation{Command: []string{"fake"}}
	}, bounds...)
	return begin, ranUntil, inv, hw
}

// The collector measures from the end of the warm-up to the end of the run:
// never the warm-up, never past the run.
func TestMeasureWindow(t *testing.T) {
	for _, tc := range []struct {
		name      string
		warm      int
		run       time.Duration
		startErr  error
		wantStart bool
	}{
		{"run outlasts the warm-up", 1, 2 * time.Second, nil, true},
		{"run ends within the warm-up", 2, 200 * time.Millisecond, nil, false},
		{"collector fails to start", 0, 300 * time.Millisecond, errors.New("no /proc"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeCollector{startErr: tc.startErr, sampleSeconds: 1}
			a := &Agent{Collector: c}
			begin, ranUntil, inv, hw := timedMeasure(a, tc.warm, tc.run)
			if len(inv.Command) != 1 {
				t.Fatalf("invocation %+v is not the run's", inv)
			}
			if got := !c.start.IsZero(); got != tc.wantStart {
				t.Fatalf("collector started: %v, want %v", got, tc.wantStart)
			}
			wantSample := tc.wantStart && tc.startErr == nil
			if (hw.Seconds > 0) != wantSample || (!c.stop.IsZero()) != wantSample {
				t.Errorf("sample %+v, stopped %v; want a sample and a stop: %v", hw, !c.stop.IsZero(), wantSample)
			}
			if tc.wantStart {
				if d := c.start.Sub(begin); d < time.Duration(tc.warm)*time.Second {
					t.Errorf("collector started %s after the run began, within the %d-s warm-up", d, tc.warm)
				}
			}
			if wantSample && c.stop.Before(ranUntil) {
				t.Errorf("collector stopped %s before the run ended", ranUntil.Sub(c.stop))
			}
		})
	}
}

// recordingHook records the order of its calls and what after saw.
type recordingHook struct {
	log       *[]string
	beforeErr error
	endedSet  bool
}

func (h *recordingHook) before(_ context.Context, r *stepRun) error {
	*h.log = append(*h.log, "before")
	return h.beforeErr
}

func (h *recordingHook) after(_ context.Context, r *stepRun) {
	*h.log = append(*h.log, "after")
	h.endedSet = !r.Ended.IsZero() && !r.Ended.Before(r.Started)
	r.Ops, r.OpsBasis = 7, "testBasis"
}

// hookedStep is a step of a test kind: a custom step with one hook.
type hookedStep struct {
	customStep
	hook *recordingHook
}

func (h *hookedStep) hooks() []windowHook { return []windowHook{h.hook} }

// fakeSysbench writes a sysbench stand-in that notes its argv in the returned
// runs file, takes 1.8 s (past a 1-s warm-up, so the collector samples),
// prints output and exits with code.
func fakeSysbench(t *testing.T, output string, code int) (bin, runs string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "output.txt")
	if err := os.WriteFile(out, []byte(output), 0o644); err != nil {
		t.Fatal(err)
	}
	runs = filepath.Join(dir, "runs")
	bin = filepath.Join(dir, "sysbench")
	sh := "#!/bin/sh\necho \"$*\" >> '" + runs + "'\nsleep 1.8\ncat '" + out + "'\nexit " + strconv.Itoa(code) + "\n"
	if err := os.WriteFile(bin, []byte(sh), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, runs
}

// runStep is the same measured run for every kind: hooks before sysbench,
// hooks after it on success only, the output read into the result, the
// hardware metrics per the hooks' ops.
func TestRunStepHooksAndResult(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("..", "sysbench", "testdata", "1.0.20", "point_select.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		output    string
		code      int
		beforeErr error
		wantRun   bool
		wantLog   []string
		wantError string // substring; "" for a good result
	}{
		{"good run", string(good), 0, nil, true, []string{"before", "after"}, ""},
		{"hook before fails", string(good), 0, errors.New("counter unreadable"), false, []string{"before"}, "counter unreadable"},
		{"sysbench fails", "FATAL: unable to connect\n", 1, nil, true, []string{"before"}, "sysbench mine.lua run"},
		{"no final report", "Threads started!\n", 0, nil, true, []string{"before"}, "sysbench printed no final report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, runs := fakeSysbench(t, tc.output, tc.code)
			p := testPlan("mine")
			p.Workload.Custom = []agentapi.CustomStep{{Name: "mine", Script: "mine.lua", DurationSeconds: 3}}
			p.Workload.WarmupSeconds = 1
			resolved, err := ResolveSteps(&p)
			if err != nil {
				t.Fatal(err)
			}
			c := &fakeCollector{sampleSeconds: 2}
			a := &Agent{Plan: p, Collector: c, sb: &Sysbench{Binary: bin, Engine: agentapi.MariaDB}}
			var log []string
			hook := &recordingHook{log: &log, beforeErr: tc.beforeErr}
			st := &hookedStep{customStep: customStep{a: a, s: resolved[0]}, hook: hook}

			res := a.runStep(context.Background(), st, 2, nil)

			if !slices.Equal(log, tc.wantLog) {
				t.Errorf("hook calls %v, want %v", log, tc.wantLog)
			}
			ran, _ := os.ReadFile(runs)
			if got := len(ran) > 0; got != tc.wantRun {
				t.Errorf("sysbench ran: %v, want %v", got, tc.wantRun)
			}
			if tc.wantError != "" {
				if !strings.Contains(res.Error, tc.wantError) || res.Hardware != nil {
					t.Errorf("error %q, hardware %+v; want an error with %q and no hardware", res.Error, res.Hardware, tc.wantError)
				}
			} else {
				if res.Error != "" {
					t.Fatalf("error %q", res.Error)
				}
				// The canned output: 3 one-second intervals, final 62803.17 QPS.
				if res.FinalQPS != 62803.17 || res.Series == nil || len(res.Series.QPS) != 3 || !(res.SteadyQPS > 0) {
					t.Errorf("final %v QPS, series %+v, steady %v", res.FinalQPS, res.Series, res.SteadyQPS)
				}
				if !hook.endedSet {
					t.Error("after saw no end of the run")
				}
				if h := res.Hardware; h == nil || h.OpsPerSecond != 7 || h.OpsBasis != "testBasis" {
					t.Errorf("hardware %+v: want the hook's ops (7, testBasis)", h)
				}
			}
			for _, want := range []string{"--threads=2", "--time=4", "--report-interval=1", "--percentile=95", "--tables=1", "--table-size=100"} {
				if tc.wantRun && !strings.Contains(string(ran), want) {
					t.Errorf("sysbench argv %q lacks %s", ran, want)
				}
			}
			if res.Step != "mine" || res.Threads != 2 || res.DurationSeconds != 4 || res.WarmupSeconds != 1 {
				t.Errorf("result header %+v", res)
			}
			if _, ok := res.Extensions[ExtensionKey]; !ok {
				t.Error("no step extension")
			}
		})
	}
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "sysbench", "testdata", "1.0.20", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestQualityOfRealOutput runs real sysbench 1.0.20 output through the
// agent's reading of it and the quality gate: clean runs stay valid; the
// stall fixtures (pkg/sysbench/testdata/README.md: sysbench or the server
// stopped 5 s with SIGSTOP) are invalid for the reasons their output
// shows. A client stopped mid-run reports late, so its series records its
// sample times.
func TestQualityOfRealOutput(t *testing.T) {
	for _, tc := range []struct {
		file           string
		seconds, warm  int
		want           []results.QualityReason
		wantSampleTime bool
	}{
		{file: "point_select_10s.txt", seconds: 8, warm: 2},
		{file: "read_only.txt", seconds: 3},
		{file: "read_write.txt", seconds: 2, warm: 1},
		{file: "stall_server_stop.txt", seconds: 10, warm: 2, want: []results.QualityReason{results.QualityStalled}},
		{file: "stall_server_stop_end.txt", seconds: 10, warm: 2, want: []results.QualityReason{results.QualityStalled}},
		{file: "stall_client_stop.txt", seconds: 10, warm: 2, wantSampleTime: true,
			want: []results.QualityReason{results.QualityTooFewSteadySamples, results.QualityStalled}},
		{file: "stall_client_stop_end.txt", seconds: 10, warm: 2,
			want: []results.QualityReason{results.QualityTooFewSteadySamples, results.QualityStalled, results.QualitySteadyFinalMismatch}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			out, err := sysbench.ParseString(fixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			res := results.StepResult{Step: "point-query", Threads: 2, DurationSeconds: float64(tc.seconds + tc.warm), WarmupSeconds: float64(tc.warm)}
			readOutput(&res, &StepExtension{}, &Invocation{Parsed: out}, tc.warm)
			if res.Error != "" {
				t.Fatal(res.Error)
			}
			q := results.AssessStep(&res)
			if diff := cmp.Diff(tc.want, q.Reasons); diff != "" {
				t.Errorf("reasons (-want +got):\n%s\nquality %+v", diff, q)
			}
			if q.Valid != (len(tc.want) == 0) {
				t.Errorf("valid %v with reasons %v", q.Valid, q.Reasons)
			}
			if got := res.Series.Seconds != nil; got != tc.wantSampleTime {
				t.Errorf("sample times recorded: %v, want %v (%v)", got, tc.wantSampleTime, res.Series.Seconds)
			}
			if len(tc.want) > 0 && q.StallSeconds < 4 {
				t.Errorf("stall %.2f s: the fixtures stop for 5 s", q.StallSeconds)
			}
		})
	}
}

// scriptedSysbench is a fake sysbench that prints outputs[i] on its i-th
// run (the last one from then on), and the file that counts its runs.
func scriptedSysbench(t *testing.T, outputs ...string) (bin, runs string) {
	t.Helper()
	dir := t.TempDir()
	runs = filepath.Join(dir, "runs")
	var sh strings.Builder
	sh.WriteString("#!/bin/sh\necho \"$*\" >> '" + runs + "'\nn=$(wc -l < '" + runs + "')\n")
	for i, o := range outputs {
		f := filepath.Join(dir, "out"+strconv.Itoa(i+1))
		if err := os.WriteFile(f, []byte(o), 0o644); err != nil {
			t.Fatal(err)
		}
		cond := "[ \"$n\" -eq " + strconv.Itoa(i+1) + " ]"
		if i == len(outputs)-1 {
			cond = "true"
		}
		sh.WriteString(cond + " && exec cat '" + f + "'\n")
	}
	bin = filepath.Join(dir, "sysbench")
	if err := os.WriteFile(bin, []byte(sh.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, runs
}

// TestGatedRun is the re-run policy: an invalid result of a catalog read
// step is run once more and the second run kept, with the first on
// record; an invalid second run is kept flagged; write steps, custom
// steps and fixed-rate runs are not re-run; a valid result is run once.
// A server stopped through the whole steady window (no throughput there,
// some in the final report) is a stall like any other, not a failed step.
func TestGatedRun(t *testing.T) {
	clean, stalled := fixture(t, "point_select_10s.txt"), fixture(t, "stall_server_stop.txt")
	serverStopEnd := fixture(t, "stall_server_stop_end.txt")
	for _, tc := range []struct {
		name         string
		step         string
		outputs      []string
		warm         int // 0: 2 s (of 8 s)
		rate         bool
		zeroSteady   bool
		wantRuns     int
		wantValid    bool
		wantAttempts int
		wantReplaced bool
		wantNotRerun string
	}{
		{name: "valid at once", step: "point-query", outputs: []string{clean}, wantRuns: 1, wantValid: true, wantAttempts: 1},
		{name: "a read step stalls, its re-run is clean", step: "point-query", outputs: []string{stalled, clean},
			wantRuns: 2, wantValid: true, wantAttempts: 2, wantReplaced: true},
		{name: "a read step stalls twice", step: "read-only-count", outputs: []string{stalled, stalled},
			wantRuns: 2, wantAttempts: 2, wantReplaced: true},
		{name: "a write step is not re-run", step: "update-index", outputs: []string{stalled, clean},
			wantRuns: 1, wantAttempts: 1, wantNotRerun: notRerunWrites},
		{name: "a custom step is not re-run", step: "mine", outputs: []string{stalled, clean},
			wantRuns: 1, wantAttempts: 1, wantNotRerun: notRerunKind},
		{name: "a fixed-rate run is not re-run", step: "point-query", outputs: []string{stalled, clean}, rate: true,
			wantRuns: 1, wantAttempts: 1, wantNotRerun: notRerunRate},
		// The server stopped from 10 s to 15 s: with 11 s of warm-up,
		// every report of the 2-s window is zero.
		{name: "a read step's server stops through its window twice", step: "point-query", outputs: []string{serverStopEnd},
			warm: 11, zeroSteady: true, wantRuns: 2, wantAttempts: 2, wantReplaced: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, runs := scriptedSysbench(t, tc.outputs...)
			p := testPlan(tc.step)
			p.Workload.Custom = []agentapi.CustomStep{{Name: "mine", Script: "mine.lua"}}
			p.Workload.ReadSeconds, p.Workload.WriteSeconds, p.Workload.WarmupSeconds = 8, 8, 2
			if tc.warm > 0 {
				p.Workload.ReadSeconds, p.Workload.WarmupSeconds = 2, tc.warm
			}
			resolved, err := ResolveSteps(&p)
			if err != nil {
				t.Fatal(err)
			}
			a := &Agent{Plan: p, sb: &Sysbench{Binary: bin, Engine: agentapi.MariaDB}}
			st, err := a.bindStep(resolved[0])
			if err != nil {
				t.Fatal(err)
			}
			var rate *rateRun
			if tc.rate {
				rate = &rateRun{target: 100}
			}

			res := a.gatedRun(context.Background(), st, 2, rate)

			ran, _ := os.ReadFile(runs)
			if n := strings.Count(string(ran), "\n"); n != tc.wantRuns {
				t.Errorf("sysbench ran %d times, want %d", n, tc.wantRuns)
			}
			q := res.Quality
			if res.Error != "" || q == nil {
				t.Fatalf("error %q, quality %v", res.Error, q)
			}
			if q.Valid != tc.wantValid || q.Attempts != tc.wantAttempts || (q.Replaced != nil) != tc.wantReplaced || q.NotRerun != tc.wantNotRerun {
				t.Errorf("valid %v attempts %d replaced %+v not re-run %q; want %v, %d, replaced %v, %q",
					q.Valid, q.Attempts, q.Replaced, q.NotRerun, tc.wantValid, tc.wantAttempts, tc.wantReplaced, tc.wantNotRerun)
			}
			if r := q.Replaced; r != nil && (!slices.Contains(r.Reasons, results.QualityStalled) || !(r.StallSeconds >= 4) || (r.SteadyQPS > 0) == tc.zeroSteady) {
				t.Errorf("replaced run %+v: want the stalled first run's figures", r)
			}
			if tc.zeroSteady && (res.SteadyQPS != 0 || !(res.FinalQPS > 0) || !slices.Contains(q.Reasons, results.QualityStalled)) {
				t.Errorf("steady %.1f QPS, final %.1f, reasons %v: want a window of zeros flagged Stalled", res.SteadyQPS, res.FinalQPS, q.Reasons)
			}
		})
	}
}
