package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/store"
	"github.com/dbbench/dbbench/pkg/triage"
)

// AckGVR is the BenchmarkAck resource.
var AckGVR = dbbenchv1alpha1.GroupVersion.WithResource("benchmarkacks")

// AckOptions are the options of `ack SUITE`.
type AckOptions struct {
	Suite, RunName, Cell, Step string
	Threads                    int32
	Metric                     string
	Reason, Link               string
	Bisection                  string
	Invalid                    bool
	Name                       string
	DryRun                     bool
	S3                         S3Flags
	clients                    Clients
	cluster                    *Cluster
	genericiooptions.IOStreams
}

// NewCmdAck builds `kubectl dbbench ack SUITE`.
func NewCmdAck(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	o := &AckOptions{IOStreams: streams, clients: clients}
	cmd := &cobra.Command{
		Use:   "ack SUITE --run RUN [--step STEP --threads N --cell CELL] --reason TEXT",
		Short: "Acknowledge a change of a suite so that later verdicts do not report it again",
		Long: `Create a BenchmarkAck: the change of suite SUITE that led to run RUN's level
(the change point's first run, or a later run whose verdict reported it) is
acknowledged with a reason and an optional link (--invalid: it is not a
real change). Later runs' verdicts list it under
status.regression.acknowledged instead of reporting it, and the suite's
site shows it acknowledged. --step, --threads, --cell and --metric narrow
it; without them it covers everything that changed with RUN.

The suite, the run and the step, cell and thread count must exist: they are
checked against the suite's runs in the namespace, and in the object store
when the run is not there any more (--from-s3, or the suite's own
output.s3). --dry-run prints the object as YAML for a GitOps repository.
Delete the BenchmarkAck (kubectl dbbench unack NAME) to un-acknowledge.`,
		Example: `  kubectl dbbench ack nightly --run nightly-2611 --step update-index --threads 1 \
      --reason "durable commits are the new default (MDEV-1234)" --link https://jira.example/MDEV-1234
  kubectl dbbench ack nightly --run nightly-2612 --invalid --reason "node-3's disk was failing"
  kubectl dbbench ack nightly --run nightly-2611 --step update-index --reason "expected" --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.RunName, "run", "", "A run of the changed level: the change point's first run, or the run whose verdict reported it (required).")
	f.StringVar(&o.Step, "step", "", "Acknowledge this step only.")
	f.Int32Var(&o.Threads, "threads", 0, "Acknowledge this thread count only.")
	f.StringVar(&o.Cell, "cell", "", "Acknowledge this cell only (its name, or database-version-config).")
	f.StringVar(&o.Metric, "metric", "", "Acknowledge this metric only: Throughput, P95Latency, P99Latency.")
	f.StringVar(&o.Reason, "reason", "", "Why (required).")
	f.StringVar(&o.Link, "link", "", "Where the change is followed: a bug, a pull request (http:// or https://).")
	f.StringVar(&o.Bisection, "bisection", "", "The BenchmarkBisection that localizes the change.")
	f.BoolVar(&o.Invalid, "invalid", false, "The change is not real (noise, a broken node): resolution Invalid.")
	f.StringVar(&o.Name, "name", "", "Name of the BenchmarkAck (default: ack-RUN[-STEP[-THREADS]]).")
	f.BoolVar(&o.DryRun, "dry-run", false, "Print the BenchmarkAck as YAML instead of creating it (nothing is checked).")
	o.S3.AddFlags(f, false)
	return cmd
}

// Complete fills the suite, the default name and the cluster.
func (o *AckOptions) Complete(args []string) error {
	o.Suite = args[0]
	if o.Name == "" {
		o.Name = ackName(o.RunName, o.Step, o.Threads)
	}
	if err := o.S3.Complete(); err != nil {
		return err
	}
	c, err := o.clients.Cluster()
	if err != nil {
		return err
	}
	o.cluster = c
	return nil
}

var dnsName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// Validate checks the flags as the API server would, naming them.
func (o *AckOptions) Validate() error {
	switch {
	case o.RunName == "":
		return errors.New("--run: required (the change point's first run, or the run whose verdict reported the change)")
	case strings.TrimSpace(o.Reason) == "":
		return errors.New("--reason: required")
	case len(o.Reason) > 1024:
		return fmt.Errorf("--reason: %d characters, at most 1024", len(o.Reason))
	case o.Threads < 0:
		return fmt.Errorf("--threads %d: must be at least 1", o.Threads)
	case o.Link != "" && !regexp.MustCompile(`^https?://[^ ]+$`).MatchString(o.Link):
		return fmt.Errorf("--link %q: must be an http:// or https:// URL", o.Link)
	case !dnsName.MatchString(o.Name) || len(o.Name) > 253:
		return fmt.Errorf("--name %q: must be a DNS subdomain name", o.Name)
	}
	if o.Metric != "" {
		if err := analysis.Metric(o.Metric).Validate(); err != nil {
			return fmt.Errorf("--metric: %w", err)
		}
	}
	return nil
}

