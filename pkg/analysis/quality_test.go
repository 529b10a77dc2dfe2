package analysis

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/results"
)

// issueStep is the step of the issue, as an agent without the quality
// gate wrote it: a 12 s read-only-count step whose client reported at 2 s
// and 3 s and then not at all (a 9.8 s stall, latencyMaxMs 9,759),
// accepted with steadySamples 1 and steadyQps 1,547 against a finalQps of
// 415. Its series has 2 samples, which a report reads as seconds 1 and 2:
// none after the 2 s warm-up.
func issueStep(threads int) results.StepResult {
	el := 12.3
	return results.StepResult{Step: "read-only-count", Group: "range-agg", Threads: threads, DurationSeconds: 12, WarmupSeconds: 2,
		ElapsedSeconds: &el, SteadyQPS: 1547, SteadyTPS: 1547, SteadySamples: 1, FinalQPS: 415, FinalTPS: 415,
		LatencyAvgMs: 19, LatencyMaxMs: 9759,
		Series: &results.Series{IntervalSeconds: 1, LatencyPercentile: 95, QPS: []float64{1400, 1547}, TPS: []float64{1400, 1547},
			LatencyMs: []float64{5, 5}, ErrorsPerSecond: []float64{0, 0}, ReconnectsPerSecond: []float64{0, 0}}}
}

