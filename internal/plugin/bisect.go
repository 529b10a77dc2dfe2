package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/bisectreport"
	"github.com/dbbench/dbbench/pkg/reporthtml"
)

// BisectionGVR is the BenchmarkBisection resource.
var BisectionGVR = dbbenchv1alpha1.GroupVersion.WithResource("benchmarkbisections")

// BisectOptions are the options of `bisect RUN`.
type BisectOptions struct {
	RunName     string
	Name        string
	Good, Bad   string
	Candidates  []string
	Parallelism int32
	Repeats     int32
	Steps       []string
	DryRun      bool
	clients     Clients
	cluster     *Cluster
	genericiooptions.IOStreams
}

// NewCmdBisect builds `kubectl dbbench bisect RUN` and its `status`
// subcommand.
func NewCmdBisect(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	o := &BisectOptions{IOStreams: streams, clients: clients}
	cmd := &cobra.Command{
		Use:   "bisect RUN --good G --bad B --candidates C1,C2,...",
		Short: "Localize a run's regression: create a BenchmarkBisection from it",
		Long: `Create a BenchmarkBisection that measures the builds between a known-good and a
known-bad one with RUN's database, config, workload and placement, in rounds
of ordinary BenchmarkRuns, and names the first bad build. A point is a
version (substituted into the database's image template) or, when it holds
':', '/' or '@', a whole image reference. The judged steps default to those
RUN's regression verdict named. Follow it with 'kubectl dbbench bisect
status NAME'.`,
		Example: `  kubectl dbbench bisect nightly-42 --good 11.4.2 --bad 11.4.5 --candidates 11.4.3,11.4.4
  kubectl dbbench bisect nightly-42 --good reg/mariadb@sha256:aa.. --bad reg/mariadb@sha256:ff.. \
      --candidates reg/mariadb@sha256:bb..,reg/mariadb@sha256:cc.. --parallelism 2 --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().StringVar(&o.Name, "name", "", "Name of the bisection (default: RUN-bisect).")
	cmd.Flags().StringVar(&o.Good, "good", "", "The known-good version or image.")
	cmd.Flags().StringVar(&o.Bad, "bad", "", "The known-bad version or image.")
	cmd.Flags().StringSliceVar(&o.Candidates, "candidates", nil, "The versions or images between them, oldest first.")
	cmd.Flags().Int32Var(&o.Parallelism, "parallelism", 1, "Candidates measured per round.")
	cmd.Flags().Int32Var(&o.Repeats, "repeats", 2, "Cells per point and round.")
	cmd.Flags().StringSliceVar(&o.Steps, "steps", nil, "Steps to judge (default: those RUN regressed on).")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "Print the BenchmarkBisection as YAML instead of creating it.")
	cmd.AddCommand(NewCmdBisectStatus(streams, clients))
	return cmd
}

// Complete fills the run name, the default name and the cluster.
func (o *BisectOptions) Complete(args []string) error {
	o.RunName = args[0]
	if o.Name == "" {
		o.Name = o.RunName + "-bisect"
	}
	c, err := o.clients.Cluster()
	if err != nil {
		return err
	}
	o.cluster = c
	return nil
}

// Validate checks the flags as the API server would, naming them.
func (o *BisectOptions) Validate() error {
	switch {
	case o.Good == "":
		return fmt.Errorf("--good: required")
	case o.Bad == "":
		return fmt.Errorf("--bad: required")
	case o.Good == o.Bad:
		return fmt.Errorf("--bad %s: must differ from --good", o.Bad)
	case len(o.Candidates) == 0:
		return fmt.Errorf("--candidates: name at least one build between --good and --bad")
	case o.Parallelism < 1:
		return fmt.Errorf("--parallelism %d: must be at least 1", o.Parallelism)
	case o.Repeats < 1:
		return fmt.Errorf("--repeats %d: must be at least 1", o.Repeats)
	case len(o.Name) > 50:
		return fmt.Errorf("--name %s: must be at most 50 characters", o.Name)
	}
	return nil
}

// bisectionPoint reads a flag value: an image when it holds ':', '/' or
// '@', else a version.
func bisectionPoint(s string) dbbenchv1alpha1.BisectionPoint {
	if strings.ContainsAny(s, ":/@") {
		return dbbenchv1alpha1.BisectionPoint{Image: s}
	}
	return dbbenchv1alpha1.BisectionPoint{Version: s}
}

// Bisection is the object the options create.
func (o *BisectOptions) Bisection() *dbbenchv1alpha1.BenchmarkBisection {
	b := &dbbenchv1alpha1.BenchmarkBisection{
		TypeMeta:   metav1.TypeMeta{APIVersion: dbbenchv1alpha1.GroupVersion.String(), Kind: "BenchmarkBisection"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.cluster.Namespace},
		Spec: dbbenchv1alpha1.BenchmarkBisectionSpec{
			RunRef:      &dbbenchv1alpha1.BisectionRunRef{Name: o.RunName},
			Good:        bisectionPoint(o.Good),
			Bad:         bisectionPoint(o.Bad),
			Parallelism: o.Parallelism,
			Repeats:     o.Repeats,
			Judge:       dbbenchv1alpha1.BisectionJudge{Steps: o.Steps},
		},
	}
	for _, c := range o.Candidates {
		b.Spec.Candidates = append(b.Spec.Candidates, bisectionPoint(strings.TrimSpace(c)))
	}
	return b
}

// Run creates the bisection (or prints it with --dry-run).
func (o *BisectOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	b := o.Bisection()
	if o.DryRun {
		out, err := yaml.Marshal(b)
		if err != nil {
			return err
		}
		_, err = o.Out.Write(out)
		return err
	}
	// The run must exist: a typo would otherwise surface only in the
	// bisection's condition.
	if _, err := o.cluster.Run(ctx, o.RunName); err != nil {
		return err
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if err != nil {
		return err
	}
	bisections := o.cluster.Dynamic.Resource(BisectionGVR).Namespace(o.cluster.Namespace)
	if _, err := bisections.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating benchmarkbisection %s/%s: %w", o.cluster.Namespace, o.Name, err)
	}
	fmt.Fprintf(o.Out, "benchmarkbisection.dbbench.io/%s created\n", o.Name)
	return nil
}

// BisectStatusOptions are the options of `bisect status NAME`.
type BisectStatusOptions struct {
	Name string
	// HTML, when set, is a file the chart of the points is written to.
	HTML string
	// Explain adds explain's tables of the last good point against the
	// first bad one, for the steps both profiled.
	Explain bool
	clients Clients
	cluster *Cluster
	genericiooptions.IOStreams
}

// NewCmdBisectStatus builds `kubectl dbbench bisect status NAME`.
func NewCmdBisectStatus(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	o := &BisectStatusOptions{IOStreams: streams, clients: clients}
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show a bisection's verdict, rounds and every point's ratio to good",
		Long: `Print a BenchmarkBisection's Localized condition, the rounds it ran (one
BenchmarkRun each) and one line per point in order: its verdict, its ratio
to the good point with the 95 % interval, and the step it was judged at.
The first bad point is marked with '<'. --html also writes a page charting
the points' ratios in order with the first bad one marked. --explain
compares the on-CPU profiles of the last good point and the first bad one
when the runs took profiles (spec.workload.profile).`,
		Example: `  kubectl dbbench bisect status nightly-42-bisect
  kubectl dbbench bisect status nightly-42-bisect --html bisect.html
  kubectl dbbench bisect status nightly-42-bisect --explain`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().StringVar(&o.HTML, "html", "", "Also write an HTML page with the chart of the points to this file.")
	cmd.Flags().
		BoolVar(&o.Explain, "explain", false, "Also explain the first bad point against the last good one: the functions whose share of the server's on-CPU samples changed most, for every step both profiled (spec.workload.profile; docs/explain.md).")
	return cmd
}

// Complete fills the name and the cluster.
func (o *BisectStatusOptions) Complete(args []string) error {
	o.Name = args[0]
	c, err := o.clients.Cluster()
	if err != nil {
		return err
	}
	o.cluster = c
	return nil
}

// Validate has nothing to check beyond the argument count.
func (o *BisectStatusOptions) Validate() error { return nil }

// Run prints the status.
func (o *BisectStatusOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	bp, err := o.cluster.Bisection(ctx, o.Name)
	if err != nil {
		return err
	}
	b := *bp
	writeBisectionStatus(o.Out, &b)
	if o.Explain {
		if err := o.explainFirstBad(ctx, &b); err != nil {
			return err
		}
	}
	if o.HTML == "" {
		return nil
	}
	f, err := os.Create(o.HTML)
	if err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	if err := reporthtml.WriteBisectionHTML(f, bisectreport.Chart(&b, bisectreport.Extra{RegressedRun: b.Labels[dbbenchv1alpha1.LabelRegressedRun]})); err != nil {
		_ = f.Close()
		return fmt.Errorf("--html %s: %w", o.HTML, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--html %s: %w", o.HTML, err)
	}
	fmt.Fprintf(o.ErrOut, "wrote %s\n", o.HTML)
	return nil
}

// writeBisectionStatus prints the condition, the rounds and the points.
func writeBisectionStatus(w io.Writer, b *dbbenchv1alpha1.BenchmarkBisection) {
	st := &b.Status
	c := meta.FindStatusCondition(st.Conditions, dbbenchv1alpha1.BisectionConditionLocalized)
	if c == nil {
		fmt.Fprintf(w, "%s: not started\n", b.Name)
		return
	}
	fmt.Fprintf(w, "%s: Localized=%s (%s) after %d rounds, %d cells\n  %s\n", b.Name, c.Status, c.Reason, st.RoundCount, st.CellsUsed, c.Message)
	if run := b.Labels[dbbenchv1alpha1.LabelRegressedRun]; run != "" {
		fmt.Fprintf(w, "Created by the Regressed verdict of run %s (spec.regression.bisect)\n", run)
	}
	if r := st.Rule; r != nil {
		fmt.Fprintf(w, "Rule: worse by %d%% (%s), maxPValue %s, %s over the judged keys, metrics %s; named at probability %s\n",
			r.MinMagnitudePercent, r.MagnitudeRule, r.MaxPValue, r.Correction, joinMetrics(r.Metrics), r.Confidence)
	}
	if ep := st.Endpoints; ep != nil {
		fmt.Fprintf(w, "Endpoints: bad/good %s at %s, reproduced %t\n", ep.Ratio, ep.Key, ep.Reproduced)
	}
	switch {
	case st.FirstBad != "" && st.Confidence != "":
		fmt.Fprintf(w, "First bad: %s (after %s), probability %s\n", st.FirstBad, st.LastGood, st.Confidence)
	case len(st.Likely) > 0:
		fmt.Fprintf(w, "Most likely first bad: %s\n", strings.Join(st.Likely, ", "))
	}
	for _, e := range st.Environment {
		if e.Held {
			fmt.Fprintf(w, "Environment: round %d measured every build %s%% at %s; the regression held its size\n", e.Round, e.ShiftPercent, e.Key)
		} else {
			fmt.Fprintf(w, "Environment: round %d: bad/good %s before, %s in the round, at %s; the rounds before were set aside\n", e.Round, e.RatioBefore, e.RatioIn, e.Key)
		}
	}
	writeExplanation(w, st)
	if line := bisectionResultsLine(b); line != "" {
		fmt.Fprintln(w, line)
	}
	if len(st.Rounds) > 0 {
		fmt.Fprintln(w, "Rounds:")
		for _, r := range st.Rounds {
			var names []string
			for _, i := range r.Points {
				if int(i) < len(st.Points) {
					names = append(names, st.Points[i].Name)
				}
			}
			state := "running"
			if r.Finished {
				state = "finished"
			}
			kind := string(r.Kind)
			if kind == "" {
				kind = "-"
			}
			refs := ""
			if len(r.References) > 0 {
				var rn []string
				for _, i := range r.References {
					if int(i) < len(st.Points) {
						rn = append(rn, st.Points[i].Name)
					}
				}
				refs = " (references " + strings.Join(rn, ", ") + ")"
			}
			fmt.Fprintf(w, "  %d  %-24s %-9s %3d cells  %-8s  %s%s\n", r.Index, r.Run, kind, r.Cells, state, strings.Join(names, ", "), refs)
		}
	}
	if len(st.Points) == 0 {
		return
	}
	fmt.Fprintln(w, "Points:")
	nameW := len("POINT")
	for _, p := range st.Points {
		nameW = max(nameW, len(p.Name))
	}
	fmt.Fprintf(w, "  %-*s  %-12s  %-6s  %-17s  %-5s  %-s\n", nameW, "POINT", "VERDICT", "RATIO", "95% INTERVAL", "P", "AT")
	for _, p := range st.Points {
		iv := ""
		if p.RatioLow != "" {
			iv = "[" + p.RatioLow + ", " + p.RatioHigh + "]"
		}
		at := p.Key
		if p.Verdict == dbbenchv1alpha1.VerdictFailed {
			at = string(p.Reason)
		}
		mark := ""
		if st.FirstBad != "" && p.Name == st.FirstBad {
			mark = "  < first bad"
		}
		line := fmt.Sprintf("  %-*s  %-12s  %-6s  %-17s  %-5s  %s%s", nameW, p.Name, p.Verdict, p.Ratio, iv, p.Probability, at, mark)
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}

// bisectionResultsLine says where the summary and report are in the object
// store, or why they are not there yet ("" without an object store).
func bisectionResultsLine(b *dbbenchv1alpha1.BenchmarkBisection) string {
	u := b.Status.Upload
	if u == nil {
		return ""
	}
	if u.Uploaded {
		return "Results: " + u.URL + " (bisection.json, report.html)"
	}
	if c := meta.FindStatusCondition(b.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded); c != nil {
		return fmt.Sprintf("Results: not uploaded (%s): %s", c.Reason, c.Message)
	}
	return "Results: not uploaded yet"
}

// writeExplanation prints the explanation attached to a localized build.
func writeExplanation(w io.Writer, st *dbbenchv1alpha1.BenchmarkBisectionStatus) {
	ex := st.Explanation
	if c := meta.FindStatusCondition(st.Conditions, dbbenchv1alpha1.BisectionConditionExplained); c != nil && c.Status != metav1.ConditionTrue {
		fmt.Fprintf(w, "Explained=%s (%s): %s\n", c.Status, c.Reason, c.Message)
	}
	if ex == nil || (len(ex.Counters) == 0 && len(ex.Functions) == 0) {
		return
	}
	fmt.Fprintf(w, "Explanation (%s against %s at %s@%d):\n", st.FirstBad, st.LastGood, ex.Step, ex.Threads)
	for _, c := range ex.Counters {
		fmt.Fprintf(w, "  counter   %-32s %s → %s per op (×%s)\n", c.Name, c.LastGood, c.FirstBad, c.Ratio)
	}
	for _, f := range ex.Functions {
		fmt.Fprintf(
			w,
			"  function  %-32s %s%% → %s%% of the server's CPU (%s points)\n",
			f.Function,
			f.LastGoodSelfPercent,
			f.FirstBadSelfPercent,
			f.ChangePoints,
		)
	}
}

func joinMetrics(ms []dbbenchv1alpha1.RegressionMetric) string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m)
	}
	return strings.Join(out, ", ")
}

// Bisection reads a BenchmarkBisection of the namespace.
func (c *Cluster) Bisection(ctx context.Context, name string) (*dbbenchv1alpha1.BenchmarkBisection, error) {
	u, err := c.Dynamic.Resource(BisectionGVR).Namespace(c.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("getting benchmarkbisection %s/%s: %w", c.Namespace, name, err)
	}
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	var b dbbenchv1alpha1.BenchmarkBisection
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("reading benchmarkbisection %s: %w", name, err)
	}
	return &b, nil
}
