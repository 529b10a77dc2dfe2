package analysis

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/results/resultstest"
)

func TestFromDocuments(t *testing.T) {
	a := resultstest.Doc("maria-10.11-base", "10.11", 0, map[string]float64{"point-query": 1000, "insert": 200}, "point-query", "insert")
	b := resultstest.Doc("maria-11.4-base", "11.4", 0, map[string]float64{"point-query": 1100, "insert": 100}, "point-query", "insert")
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
	db := resultstest.ReadCompact(t, b)
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
			d := resultstest.Doc("c1", "external", 1, map[string]float64{"point-query": 100}, "point-query")
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
