package benchmarkrun

import (
	"strconv"
	"strings"
	"testing"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
)

// cellEntries keeps the state of the entries it has, in matrix order, and
// adds Pending ones for new cells; the cells and the pre-flight pairs share
// it.
func TestCellEntries(t *testing.T) {
	db := &dbbenchv1alpha1.DatabaseSpec{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB}
	cell := func(name string) matrix.Cell {
		return matrix.Cell{Name: name, Database: db, Version: "11.8", Config: dbbenchv1alpha1.ConfigVariant{Name: "base"}, Repeat: 1}
	}
	entry := func(name string, ph dbbenchv1alpha1.CellPhase) dbbenchv1alpha1.CellStatus {
		return dbbenchv1alpha1.CellStatus{Name: name, Phase: ph, Attempts: 2}
	}
	for _, tc := range []struct {
		name    string
		entries []dbbenchv1alpha1.CellStatus
		cells   []string
		want    string // name:phase:attempt:stepsTotal per entry
	}{
		{"new run", nil, []string{"a", "b"}, "a:Pending:0:3 b:Pending:0:3"},
		{"unchanged", []dbbenchv1alpha1.CellStatus{entry("a", dbbenchv1alpha1.CellRunning), entry("b", dbbenchv1alpha1.CellSucceeded)},
			[]string{"a", "b"}, "a:Running:2:0 b:Succeeded:2:0"},
		{"reordered and grown", []dbbenchv1alpha1.CellStatus{entry("b", dbbenchv1alpha1.CellFailed), entry("a", dbbenchv1alpha1.CellRunning)},
			[]string{"a", "c", "b"}, "a:Running:2:0 c:Pending:0:3 b:Failed:2:0"},
		{"a cell gone", []dbbenchv1alpha1.CellStatus{entry("a", dbbenchv1alpha1.CellRunning), entry("gone", dbbenchv1alpha1.CellRunning)},
			[]string{"a"}, "a:Running:2:0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cells []matrix.Cell
			for _, n := range tc.cells {
				cells = append(cells, cell(n))
			}
			var got []string
			for _, cs := range cellEntries(tc.entries, cells, 3) {
				if cs.Phase == dbbenchv1alpha1.CellPending && (cs.Database != "maria" || cs.Version != "11.8" || cs.Config != "base" || cs.Repeat != 1) {
					t.Errorf("new entry %s lacks the cell's coordinates: %+v", cs.Name, cs)
				}
				got = append(got, strings.Join([]string{cs.Name, string(cs.Phase), itoa(cs.Attempts), itoa(cs.StepsTotal)}, ":"))
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("entries %s, want %s", g, tc.want)
			}
		})
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
