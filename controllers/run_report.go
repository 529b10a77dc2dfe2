package controllers

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
)

// reportHTML renders the run's HTML report (report.html beside the manifest
// in the object store) with pkg/analysis, as `kubectl dbbench report --html`
// does from the cluster: the cells' compact documents from their results
// ConfigMaps (summaries and the encoded QPS series), in matrix order, cells
// without a document listed as such, the manifest's baseline as the base.
func (p *runPass) reportHTML(cells []matrix.Cell, m *results.Manifest) ([]byte, error) {
	var docs []*results.Document
	var missing []string
	for i, c := range cells {
		d := p.cellDocument(c, &p.run.Status.Cells[i])
		if d == nil {
			missing = append(missing, c.Name)
			continue
		}
		d.Cell.Name = c.Name
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return nil, errors.New("no cell has a readable results document")
	}
	ds, err := analysis.FromDocuments(p.run.Name, docs)
	if err != nil {
		return nil, err
	}
	for _, name := range missing {
		if err := ds.AddCell(analysis.CellMeta{Name: name}); err != nil {
			return nil, err
		}
		ds.Notes = append(ds.Notes, fmt.Sprintf("cell %s has no results", name))
	}
	r, err := analysis.BuildReport(ds, analysis.ReportOptions{Base: m.Baseline})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := analysis.WriteHTML(&b, r, analysis.HTMLOptions{}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
