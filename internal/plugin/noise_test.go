package plugin

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
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
		for _, line := range strings.Split(out, "\n") {
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

	// JSON carries the same rows; --alpha overrides the recorded level.
	out, _, err = runCmd(t, noCluster{}, "noise", "nightly", "--from-dir", "testdata/noise", "-o", "json", "--alpha", "0.05")
	if err != nil {
		t.Fatal(err)
	}
	var s analysis.SuiteNoiseSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if s.Alpha != 0.05 || len(s.Rows) != 2 || s.Rows[0].DF != 6 || !s.Rows[0].Usable ||
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