// ackName is ack-RUN[-STEP[-THREADS]], lower-cased, with a hash when too
// long for a name.
func ackName(run, step string, threads int32) string {
	parts := []string{"ack", run}
	if step != "" {
		parts = append(parts, step)
	}
	if threads > 0 {
		parts = append(parts, fmt.Sprint(threads))
	}
	n := strings.Trim(regexp.MustCompile(`[^a-z0-9.-]+`).ReplaceAllString(strings.ToLower(strings.Join(parts, "-")), "-"), "-.")
	if len(n) > 63 {
		sum := sha256.Sum256([]byte(n))
		n = strings.TrimRight(n[:54], "-.") + "-" + hex.EncodeToString(sum[:4])
	}
	return n
}

// Ack is the object the options create.
func (o *AckOptions) Ack() *dbbenchv1alpha1.BenchmarkAck {
	res := dbbenchv1alpha1.AckAcknowledged
	if o.Invalid {
		res = dbbenchv1alpha1.AckInvalid
	}
	ns := ""
	if o.cluster != nil {
		ns = o.cluster.Namespace
	}
	return &dbbenchv1alpha1.BenchmarkAck{
		TypeMeta:   metav1.TypeMeta{APIVersion: dbbenchv1alpha1.GroupVersion.String(), Kind: "BenchmarkAck"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: ns},
		Spec: dbbenchv1alpha1.BenchmarkAckSpec{Suite: o.Suite, Run: o.RunName, Cell: o.Cell, Step: o.Step, Threads: o.Threads,
			Metric: dbbenchv1alpha1.RegressionMetric(o.Metric), Resolution: res, Reason: o.Reason, Link: o.Link, Bisection: o.Bisection},
	}
}

// Run checks what the ack names and creates it (or prints it).
func (o *AckOptions) Run(ctx context.Context) error {
	a := o.Ack()
	if o.DryRun {
		out, err := yaml.Marshal(a)
		if err != nil {
			return err
		}
		_, err = o.Out.Write(out)
		return err
	}
	runs, where, err := o.suiteRuns(ctx)
	if err != nil {
		return err
	}
	if err := triage.Check(triageAck(a), runs); err != nil {
		return fmt.Errorf("nothing acknowledged: %w (looked in %s)", err, where)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(a)
	if err != nil {
		return err
	}
	_, err = o.cluster.Dynamic.Resource(AckGVR).Namespace(o.cluster.Namespace).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("benchmarkack %s/%s exists: give another --name, or delete it first (kubectl dbbench unack %s)", o.cluster.Namespace, o.Name, o.Name)
	}
	if err != nil {
		return fmt.Errorf("creating benchmarkack %s/%s: %w", o.cluster.Namespace, o.Name, err)
	}
	fmt.Fprintf(o.Out, "benchmarkack.dbbench.io/%s created: %s of suite %s is %s; later verdicts of the suite do not report it\n",
		o.Name, triageAck(a).Scope(), o.Suite, strings.ToLower(string(a.Spec.Resolution)))
	return nil
}

// triageAck is the ack as pkg/triage checks it.
func triageAck(a *dbbenchv1alpha1.BenchmarkAck) triage.Ack {
	return triage.Ack{Name: a.Name, Suite: a.Spec.Suite, Run: a.Spec.Run, Cell: a.Spec.Cell, Step: a.Spec.Step, Threads: int(a.Spec.Threads),
		Metric: string(a.Spec.Metric), Resolution: triage.Resolution(a.Spec.Resolution), Reason: a.Spec.Reason}
}

