package plugin

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// WatchOptions are the options of `watch`.
type WatchOptions struct {
	RunName  string
	Interval time.Duration
	Once     bool
	Width    int
	// Objects, when -o is given, prints the BenchmarkRun object at every
	// poll instead of the progress frame.
	Objects *ObjectOutputFlags
	clients Clients
	cluster *Cluster
	// sleep waits between polls; tests replace it.
	sleep func(context.Context, time.Duration) error
	genericiooptions.IOStreams
}

// NewCmdWatch builds `kubectl dbbench watch RUN`.
func NewCmdWatch(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	o := &WatchOptions{IOStreams: streams, clients: clients, sleep: sleepCtx, Objects: NewObjectOutputFlags()}
	cmd := &cobra.Command{
		Use:   "watch RUN",
		Short: "Follow a run's progress: cells, current step, progress bars",
		Long: `Poll a BenchmarkRun's status and print one frame per poll: the run's phase and
progress, then one line per cell with its phase, a progress bar of its
(step, threads) pairs and the step running now. Stops when the run has
Succeeded or Failed (or after one frame with --once). With -o, each poll
prints the BenchmarkRun object instead (json, yaml, name, jsonpath=...,
go-template=...), as kubectl get does.`,
		Example: `  kubectl dbbench watch nightly-42
  kubectl dbbench watch nightly-42 --interval 10s
  kubectl dbbench watch nightly-42 --once -o yaml`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().DurationVar(&o.Interval, "interval", 5*time.Second, "Time between polls.")
	cmd.Flags().BoolVar(&o.Once, "once", false, "Print one frame and exit.")
	cmd.Flags().IntVar(&o.Width, "bar-width", 20, "Width of the progress bars.")
	o.Objects.AddFlags(cmd)
	return cmd
}

// Complete fills the run name and clients.
func (o *WatchOptions) Complete(args []string) error {
	o.RunName = args[0]
	if err := o.Objects.Complete(); err != nil {
		return err
	}
	c, err := o.clients.Cluster()
	if err != nil {
		return err
	}
	o.cluster = c
	return nil
}

// Validate checks the flags.
func (o *WatchOptions) Validate() error {
	if o.Interval < 100*time.Millisecond {
		return fmt.Errorf("--interval %s: must be at least 100ms", o.Interval)
	}
	if o.Width < 5 || o.Width > 200 {
		return fmt.Errorf("--bar-width %d: must be between 5 and 200", o.Width)
	}
	return nil
}

// printer is the object printer, or nil for frames (also when the options
// were built without flags, as in tests).
func (o *WatchOptions) printer() printers.ResourcePrinter {
	if o.Objects == nil {
		return nil
	}
	return o.Objects.Printer()
}

// Run polls until the run ends.
func (o *WatchOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	for first := true; ; first = false {
		var phase string
		if p := o.printer(); p != nil {
			u, err := o.cluster.Dynamic.Resource(RunGVR).Namespace(o.cluster.Namespace).Get(ctx, o.RunName, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("getting benchmarkrun %s/%s: %w", o.cluster.Namespace, o.RunName, err)
			}
			if err := p.PrintObj(u, o.Out); err != nil {
				return err
			}
			phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
		} else {
			run, err := o.cluster.Run(ctx, o.RunName)
			if err != nil {
				return err
			}
			if !first {
				fmt.Fprintln(o.Out)
			}
			writeFrame(o.Out, run, o.Width)
			phase = string(run.Status.Phase)
		}
		if o.Once || phase == string(dbbenchv1alpha1.RunSucceeded) || phase == string(dbbenchv1alpha1.RunFailed) {
			return nil
		}
		if err := o.sleep(ctx, o.Interval); err != nil {
			return err
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// writeFrame prints one view of a run.
func writeFrame(w io.Writer, run *dbbenchv1alpha1.BenchmarkRun, width int) {
	st := &run.Status
	phase := st.Phase
	if phase == "" {
		phase = dbbenchv1alpha1.RunPending
	}
	progress := st.Progress
	if progress == "" {
		progress = fmt.Sprintf("0/%d", len(st.Cells))
	}
	fmt.Fprintf(w, "run %s: %s, %s cells done", run.Name, phase, progress)
	if st.CurrentStep != "" {
		fmt.Fprintf(w, ", step %s", st.CurrentStep)
	}
	fmt.Fprintln(w)
	nameW := 4
	for _, c := range st.Cells {
		nameW = max(nameW, len(c.Name))
	}
	for _, c := range st.Cells {
		done, total := c.StepsDone, c.StepsTotal
		if c.Phase == dbbenchv1alpha1.CellSucceeded && total > 0 {
			done = total
		}
		frac := 0.0
		if total > 0 {
			frac = float64(min(done, total)) / float64(total)
		}
		fill := int(frac*float64(width) + 0.5)
		bar := "[" + strings.Repeat("#", fill) + strings.Repeat(".", width-fill) + "]"
		line := fmt.Sprintf("  %-*s  %-9s %s %3.0f%%  %d/%d", nameW, c.Name, c.Phase, bar, 100*frac, done, total)
		if c.CurrentStep != "" && c.Phase != dbbenchv1alpha1.CellSucceeded {
			line += "  " + c.CurrentStep
		}
		if c.Attempts > 1 {
			line += fmt.Sprintf("  (attempt %d)", c.Attempts)
		}
		if c.Message != "" && c.Phase == dbbenchv1alpha1.CellFailed {
			line += "  " + c.Message
		}
		fmt.Fprintln(w, line)
	}
	writeRegressed(w, st.Regression)
}

// writeRegressed lists the verdict's regressed pairs, each with every
// metric it regressed on: "throughput -6.0 % (1000.00 → 940.00 QPS), p99
// latency +150.0 % (2.500 → 6.250 ms)".
func writeRegressed(w io.Writer, rs *dbbenchv1alpha1.RegressionStatus) {
	if rs == nil || len(rs.Regressed) == 0 {
		return
	}
	fmt.Fprintf(w, "regressed against %s:\n", strings.Join(rs.ComparedTo, ", "))
	for _, r := range rs.Regressed {
		changes := make([]string, 0, 1+len(r.AlsoRegressed))
		for _, mc := range append([]dbbenchv1alpha1.MetricChange{r.MetricChange}, r.AlsoRegressed...) {
			changes = append(changes, metricChangeText(mc))
		}
		fmt.Fprintf(w, "  %s %s@%d  %s\n", r.Cell, r.Step, r.Threads, strings.Join(changes, ", "))
	}
}

// metricChangeText says one metric's change with its unit; a status
// written before latency verdicts has no metric: throughput.
func metricChangeText(mc dbbenchv1alpha1.MetricChange) string {
	label, unit := "throughput", "QPS"
	switch mc.Metric {
	case dbbenchv1alpha1.MetricP95Latency:
		label, unit = "p95 latency", "ms"
	case dbbenchv1alpha1.MetricP99Latency:
		label, unit = "p99 latency", "ms"
	}
	s := fmt.Sprintf("%s %s %% (%s → %s %s)", label, signed(mc.ChangePercent), mc.Before, mc.After, unit)
	if mc.Method != "" {
		s += " " + string(mc.Method)
	}
	return s
}

// signed puts a + before a positive decimal string.
func signed(d string) string {
	if d != "" && !strings.HasPrefix(d, "-") && !strings.HasPrefix(d, "+") {
		return "+" + d
	}
	return d
}
