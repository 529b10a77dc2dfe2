package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/dbbench/dbbench/pkg/regression"
)

// planRows are the lines of the plan table's rows (before its notes).
func planRows(t *testing.T, out string) []string {
	t.Helper()
	var rows []string
	for _, line := range strings.Split(out, "\n")[2:] {
		if line == "" || strings.HasPrefix(line, "note:") {
			break
		}
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	return rows
}

const planSpec = `apiVersion: dbbench.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: nightly-42
spec:
  suite: nightly
  databases:
    - name: mariadb
      engine: mariadb
      versions: ["10.11", "11.4", "11.8"]
  workload:
    steps: [point-query, insert]
    readSeconds: 120
    writeSeconds: 240
    warmupSeconds: 5
    threads: [1, 4]
    tableSize: 2000000
  regression:
    magnitudeRule: Estimated
    minMagnitudePercent: 3
    metrics: [Throughput, P99Latency]
`

func TestPlan(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(spec, []byte(planSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		title string
		rows  []string
		want  []string // in the output
	}{
		{
			// The design table's case (docs/noise.md): a 7 % CV, Estimated,
			// Holm over 2 tests: 11 repeats per side. A cell is 6 s + 61 s
			// (the flush wait of 10⁶ rows) + 2 × (10 + T): 107 s at 10-s
			// steps (2 × 11 × 107 s = 0.65 h), 987 s at 300/600 (6.03 h).
			name:  "defaults",
			args:  []string{"plan", "--steps", "point-query,insert", "--detect", "10%", "--rule", "Estimated"},
			title: "Plan: find a 10.0 % slowdown with power 0.90 (Estimated rule, magnitude 5.0 %, α 0.05 over 2 tests)",
			rows: []string{
				"chosen 10 10 11 1 11 0.65 0.65 0.92 9.7 6.4 point-query@1 yes",
				"reference (300/600 s) 300 600 11 1 11 6.03 6.03 0.92 9.7 6.4 point-query@1 yes",
			},
			want: []string{"point-query  1        read      default  -                  7.00      -   -          -",
				"insert       1        write     default  -                  7.00      -   -          -"},
		},
		{
			// The suite's floor points from its history (6 df), the
			// 4-thread points from the defaults; 3 combinations, 4 points
			// × 2 metrics = 8 tests; a cell is 6 + 62 + 4 × 5 + the steps:
			// 128 s at 10-s steps (3 × 22 × 128 s = 2.35 h), 1888 s at the
			// reference's and 808 s at the spec's 120/240 s.
			name:  "for a spec, with history",
			args:  []string{"plan", "--for", spec, "--detect", "8%", "--from-dir", "testdata/noise"},
			title: "Plan for suite nightly (7 runs read): find a 8.0 % slowdown with power 0.90 (Estimated rule, magnitude 3.0 %, α 0.05 over 8 tests)",
			rows: []string{
				"chosen 10 10 22 1 22 2.35 2.35 0.90 7.9 4.3 point-query@4 yes",
				"reference (300/600 s) 300 600 22 1 22 34.61 34.61 0.90 7.9 4.3 point-query@4 yes",
				"this spec (120/240 s) 120 240 22 1 22 14.81 14.81 0.90 7.9 4.3 point-query@4 yes",
			},
			want: []string{
				"point-query  1        read      history  -                  2.06      6   -          -   within and the history's step length unknown: steps of 5 s or more",
				"insert       4        write     default  -                  7.00      -   -          -",
				"load: 62 s per cell, the flush wait alone for 2000000 rows",
				"cell-hours = 3 combinations × repeats × cell",
			},
		},
		{
			// A 3 % node CV on 4 nodes for the least wall time: 12
			// repeats in blocks of 3 (one node would need 11, at 4 times
			// the wall time).
			name:  "nodes, wall time",
			args:  []string{"plan", "--steps", "point-query,insert", "--detect", "10%", "--rule", "Estimated", "--node-cv", "3%", "--nodes", "4", "--objective", "wall-time"},
			title: "Plan: find a 10.0 % slowdown with power 0.90 (Estimated rule, magnitude 5.0 %, α 0.05 over 2 tests)",
			rows: []string{
				"chosen 10 10 12 4 3,3,3,3 0.71 0.18 0.92 9.7 6.6 point-query@1 yes",
				"reference (300/600 s) 300 600 12 4 3,3,3,3 6.58 1.65 0.92 9.7 6.6 point-query@1 yes",
			},
		},
		{
			// RequiredRepeats: ±5 % at a 7 % CV takes 18; 2 × 18 cells of
			// 6 + 100 + 10 s (1.16 h) or 6 + 100 + 300 s (4.06 h).
			name:  "half-width",
			args:  []string{"plan", "--steps", "point-query", "--half-width", "5%", "--load-seconds", "100", "--warmup-seconds", "0"},
			title: "Plan: every ratio's 95 % interval within ±5.0 %",
			rows: []string{
				"chosen 10 - 18 1 18 1.16 1.16 0.80 10.5 4.9 point-query@1 yes",
				"reference (300/600 s) 300 - 18 1 18 4.06 4.06 0.80 10.5 4.9 point-query@1 yes",
			},
			want: []string{"load: 100 s per cell (--load-seconds)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runCmd(t, noCluster{}, tt.args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if title, _, _ := strings.Cut(out, "\n"); title != tt.title {
				t.Errorf("title %q, want %q", title, tt.title)
			}
			if got := planRows(t, out); strings.Join(got, "\n") != strings.Join(tt.rows, "\n") {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.rows, "\n"))
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q in\n%s", w, out)
				}
			}
		})
	}
}