// suiteRuns are the manifests of the suite's runs in the namespace and,
// when the run is not among them, in the object store: --from-s3, else
// the output.s3 of the suite's newest run in the namespace (with its
// credentials Secret). where says what was looked at.
func (o *AckOptions) suiteRuns(ctx context.Context) ([]*results.Manifest, string, error) {
	runs, err := o.cluster.Runs(ctx, o.Suite)
	if err != nil {
		return nil, "", err
	}
	where := fmt.Sprintf("the runs of namespace %s", o.cluster.Namespace)
	var out []*results.Manifest
	found := false
	var s3 *dbbenchv1alpha1.S3Output
	for _, r := range runs {
		if r.Spec.Output.S3 != nil {
			s3 = r.Spec.Output.S3
		}
		cm, err := o.cluster.Core.CoreV1().ConfigMaps(o.cluster.Namespace).Get(ctx, resultsConfigMap(r), metav1.GetOptions{})
		if err != nil {
			continue // not finished
		}
		if _, m, err := analysis.ReadResult([]byte(cm.Data[agentapi.RunResultKeyManifest])); err == nil && m != nil {
			out = append(out, m)
			found = found || m.Run.Name == o.RunName
		}
	}
	if found {
		return out, where, nil
	}
	var st *store.Store
	switch {
	case o.S3.Enabled():
		st = o.S3.src.Store
	case s3 != nil:
		if st, err = o.suiteStore(ctx, s3); err != nil {
			fmt.Fprintf(o.ErrOut, "warning: not looking in the suite's object store: %v\n", err)
		}
	}
	if st == nil {
		return out, where + " (give --from-s3 to look in the object store too)", nil
	}
	stored, err := st.ListRuns(ctx, o.Suite)
	var le *store.ListError
	if err != nil && !errors.As(err, &le) {
		return nil, "", fmt.Errorf("reading suite %s in %s: %w", o.Suite, st.URL(st.Layout().SuitePrefix(o.Suite)), err)
	}
	seen := map[string]bool{}
	for _, m := range out {
		seen[m.Run.Name] = true
	}
	for _, m := range stored {
		if !seen[m.Run.Name] {
			out = append(out, m)
		}
	}
	return out, where + " and " + st.URL(st.Layout().SuitePrefix(o.Suite)), nil
}

// suiteStore opens the suite's output.s3 with its Secret's credentials.
func (o *AckOptions) suiteStore(ctx context.Context, s3 *dbbenchv1alpha1.S3Output) (*store.Store, error) {
	sec, err := o.cluster.Core.CoreV1().Secrets(o.cluster.Namespace).Get(ctx, s3.CredentialsSecret.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the credentials Secret %s: %w", s3.CredentialsSecret.Name, err)
	}
	return store.New(store.Config{Endpoint: s3.Endpoint, Bucket: s3.Bucket, Prefix: s3.Prefix, Region: s3.Region,
		AccessKeyID: string(sec.Data["accessKeyID"]), SecretAccessKey: string(sec.Data["secretAccessKey"]),
		Backoff: store.Backoff{MaxAttempts: 3}})
}

// UnackOptions are the options of `unack NAME...`.
type UnackOptions struct {
	Names   []string
	clients Clients
	cluster *Cluster
	genericiooptions.IOStreams
}

// NewCmdUnack builds `kubectl dbbench unack NAME...`.
func NewCmdUnack(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	o := &UnackOptions{IOStreams: streams, clients: clients}
	return &cobra.Command{
		Use:   "unack NAME...",
		Short: "Withdraw acknowledgements: later verdicts report the changes again",
		Long: `Delete BenchmarkAcks. The controller removes each from the suite's object
store and regenerates the suite's site; the next verdicts of the suite
report the changes again.`,
		Example: `  kubectl dbbench unack ack-nightly-2611-update-index-1`,
		Args:    cobra.MinimumNArgs(1),
		RunE:    runE(o),
	}
}

// Complete fills the names and the cluster.
func (o *UnackOptions) Complete(args []string) error {
	o.Names = args
	c, err := o.clients.Cluster()
	o.cluster = c
	return err
}

// Validate has nothing to check beyond the arguments.
func (o *UnackOptions) Validate() error { return nil }

// Run deletes the acks.
func (o *UnackOptions) Run(ctx context.Context) error {
	for _, n := range o.Names {
		err := o.cluster.Dynamic.Resource(AckGVR).Namespace(o.cluster.Namespace).Delete(ctx, n, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("benchmarkack %q not found in namespace %q", n, o.cluster.Namespace)
		}
		if err != nil {
			return fmt.Errorf("deleting benchmarkack %s/%s: %w", o.cluster.Namespace, n, err)
		}
		fmt.Fprintf(o.Out, "benchmarkack.dbbench.io/%s deleted: later verdicts report the change again\n", n)
	}
	return nil
}
