package benchmarkrun

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/reporthtml"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/runverdict"
	"github.com/dbbench/dbbench/pkg/store"
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
	// The report sits in <suite>/<run>/, beside the suite's site.
	nav := []reporthtml.Link{{Label: "The suite's site: every run, change point and acknowledgement", Href: "../" + store.ObjectSiteIndex}}
	if err := reporthtml.WriteHTML(&b, r, reporthtml.HTMLOptions{Regression: p.regressionSection(), Nav: nav}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// regressionSection is the run's verdict at the top of its report: the
// Regressed condition, the pairs it named with the runs around their
// change points, and a link to the bisection it started, which the store
// keeps beside the run (<suite>/_bisections/<name>/report.html). nil
// without a verdict.
func (p *runPass) regressionSection() *reporthtml.HTMLRegression {
	c := meta.FindStatusCondition(p.run.Status.Conditions, dbbenchv1alpha1.ConditionRegressed)
	if c == nil {
		return nil
	}
	rg := &reporthtml.HTMLRegression{Verdict: fmt.Sprintf("Regressed=%s (%s): %s", c.Status, c.Reason, c.Message)}
	st := p.run.Status.Regression
	if st == nil {
		return rg
	}
	for _, r := range st.Regressed {
		item := fmt.Sprintf("%s %s@%d %s %s%%", r.Cell, r.Step, r.Threads, r.Metric, r.ChangePercent)
		if r.Since != "" {
			item += fmt.Sprintf(" since run %s (last run before it: %s)", r.Since, r.LastBefore)
		}
		switch {
		case r.EnvironmentOnly:
			item += "; the environment alone changed: " + runverdict.JoinChanges(r.CoincidesWith)
		case len(r.CoincidesWith) > 0:
			item += "; coincides with: " + runverdict.JoinChanges(r.CoincidesWith)
		}
		rg.Items = append(rg.Items, item)
	}
	for _, a := range st.Acknowledged {
		rg.Items = append(rg.Items, fmt.Sprintf("%s %s@%d %s%% since run %s: %s by %s, not reported", a.Cell, a.Step, a.Threads, a.ChangePercent, a.Since,
			strings.ToLower(string(a.Resolution)), a.Ack))
	}
	switch {
	case st.Bisection != "":
		rg.Items = append(
			rg.Items,
			fmt.Sprintf(
				"Bisection %s localizes the build (kubectl dbbench bisect status %s); its page appears beside this report when it ends.",
				st.Bisection,
				st.Bisection,
			),
		)
		rg.Links = append(
			rg.Links,
			reporthtml.Link{Label: "Bisection " + st.Bisection, Href: "../" + store.BisectionsSegment + "/" + st.Bisection + "/" + store.ObjectReport},
		)
	case st.BisectionMessage != "":
		rg.Items = append(rg.Items, "No bisection: "+st.BisectionMessage)
	}
	return rg
}
