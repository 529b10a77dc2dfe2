package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/results"
)

// TestRoundOrderReversesEveryOtherRound: A, the slowed cells, A2, then the
// reverse, so that a drift over time does not favour a side.
func TestRoundOrderReversesEveryOtherRound(t *testing.T) {
	c := config{scales: []int{90, 95}, quota: 0.4}
	tests := []struct {
		round int
		want  []string
	}{
		{0, []string{"A", "S90", "S95", "A2"}},
		{1, []string{"A2", "S95", "S90", "A"}},
		{2, []string{"A", "S90", "S95", "A2"}},
	}
	for _, tt := range tests {
		if got := roundOrder(c, tt.round); !slices.Equal(got, tt.want) {
			t.Errorf("round %d: %v, want %v", tt.round, got, tt.want)
		}
	}
	for cell, want := range map[string]float64{"A": 0.4, "A2": 0.4, "S90": 0.36, "S95": 0.38} {
		if got := quotaOf(c, cell); got < want-1e-12 || got > want+1e-12 {
			t.Errorf("quota of %s = %v, want %v", cell, got, want)
		}
	}
}

// TestReadLogRebuildsTheRuns: -replay reads the per-run lines the
// benchmark logs and ignores the others.
func TestReadLogRebuildsTheRuns(t *testing.T) {
	log := `[06:59:29] MariaDB on 127.0.0.1:34329 in cgroup /sys/fs/cgroup/cpu/x (cgroup v1 cpu.cfs_quota_us); 20 rounds
[06:59:53] round  1 A    quota 0.400 CPU, throttled in  96 % of periods, 23.7 s: read-only-count 1486.9, read-only-sum 5149.5
[07:00:16] round  1 S90  quota 0.360 CPU, throttled in  97 % of periods, 22.8 s: read-only-count 1350.0, read-only-sum 4700.25
[07:10:16] round 12 A2   quota 0.400 CPU, throttled in 100 % of periods, 21.0 s: read-only-count 1500, read-only-sum 5000
`
	path := filepath.Join(t.TempDir(), "bench.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	runs, err := readLog(path, config{threads: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 {
		t.Fatalf("%d runs, want 3", len(runs))
	}
	r := runs[1]
	if r.cell != "S90" || r.round != 0 || r.wall != 22.8 || r.throttled != 0.97 || len(r.doc.Steps) != 2 ||
		r.doc.Steps[1].Step != "read-only-sum" || r.doc.Steps[1].SteadyQPS != 4700.25 || r.doc.Steps[1].Threads != 8 {
		t.Errorf("second run %+v steps %+v", r, r.doc.Steps)
	}
	if runs[2].round != 11 || runs[2].cell != "A2" || runs[2].throttled != 1 {
		t.Errorf("third run %+v", runs[2])
	}
	bad := filepath.Join(t.TempDir(), "bad.log")
	if err := os.WriteFile(bad, []byte("[x] round  1 A    quota 0.400 CPU, throttled in  96 % of periods, 23.7 s: read-only-count\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readLog(bad, config{}); err == nil {
		t.Error("a line without a QPS was accepted")
	}
	if _, err := readLog(path+".missing", config{}); err == nil {
		t.Error("a missing log was accepted")
	}
}

// TestRepeatVerdictsCountBlocksAndSubsamples: a 30 % slowdown with 1 %
// noise regresses in every block and subsample, an identical cell in none;
// blocks are disjoint (20 rounds: 6 blocks of 3, 4 of 5). A 6 % slowdown
// is not significantly beyond 5 % at 3+3 (Tested) but is significant and
// measured beyond 5 % (Estimated); a 4 % one is under the magnitude.
func TestRepeatVerdictsCountBlocksAndSubsamples(t *testing.T) {
	c := config{rounds: 20, threads: 8, steps: []string{"read-only-count"}}
	var runs []runResult
	for r := 0; r < c.rounds; r++ {
		noise := 1 + 0.01*float64(r%5-2)
		for cell, qps := range map[string]float64{"A": 1000 * noise, "A2": 1000 / noise, "S70": 700 * noise, "S94": 940 * noise, "S96": 960 * noise} {
			doc := &results.Document{Cell: results.Cell{Name: "synthetic", Engine: "mariadb"},
				Provenance: results.Provenance{ServerVersion: "synthetic", ServerSettingsSHA256: "synthetic"},
				Steps:      []results.StepResult{{Step: "read-only-count", Threads: c.threads, SteadyQPS: qps}}}
			runs = append(runs, runResult{cell: cell, round: r, doc: doc})
		}
	}
	cells := byCell(runs)
	tested, estimated := rules[0], rules[1]
	tests := []struct {
		cell      string
		n         int
		r         rule
		regressed int
		total     int
		rate      float64 // NaN: not checked (some draws have no spread)
	}{
		{"S70", 3, tested, 6, 6, 1},
		{"S70", 5, tested, 4, 4, 1},
		{"S70", 10, estimated, 2, 2, 1},
		{"A2", 3, tested, 0, 6, 0},
		{"A2", 5, tested, 0, 4, 0},
		{"A2", 5, estimated, 0, 4, 0},
		{"S94", 3, tested, 0, 6, math.NaN()},
		{"S94", 3, estimated, 6, 6, math.NaN()},
		{"S96", 3, estimated, 0, 6, math.NaN()},
	}
	for _, tt := range tests {
		vc, err := repeatVerdicts(c, cells, tt.cell, tt.n, tt.r)
		if err != nil {
			t.Fatal(err)
		}
		if vc.regressed != tt.regressed || vc.total != tt.total {
			t.Errorf("%s %d+%d %s: %d / %d regressed, want %d / %d", tt.cell, tt.n, tt.n, tt.r, vc.regressed, vc.total, tt.regressed, tt.total)
		}
		if math.IsNaN(tt.rate) {
			continue
		}
		rate, err := subsampleRate(c, cells, tt.cell, tt.n, tt.r)
		if err != nil {
			t.Fatal(err)
		}
		if rate != tt.rate {
			t.Errorf("%s %d+%d: subsample rate %v, want %v", tt.cell, tt.n, tt.n, rate, tt.rate)
		}
		if rate, err = bootstrapRate(c, cells, tt.cell, tt.n, tt.r); err != nil || rate != tt.rate {
			t.Errorf("%s %d+%d: bootstrap rate %v (%v), want %v", tt.cell, tt.n, tt.n, rate, err, tt.rate)
		}
	}
	// A 30 % slowdown at a 1.4 % CV needs the fewest repeats the
	// between-run test takes; a 10 % one at that CV more, and a slowdown
	// inside the magnitude none.
	// The Estimated rule needs fewer for the 10 % one.
	for _, tt := range []struct {
		scale int
		r     rule
		want  func(int) bool
	}{
		{70, tested, func(n int) bool { return n == 2 }},
		{90, tested, func(n int) bool { return n > 2 && n < 10 }},
		{96, tested, func(n int) bool { return n == 0 }},
		{90, estimated, func(n int) bool {
			return n >= 2 && n < designRepeats(config{rounds: 20, threads: 8, steps: c.steps, scales: []int{90}}, cells, tested, 100)
		}},
	} {
		c.scales = []int{tt.scale}
		if n := designRepeats(c, cells, tt.r, 100); !tt.want(n) {
			t.Errorf("design repeats for S%d, %s: %d", tt.scale, tt.r, n)
		}
	}
}

// TestGoalsFromARealLog: the goal summary of a committed real-server log
// (docs/benchmarks.md, third run) reports the A/A count at the defaults
// and, at 10+10 repeats, the 10 % slowdown found by the Estimated rule in
// both blocks and not by Tested.
func TestGoalsFromARealLog(t *testing.T) {
	c := config{rounds: 20, threads: 8, steps: []string{"read-only-count", "read-only-sum"}, scales: []int{90, 95}, quota: 0.4}
	runs, err := readLog(filepath.Join("testdata", "run-2026-11-24-maxweight.log"), c)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(t.TempDir(), "goals.txt"))
	if err != nil {
		t.Fatal(err)
	}
	goals(out, c, byCell(runs))
	_ = out.Close()
	text, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"goal, A/A false positives (1 run/side, magnitude 5 % Tested, α 0.05): 1 / 20 = 0.05 [0.00, 0.25]; consistent with α: yes",
		"goal, detection of S90 (nominal −10 %) at 10+10 repeats: magnitude 5 % Tested 0 / 2 blocks",
		"magnitude 5 % Estimated 2 / 2 blocks, subsamples 1.00",
		"goal, detection of S95 (nominal −5 %) at 10+10 repeats:",
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("goals lack %q:\n%s", want, text)
		}
	}
}

