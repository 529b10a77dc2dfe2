package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/results"
)

func intervalLine(sec int, qps float64) string {
	return fmt.Sprintf("[ %ds ] thds: 2 tps: %.2f qps: %.2f (r/w/o: %.2f/0.00/0.00) lat (ms,95%%): 1.00 err/s: 0.00 reconn/s: 0.00\n", sec, qps/10, qps, qps)
}

// TestStopWatch feeds the watch sysbench's output in pieces: the warm-up
// seconds do not count, a repeated second is left out, and the stop file
// appears when the rule stops (8 steady samples: the fewest it judges).
func TestStopWatch(t *testing.T) {
	dir := t.TempDir()
	w := &stopWatch{rule: inference.StopRule{MinSeconds: 5, MaxSeconds: 60, TargetRelHalfWidth: 0.05}, warm: 2,
		stopFile: filepath.Join(dir, "stop"), logf: t.Logf}
	out := "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\nThreads started!\n\n"
	for s := 1; s <= 9; s++ {
		out += intervalLine(s, 1000+float64(s%2))
	}
	out += intervalLine(9, 5) // a repeated second: left out
	// Written in odd pieces, as a pipe delivers it.
	for i := 0; i < len(out); i += 7 {
		if _, err := w.Write([]byte(out[i:min(i+7, len(out))])); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(w.stopFile); err == nil {
		t.Fatalf("stopped after %d steady samples, want at least 8", len(w.steady))
	}
	if _, err := w.Write([]byte(intervalLine(10, 1000) + intervalLine(11, 1000))); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.stopFile); err != nil {
		t.Fatalf("no stop file after %d steady samples: %v (decision %+v)", len(w.steady), err, w.last)
	}
	if len(w.steady) != 8 {
		t.Errorf("steady samples %d, want 8 (seconds 3..10; 11 came after the stop)", len(w.steady))
	}
	res := results.StepResult{DurationSeconds: 62, WarmupSeconds: 2}
	w.record(&res, false)
	if res.StopReason != inference.StopTargetReached || res.DurationSeconds != 10 || res.Adaptive == nil ||
		res.Adaptive.SteadySeconds != 8 || res.Adaptive.RelHalfWidth == nil || *res.Adaptive.RelHalfWidth > 0.05 ||
		res.Adaptive.TargetHalfWidth == nil || res.Adaptive.ConvergedHalfWidth != nil {
		t.Errorf("recorded %+v, adaptive %+v", res, res.Adaptive)
	}

	// A run that ended at its --time without a stop: MaxDuration, the
	// requested duration kept; one that failed: no reason.
	w2 := &stopWatch{rule: inference.StopRule{MinSeconds: 5, MaxSeconds: 60, BetweenRunCV: 0.0001}, stopFile: filepath.Join(dir, "stop2"), logf: t.Logf}
	res = results.StepResult{DurationSeconds: 60}
	w2.record(&res, false)
	if res.StopReason != inference.StopMaxDuration || res.DurationSeconds != 60 || res.Adaptive.ConvergedHalfWidth == nil {
		t.Errorf("ended by --time: %+v, adaptive %+v", res, res.Adaptive)
	}
	res = results.StepResult{DurationSeconds: 60}
	w2.record(&res, true)
	if res.StopReason != "" {
		t.Errorf("failed run: stop reason %q, want none", res.StopReason)
	}
}

// TestStopEarlyScript runs lua/dbbench/stop_early.lua with real sysbench
// around a script that needs no server (each event sleeps a millisecond):
// the stop file ends the run within about two seconds, and sysbench
// still prints its final report and histogram. ≈ 10 s, one thread mostly
// asleep.
func TestStopEarlyScript(t *testing.T) {
	if _, err := exec.LookPath("sysbench"); err != nil {
		t.Skip("sysbench not installed (make test-deps)")
	}
	dir := t.TempDir()
	if err := ExtractScripts(dir); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "sleepy.lua")
	if err := os.WriteFile(script, []byte(`
local ffi = require("ffi")
pcall(ffi.cdef, "int usleep(unsigned int usec);")
function event() ffi.C.usleep(1000) end
`), 0o644); err != nil {
		t.Fatal(err)
	}
	sb := &Sysbench{ScriptsDir: dir, Host: "127.0.0.1", Port: 1, User: "u", Password: "secret-pw", Database: "d"}
	if err := sb.DetectVersion(context.Background()); err != nil {
		t.Fatal(err)
	}
	w := &stopWatch{rule: inference.StopRule{MinSeconds: 3, MaxSeconds: 60, TargetRelHalfWidth: 0.5}, warm: 1,
		stopFile: filepath.Join(dir, "stop"), logf: t.Logf}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	inv := sb.RunStoppable(ctx, script, []string{"--threads=2", "--time=61", "--report-interval=1", "--histogram=on", "--percentile=95"}, w.stopFile, w)
	if inv.Err != nil {
		t.Fatalf("%v\n%s", inv.Err, inv.Output)
	}
	if inv.Parsed.Final == nil || inv.Parsed.Histogram == nil {
		t.Fatalf("no final report or histogram after the stop:\n%s", inv.Output)
	}
	res := results.StepResult{DurationSeconds: 61, WarmupSeconds: 1}
	w.record(&res, false)
	el := inv.Parsed.Final.TotalTimeSeconds
	t.Logf("stopped: %s after %d steady samples, sysbench's total time %.2f s; command %v", res.StopReason, res.Adaptive.SteadySeconds, el, inv.Command)
	if res.StopReason != inference.StopTargetReached || el > res.DurationSeconds+2.5 {
		t.Errorf("reason %q, total time %.2f s, want TargetReached within 2.5 s of %g s", res.StopReason, el, res.DurationSeconds)
	}
	cmd := strings.Join(inv.Command, " ")
	if !strings.HasPrefix(cmd, "env DBBENCH_STEP_SCRIPT="+script+" DBBENCH_STOP_FILE=") || !strings.Contains(cmd, "stop_early.lua") || strings.Contains(cmd, "secret-pw") {
		t.Errorf("command %q: want the env prefix, the wrapper, and no password", cmd)
	}
}

// TestStopRuleTakesThePointsNoise: a step stops against its own point's
// between-run noise where the plan has it, else the workload's.
func TestStopRuleTakesThePointsNoise(t *testing.T) {
	a := &Agent{}
	a.Plan.Workload.Adaptive = &agentapi.Adaptive{MinSeconds: 5, BetweenRunCVPercent: 5, BetweenRunCVPercentAt: map[string]float64{"point-query@4": 2}}
	s := RunStep{Name: "point-query", Seconds: 60}
	for _, tc := range []struct {
		threads int
		want    float64
	}{{4, 0.02}, {1, 0.05}} {
		r := a.stopRule(s, tc.threads, nil)
		if r == nil || r.BetweenRunCV != tc.want || r.MaxSeconds != 60 || r.MinSeconds != 5 {
			t.Errorf("threads %d: rule %+v, want between-run CV %v", tc.threads, r, tc.want)
		}
	}
}
