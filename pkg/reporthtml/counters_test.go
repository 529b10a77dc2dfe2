package reporthtml

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/results/resultstest"
)

// Counters travel from the results documents (full or compact) into the
// report's text and JSON and the HTML page, beside the hardware tables.
func TestCountersInReport(t *testing.T) {
	a := resultstest.Doc("maria-10.11-base", "10.11", 0, map[string]float64{"point-query": 1000, "insert": 200}, "point-query", "insert")
	b := resultstest.Doc("maria-11.4-base", "11.4", 0, map[string]float64{"point-query": 1100, "insert": 100}, "point-query", "insert")
	for i, d := range []*results.Document{a, b} {
		s := &d.Steps[1] // insert
		ops := s.SteadyQPS * 18
		log := 500.0 * float64(i+1)
		s.Counters = &results.Counters{Source: "SHOW GLOBAL STATUS", Seconds: 18, OpsPerSecond: s.SteadyQPS, OpsBasis: "steadyQps", Operations: ops,
			PerOp: map[string]float64{"Innodb_os_log_written": log}, Delta: map[string]float64{"Innodb_os_log_written": log * ops}}
	}
	db := resultstest.ReadCompact(t, b)
	ds, err := analysis.FromDocuments("r", []*results.Document{a, db})
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ds.Get("maria-11.4-base", "insert", 1); o.Counters["Innodb_os_log_written"] != 1000 {
		t.Fatalf("compact document's counters: %v", o.Counters)
	}
	r, err := analysis.BuildReport(ds, analysis.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Counters) != 1 || r.Counters[0].Step != "insert" {
		t.Fatalf("counter tables %+v, want insert only", r.Counters)
	}
	var text bytes.Buffer
	if err := analysis.WriteTables(&text, analysis.FormatTable, r.Tables()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Engine counters per operation: insert, 1 threads --- relative to maria-10.11-base", "Innodb_os_log_written  2.00"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("report text lacks %q:\n%s", want, text.String())
		}
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "<h2>Engine counters per operation: insert, 1 threads</h2>") ||
		!strings.Contains(page.String(), `data-id="counters.t1.insert.relative"`) {
		t.Errorf("HTML lacks the counters section")
	}
}