// TestCrossedRounds: the round component of a rounds × cells table
// without replication, by hand.
func TestCrossedRounds(t *testing.T) {
	tests := []struct {
		name          string
		y             [][]float64
		want          string
		msRound, msEr float64
	}{
		// Rounds 0.5 and 2.5, no interaction: MS_round 2·(1 + 1) = 4 over
		// 1 df, no error; (4 − 0)/2 = 2, CV √(e² − 1).
		{"a round effect", [][]float64{{0, 1}, {2, 3}}, "252.77 %", 4, 0},
		// Equal round means, all interaction: MS_error 1, truncated.
		{"none", [][]float64{{0, 1}, {1, 0}}, "0*", 0, 1},
		{"one round", [][]float64{{0, 1}}, "-", 0, 0},
	}
	for _, tt := range tests {
		got, msRound, msErr, _, _ := crossedRounds(tt.y)
		if got != tt.want || math.Abs(msRound-tt.msRound) > 1e-12 || math.Abs(msErr-tt.msEr) > 1e-12 {
			t.Errorf("%s: %q (MS %v, %v), want %q (%v, %v)", tt.name, got, msRound, msErr, tt.want, tt.msRound, tt.msEr)
		}
	}
}

// TestComponentsFromARealLog: the committed third run's log gives the
// components docs/noise.md quotes ("Measured on this machine").
func TestComponentsFromARealLog(t *testing.T) {
	c := config{rounds: 20, threads: 8, steps: []string{"read-only-count", "read-only-sum"}, scales: []int{90, 95}, quota: 0.4}
	runs, err := readLog(filepath.Join("testdata", "run-2026-11-24-maxweight.log"), c)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(t.TempDir(), "components.txt"))
	if err != nil {
		t.Fatal(err)
	}
	components(out, c, byCell(runs))
	_ = out.Close()
	text, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"components, read-only-count (80 runs, 4 cells, one node; within not logged): run CV 7.49 % over 76 df; rounds crossed with cells: round CV 4.76 % over 19 df (mean squares 0.01238 round, 0.00333 error over 57 df)",
		"components, read-only-sum (80 runs, 4 cells, one node; within not logged): run CV 6.54 % over 76 df; rounds crossed with cells: round CV 3.14 % over 19 df",
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("components lack %q:\n%s", want, text)
		}
	}
}

// TestPlanFromARealLog: the plan section plans from the first half of a
// real log's rounds and judges the designed plan on the second half.
func TestPlanFromARealLog(t *testing.T) {
	c := config{rounds: 20, threads: 8, steps: []string{"read-only-count", "read-only-sum"}, scales: []int{90, 95}, quota: 0.4, seconds: 5, warmup: 1}
	runs, err := readLog(filepath.Join("testdata", "run-2026-11-24.log"), c)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(t.TempDir(), "plan.txt"))
	if err != nil {
		t.Fatal(err)
	}
	planSection(out, c, byCell(runs))
	_ = out.Close()
	text, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Join(strings.Fields(string(text)), " ")
	for _, want := range []string{
		"plan, history (rounds 1–10): read-only-count run CV",
		"magnitude 5 % Estimated designed 5 72 1.16 0.90 1.000 (S90) 0.000 (α 0.05) 0.047",
		"magnitude 5 % Estimated fixed (reference) 300 72 24.76 0.90",
		"plan, held-out rounds 11–20: S90 / A mean QPS per step [0.925 0.883]",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("plan lacks %q:\n%s", want, text)
		}
	}
}
