package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/profile"
	"github.com/dbbench/dbbench/pkg/reporthtml"
	"github.com/dbbench/dbbench/pkg/results"
)

// ExplainOptions are the options of `explain`.
type ExplainOptions struct {
	sourceOptions
	A, B    string
	Step    string
	Threads int
	SVG     string
	Top     int
	Rank    string
}

// defaultExplainTop is how many functions explain lists.
const defaultExplainTop = 15

// NewCmdExplain builds `kubectl dbbench explain A B --step S`.
func NewCmdExplain(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	o := &ExplainOptions{sourceOptions: newSourceOptions(streams, clients)}
	cmd := &cobra.Command{
		Use:   "explain A B --step STEP",
		Short: "Where the CPU went: the functions whose share of the server's on-CPU samples changed most from A to B",
		Long: `Compare the database server's on-CPU profiles of two cells for one step: the
functions whose share of the samples changed most from A to B, and (--svg) a
differential flame graph: B's stacks, each frame as wide as its samples in B,
red where its share grew from A, blue where it shrank.

A and B are RUN/CELL, or RUN when one cell of the run has a profile of the
step. Two cells of one run compare as RUN/CELL_A RUN/CELL_B. Profiles exist
only for the steps the runs asked for (spec.workload.profile): they come from
a separate, unmeasured pass after the measured ones (docs/explain.md).

Shares, not sample counts, are compared: a function's self share is the
fraction of samples with it on CPU (where the work is done), its inclusive
share the fraction with it anywhere on the stack (who asked for the work).
--rank chooses the one the list is ordered by (self by default: stacks through
libraries built without frame pointers stop short, which skews inclusive
shares, never self ones).`,
		Example: `  kubectl dbbench explain nightly-41 nightly-42 --step point-query --svg point-query.svg
  kubectl dbbench explain run-7/pg-16-base-r0 run-7/pg-16-jit-r0 --step oltp-read-only --threads 8
  kubectl dbbench explain before after --step insert --from-dir ./results -o json`,
		Args: cobra.ExactArgs(2),
		RunE: runE(o),
	}
	o.addFlags(cmd, true)
	cmd.Flags().StringVar(&o.Step, "step", "", "Step whose profiles to compare (required).")
	cmd.Flags().IntVar(&o.Threads, "threads", 0, "Thread count of the profiles (default: the largest both cells profiled).")
	cmd.Flags().StringVar(&o.SVG, "svg", "", "Write the differential flame graph (SVG) to this file.")
	cmd.Flags().IntVar(&o.Top, "top", defaultExplainTop, "How many functions to list.")
	cmd.Flags().StringVar(&o.Rank, "rank", string(profile.RankSelf), "Order by the change of the self or inclusive share.")
	return cmd
}

// Complete fills the arguments and the source.
func (o *ExplainOptions) Complete(args []string) error {
	o.A, o.B = args[0], args[1]
	return o.completeOutputAndSource(true)
}

// Validate checks the flags.
func (o *ExplainOptions) Validate() error {
	if o.Step == "" {
		return errors.New("--step is required")
	}
	if o.A == o.B {
		return fmt.Errorf("the two runs or cells are both %q: explain two different cells", o.A)
	}
	if o.Threads < 0 {
		return fmt.Errorf("--threads %d: must not be negative", o.Threads)
	}
	if o.Top < 1 {
		return fmt.Errorf("--top %d: must be at least 1", o.Top)
	}
	if r := profile.RankBy(o.Rank); r != profile.RankSelf && r != profile.RankInclusive {
		return fmt.Errorf("--rank %q: must be %s or %s", o.Rank, profile.RankSelf, profile.RankInclusive)
	}
	return o.OutputFlags.Validate()
}

// ExplainSide is one side of an explanation: where its profile is from.
type ExplainSide struct {
	Run     string `json:"run"`
	Cell    string `json:"cell"`
	Step    string `json:"step"`
	Threads int    `json:"threads"`
	// Samples and Dropped are the profile's (see results.Profile).
	Samples int64 `json:"samples"`
	Dropped int64 `json:"dropped,omitempty"`
	// MeasuredQPS is the step's measured steady QPS; PassQPS the profiled
	// pass's (the profiler's cost is their ratio).
	MeasuredQPS float64 `json:"measuredQps"`
	PassQPS     float64 `json:"passQps,omitempty"`

	prof *profile.Profile
}

