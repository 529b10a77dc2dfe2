package plugin

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/reporthtml"
)

// CompareOptions are the options of `compare`.
type CompareOptions struct {
	sourceOptions
	RunA, RunB string
}

// NewCmdCompare builds `kubectl dbbench compare RUN_A RUN_B`.
func NewCmdCompare(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	o := &CompareOptions{sourceOptions: newSourceOptions(streams, clients)}
	cmd := &cobra.Command{
		Use:   "compare RUN_A RUN_B",
		Short: "Put two runs side by side",
		Long: `Put two runs side by side: for every cell name the runs share, QPS(B) / QPS(A)
per step and, when the runs recorded latency, p99(B) / p99(A) (lower is
better); for the steps whose QPS moved by 5 % or more, the engine counters
per operation that moved most; then the full report of both runs together, whose cells are named
RUN/CELL and whose base is RUN_A's base cell (or --base).

With --from-dir DIR, the runs are read from DIR/RUN_A and DIR/RUN_B. With
--from-s3 s3://BUCKET/PREFIX, they are read from the object store, both from
suite --suite.`,
		Example: `  kubectl dbbench compare nightly-41 nightly-42
  kubectl dbbench compare --from-dir ./results before after -o markdown
  kubectl dbbench compare nightly-41 nightly-42 --suite nightly --from-s3 s3://bench/team --s3-endpoint http://minio:9000`,
		Args: cobra.ExactArgs(2),
		RunE: runE(o),
	}
	o.addFlags(cmd, true)
	return cmd
}

// Complete fills the run names and clients.
func (o *CompareOptions) Complete(args []string) error {
	o.RunA, o.RunB = args[0], args[1]
	return o.completeOutputAndSource(true)
}

// Validate checks the arguments.
func (o *CompareOptions) Validate() error {
	if o.RunA == o.RunB {
		return fmt.Errorf("RUN_A and RUN_B are both %q: compare two different runs", o.RunA)
	}
	return o.OutputFlags.Validate()
}

// CompareResult is the JSON output of compare.
type CompareResult struct {
	A      string                    `json:"a"`
	B      string                    `json:"b"`
	Paired []*analysis.RelativeTable `json:"paired"`
	// PairedLatency is p99(B) / p99(A) per shared cell (lower is better).
	PairedLatency []*analysis.PairedLatency `json:"pairedLatency,omitempty"`
	Report        *analysis.Report          `json:"report"`
	// Repeats compares the repeats of the combinations both runs repeated.
	Repeats []analysis.Comparison `json:"repeats,omitempty"`
	// CounterMoves are, for the steps whose throughput moved, the engine
	// counters per op that moved most (cells both runs have, with counters).
	CounterMoves []analysis.CounterMove `json:"counterMoves,omitempty"`
}

// repeatedCombinations lists the combinations with at least two cells.
func repeatedCombinations(ds *analysis.Dataset) []string {
	n := map[string]int{}
	var out []string
	for _, c := range ds.Cells() {
		k := c.Combination()
		if n[k]++; n[k] == 2 {
			out = append(out, k)
		}
	}
	return out
}

// Run loads both runs and prints the comparison.
func (o *CompareOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	load := func(name string) (*analysis.Dataset, string, error) {
		if o.S3.src != nil {
			lr, err := o.S3.src.Run(ctx, o.S3.Suite, name, name)
			if err != nil {
				return nil, "", err
			}
			return lr.Data, lr.Base, nil
		}
		if o.FromDir != "" {
			return loadRun(ctx, nil, filepath.Join(o.FromDir, name), name)
		}
		return loadRun(ctx, o.cluster, "", name)
	}
	a, baseA, err := load(o.RunA)
	if err != nil {
		return fmt.Errorf("run %s: %w", o.RunA, err)
	}
	b, _, err := load(o.RunB)
	if err != nil {
		return fmt.Errorf("run %s: %w", o.RunB, err)
	}
	a.Name, b.Name = o.RunA, o.RunB
	res := CompareResult{A: o.RunA, B: o.RunB}
	var tables []analysis.Table
	for _, th := range a.Threads() {
		if !slices.Contains(b.Threads(), th) {
			continue
		}
		pt, err := analysis.PairedTable(a, b, th)
		if err != nil {
			return err
		}
		res.Paired = append(res.Paired, pt)
		tables = append(tables, analysis.PairedTableText(pt, o.RunA, o.RunB))
		if lt := analysis.PairedLatencyTable(a, b, th); lt != nil {
			res.PairedLatency = append(res.PairedLatency, lt)
			tables = append(tables, lt.Table())
		}
		// Why the steps that moved moved, in the engine's own terms.
		if mv := analysis.CounterMoves(a, b, th, analysis.CounterMoveOptions{}); len(mv) > 0 {
			res.CounterMoves = append(res.CounterMoves, mv...)
			tables = append(tables, analysis.CounterMovesTable(mv, o.RunA, o.RunB))
		}
	}
	merged, err := analysis.Merge(o.RunA+" vs "+o.RunB, a, b)
	if err != nil {
		return err
	}
	base := ""
	if baseA != "" {
		base = o.RunA + "/" + baseA
	}
	ropts := o.reportOptions(base)
	if o.Base != "" {
		ropts.Base = o.Base
	}
	r, err := analysis.BuildReport(merged, ropts)
	if err != nil {
		return err
	}
	noteLeftOut(r)
	res.Report = r
	tables = append(tables, r.Tables()...)
	// Repeats: Welch's t-test per combination both runs repeated.
	for _, comb := range repeatedCombinations(a) {
		if !slices.Contains(repeatedCombinations(b), comb) {
			continue
		}
		cs, err := analysis.CompareRepeats(merged, o.RunA+"/"+comb, o.RunB+"/"+comb, analysis.CompareOptions{})
		if err != nil {
			return err
		}
		res.Repeats = append(res.Repeats, cs...)
	}
	if len(res.Repeats) > 0 {
		tables = append(tables, analysis.ComparisonTable(res.Repeats))
	}
	if err := o.write(o.Out, o.ErrOut, tables, res); err != nil {
		return err
	}
	var paired *analysis.RelativeTable
	if len(res.Paired) > 0 {
		paired = res.Paired[0]
	}
	opts := reporthtml.HTMLOptions{Title: fmt.Sprintf("dbbench: %s vs %s", o.RunB, o.RunA), Paired: paired, PairedName: o.RunB}
	if o.HTML != "" {
		if opts.Profiles, err = o.profileSections(ctx); err != nil {
			return err
		}
	}
	return o.writeHTML(o.ErrOut, r, opts)
}
