package regression

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/results/resultstest"
)

// TestJudgeRunsLeavesInvalidOut: a repeat whose value is invalid is not a
// value to a verdict. Here the current run's third repeat stalled (a tenth
// of the others' QPS); left in, it would make the point regressed. The
// verdict must compare the other repeats, not regress, and say that one
// invalid value was left out.
func TestJudgeRunsLeavesInvalidOut(t *testing.T) {
	run := func(name string, qps []float64, stall int) *results.Manifest {
		m := &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: results.Run{Name: name}}
		for i, q := range qps {
			d := resultstest.Doc(fmt.Sprintf("maria-10.11-base-r%d", i+1), "10.11", i+1, map[string]float64{"read-only-count": q}, "read-only-count")
			if i == stall {
				resultstest.Stalled(d, 0)
				d.Steps[0].SteadyQPS = q // the stall in its mean
			}
			m.Cells = append(m.Cells, results.NewManifestCell(d, "Succeeded", "", ""))
		}
		return m
	}
	base := run("base", []float64{1500, 1510, 1495}, -1)
	cur := run("cur", []float64{1505, 1498, 150}, 2)
	v, err := JudgeRuns(cur, base, VerdictOptions{MinMagnitude: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Regressed) != 0 {
		t.Errorf("regressed %v: the invalid repeat was used", v.Regressed)
	}
	if len(v.Points) != 1 || v.Points[0].NAfter != 2 || v.Points[0].NBefore != 3 {
		t.Errorf("points %+v: want one point on 2 + 3 repeats", v.Points)
	}
	want := []InvalidPoint{{Run: RunCurrent, Cell: "maria-10.11-base-r3", Step: "read-only-count", Threads: 1,
		Reasons: []results.QualityReason{results.QualityTooFewSteadySamples, results.QualityStalled, results.QualitySteadyFinalMismatch}}}
	if diff := cmp.Diff(want, v.Invalid); diff != "" {
		t.Errorf("invalid (-want +got):\n%s", diff)
	}
	if s := v.Summary(); !strings.Contains(s, "1 invalid value(s) left out (1 current)") {
		t.Errorf("summary %q does not say what was left out", s)
	}
}
