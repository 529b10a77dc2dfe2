package plugin

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/dbbench/dbbench/pkg/analysis"
)

// ReportOptions are the options of `report`.
type ReportOptions struct {
	OutputFlags
	RunName string
	clients Clients
	cluster *Cluster
	genericiooptions.IOStreams
}

// NewCmdReport builds `kubectl dbbench report RUN`.
func NewCmdReport(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	o := &ReportOptions{IOStreams: streams, clients: clients}
	cmd := &cobra.Command{
		Use:   "report RUN",
		Short: "Print every table of one run",
		Long: `Print every table of one run: relative throughput per step against the base
cell, group statistics, hardware efficiency per step, scale-up (with several
thread counts), throughput over time (with per-second series) and repeats.

The run's cells are read from their result ConfigMaps (status.cells[].resultConfigMap,
key result.json), or from the run manifest (<run>-results, key manifest.json)
when no cell document is readable. With --from-dir DIR, results files are
read from DIR instead, and RUN only names the report.`,
		Example: `  kubectl dbbench report nightly-42
  kubectl dbbench report nightly-42 -o markdown --base mysql-8.0.36-default
  kubectl dbbench report --from-dir ./results -o csv --html report.html`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.OutputFlags.AddFlags(cmd.Flags())
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
	if o.FromDir == "" && o.RunName != "" {
		c, err := o.clients.Cluster()
		if err != nil {
			return err
		}
		o.cluster = c
	}
	return nil
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
	ds, base, err := loadRun(ctx, o.cluster, o.FromDir, o.RunName)
	if err != nil {
		return err
	}
	r, err := analysis.BuildReport(ds, o.reportOptions(base))
	if err != nil {
		return err
	}
	if err := o.write(o.Out, r.Tables(), r); err != nil {
		return err
	}
	return o.writeHTML(o.ErrOut, r, analysis.HTMLOptions{})
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