// TestReportOfAStalledCellDegrades is `kubectl dbbench report` of a run
// with a stalled cell: the report used to fail as a whole ("series of 2
// samples has none after the 2 s warm-up: no data"); it must be made, the
// stalled step's series left out with a note naming the cell, and the
// other cells' figures as they were.
func TestReportOfAStalledCellDegrades(t *testing.T) {
	a := testDoc("maria-10.11-base", "10.11", 0, map[string]float64{"point-query": 1000, "read-only-count": 1500}, "point-query", "read-only-count")
	b := testDoc("maria-11.4-base", "11.4", 0, map[string]float64{"point-query": 1100, "read-only-count": 1600}, "point-query", "read-only-count")
	b.Steps[1] = issueStep(1)
	ds, err := FromDocuments("r1", []*results.Document{a, readCompact(t, b)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := BuildReport(ds, ReportOptions{})
	if err != nil {
		t.Fatalf("the report failed as a whole: %v", err)
	}
	if !hasNote(r.Notes, "maria-11.4-base", "read-only-count") {
		t.Errorf("no note names the stalled cell's step: %q", r.Notes)
	}
	if len(r.Series) != 3 {
		t.Errorf("%d series analysed, want the 3 others", len(r.Series))
	}
	if got := r.Relative[0].Ratios[0][0].String(); got != "1.10" {
		t.Errorf("point-query ratio %s, want 1.10", got)
	}
}

// hasNote reports whether a note mentions every word.
func hasNote(notes []string, words ...string) bool {
	for _, n := range notes {
		all := true
		for _, w := range words {
			all = all && strings.Contains(n, w)
		}
		if all {
			return true
		}
	}
	return false
}

// stalled marks a document's step invalid as the agent does: the issue's
// figures, with its late reports' times and the quality gate's verdict.
func stalled(d *results.Document, i int) {
	s := issueStep(d.Steps[i].Threads)
	s.Step = d.Steps[i].Step
	s.Series.Seconds = []float64{2, 3}
	q := results.AssessStep(&s)
	q.Attempts = 2
	s.Quality = &q
	d.Steps[i] = s
}

// TestInvalidValueIsShownAsInvalid: a value the quality gate marked
// invalid is a ratio "invalid" (not a number, not "missing") in the
// relative table, left out of the group statistics with a note, and its
// series is shown marked as the evidence; the same from the manifest.
func TestInvalidValueIsShownAsInvalid(t *testing.T) {
	a := testDoc("maria-10.11-base", "10.11", 0, map[string]float64{"point-query": 1000, "read-only-count": 1500}, "point-query", "read-only-count")
	b := testDoc("maria-11.4-base", "11.4", 0, map[string]float64{"point-query": 1100, "read-only-count": 1600}, "point-query", "read-only-count")
	stalled(b, 1)
	if !b.Steps[1].Invalid() {
		t.Fatalf("the issue's step is valid: %+v", b.Steps[1].Quality)
	}
	fromDocs, err := FromDocuments("r1", []*results.Document{a, readCompact(t, b)})
	if err != nil {
		t.Fatal(err)
	}
	m := &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: results.Run{Name: "r1"}, Cells: []results.ManifestCell{
		results.NewManifestCell(a, "Succeeded", "", ""), results.NewManifestCell(b, "Succeeded", "", "")}}
	fromManifest, err := FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	for name, ds := range map[string]*Dataset{"documents": fromDocs, "manifest": fromManifest} {
		t.Run(name, func(t *testing.T) {
			r, err := BuildReport(ds, ReportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			rel := r.Relative[0]
			pq, roc := slices.Index(rel.Steps, "point-query"), slices.Index(rel.Steps, "read-only-count")
			if got := []string{rel.Ratios[pq][0].String(), rel.Ratios[roc][0].String()}; got[0] != "1.10" || got[1] != "invalid" {
				t.Errorf("ratios %v, want [1.10 invalid]", got)
			}
			if b, err := rel.Ratios[roc][0].MarshalJSON(); err != nil || string(b) != `"invalid"` {
				t.Errorf("JSON %s, %v", b, err)
			}
			tables := r.Tables()
			if !hasNote(tables[0].Notes, "maria-11.4-base", "read-only-count", "invalid") {
				t.Errorf("relative notes %q", tables[0].Notes)
			}
			if !hasNote(r.Notes, "maria-11.4-base", "read-only-count", "Stalled") {
				t.Errorf("report notes %q: want the invalid value's reasons", r.Notes)
			}
			g := r.Groups[0]
			if n := g.Stats[0][slices.Index(g.Groups, "range, part 2")].Invalid; n != 1 {
				t.Errorf("range, part 2: invalid %d, want 1", n)
			}
			var groupNotes []string
			for _, gt := range g.Tables() {
				groupNotes = append(groupNotes, gt.Notes...)
			}
			if !hasNote(groupNotes, "range, part 2", "invalid", "left out") {
				t.Errorf("group notes %q", groupNotes)
			}
		})
	}
	r, err := BuildReport(fromDocs, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := SeriesTable(r.Series)
	found := false
	for _, row := range st.Rows {
		found = found || (row[0] == "maria-11.4-base" && row[1] == "read-only-count (invalid)")
	}
	if !found || !hasNote(st.Notes, "invalid") {
		t.Errorf("series table rows %q notes %q: want the invalid value's series marked", st.Rows, st.Notes)
	}
	// The invalid value as the base: its row has no base QPS.
	r, err = BuildReport(fromDocs, ReportOptions{Base: "maria-11.4-base"})
	if err != nil {
		t.Fatal(err)
	}
	if row := r.Relative[0].Table().Rows[1]; row[1] != "invalid" || row[2] != "invalid" {
		t.Errorf("row with an invalid base %q", row)
	}
}

// TestInvalidValueMeasuredByNoOtherCell: a step only one cell measured, and
// invalid, keeps its row, "invalid" where its figure would be (the case of
// a report of one cell, as TestRealStallIsReRunOrFlagged makes).
func TestInvalidValueMeasuredByNoOtherCell(t *testing.T) {
	d := testDoc("maria-10.11-base", "10.11", 0, map[string]float64{"point-query": 1000, "read-only-count": 1500}, "point-query", "read-only-count")
	stalled(d, 1)
	ds, err := FromDocuments("r1", []*results.Document{readCompact(t, d)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := BuildReport(ds, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Relative[0].Table().Rows
	want := [][]string{{"point-query", "1000.00"}, {"read-only-count", "invalid"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// TestJudgeRunsLeavesInvalidOut: a repeat whose value is invalid is not a
// value to a verdict. Here the current run's third repeat stalled (a tenth
// of the others' QPS); left in, it would make the point regressed. The
// verdict must compare the other repeats, not regress, and say that one
// invalid value was left out.
func TestJudgeRunsLeavesInvalidOut(t *testing.T) {
	run := func(name string, qps []float64, stall int) *results.Manifest {
		m := &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: results.Run{Name: name}}
		for i, q := range qps {
			d := testDoc(fmt.Sprintf("maria-10.11-base-r%d", i+1), "10.11", i+1, map[string]float64{"read-only-count": q}, "read-only-count")
			if i == stall {
				stalled(d, 0)
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
