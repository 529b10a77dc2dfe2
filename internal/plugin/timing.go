package plugin

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/results"
)

// TimingOptions are the options of `timing`.
type TimingOptions struct {
	OutputFlags
	RunName string
	clients Clients
	cluster *Cluster
	genericiooptions.IOStreams
}

// NewCmdTiming builds `kubectl dbbench timing RUN`.
func NewCmdTiming(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	o := &TimingOptions{IOStreams: streams, clients: clients}
	cmd := &cobra.Command{
		Use:   "timing RUN",
		Short: "Print each cell's orchestration overhead and where it ran",
		Long: `Print each finished cell's wall time, data-load time, configured step time
and the rest — the orchestration overhead (pod scheduling and start, server
initialisation, the SQL-level wait, result writes, the controller's reaction)
— the idle gaps between consecutive steps inside the agent, when the cell ran
and the nodes of its database server and its client.`,
		Example: `  kubectl dbbench timing demo`,
		Args:    cobra.ExactArgs(1),
		RunE:    runE(o),
	}
	o.OutputFlags.AddFlags(cmd.Flags())
	return cmd
}

// Complete fills the run name, the format and the cluster clients.
func (o *TimingOptions) Complete(args []string) error {
	o.RunName = args[0]
	if err := o.OutputFlags.Complete(); err != nil {
		return err
	}
	c, err := o.clients.Cluster()
	o.cluster = c
	return err
}

// Validate checks the output flags.
func (o *TimingOptions) Validate() error { return o.OutputFlags.Validate() }

// Run reads the run's cells and prints the overhead table.
func (o *TimingOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	run, err := o.cluster.Run(ctx, o.RunName)
	if err != nil {
		return err
	}
	found, _, _, err := o.cluster.Documents(ctx, run)
	if err != nil {
		return err
	}
	var cells []analysis.CellTiming
	for _, f := range found {
		if f.Cell.StartTime == nil || f.Cell.CompletionTime == nil {
			continue // not finished
		}
		ct := analysis.CellTiming{Cell: f.Cell.Name, Start: f.Cell.StartTime.Time, End: f.Cell.CompletionTime.Time,
			DatabaseNode: f.Cell.Node, ClientNode: clientNode(f.Doc), Block: f.Doc.Cell.Block}
		if f.Doc.Load != nil {
			ct.LoadSeconds = f.Doc.Load.Seconds
		}
		for _, s := range f.Doc.Steps {
			st := analysis.StepTiming{Step: s.Step, Threads: s.Threads, ConfiguredSeconds: s.DurationSeconds}
			if s.StartedAt != nil {
				st.Start = *s.StartedAt
			}
			if s.ElapsedSeconds != nil {
				st.ElapsedSeconds = *s.ElapsedSeconds
			}
			ct.Steps = append(ct.Steps, st)
		}
		cells = append(cells, ct)
	}
	if len(cells) == 0 {
		return fmt.Errorf("run %s has no finished cell with a results document yet", run.Name)
	}
	over, err := analysis.Overheads(cells)
	if err != nil {
		return err
	}
	return o.write(o.Out, o.ErrOut, []analysis.Table{analysis.OverheadTable(over)}, over)
}

// clientNode is where the document's client ran, "" when it does not say.
func clientNode(d *results.Document) string {
	if d.Provenance.ClientNode == nil {
		return ""
	}
	return d.Provenance.ClientNode.NodeName
}
