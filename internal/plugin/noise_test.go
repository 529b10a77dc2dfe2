package plugin

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
)

// testdata/noise holds suite "nightly": five runs of one cell with the
// same image, settings and config (an A/A set), one run of another image
// (not part of it), one run with three repeats whose manifest records the
// suite's regression level (0.01), and a run of suite "weekly".
var noiseTestdata = struct {
	aa      map[string][]float64
	repeats map[string][]float64
}{
	aa:      map[string][]float64{"point-query": {1000, 1040, 980, 1010, 1025}, "insert": {400, 380, 410, 395, 405}},
	repeats: map[string][]float64{"point-query": {1000, 1020, 990}, "insert": {400, 404, 398}},
}

func TestNoiseFromDir(t *testing.T) {
	out, _, err := runCmd(t, noCluster{}, "noise", "nightly", "--from-dir", "testdata/noise")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Noise floor of suite nightly: run-to-run variation over 7 runs") {
		t.Errorf("header:\n%s", out)
	}
	// The level comes from the newest run's recorded verdict.
	if !strings.Contains(out, "mde % (1 run/side, α 0.01)") || !strings.Contains(out, "mde % (holm over 2)") {
		t.Errorf("columns do not name α 0.01 and Holm over 2 points:\n%s", out)
	}
	for _, step := range []string{"point-query", "insert"} {
		var pool inference.NoisePool
		for _, set := range [][]float64{noiseTestdata.aa[step], noiseTestdata.repeats[step]} {
			if err := pool.AddRepeats(set); err != nil {
				t.Fatal(err)
			}
		}
		f, _ := pool.Floor()
		mde, err := inference.Design{CV: f.CV(), Alpha: 0.01, FloorDF: f.DF}.MDE(1, 0.8)
		if err != nil {
			t.Fatal(err)
		}
		mdeHolm, err := inference.Design{CV: f.CV(), Alpha: 0.005, FloorDF: f.DF}.MDE(1, 0.8)
		if err != nil {
			t.Fatal(err)
		}
		// 6 df: the A/A set of 5 runs (4) and the 3 repeats (2); the run of
		// another image is not in it.
		want := fmt.Sprintf("%.2f %d 8 2 %.1f %.1f floor", 100*f.CV(), 6, 100*mde, 100*mdeHolm)
		found := false
		floorTable, _, _ := strings.Cut(out, "Variance components")
		for _, line := range strings.Split(floorTable, "\n") {
			fields := strings.Fields(line)
			if len(fields) > 2 && fields[0] == step && fields[1] == "1" {
				found = true
				if got := strings.Join(fields[2:], " "); got != want {
					t.Errorf("%s: row %q, want %q", step, got, want)
				}
			}
		}
		if !found {
			t.Errorf("no row for %s@1:\n%s", step, out)
		}
	}

	// The components: one node, no per-second spread: the run level is
	// the floor's variance over the same 6 df and 8 runs.
	for _, want := range []string{"point-query  1        -        -                  -   -                   2.06      6   -          -   1      8",
		"insert       1        -        -                  -   -                   2.42      6   -          -   1      8"} {
		if !strings.Contains(out, want) {
			t.Errorf("components: no row %q in\n%s", want, out)
		}
	}

	// JSON carries the same rows; --alpha overrides the recorded level.
	out, _, err = runCmd(t, noCluster{}, "noise", "nightly", "--from-dir", "testdata/noise", "-o", "json", "--alpha", "0.05")
	if err != nil {
		t.Fatal(err)
	}
	var s regression.SuiteNoiseSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if s.Alpha != 0.05 || len(s.Rows) != 2 || s.Rows[0].DF != 6 || !s.Rows[0].Usable || len(s.Components) != 2 || s.Components[0].Run.DF != 6 ||
		strings.Join(s.FloorRuns, ",") != "nightly-01,nightly-02,nightly-03,nightly-04,nightly-05,nightly-07" {
		t.Errorf("json summary %+v", s)
	}
}

func TestNoiseErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"noise", "monthly", "--from-dir", "testdata/noise"}, `no run under testdata/noise belongs to suite "monthly" (suites found: "nightly", "weekly")`},
		{[]string{"noise", "nightly", "--from-dir", "testdata/noise", "--alpha", "1.5"}, "--alpha 1.5: must be in (0, 1)"},
		{[]string{"noise", "nightly"}, "no cluster in this test"},
	}
	for _, tt := range tests {
		_, _, err := runCmd(t, noCluster{}, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want %q", tt.args, err, tt.want)
		}
	}
	// One run per suite: nothing to pool, said so.
	out, _, err := runCmd(t, noCluster{}, "noise", "weekly", "--from-dir", "testdata/noise")
	if err != nil || !strings.Contains(out, "no evidence: the suite has no run with repeats") {
		t.Errorf("weekly: %v\n%s", err, out)
	}
}

// TestNoiseComponentsOverNodes: a run of two versions with four repeats
// each, two on each of two nodes, and per-second series: the components
// table shows the three levels, each with its df, as
// inference.EstimateComponents computes them from the manifest's figures
// (QPS and the batch-means spread, rounded to 0.01 as stored).
func TestNoiseComponentsOverNodes(t *testing.T) {
	dir := t.TempDir()
	type run struct {
		version string
		repeat  int
		node    string
		q, d    float64 // mean QPS and the half-amplitude of its 4-s waves
	}
	runs := []run{
		{"11.4", 1, "n1", 1000, 20}, {"11.4", 2, "n1", 1060, 10}, {"11.4", 3, "n2", 1150, 30}, {"11.4", 4, "n2", 1190, 20},
		{"11.8", 1, "n1", 900, 10}, {"11.8", 2, "n1", 930, 20}, {"11.8", 3, "n2", 1010, 10}, {"11.8", 4, "n2", 1000, 30},
	}
	var docs []*results.Document
	var want []inference.RunValue
	for _, r := range runs {
		d := doc("matrix-01", "matrix", fmt.Sprintf("mariadb-%s-base-r%d", r.version, r.repeat), r.version, t0, map[string]float64{"point-query@1": r.q}, "point-query@1")
		d.Cell.Repeat = r.repeat
		d.Provenance.DatabaseNode.NodeName = r.node
		s := &results.Series{IntervalSeconds: 1}
		for sec := range 16 {
			q := r.q + r.d
			if (sec/4)%2 == 1 {
				q = r.q - r.d
			}
			s.QPS, s.TPS = append(s.QPS, q), append(s.TPS, q)
			s.LatencyMs, s.ErrorsPerSecond, s.ReconnectsPerSecond = append(s.LatencyMs, 1), append(s.ErrorsPerSecond, 0), append(s.ReconnectsPerSecond, 0)
		}
		sum := results.SummarizeSeries(s.QPS, 1)
		d.Steps[0].Series, d.Steps[0].Summary, d.Steps[0].SteadySamples, d.Steps[0].DurationSeconds = s, &sum, 16, 16
		docs = append(docs, d)
		// Batches of 4: means q ± d alternating, variance 4d²/3, long-run
		// variance 16d²/3 per second, over 3 df.
		sd := math.Round(math.Sqrt(16*r.d*r.d/3)*100) / 100
		want = append(want, inference.RunValue{Set: r.version, Node: r.node, Value: r.q, Within: sd * sd / (r.q * r.q * 16), WithinDF: 3, Seconds: 16})
	}
	writeDocs(t, filepath.Join(dir, "matrix-01"), docs...)
	out, _, err := runCmd(t, noCluster{}, "noise", "matrix", "--from-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	vc, err := inference.EstimateComponents(want)
	if err != nil {
		t.Fatal(err)
	}
	if vc.Run.DF != 4 || vc.Node.DF != 1 || vc.WithinPerSecond.DF != 24 || !vc.Node.Known || vc.Node.Truncated {
		t.Fatalf("test data: components %+v, want df 4, 1 and 24 and a node level", vc)
	}
	cv := func(v float64) string { return fmt.Sprintf("%.2f", 100*math.Sqrt(math.Expm1(v))) }
	row := strings.Join([]string{"point-query", "1", "16", cv(vc.WithinPerSecond.Variance), "24", cv(vc.WithinPerSecond.Variance / 16),
		cv(vc.Run.Variance), "4", cv(vc.Node.Variance), "1", "2", "8"}, " ")
	found := false
	_, components, _ := strings.Cut(out, "Variance components")
	for _, line := range strings.Split(components, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "point-query" {
			found = true
			if got := strings.Join(f, " "); got != row {
				t.Errorf("row %q, want %q", got, row)
			}
		}
	}
	if !found {
		t.Errorf("no components row:\n%s", out)
	}
}
