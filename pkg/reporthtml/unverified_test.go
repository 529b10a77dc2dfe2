package reporthtml

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/results/resultstest"
)

// Settings the server could not confirm reach the report (text and HTML)
// per cell; a run whose settings were all verified has no such section.
func TestReportNotesUnverifiedSettings(t *testing.T) {
	checked := func(cell string, unverified ...results.ConfigSetting) *results.Document {
		d := resultstest.Doc(cell, "11.8", 0, map[string]float64{"point-query": 1000}, "point-query")
		d.Provenance.ConfigCheck = &results.ConfigCheck{
			Verified:   []results.ConfigSetting{{Name: "innodb_buffer_pool_size", Line: 2, Requested: "256M", Normalized: "268435456", Effective: "268435456"}},
			Unverified: unverified,
		}
		return d
	}
	userLine := results.ConfigSetting{Name: "user", Line: 3, Requested: "mysql", Reason: "a start-up option without a server variable"}
	section := results.ConfigSetting{Name: "table_open_cache", Line: 5, Requested: "123", Reason: "section [mysqld-5.0] is read by no server of this version"}
	tests := []struct {
		name string
		docs []*results.Document
		// wantRows are the unverified table's rows; nil: no table.
		wantRows [][]string
	}{
		{
			name: "every setting verified",
			docs: []*results.Document{checked("a"), resultstest.Doc("b", "11.8", 0, map[string]float64{"point-query": 900}, "point-query")},
		},
		{
			name: "per cell, in document order",
			docs: []*results.Document{checked("a", userLine), checked("b"), checked("c", userLine, section)},
			wantRows: [][]string{
				{"a", "base", "3", "user", "mysql", userLine.Reason},
				{"c", "base", "3", "user", "mysql", userLine.Reason},
				{"c", "base", "5", "table_open_cache", "123", section.Reason},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Through the compact form, as the plugin reads cells.
			var docs []*results.Document
			for _, d := range tt.docs {
				c, _, err := results.Compact(d, results.CompactOptions{})
				if err != nil {
					t.Fatal(err)
				}
				docs = append(docs, c)
			}
			ds, err := analysis.FromDocuments("r1", docs)
			if err != nil {
				t.Fatal(err)
			}
			r, err := analysis.BuildReport(ds, analysis.ReportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var table *analysis.Table
			for _, tb := range r.Tables() {
				if tb.ID == "config.unverified" {
					table = &tb
				}
			}
			var text, page bytes.Buffer
			if err := analysis.WriteTables(&text, analysis.FormatTable, r.Tables()); err != nil {
				t.Fatal(err)
			}
			if err := WriteHTML(&page, r, HTMLOptions{}); err != nil {
				t.Fatal(err)
			}
			if tt.wantRows == nil {
				if table != nil || strings.Contains(text.String(), "not verified") || strings.Contains(page.String(), "not verified") {
					t.Errorf("a report with every setting verified has an unverified section:\n%s", text.String())
				}
				return
			}
			if table == nil {
				t.Fatalf("no config.unverified table; text:\n%s", text.String())
			}
			if diff := cmp.Diff(tt.wantRows, table.Rows); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			for _, want := range []string{"Config settings not verified", "table_open_cache", "a start-up option without a server variable"} {
				if !strings.Contains(text.String(), want) {
					t.Errorf("text report does not say %q:\n%s", want, text.String())
				}
			}
			for _, want := range []string{"<h2>Config settings not verified", "table_open_cache", "[mysqld-5.0]"} {
				if !strings.Contains(page.String(), want) {
					t.Errorf("HTML report does not contain %q", want)
				}
			}
		})
	}
}
