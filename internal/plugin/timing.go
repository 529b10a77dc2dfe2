package plugin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/workload"
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
		if !f.Doc.StartedAt.IsZero() {
			ct.Ready = f.Doc.StartedAt
		}
		flushes := stepFlushes(f.Doc)
		for i, s := range f.Doc.Steps {
			st := analysis.StepTiming{Step: s.Step, Threads: s.Threads, ConfiguredSeconds: s.DurationSeconds, FlushSeconds: flushes[i]}
			if s.StartedAt != nil {
				st.Start = *s.StartedAt
			}
			if s.ElapsedSeconds != nil {
				st.ElapsedSeconds = *s.ElapsedSeconds
			}
			ct.FlushSeconds += flushes[i]
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
// stepFlushes are the seconds of the engine flush the agent ran after each
// of d's steps (0 where none): its flushes in order, the post-load one
// first when the load recorded one, then one per step the catalog flushes
// after. When the count does not match the steps that flush (a document
// of another agent), none is attributed.
func stepFlushes(d *results.Document) []float64 {
	out := make([]float64, len(d.Steps))
	// The agent's CellExtension, the part read here (the plugin does not
	// link the agent and its database drivers).
	var ext struct {
		Flushes []struct {
			Seconds float64 `json:"seconds"`
		} `json:"flushes"`
	}
	raw, ok := d.Extensions[results.AgentExtensionKey]
	if !ok || json.Unmarshal(raw, &ext) != nil {
		return out
	}
	flushes := ext.Flushes
	if d.Load != nil && d.Load.FlushSeconds != nil && len(flushes) > 0 {
		flushes = flushes[1:]
	}
	var after []int
	for i, s := range d.Steps {
		if st, ok := workload.Lookup(s.Step); ok && st.FlushAfter {
			after = append(after, i)
		}
	}
	if len(after) != len(flushes) {
		return out
	}
	for j, i := range after {
		out[i] = flushes[j].Seconds
	}
	return out
}

func clientNode(d *results.Document) string {
	if d.Provenance.ClientNode == nil {
		return ""
	}
	return d.Provenance.ClientNode.NodeName
}
