package plugin

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/runverdict"
	"github.com/dbbench/dbbench/pkg/triage"
	"github.com/dbbench/dbbench/pkg/verdictformat"
)

// The forms `verdict --format` prints.
const (
	VerdictFormatJUnit    = "junit"
	VerdictFormatMarkdown = "markdown"
	VerdictFormatJSON     = "json"
)

// The exit codes of `verdict --exit-code` besides 0 (no regression) and 1
// (the command failed).
const (
	ExitRegressed = 2
	ExitNotJudged = 3
)

// ExitError ends the command with Code, saying Message on stderr.
type ExitError struct {
	Code    int
	Message string
}

func (e *ExitError) Error() string { return e.Message }

// VerdictOptions are the options of `verdict RUN`.
type VerdictOptions struct {
	RunName  string
	Format   string
	ExitCode bool
	clients  Clients
	cluster  *Cluster
	genericiooptions.IOStreams
}

// NewCmdVerdict builds `kubectl dbbench verdict RUN`: the run's verdict in
// the forms build systems read.
func NewCmdVerdict(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	o := &VerdictOptions{IOStreams: streams, clients: clients, Format: VerdictFormatMarkdown}
	cmd := &cobra.Command{
		Use:   "verdict RUN",
		Short: "Print a run's regression verdict as JUnit XML, markdown or JSON: one case per judged step × threads × metric",
		Long: `Print RUN's regression verdict with every case it judged, one per (cell,
step, threads, metric): a regressed case is a failure, an acknowledged one
skipped, a suspected or unchanged one passes. --format junit is the JUnit
XML CI servers show as tests (the controller writes the same beside the
run's manifest, key junit.xml of its results ConfigMap, and uploads it to
the object store); markdown is what a pull request's comment or a job
summary holds; json the verdict document itself (docs/results-schema.md).
A run judged before its cases were written prints its verdict without
them. --exit-code makes the exit status the verdict's: 2 when regressed,
3 when it could not be judged, 0 otherwise (1 is the command failing).`,
		Example: `  kubectl dbbench verdict nightly-29928700 --format junit > dbbench-junit.xml
  kubectl dbbench verdict nightly-29928700 >> "$GITHUB_STEP_SUMMARY"
  kubectl dbbench verdict pr-1234 --format markdown --exit-code`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	cmd.Flags().StringVar(&o.Format, "format", o.Format, "junit, markdown or json")
	cmd.Flags().BoolVar(&o.ExitCode, "exit-code", false, "exit 2 when the verdict is Regressed=True, 3 when it could not judge")
	return cmd
}

// Complete fills the run name and the cluster.
func (o *VerdictOptions) Complete(args []string) error {
	o.RunName = args[0]
	c, err := o.clients.Cluster()
	if err != nil {
		return err
	}
	o.cluster = c
	return nil
}

// Validate checks --format.
func (o *VerdictOptions) Validate() error {
	switch o.Format {
	case VerdictFormatJUnit, VerdictFormatMarkdown, VerdictFormatJSON:
		return nil
	}
	return fmt.Errorf("--format %q: want %s, %s or %s", o.Format, VerdictFormatJUnit, VerdictFormatMarkdown, VerdictFormatJSON)
}

// Run prints the verdict.
func (o *VerdictOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	run, err := o.cluster.Run(ctx, o.RunName)
	if err != nil {
		return err
	}
	v, err := o.cluster.RunVerdict(ctx, run)
	if err != nil {
		return err
	}
	var out []byte
	switch o.Format {
	case VerdictFormatJUnit:
		out, err = verdictformat.JUnit(*v)
	case VerdictFormatJSON:
		out, err = triage.MarshalVerdict(*v)
		out = append(out, '\n')
	default:
		out = []byte(verdictformat.Markdown(*v))
	}
	if err != nil {
		return err
	}
	if _, err := o.Out.Write(out); err != nil {
		return err
	}
	if !o.ExitCode {
		return nil
	}
	switch metav1.ConditionStatus(v.Status) {
	case metav1.ConditionTrue:
		return &ExitError{Code: ExitRegressed, Message: fmt.Sprintf("%s: Regressed=True (%s)", run.Name, v.Reason)}
	case metav1.ConditionFalse:
		return nil
	}
	return &ExitError{Code: ExitNotJudged, Message: fmt.Sprintf("%s: not judged: %s (%s)", run.Name, v.Reason, v.Message)}
}

// RunVerdict is run's verdict: the document the controller wrote beside
// the manifest (with its cases), its bisection from the status; without
// that document (a run judged before it was written, ConfigMap output
// off) the status's, without cases.
func (c *Cluster) RunVerdict(ctx context.Context, run *dbbenchv1alpha1.BenchmarkRun) (*triage.Verdict, error) {
	v := runverdict.Document(run)
	if v == nil {
		return nil, fmt.Errorf("%s has no regression verdict: spec.regression is not set, or the run has not finished", run.Name)
	}
	name := resultsConfigMap(run)
	cm, err := c.Core.CoreV1().ConfigMaps(c.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return v, nil
	case err != nil:
		return nil, fmt.Errorf("configmap %s: %w", name, err)
	}
	raw, ok := cm.Data[agentapi.RunResultKeyVerdict]
	if !ok {
		return v, nil
	}
	written, err := triage.UnmarshalVerdict([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("configmap %s key %s: %w", name, agentapi.RunResultKeyVerdict, err)
	}
	if written.Run != run.Name {
		return nil, fmt.Errorf("configmap %s key %s is the verdict of run %s, not %s", name, agentapi.RunResultKeyVerdict, written.Run, run.Name)
	}
	v.Cases, v.CasesLeftOut = written.Cases, written.CasesLeftOut
	return v, nil
}
