package store

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/results"
	"github.com/google/go-cmp/cmp"
)

func TestCellObjectsOrderAndNames(t *testing.T) {
	d := testDoc("standard", "nightly", "mariadb-10-11-base-r1", 5)
	s, err := New(Config{Endpoint: "http://127.0.0.1:1", Bucket: "b", Prefix: "p/", AccessKeyID: "a", SecretAccessKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := s.CellKeys(d, CellExtras{AgentLog: []byte("log\n")})
	if err != nil {
		t.Fatal(err)
	}
	base := "p/standard/nightly/mariadb-10-11-base-r1/"
	want := []string{base + "series.csv", base + "provenance.json", base + "agent.log", base + "result.json"}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("CellKeys (-want +got):\n%s", diff)
	}
	// No series (a cell that failed before measuring), no logs.
	d.Steps = nil
	keys, _ = s.CellKeys(d, CellExtras{})
	if diff := cmp.Diff([]string{base + "provenance.json", base + "result.json"}, keys); diff != "" {
		t.Errorf("CellKeys without series (-want +got):\n%s", diff)
	}
	// The store keeps the full form only, and refuses invalid documents.
	c := testDoc("s", "r", "c", 3)
	c.Form = results.FormCompact
	if _, err := s.CellKeys(c, CellExtras{}); err == nil {
		t.Error("CellKeys accepted a compact document")
	}
	c = testDoc("s", "r", "c", 3)
	c.Cell.Engine = ""
	if _, err := s.CellKeys(c, CellExtras{}); err == nil || !strings.Contains(err.Error(), "cell.engine") {
		t.Errorf("CellKeys of an invalid document = %v, want an error naming cell.engine", err)
	}
}

func TestEncodeSeriesCSV(t *testing.T) {
	d := testDoc("s", "r", "c", 3)
	d.Steps[0].Series.IntervalSeconds = 2
	data, ok := EncodeSeriesCSV(d)
	if !ok {
		t.Fatal("no series encoded")
	}
	rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		SeriesHeader,
		{"point-query", "4", "2", "1000", "50", "1.25", "95", "0", "0"},
		{"point-query", "4", "4", "1001.37", "50.0685", "1.25", "95", "0", "0"},
		{"point-query", "4", "6", "1002.74", "50.137", "1.25", "95", "0", "0"},
		{"read-write,range=100", "4", "1", "2000", "100", "1.25", "95", "0", "0"},
		{"read-write,range=100", "4", "2", "2001.37", "100.0685", "1.25", "95", "0", "0"},
		{"read-write,range=100", "4", "3", "2002.74", "100.137", "1.25", "95", "0", "0"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("series.csv (-want +got):\n%s", diff)
	}
	d.Steps = nil
	if _, ok := EncodeSeriesCSV(d); ok {
		t.Error("EncodeSeriesCSV reported a series for a document without steps")
	}
}

func TestProvenanceBundle(t *testing.T) {
	d := testDoc("s", "r", "c", 3)
	// A writer that forgot to redact: the bundle redacts again.
	d.Steps[1].Command = []string{"sysbench", "--pgsql-password=hunter2", "run"}
	b := NewProvenanceBundle(d)
	raw, err := marshalJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "hunter2") {
		t.Fatalf("provenance.json leaks a password:\n%s", raw)
	}
	var got ProvenanceBundle
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.SchemaVersion != ProvenanceSchemaV1 || got.Provenance.ServerSettings["max_connections"] != "151" ||
		got.Provenance.ConfigText != d.Provenance.ConfigText || len(got.Commands) != 3 ||
		got.Commands[0].Phase != "load" || got.Commands[2].Step != "read-write,range=100" || got.Commands[2].Threads != 4 {
		t.Errorf("provenance bundle lost something: %s", raw)
	}
	again, _ := marshalJSON(NewProvenanceBundle(d))
	if string(again) != string(raw) {
		t.Error("provenance.json is not deterministic: the same document gave different bytes")
	}
}
