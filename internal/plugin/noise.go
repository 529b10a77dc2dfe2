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
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
)

// NoiseOptions are the options of `noise`.
type NoiseOptions struct {
	suiteOptions
	// Alpha is the level of the MDE; 0 takes the newest run's recorded
	// regression level (noiseFloor.alpha), else 0.05.
	Alpha float64
}

// NewCmdNoise builds `kubectl dbbench noise SUITE`.
func NewCmdNoise(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	o := &NoiseOptions{suiteOptions: suiteOptions{sourceOptions: newSourceOptions(streams, clients)}}
	cmd := &cobra.Command{
		Use:   "noise SUITE",
		Short: "Show a suite's run-to-run noise floor and the smallest slowdown its verdicts can detect",
		Long: `Show the run-to-run noise floor of a suite per (step, threads): the
coefficient of variation of throughput between runs of one configuration,
pooled over the runs' repeats and the suite's A/A sets (earlier runs of the
same image, settings, config and workload), with the runs and degrees of
freedom it rests on, and the minimum detectable slowdown (80 % power,
one-sided, at the suite's regression.maxPValue or 0.05) of a verdict with
one run per side: alone, and under Holm's correction over every point of
the table, as a run's verdict applies it. Points whose floor rests on fewer
than 4 df are not used by the verdict, which then falls back to the
per-second test (docs/noise.md).

A second table splits each point's noise into its variance components,
each with its degrees of freedom: within a run (the per-second series'
long-run variance, by batch means where the manifests keep it, else from
the lag-1 autocorrelation), between runs on one node, and between nodes
(cells record their node). kubectl dbbench plan chooses step lengths,
repeats and nodes from them.

Sources as for history: the cluster's runs of the suite (their results
ConfigMaps), --from-dir DIR (a subdirectory per run) or --from-s3.`,
		Example: `  kubectl dbbench noise nightly-mariadb
  kubectl dbbench noise nightly --from-dir ./runs -o json
  kubectl dbbench noise nightly --from-s3 s3://bench/team --s3-credentials-file ./s3.env`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.Output, "output", "o", "table", "Output format: table, markdown, csv or json.")
	fs.StringVar(&o.FromDir, "from-dir", "", "Read results files from this directory (a subdirectory per run) instead of the cluster.")
	fs.Float64Var(&o.Alpha, "alpha", 0, "Significance level of the minimum detectable effect (default: the suite's regression.maxPValue as recorded by its newest run, else 0.05).")
	o.S3.AddFlags(fs, false)
	return cmd
}

// Validate checks the flags.
func (o *NoiseOptions) Validate() error {
	if o.Alpha != 0 && !(o.Alpha > 0 && o.Alpha < 1) {
		return fmt.Errorf("--alpha %v: must be in (0, 1)", o.Alpha)
	}
	return nil
}

// Run reads the suite's runs and prints the floor.
func (o *NoiseOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	runs, err := readSuiteRuns(ctx, &o.suiteOptions, manifestsOf, func(v *dbbenchv1alpha1.BenchmarkRun) (*results.Manifest, error) {
		return o.cluster.RunManifest(ctx, v)
	})
	if err != nil {
		return err
	}
	alpha := o.Alpha
	for i := len(runs) - 1; i >= 0 && alpha == 0; i-- {
		if runs[i].NoiseFloor != nil {
			alpha = runs[i].NoiseFloor.Alpha
		}
	}
	if alpha == 0 {
		alpha = dbbenchv1alpha1.DefaultRunMaxPValue
	}
	rep := regression.SuiteNoiseReport(o.Suite, runs, alpha)
	return o.write(o.Out, o.ErrOut, rep.Tables(), rep)
}

func manifestsOf(lrs []*LocalRun) []*results.Manifest {
	out := make([]*results.Manifest, 0, len(lrs))
	for _, lr := range lrs {
		if lr.Manifest != nil {
			out = append(out, lr.Manifest)
		}
	}
	return out
}

// RunManifest reads a run's manifest from its results ConfigMap; a run
// without one (still running, or ConfigMap output disabled) is described
// by its cells' documents instead.
func (c *Cluster) RunManifest(ctx context.Context, run *dbbenchv1alpha1.BenchmarkRun) (*results.Manifest, error) {
	cmName := resultsConfigMap(run)
	cm, err := c.Core.CoreV1().ConfigMaps(c.Namespace).Get(ctx, cmName, metav1.GetOptions{})
	switch {
	case err == nil:
		_, m, err := analysis.ReadResult([]byte(cm.Data[agentapi.RunResultKeyManifest]))
		if err != nil {
			return nil, fmt.Errorf("configmap %s key %s: %w", cmName, agentapi.RunResultKeyManifest, err)
		}
		if m == nil {
			return nil, fmt.Errorf("configmap %s key %s holds a cell document, not a manifest", cmName, agentapi.RunResultKeyManifest)
		}
		return m, nil
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("configmap %s: %w", cmName, err)
	}
	found, _, _, err := c.Documents(ctx, run)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("no results manifest (%s) and no cell documents", cmName)
	}
	docs := make([]*results.Document, len(found))
	for i, f := range found {
		docs[i] = f.Doc
	}
	return manifestFromDocuments(run.Name, docs, nil), nil
}

// manifestFromDocuments describes a run read from its cells' documents as
// a manifest (QPS, spreads and the provenance that tells A/A pairs),
// keeping what only a stored manifest records: its workload digest, noise
// floor and time.
func manifestFromDocuments(name string, docs []*results.Document, stored *results.Manifest) *results.Manifest {
	m := &results.Manifest{SchemaVersion: results.ManifestSchemaV1}
	if stored != nil {
		m.Run, m.UpdatedAt, m.Baseline = stored.Run, stored.UpdatedAt, stored.Baseline
		m.WorkloadSHA256, m.NoiseFloor = stored.WorkloadSHA256, stored.NoiseFloor
	}
	if len(docs) > 0 && m.Run.Name == "" {
		m.Run = docs[0].Run
	}
	m.Run.Name = name
	for _, d := range docs {
		m.Cells = append(m.Cells, results.NewManifestCell(d, string(d.Status.Outcome), "", ""))
	}
	return m
}
