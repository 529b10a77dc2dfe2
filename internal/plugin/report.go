package plugin

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/reporthtml"
)

// ReportOptions are the options of `report`.
type ReportOptions struct {
	sourceOptions
	RunName string
	// Cells are the cells to report, in order: names or globs ("mysql-8.*").
	Cells []string
}

// NewCmdReport builds `kubectl dbbench report RUN`.
func NewCmdReport(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	o := &ReportOptions{sourceOptions: newSourceOptions(streams, clients)}
	cmd := &cobra.Command{
		Use:   "report RUN",
		Short: "Print every table of one run",
		Long: `Print every table of one run: relative throughput per step against the base
cell, group statistics, hardware efficiency per step, scale-up (with several
thread counts), throughput over time (with per-second series), repeats, and
response time: p95/p99 latency per step (absolute, and relative to the base,
where lower is better), throughput and response time against concurrency,
latency over time beside throughput over time, and fixed-rate runs
(docs/reports.md).

The run's cells are read from their result ConfigMaps (status.cells[].resultConfigMap,
key result.json), or from the run manifest (<run>-results, key manifest.json)
when no cell document is readable. With --from-dir DIR, results files are
read from DIR instead, and RUN only names the report. With --from-s3
s3://BUCKET/PREFIX, RUN is read from the object store the controller uploads
to (spec.output.s3): its manifest.json, then every cell's result.json, under
PREFIX/SUITE/RUN/ (--suite SUITE).

--cells chooses the cells and their order (names or globs, comma-separated;
a glob adds the cells it matches in the run's order); the base defaults to
the run's baseline when it is among them, else the first. The .pre and .warm
steps are left out with a note; --all-steps keeps them.`,
		Example: `  kubectl dbbench report nightly-42
  kubectl dbbench report nightly-42 -o markdown --base mysql-8.0.36-default
  kubectl dbbench report --from-dir ./results -o csv --html report.html
  kubectl dbbench report --from-dir ./imported --cells 'mysql-9.*,mysql-8.0.40' --base mysql-8.0.40
  kubectl dbbench report nightly-42 --suite nightly --from-s3 s3://bench/team --s3-endpoint http://minio:9000 --s3-credentials-file ./s3.env`,
		Args: cobra.MaximumNArgs(1),
		RunE: runE(o),
	}
	o.addFlags(cmd, true)
	cmd.Flags().StringSliceVar(&o.Cells, "cells", nil, "Cells to report, in this order: names or globs (mysql-8.*), comma-separated (default: every cell, in the run's order).")
	return cmd
}

// Complete fills the run name and the cluster clients.
func (o *ReportOptions) Complete(args []string) error {
	if len(args) == 1 {
		o.RunName = args[0]
	}
	if err := o.OutputFlags.Complete(); err != nil {
		return err
	}
	if o.S3.Enabled() && o.FromDir == "" && o.RunName == "" {
		return fmt.Errorf("--from-s3: a run name is required")
	}
	return o.completeSource(o.RunName != "")
}

// Validate checks the arguments.
func (o *ReportOptions) Validate() error {
	if o.RunName == "" && o.FromDir == "" {
		return fmt.Errorf("a run name is required (or --from-dir DIR)")
	}
	return o.OutputFlags.Validate()
}

// Run loads the run and prints the report.
func (o *ReportOptions) Run(ctx context.Context) error {
	ds, base, err := o.load(ctx)
	if err != nil {
		return err
	}
	if ds, base, err = o.selectCells(ds, base); err != nil {
		return err
	}
	r, err := analysis.BuildReport(ds, o.reportOptions(base))
	if err != nil {
		return err
	}
	noteLeftOut(r)
	if err := o.write(o.Out, o.ErrOut, r.Tables(), r); err != nil {
		return err
	}
	return o.writeHTML(o.ErrOut, r, reporthtml.HTMLOptions{})
}

func (o *ReportOptions) load(ctx context.Context) (*analysis.Dataset, string, error) {
	if o.S3.src != nil {
		if ctx == nil {
			ctx = context.Background()
		}
		lr, err := o.S3.src.Run(ctx, o.S3.Suite, o.RunName, o.RunName)
		if err != nil {
			return nil, "", err
		}
		return lr.Data, lr.Base, nil
	}
	return loadRun(ctx, o.cluster, o.FromDir, o.RunName)
}

// loadRun reads one run from the cluster or from a directory.
func loadRun(ctx context.Context, c *Cluster, dir, name string) (*analysis.Dataset, string, error) {
	if dir != "" {
		lr, err := LoadDir(dir, name)
		if err != nil {
			return nil, "", err
		}
		return lr.Data, lr.Base, nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	run, err := c.Run(ctx, name)
	if err != nil {
		return nil, "", err
	}
	return c.Dataset(ctx, run)
}

// source names where the run was read from, for errors: the folder given,
// the object store, or the run.
func (o *ReportOptions) source() string {
	switch {
	case o.FromDir != "":
		return o.FromDir
	case o.S3.URL != "":
		return fmt.Sprintf("run %s in %s", o.RunName, o.S3.URL)
	}
	return "run " + o.RunName
}

// matchCells is the cells --cells' patterns match, in the order the
// patterns first match them; a pattern that matches none is an error.
func (o *ReportOptions) matchCells(all []string) ([]string, error) {
	var names []string
	seen := map[string]bool{}
	for _, pat := range o.Cells {
		if _, err := path.Match(pat, ""); err != nil {
			return nil, fmt.Errorf("--cells: %q: %w", pat, err)
		}
		matched := false
		for _, c := range all {
			if ok, _ := path.Match(pat, c); ok {
				matched = true
				if !seen[c] {
					seen[c] = true
					names = append(names, c)
				}
			}
		}
		if !matched {
			return nil, fmt.Errorf("--cells: %q matches no cell in %s (cells: %s)", pat, o.source(), strings.Join(all, ", "))
		}
	}
	return names, nil
}

// selectCells applies --cells and checks --base against the cells
// reported, naming the source the user gave rather than the dataset's
// recorded name. base is the run's default base, kept when selected.
func (o *ReportOptions) selectCells(ds *analysis.Dataset, base string) (*analysis.Dataset, string, error) {
	all := ds.CellNames()
	if len(o.Cells) > 0 {
		names, err := o.matchCells(all)
		if err != nil {
			return nil, "", err
		}
		if o.Base != "" && !slices.Contains(names, o.Base) && slices.Contains(all, o.Base) {
			return nil, "", fmt.Errorf("--base %q: not among --cells (cells: %s)", o.Base, strings.Join(names, ", "))
		}
		if !slices.Contains(names, base) {
			base = names[0]
		}
		if ds, err = ds.Select(names); err != nil {
			return nil, "", err
		}
		all = names
	}
	if o.Base != "" && !slices.Contains(all, o.Base) {
		return nil, "", fmt.Errorf("--base %q: no such cell in %s (cells: %s)", o.Base, o.source(), strings.Join(all, ", "))
	}
	return ds, base, nil
}