// TestPlanForANewSuite: a spec whose suite has no run yet is planned from
// the defaults, and says so; a suite named as the argument must exist.
func TestPlanForANewSuite(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "run.yaml")
	if err := os.WriteFile(spec, []byte(strings.Replace(planSpec, "suite: nightly", "suite: brand-new", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runCmd(t, noCluster{}, "plan", "--for", spec, "--detect", "10%", "--from-dir", "testdata/noise")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, `note: the spec's suite brand-new has no readable history (no run under testdata/noise belongs to suite "brand-new"`) ||
		!strings.HasPrefix(out, "Plan for suite brand-new (0 runs read)") || strings.Contains(out, "history  ") {
		t.Errorf("stderr %q\n%s", errOut, out)
	}
	if _, _, err := runCmd(t, noCluster{}, "plan", "brand-new", "--detect", "10%", "--from-dir", "testdata/noise"); err == nil {
		t.Error("a suite argument without runs was accepted")
	}
}

// TestPlanYAML: -o yaml carries the plan and what it rests on.
func TestPlanYAML(t *testing.T) {
	out, _, err := runCmd(t, noCluster{}, "plan", "--steps", "point-query", "--half-width", "5%", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rep regression.PlanReport
	if err := yaml.UnmarshalStrict([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Chosen.Repeats != 18 || !rep.Chosen.Met || len(rep.Fixed) != 1 || rep.Fixed[0].Plan.ReadSeconds != 300 ||
		len(rep.Points) != 1 || rep.Points[0].Source != regression.PlanSourceDefault || rep.Goal.HalfWidth != 0.05 {
		t.Errorf("report %+v", rep)
	}
}

// TestPlanRefuses: bad flags, goals and goals out of reach are errors that
// say why; a goal out of reach still prints what the limits reach.
func TestPlanRefuses(t *testing.T) {
	tests := []struct {
		args []string
		want string
		out  string
	}{
		{[]string{"plan", "--steps", "point-query"}, "no goal: give --detect (a slowdown to find) or --half-width", ""},
		{[]string{"plan", "--detect", "10%", "--half-width", "5%"}, "--detect and --half-width: give one goal", ""},
		{[]string{"plan", "--detect", "10"}, `invalid argument "10" for "--detect" flag: "10": a fraction must be below 1 (write 10% for a percentage)`, ""},
		{[]string{"plan", "--detect", "ten"}, `"ten": want a percentage (10%) or a fraction (0.1)`, ""},
		{[]string{"plan", "--detect", "10%", "--rule", "Maybe"}, `--rule: verdict: magnitude rule "Maybe"`, ""},
		{[]string{"plan", "--detect", "10%", "--objective", "speed"}, `--objective "speed": want cell-hours or wall-time`, ""},
		{[]string{"plan", "--detect", "10%", "--max-repeats", "1"}, "--max-repeats 1: must be at least 2", ""},
		{[]string{"plan", "--detect", "5%"}, "plan goal: a 5.0 % slowdown is not beyond the 5.0 % magnitude the Tested rule asks for", ""},
		{[]string{"plan", "--detect", "10%", "--steps", "point-query", "--run-cv", "0"},
			"plan: no noise estimate for point-query@1 (no repeats or A/A runs in the suite's history with 4 df or more) and no default run-to-run CV", ""},
		{[]string{"plan", "--detect", "10%", "--steps", "no-such-step"}, "--steps: ", ""},
		{[]string{"plan", "nightly", "--detect", "10%"}, "no cluster in this test", ""},
		{[]string{"plan", "--steps", "point-query,insert", "--detect", "3%", "--rule", "Estimated", "--magnitude", "2%", "--max-repeats", "30"},
			"plan: a 3.0 % slowdown with power 0.90 is out of reach: at 30 repeats per side, 600-s read and 600-s write steps, one node the least sensitive point (point-query@1) has power 0.38 and finds 5.8 % with power 0.90",
			"chosen 600 600 30 1 30 21.45 21.45 0.38 5.8 3.7 point-query@1 no"},
	}
	for _, tt := range tests {
		out, _, err := runCmd(t, noCluster{}, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want %q", tt.args, err, tt.want)
		}
		if tt.out != "" && !strings.Contains(strings.Join(planRows(t, out), "\n"), tt.out) {
			t.Errorf("%v: the limits' plan %q is not printed:\n%s", tt.args, tt.out, out)
		}
	}
}

// TestPlanReadsTheSamples: every BenchmarkRun sample plans (its steps,
// threads, combinations and regression settings read strictly).
func TestPlanReadsTheSamples(t *testing.T) {
	paths, err := filepath.Glob("../../config/samples/benchmarkrun_*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	for _, p := range paths {
		// The suite's history stands in for each sample's own.
		args := []string{"plan", "nightly", "--for", p, "--from-dir", "testdata/noise", "--max-repeats", "10"}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`(?m)^\s*precision:`).Match(b) { // set, not commented
			// A slowdown the sample's verdict can find: beyond its magnitude.
			detect := 20
			if m := regexp.MustCompile(`(?m)^\s*minMagnitudePercent:\s*(\d+)`).FindSubmatch(b); m != nil {
				if n, _ := strconv.Atoi(string(m[1])); 2*n > detect {
					detect = 2 * n
				}
			}
			args = append(args, "--detect", fmt.Sprintf("%d%%", detect))
		}
		if out, _, err := runCmd(t, noCluster{}, args...); err != nil && !strings.Contains(err.Error(), "out of reach") {
			t.Errorf("%s: %v\n%s", p, err, out)
		}
	}
}

// TestPlanTakesTheSpecsGoal: --for a spec with spec.goal plans for that
// goal without a goal flag (what the controller records in status.plan),
// and a flag still overrides it.
func TestPlanTakesTheSpecsGoal(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "run.yaml")
	withGoal := strings.Replace(planSpec, "  regression:\n", "  goal:\n    detectPercent: \"12.5\"\n    powerPercent: 80\n  regression:\n", 1)
	if err := os.WriteFile(spec, []byte(withGoal), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags  []string
		detect float64
		power  float64
	}{
		{nil, 0.125, 0.8},
		{[]string{"--detect", "20%"}, 0.2, 0.9},
	} {
		args := append([]string{"plan", "--for", spec, "--from-dir", "testdata/noise", "-o", "yaml"}, tc.flags...)
		out, _, err := runCmd(t, noCluster{}, args...)
		if err != nil && !strings.Contains(err.Error(), "out of reach") {
			t.Fatalf("%v: %v", tc.flags, err)
		}
		var rep regression.PlanReport
		if err := yaml.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if rep.Goal.Detect != tc.detect || rep.Goal.Power != tc.power || rep.Goal.Magnitude != 0.03 || !rep.Goal.Estimated {
			t.Errorf("%v: goal %+v, want detect %v, power %v under the spec's Estimated 3 %% rule", tc.flags, rep.Goal, tc.detect, tc.power)
		}
	}
}