// ExplainResult is the JSON output of explain.
type ExplainResult struct {
	A    ExplainSide    `json:"a"`
	B    ExplainSide    `json:"b"`
	Rank profile.RankBy `json:"rank"`
	// Changes are the functions whose share changed most, largest first.
	Changes []profile.Change `json:"changes"`
}

// Run loads both profiles and prints the functions that moved.
func (o *ExplainOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	a, err := o.side(ctx, o.A)
	if err != nil {
		return err
	}
	b, err := o.side(ctx, o.B)
	if err != nil {
		return err
	}
	res, err := explainProfiles(a, b, o.Step, o.Threads, profile.RankBy(o.Rank), o.Top)
	if err != nil {
		return err
	}
	t := explainTable(res)
	if err := o.write(o.Out, o.ErrOut, []analysis.Table{t}, res); err != nil {
		return err
	}
	var svg bytes.Buffer
	if err := profile.WriteDiffSVG(&svg, res.A.prof, res.B.prof, profile.SVGOptions{
		Title: fmt.Sprintf("%s, %d threads: %s vs %s", res.B.Step, res.B.Threads, sideName(res.B), sideName(res.A)),
	}); err != nil {
		return err
	}
	if o.SVG != "" {
		if err := os.WriteFile(o.SVG, svg.Bytes(), 0o644); err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
		fmt.Fprintf(o.ErrOut, "wrote %s\n", o.SVG)
	}
	if o.HTML != "" {
		if err := writeExplainHTML(o.HTML, t, svg.Bytes()); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
		fmt.Fprintf(o.ErrOut, "wrote %s\n", o.HTML)
	}
	return nil
}

// profileSections are compare's HTML sections of the profiles both runs
// have: per cell name both ran and step (and thread count) both profiled,
// explain's table and flame graph.
func (o *CompareOptions) profileSections(ctx context.Context) ([]reporthtml.HTMLProfile, error) {
	eo := &ExplainOptions{sourceOptions: o.sourceOptions}
	a, err := eo.side(ctx, o.RunA)
	if err != nil {
		return nil, err
	}
	b, err := eo.side(ctx, o.RunB)
	if err != nil {
		return nil, err
	}
	var out []reporthtml.HTMLProfile
	for _, da := range a.docs {
		for _, db := range b.docs {
			if da.Cell.Name != db.Cell.Name {
				continue
			}
			for _, sa := range da.Steps {
				if sa.Profile == nil || sa.Profile.Folded == "" {
					continue
				}
				i := slices.IndexFunc(db.Steps, func(sb results.StepResult) bool {
					return sb.Step == sa.Step && sb.Threads == sa.Threads && sb.Profile != nil && sb.Profile.Folded != ""
				})
				if i < 0 {
					continue
				}
				res, err := explainProfiles(cellDocs{run: a.run, cell: da.Cell.Name, docs: a.docs}, cellDocs{run: b.run, cell: db.Cell.Name, docs: b.docs},
					sa.Step, sa.Threads, profile.RankSelf, defaultExplainTop)
				if err != nil {
					return nil, err
				}
				var svg bytes.Buffer
				if err := profile.WriteDiffSVG(&svg, res.A.prof, res.B.prof, profile.SVGOptions{
					Title: fmt.Sprintf("%s, %d threads: %s vs %s", sa.Step, sa.Threads, sideName(res.B), sideName(res.A)),
				}); err != nil {
					return nil, err
				}
				out = append(
					out,
					reporthtml.HTMLProfile{Table: explainTable(res), SVG: template.HTML(trimXMLDecl(svg.Bytes()))},
				) // pkg/profile escapes every name
			}
		}
	}
	return out, nil
}

func trimXMLDecl(svg []byte) []byte {
	return bytes.TrimPrefix(svg, []byte(`<?xml version="1.0" standalone="no"?>`+"\n"))
}

// cellDocs is what explain knows of one side before choosing the profile.
type cellDocs struct {
	run, cell string // cell "" when the argument named only the run
	docs      []*results.Document
}

