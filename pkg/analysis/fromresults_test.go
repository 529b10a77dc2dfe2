package analysis

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbbench/dbbench/pkg/analysis/analysistest"
	"github.com/dbbench/dbbench/pkg/changepoint"
	"github.com/dbbench/dbbench/pkg/results"
)

func TestFromDocuments(t *testing.T) {
	a := analysistest.Doc("maria-10.11-base", "10.11", 0, map[string]float64{"point-query": 1000, "insert": 200}, "point-query", "insert")
	b := analysistest.Doc("maria-11.4-base", "11.4", 0, map[string]float64{"point-query": 1100, "insert": 100}, "point-query", "insert")
	b.Steps[1].Error = "deadlock"
	// Through the codec, compact form for one of them.
	data, err := results.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	da, _, err := ReadResult(data)
	if err != nil {
		t.Fatal(err)
	}
	db := readCompact(t, b)
	ds, err := FromDocuments("r1", []*results.Document{da, db})
	if err != nil {
		t.Fatal(err)
	}
	rel, err := Relative(ds, RelativeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ratioStrings([]Ratio{rel.Ratios[0][0], rel.Ratios[1][0]}); got[0] != "1.10" || got[1] != "missing" {
		t.Errorf("ratios %v", got)
	}
	if len(ds.Notes) != 1 || !strings.Contains(ds.Notes[0], "deadlock") {
		t.Errorf("notes %v", ds.Notes)
	}
	o, _ := ds.Get("maria-11.4-base", "point-query", 1)
	if o.Series == nil || len(o.Series.Values) != 20 || o.Series.WarmupSeconds != 2 {
		t.Errorf("compact series %+v", o.Series)
	}
	if o.HW == nil || math.Abs(*o.HW.CPUPerOp-55.0/1100) > 1e-12 {
		t.Errorf("hardware %+v", o.HW)
	}
	r, err := BuildReport(ds, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hardware) != 2 || len(r.Series) != 3 {
		t.Errorf("report: %d hw tables, %d series", len(r.Hardware), len(r.Series))
	}
}

func TestReadResultRefusesUnknownVersions(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"schemaVersion":"dbbench.io/results/v2","steps":[]}`, `"dbbench.io/results/v2" is not "dbbench.io/results/v1"`},
		{`{"schemaVersion":"dbbench.io/results-manifest/v9"}`, `results-manifest/v1`},
		{`{"hello":"world"}`, "schemaVersion: missing"},
		{`[1,2]`, "not a JSON object"},
	} {
		_, _, err := ReadResult([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.doc, err, tc.want)
		}
	}
	_, _, err := ReadResult([]byte(`{"schemaVersion":"dbbench.io/results/v2"}`))
	if !IsUnsupportedVersion(err) {
		t.Errorf("not an UnsupportedVersionError: %T", err)
	}
	if _, err := FromDocuments("x", []*results.Document{{SchemaVersion: "v0"}}); !IsUnsupportedVersion(err) {
		t.Errorf("FromDocuments accepted v0: %v", err)
	}
}

func TestFromManifest(t *testing.T) {
	m := &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: results.Run{Name: "r1"}, Cells: []results.ManifestCell{
		{Cell: results.Cell{Name: "a", Engine: "mysql", Version: "8.0", Attempt: 1}, Phase: "Succeeded",
			QPS:           map[string]map[int]float64{"insert": {1: 10, 4: 30}, "point-query": {1: 100, 4: 350}, "scan": {1: 5}},
			RowsPerSecond: map[string]map[int]float64{"scan": {1: 5e6}}},
		{Cell: results.Cell{Name: "b", Engine: "mysql", Version: "8.4", Attempt: 1}, Phase: "Failed"},
	}}
	ds, err := FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ds.Steps(), ","); got != "scan,point-query,insert" {
		t.Errorf("steps in catalog order: %s", got)
	}
	if o, _ := ds.Get("a", "scan", 1); o.QPS != 5e6 {
		t.Errorf("scan uses rows/s: %v", o.QPS)
	}
	rel, err := Relative(ds, RelativeOptions{Threads: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !rel.Ratios[0][0].IsMissing() || len(ds.Notes) != 1 {
		t.Errorf("failed cell: %v, notes %v", rel.Ratios[0][0], ds.Notes)
	}
}

func TestHistory(t *testing.T) {
	runs := nightlyRuns(func(i int) float64 {
		if i >= 20 {
			return 900 + float64(i%3) // a 10 % regression from run 20
		}
		return 1000 + float64(i%3)
	}, func(i int) float64 {
		if i == 7 {
			return math.NaN() // run 7 did not measure insert
		}
		return 500 + float64(i%2)
	})
	// Out of order on input: History sorts by time.
	runs[3], runs[10] = runs[10], runs[3]
	h, err := History(runs, HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Series) != 2 || h.Runs[3] != "nightly-03" {
		t.Fatalf("series %d, runs %v", len(h.Series), h.Runs)
	}
	pq := h.Series[0]
	if pq.Combination != "maria-11.4-base" || len(pq.ChangePoints) != 1 || pq.ChangePoints[0].Run != "nightly-20" {
		t.Errorf("point-query change points %+v", pq.ChangePoints)
	}
	if c := pq.ChangePoints[0]; math.Abs(c.ChangePercent+10) > 0.5 {
		t.Errorf("change %+v", c)
	}
	ins := h.Series[1]
	if len(ins.ChangePoints) != 0 || len(ins.Values) != 29 || ins.MissingRuns[0] != "nightly-07" {
		t.Errorf("insert %+v", ins)
	}
	if row := h.Tables()[1].Rows[0]; row[3] != "throughput" || row[4] != "nightly-20" || row[5] != "confirmed" || row[10] != "regression" {
		t.Errorf("change table row %q, want throughput at run nightly-20, confirmed, a regression", row)
	}
	bad := changepoint.Options{WindowLen: 1}
	if _, err := History(runs, HistoryOptions{ChangePoint: &bad}); err == nil {
		t.Error("invalid detector options accepted")
	}
	if _, err := History(nil, HistoryOptions{}); !errors.Is(err, ErrEmpty) {
		t.Errorf("no runs: %v", err)
	}
}

// TestHistorySuspectedAndDrift: a drop in the newest run is listed as
// suspected, a steady decline as one drift line with its slope.
func TestHistorySuspectedAndDrift(t *testing.T) {
	runs := nightlyRuns(func(i int) float64 {
		if i == 29 {
			return 900 // the newest run dropped by 10 %
		}
		return 1000 + float64(i%3)
	}, func(i int) float64 { return 500 - 2*float64(i) + float64(i%2) })
	h, err := History(runs, HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pq, ins := h.Series[0], h.Series[1]
	if len(pq.ChangePoints) != 1 || pq.ChangePoints[0].Run != "nightly-29" || pq.ChangePoints[0].Status != changepoint.Suspected {
		t.Errorf("point-query change points %+v, want one suspected at nightly-29", pq.ChangePoints)
	}
	if len(ins.ChangePoints) != 0 || len(ins.Drifts) != 1 || ins.Drifts[0].FirstRun != "nightly-00" || ins.Drifts[0].LastRun != "nightly-29" {
		t.Errorf("insert change points %+v drifts %+v, want one drift over all runs", ins.ChangePoints, ins.Drifts)
	}
	var rows []string
	for _, r := range h.Tables()[1].Rows {
		rows = append(rows, strings.Join(r, "|"))
	}
	want := []string{
		"maria-11.4-base|point-query|1|throughput|nightly-29|suspected|",
		"maria-11.4-base|insert|1|throughput|nightly-00..nightly-29|drift -0.40 %/run|",
	}
	for i, w := range want {
		if i >= len(rows) || !strings.HasPrefix(rows[i], w) {
			t.Errorf("change table rows %q, want row %d to start with %q", rows, i, w)
		}
	}
}

// readCompact is d as the compact document the agent writes (results.Compact)
// reads back with ReadResult.
func readCompact(t *testing.T, d *results.Document) *results.Document {
	t.Helper()
	_, data, err := results.Compact(d, results.CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	doc, _, err := ReadResult(data)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// nightlyRuns are 30 daily runs from analysistest.T0 of one cell each (MariaDB 11.4,
// base): point-query at point(i) QPS and insert at insert(i) QPS, at 1
// thread; NaN is a step the run did not measure.
func nightlyRuns(point, insert func(i int) float64) []HistoryRun {
	var runs []HistoryRun
	for i := 0; i < 30; i++ {
		cell := fmt.Sprintf("c-%d", i)
		ds := NewDataset(fmt.Sprintf("nightly-%02d", i))
		_ = ds.AddCell(CellMeta{Name: cell, Database: "maria", Version: "11.4", Config: "base"})
		for _, o := range []Observation{{Step: "point-query", QPS: point(i)}, {Step: "insert", QPS: insert(i)}} {
			if !math.IsNaN(o.QPS) {
				o.Cell, o.Threads = cell, 1
				_ = ds.Add(o)
			}
		}
		runs = append(runs, HistoryRun{Name: ds.Name, Time: analysistest.T0.Add(time.Duration(i) * 24 * time.Hour), Data: ds})
	}
	return runs
}

// TestExternalCellNotes: a cell on an external target gets a note naming the
// server, its version and every caveat, and one more when its database was
// left behind; a fresh-server cell gets neither.
func TestExternalCellNotes(t *testing.T) {
	cases := []struct {
		name      string
		ext       *results.ExternalTarget
		wantNotes []string
	}{
		{"fresh server", nil, nil},
		{"external, dropped", &results.ExternalTarget{Endpoint: "shop-db.prod", Database: "dbbench_1_x", Dropped: true,
			NotGuaranteed: results.ExternalCaveats()},
			[]string{"cell c1 ran on external server shop-db.prod (10.11.9-MariaDB), not a fresh server of its own; not guaranteed: " +
				strings.Join(results.ExternalCaveats(), ", ")}},
		{"external, left behind", &results.ExternalTarget{Endpoint: "pg", Database: "dbbench_1_x", DropError: "permission denied",
			NotGuaranteed: []string{results.CaveatOtherClients}},
			[]string{"cell c1 ran on external server pg (10.11.9-MariaDB), not a fresh server of its own; not guaranteed: other-clients",
				"cell c1 left its database dbbench_1_x on pg: permission denied"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := analysistest.Doc("c1", "external", 1, map[string]float64{"point-query": 100}, "point-query")
			d.Provenance.ServerVersion = "10.11.9-MariaDB"
			d.Provenance.External = tc.ext
			ds, err := FromDocuments("r1", []*results.Document{d})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ds.Notes, tc.wantNotes) {
				t.Errorf("notes\n  %q\nwant\n  %q", ds.Notes, tc.wantNotes)
			}
		})
	}
}
