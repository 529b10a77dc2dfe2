package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/results/resultstest"
)

// TestReportOfAStalledCellDegrades is `kubectl dbbench report` of a run
// with a stalled cell: the report used to fail as a whole ("series of 2
// samples has none after the 2 s warm-up: no data"); it must be made, the
// stalled step's series left out with a note naming the cell, and the
// other cells' figures as they were.
func TestReportOfAStalledCellDegrades(t *testing.T) {
	a := resultstest.Doc("maria-10.11-base", "10.11", 0, map[string]float64{"point-query": 1000, "read-only-count": 1500}, "point-query", "read-only-count")
	b := resultstest.Doc("maria-11.4-base", "11.4", 0, map[string]float64{"point-query": 1100, "read-only-count": 1600}, "point-query", "read-only-count")
	b.Steps[1] = resultstest.IssueStep(1)
	ds, err := FromDocuments("r1", []*results.Document{a, resultstest.ReadCompact(t, b)})
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

// TestInvalidValueIsShownAsInvalid: a value the quality gate marked
// invalid is a ratio "invalid" (not a number, not "missing") in the
// relative table, left out of the group statistics with a note, and its
// series is shown marked as the evidence; the same from the manifest.
func TestInvalidValueIsShownAsInvalid(t *testing.T) {
	a := resultstest.Doc("maria-10.11-base", "10.11", 0, map[string]float64{"point-query": 1000, "read-only-count": 1500}, "point-query", "read-only-count")
	b := resultstest.Doc("maria-11.4-base", "11.4", 0, map[string]float64{"point-query": 1100, "read-only-count": 1600}, "point-query", "read-only-count")
	resultstest.Stalled(b, 1)
	if !b.Steps[1].Invalid() {
		t.Fatalf("the issue's step is valid: %+v", b.Steps[1].Quality)
	}
	fromDocs, err := FromDocuments("r1", []*results.Document{a, resultstest.ReadCompact(t, b)})
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
	d := resultstest.Doc("maria-10.11-base", "10.11", 0, map[string]float64{"point-query": 1000, "read-only-count": 1500}, "point-query", "read-only-count")
	resultstest.Stalled(d, 1)
	ds, err := FromDocuments("r1", []*results.Document{resultstest.ReadCompact(t, d)})
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