// side reads the documents of the run an argument names.
func (o *ExplainOptions) side(ctx context.Context, arg string) (cellDocs, error) {
	run, cell, _ := strings.Cut(arg, "/")
	if run == "" {
		return cellDocs{}, fmt.Errorf("%q: want RUN or RUN/CELL", arg)
	}
	cd := cellDocs{run: run, cell: cell}
	switch {
	case o.S3.src != nil:
		lr, err := o.S3.src.Run(ctx, o.S3.Suite, run, run)
		if err != nil {
			return cd, fmt.Errorf("run %s: %w", run, err)
		}
		cd.docs = lr.Docs
	case o.FromDir != "":
		lr, err := LoadDir(filepath.Join(o.FromDir, run), run)
		if err != nil {
			return cd, fmt.Errorf("run %s: %w", run, err)
		}
		cd.docs = lr.Docs
	default:
		r, err := o.cluster.Run(ctx, run)
		if err != nil {
			return cd, err
		}
		found, _, _, err := o.cluster.Documents(ctx, r)
		if err != nil {
			return cd, err
		}
		for _, f := range found {
			cd.docs = append(cd.docs, f.Doc)
		}
	}
	return cd, nil
}

// profiled lists a side's profiles of step: per cell, per thread count.
func (cd cellDocs) profiled(step string) map[string]map[int]*results.StepResult {
	out := map[string]map[int]*results.StepResult{}
	for _, d := range cd.docs {
		if cd.cell != "" && d.Cell.Name != cd.cell {
			continue
		}
		for i := range d.Steps {
			s := &d.Steps[i]
			if s.Step != step || s.Profile == nil {
				continue
			}
			if out[d.Cell.Name] == nil {
				out[d.Cell.Name] = map[int]*results.StepResult{}
			}
			out[d.Cell.Name][s.Threads] = s
		}
	}
	return out
}

// pick chooses the side's cell: the one named, else the only one with a
// profile of step.
func (cd cellDocs) pick(step string) (string, map[int]*results.StepResult, error) {
	where := cd.run
	if cd.cell != "" {
		where += "/" + cd.cell
		found := false
		for _, d := range cd.docs {
			found = found || d.Cell.Name == cd.cell
		}
		if !found {
			return "", nil, fmt.Errorf("%s: run %s has no cell %s with results", where, cd.run, cd.cell)
		}
	}
	byCell := cd.profiled(step)
	cells := slices.Sorted(maps.Keys(byCell))
	switch len(cells) {
	case 0:
		return "", nil, fmt.Errorf("%s: no profile of step %s (profiles come from spec.workload.profile; docs/explain.md)%s", where, step, cd.listProfiles())
	case 1:
		return cells[0], byCell[cells[0]], nil
	}
	return "", nil, fmt.Errorf("%s: cells %s have profiles of step %s: name one as %s/CELL", where, strings.Join(cells, ", "), step, cd.run)
}

// listProfiles says which profiles the side has, for an error.
func (cd cellDocs) listProfiles() string {
	var have []string
	for _, d := range cd.docs {
		for _, s := range d.Steps {
			if s.Profile != nil && (cd.cell == "" || d.Cell.Name == cd.cell) {
				have = append(have, fmt.Sprintf("%s %s@%d", d.Cell.Name, s.Step, s.Threads))
			}
		}
	}
	if len(have) == 0 {
		return "; it has none"
	}
	return "; it has: " + strings.Join(have, ", ")
}

