package plugin

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/attribution"
)

// RegressionOptions are the options of `regression RUN`.
type RegressionOptions struct {
	RunName string
	clients Clients
	cluster *Cluster
	genericiooptions.IOStreams
}

// NewCmdRegression builds `kubectl dbbench regression RUN`: the chain from
// a run's verdict to the build that caused it.
func NewCmdRegression(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	o := &RegressionOptions{IOStreams: streams, clients: clients}
	return &cobra.Command{
		Use:   "regression RUN",
		Short: "Show a run's regression verdict, the bisection it started and the explanation of the build it named",
		Long: `Print the chain that starts at RUN's Regressed condition: the verdict and
the step@threads it named (against change points, the first run of the new
level and the last run before it), the BenchmarkBisection the verdict
created (spec.regression.bisect) with its rounds, the probability that the
named build is the first bad one and the explanation of that build (engine
counters per operation and, profiled, the functions whose share of the
server's CPU moved), and where the reports are in the object store.`,
		Example: `  kubectl dbbench regression nightly-29928700`,
		Args:    cobra.ExactArgs(1),
		RunE:    runE(o),
	}
}

// Complete fills the run name and the cluster.
func (o *RegressionOptions) Complete(args []string) error {
	o.RunName = args[0]
	c, err := o.clients.Cluster()
	if err != nil {
		return err
	}
	o.cluster = c
	return nil
}

// Validate has nothing to check beyond the argument count.
func (o *RegressionOptions) Validate() error { return nil }

// Run prints the chain.
func (o *RegressionOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	run, err := o.cluster.Run(ctx, o.RunName)
	if err != nil {
		return err
	}
	if !writeRunVerdict(o.Out, run) {
		return nil
	}
	st := run.Status.Regression
	if st.Bisection == "" {
		return nil
	}
	b, err := o.cluster.Bisection(ctx, st.Bisection)
	if err != nil {
		return err
	}
	fmt.Fprintln(o.Out)
	writeBisectionStatus(o.Out, b)
	return nil
}

// writeRunVerdict prints a run's Regressed condition, the pairs it named
// and what became of its bisection; false when there is nothing more to
// follow.
func writeRunVerdict(w io.Writer, run *dbbenchv1alpha1.BenchmarkRun) bool {
	c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionRegressed)
	if c == nil {
		fmt.Fprintf(w, "%s: no regression verdict (spec.regression is not set, or the run has not finished)\n", run.Name)
		return false
	}
	fmt.Fprintf(w, "%s: Regressed=%s (%s)\n  %s\n", run.Name, c.Status, c.Reason, c.Message)
	st := run.Status.Regression
	if st == nil {
		return false
	}
	for _, r := range st.Regressed {
		line := fmt.Sprintf("  %s %s@%d %s %s%%", r.Cell, r.Step, r.Threads, r.Metric, r.ChangePercent)
		if r.Since != "" {
			line += fmt.Sprintf(", since run %s (the last run before it: %s)", r.Since, r.LastBefore)
		}
		line += coincidence(r.CoincidesWith, r.EnvironmentOnly)
		fmt.Fprintln(w, line)
	}
	for _, a := range st.Acknowledged {
		line := fmt.Sprintf("  %s %s@%d %s%%, since run %s: %s by %s, not reported", a.Cell, a.Step, a.Threads, a.ChangePercent, a.Since,
			strings.ToLower(string(a.Resolution)), a.Ack)
		fmt.Fprintln(w, line+coincidence(a.CoincidesWith, a.EnvironmentOnly))
	}
	if res := run.Status.Results; res != nil && res.URL != "" {
		fmt.Fprintf(w, "Report: %s/report.html\n", strings.TrimSuffix(res.URL, "/"))
	}
	if res := run.Status.Results; res != nil && res.Site != "" {
		fmt.Fprintf(w, "The suite's site: %s\n", res.Site)
	}
	switch {
	case st.Bisection != "":
		fmt.Fprintf(w, "Bisection: %s\n", st.Bisection)
		return true
	case st.BisectionMessage != "":
		fmt.Fprintf(w, "No bisection: %s\n", st.BisectionMessage)
	}
	return false
}

// coincidence is "; the environment alone changed: kernel a → b" or
// "; coincides with: …" for a pair's line, or "".
func coincidence(cs []dbbenchv1alpha1.EnvironmentChange, only bool) string {
	if len(cs) == 0 {
		return ""
	}
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s %s → %s", c.Field, attribution.Short(c.Before), attribution.Short(c.After)))
	}
	if only {
		return "; the environment alone changed: " + strings.Join(parts, ", ")
	}
	return "; coincides with: " + strings.Join(parts, ", ")
}
