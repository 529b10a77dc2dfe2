package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/plan"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
)

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
func TestGatedRun(t *testing.T) {
	clean, stalled := fixture(t, "point_select_10s.txt"), fixture(t, "stall_server_stop.txt")
	for _, tc := range []struct {
		name         string
		step         string
		outputs      []string
		rate         bool
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, runs := scriptedSysbench(t, tc.outputs...)
			p := testPlan(tc.step)
			p.Workload.Custom = []plan.CustomStep{{Name: "mine", Script: "mine.lua"}}
			p.Workload.ReadSeconds, p.Workload.WriteSeconds, p.Workload.WarmupSeconds = 8, 8, 2
			resolved, err := ResolveSteps(&p)
			if err != nil {
				t.Fatal(err)
			}
			a := &Agent{Plan: p, sb: &Sysbench{Binary: bin, Engine: plan.MariaDB}}
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
			if r := q.Replaced; r != nil && (!slices.Contains(r.Reasons, results.QualityStalled) || !(r.StallSeconds >= 4) || !(r.SteadyQPS > 0)) {
				t.Errorf("replaced run %+v: want the stalled first run's figures", r)
			}
		})
	}
}