// explainProfiles chooses both sides' profiles of step (at threads, or the
// largest thread count both have) and diffs them.
func explainProfiles(a, b cellDocs, step string, threads int, by profile.RankBy, top int) (*ExplainResult, error) {
	cellA, pa, err := a.pick(step)
	if err != nil {
		return nil, err
	}
	cellB, pb, err := b.pick(step)
	if err != nil {
		return nil, err
	}
	if threads == 0 {
		for th := range pa {
			if pb[th] != nil && th > threads {
				threads = th
			}
		}
		if threads == 0 {
			return nil, fmt.Errorf(
				"step %s: %s/%s profiled %v threads, %s/%s %v: no thread count in common",
				step,
				a.run,
				cellA,
				slices.Sorted(maps.Keys(pa)),
				b.run,
				cellB,
				slices.Sorted(maps.Keys(pb)),
			)
		}
	}
	res := &ExplainResult{Rank: by}
	for _, s := range []struct {
		side      *ExplainSide
		run, cell string
		byThreads map[int]*results.StepResult
	}{{&res.A, a.run, cellA, pa}, {&res.B, b.run, cellB, pb}} {
		st := s.byThreads[threads]
		where := fmt.Sprintf("%s/%s step %s", s.run, s.cell, step)
		if st == nil {
			return nil, fmt.Errorf("%s: no profile at %d threads (profiled: %v)", where, threads, slices.Sorted(maps.Keys(s.byThreads)))
		}
		pr := st.Profile
		switch {
		case pr.Error != "":
			return nil, fmt.Errorf("%s, %d threads: the profiled pass recorded no profile: %s", where, threads, pr.Error)
		case pr.FoldedOmitted:
			return nil, fmt.Errorf(
				"%s, %d threads: the compact document left the stacks out to fit its ConfigMap; read the run's full document from the object store (--from-s3)",
				where,
				threads,
			)
		}
		p, err := profile.ParseFoldedString(pr.Folded)
		if err != nil {
			return nil, fmt.Errorf("%s, %d threads: profile.folded: %w", where, threads, err)
		}
		p.Dropped = pr.Dropped
		if p.Total() == 0 {
			return nil, fmt.Errorf("%s, %d threads: the profile has no samples", where, threads)
		}
		*s.side = ExplainSide{Run: s.run, Cell: s.cell, Step: step, Threads: threads, Samples: pr.Samples, Dropped: pr.Dropped,
			MeasuredQPS: st.SteadyQPS, PassQPS: pr.PassQPS, prof: p}
	}
	changes := profile.Diff(res.A.prof, res.B.prof, by)
	res.Changes = changes[:min(top, len(changes))]
	return res, nil
}

func sideName(s ExplainSide) string { return s.Run + "/" + s.Cell }

// explainTable prints the changes: shares in percent, changes in
// percentage points.
func explainTable(r *ExplainResult) analysis.Table {
	pct := func(v float64) string { return strconv.FormatFloat(100*v, 'f', 2, 64) }
	pp := func(v float64) string { return fmt.Sprintf("%+.2f", 100*v) }
	t := analysis.Table{
		ID:      "explain." + r.B.Step + ".t" + strconv.Itoa(r.B.Threads),
		Title:   fmt.Sprintf("Where the CPU went: %s, %d threads, %s (A) -> %s (B), by %s share", r.B.Step, r.B.Threads, sideName(r.A), sideName(r.B), r.Rank),
		Columns: []string{"#", "function", "self A %", "self B %", "self +pp", "incl A %", "incl B %", "incl +pp"},
	}
	for i, c := range r.Changes {
		t.Rows = append(t.Rows, []string{strconv.Itoa(i + 1), c.Function, pct(c.A.Self), pct(c.B.Self), pp(c.SelfDelta),
			pct(c.A.Inclusive), pct(c.B.Inclusive), pp(c.InclusiveDelta)})
	}
	for _, s := range []struct {
		label string
		side  ExplainSide
	}{{"A", r.A}, {"B", r.B}} {
		note := fmt.Sprintf("%s: %d samples", s.label, s.side.Samples)
		if s.side.Dropped > 0 {
			note += fmt.Sprintf(" (%d in rare stacks not kept: counted in the shares' denominator only)", s.side.Dropped)
		}
		if s.side.PassQPS > 0 && s.side.MeasuredQPS > 0 {
			note += fmt.Sprintf(
				"; profiled pass %.0f QPS vs %.0f measured (%+.0f %%: the profiler's cost and the machine's noise; the measured figures are from their own pass)",
				s.side.PassQPS,
				s.side.MeasuredQPS,
				100*(s.side.PassQPS/s.side.MeasuredQPS-1),
			)
		}
		t.Notes = append(t.Notes, note)
	}
	t.Notes = append(t.Notes, "self: samples with the function on CPU; incl: with it anywhere on the stack; +pp: B's share minus A's, in percentage points",
		"[name]: code of the binary or library name without a symbol for it (docs/explain.md: better symbols)")
	return t
}

var explainHTML = template.Must(template.New("explain").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{.Table.Title}}</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}
td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}td:nth-child(2),th:nth-child(2){text-align:left;font-family:monospace}</style>
</head><body><h2>{{.Table.Title}}</h2>
<table><tr>{{range .Table.Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Table.Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{range .Table.Notes}}<p>{{.}}</p>{{end}}
<h3>Differential flame graph</h3>
{{.SVG}}
</body></html>
`))

// writeExplainHTML writes the table and the flame graph as one page.
func writeExplainHTML(path string, t analysis.Table, svg []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	// The SVG is our own renderer's, with every name escaped.
	svg = trimXMLDecl(svg)
	err = explainHTML.Execute(f, struct {
		Table analysis.Table
		SVG   template.HTML
	}{t, template.HTML(svg)}) // see above
	return errors.Join(err, f.Close())
}

// bisectionPointDatabase is the database name the bisection controller
// gives point i in a round's run (benchmarkbisection.pointDatabase): the round's
// cell documents name their database by it.
func bisectionPointDatabase(i int32) string { return fmt.Sprintf("p%d", i) }

// explainFirstBad prints explain's table of the last good point (the good
// one just before the first bad) against the first bad one, for every step
// and thread count both profiled, from the rounds' runs on the cluster.
// Each point's first document with profiles is used (rounds in order).
func (o *BisectStatusOptions) explainFirstBad(ctx context.Context, b *dbbenchv1alpha1.BenchmarkBisection) error {
	st := &b.Status
	bad := slices.IndexFunc(st.Points, func(p dbbenchv1alpha1.BisectionPointStatus) bool { return p.Name == st.FirstBad })
	if st.FirstBad == "" || bad < 0 {
		fmt.Fprintln(o.Out, "Explain: no first bad point yet")
		return nil
	}
	good := -1
	for i := range st.Points[:bad] {
		if st.Points[i].Verdict == dbbenchv1alpha1.VerdictGood {
			good = i
		}
	}
	if good < 0 {
		fmt.Fprintln(o.Out, "Explain: no good point before the first bad one")
		return nil
	}
	side := func(i int) (cellDocs, error) {
		idx := st.Points[i].Index
		for _, r := range st.Rounds {
			if !slices.Contains(r.Points, idx) {
				continue
			}
			run, err := o.cluster.Run(ctx, r.Run)
			if err != nil {
				return cellDocs{}, err
			}
			found, _, _, err := o.cluster.Documents(ctx, run)
			if err != nil {
				return cellDocs{}, err
			}
			for _, f := range found {
				if f.Doc.Cell.Database != bisectionPointDatabase(idx) {
					continue
				}
				if slices.ContainsFunc(f.Doc.Steps, func(s results.StepResult) bool { return s.Profile != nil }) {
					return cellDocs{run: r.Run, cell: f.Doc.Cell.Name, docs: []*results.Document{f.Doc}}, nil
				}
			}
		}
		return cellDocs{}, nil
	}
	a, err := side(good)
	if err != nil {
		return err
	}
	bb, err := side(bad)
	if err != nil {
		return err
	}
	if len(a.docs) == 0 || len(bb.docs) == 0 {
		fmt.Fprintf(o.Out, "Explain: %s and %s have no profiles to compare (spec.workload.profile)\n", st.Points[good].Name, st.FirstBad)
		return nil
	}
	var tables []analysis.Table
	for _, sa := range a.docs[0].Steps {
		if sa.Profile == nil || sa.Profile.Folded == "" {
			continue
		}
		if !slices.ContainsFunc(bb.docs[0].Steps, func(s results.StepResult) bool {
			return s.Step == sa.Step && s.Threads == sa.Threads && s.Profile != nil && s.Profile.Folded != ""
		}) {
			continue
		}
		res, err := explainProfiles(a, bb, sa.Step, sa.Threads, profile.RankSelf, defaultExplainTop)
		if err != nil {
			return err
		}
		t := explainTable(res)
		t.Title = fmt.Sprintf("%s (first bad) against %s (last good): %s", st.FirstBad, st.Points[good].Name, t.Title)
		tables = append(tables, t)
	}
	if len(tables) == 0 {
		fmt.Fprintf(o.Out, "Explain: %s and %s profiled no step in common\n", st.Points[good].Name, st.FirstBad)
		return nil
	}
	return analysis.WriteTables(o.Out, analysis.FormatTable, tables)
}
