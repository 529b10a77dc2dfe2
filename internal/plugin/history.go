package plugin

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/changepoint"
	"github.com/dbbench/dbbench/pkg/reporthtml"
)

// HistoryOptions are the options of `history`.
type HistoryOptions struct {
	suiteOptions
	Otava        bool
	MinMagnitude float64
	NoiseCV      float64
	// Metrics are the series per (cell, step, threads): Throughput,
	// P95Latency, P99Latency.
	Metrics []string
}

// NewCmdHistory builds `kubectl dbbench history SUITE`.
func NewCmdHistory(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	o := &HistoryOptions{suiteOptions: suiteOptions{sourceOptions: newSourceOptions(streams, clients)}}
	cmd := &cobra.Command{
		Use:   "history SUITE",
		Short: "Show the runs of a suite and the change points of every step",
		Long: `Show the runs of a suite (spec.suite), oldest first, as one QPS series per
(database-version-config, step, threads), and the change points that
E-divisive means with a t-test finds in each (pkg/changepoint; defaults:
p < 0.001, a change larger than 1.5 × the series' noise and than 1 %, at
least 3 runs per segment). A change in the newest runs is listed as
suspected until the next run confirms it, and a steady decline or rise as
one drift line with its slope per run (not with --otava).

--metrics adds p95 and p99 latency series (P95Latency, P99Latency): the
detector runs on them as on QPS, and since latency is lower-is-better a rise
is listed as a regression and a fall as an improvement (verdict column).

With --from-dir DIR, every subdirectory of DIR holding results files is a
run; those whose documents name the suite are used. With --from-s3
s3://BUCKET/PREFIX, the runs are those with a manifest under PREFIX/SUITE/
in the object store (oldest first), each read from its cells' result.json.`,
		Example: `  kubectl dbbench history nightly-mariadb
  kubectl dbbench history nightly-mariadb --otava -o json
  kubectl dbbench history nightly-mariadb --metrics Throughput,P99Latency
  kubectl dbbench history nightly --from-dir ./runs --html history.html
  kubectl dbbench history nightly --from-s3 s3://bench/team --s3-endpoint http://minio:9000 --s3-credentials-file ./s3.env`,
		Args: cobra.ExactArgs(1),
		RunE: runE(o),
	}
	o.addFlags(cmd, false)
	cmd.Flags().BoolVar(&o.Otava, "otava", false, "Use Apache Otava's settings (no minimum magnitude or segment length).")
	cmd.Flags().Float64Var(&o.MinMagnitude, "min-magnitude", 0, "Smallest relative change reported (e.g. 0.05 for Nyrkiö's 5 %); 0 keeps the detector's default.")
	cmd.Flags().StringSliceVar(&o.Metrics, "metrics", []string{string(analysis.MetricThroughput)},
		"Series to run change-point detection on: Throughput, P95Latency, P99Latency (lower is better: a rise is a regression).")
	cmd.Flags().Float64Var(&o.NoiseCV, "noise-cv", 0, "Run-to-run noise as a fraction (e.g. 0.008 from A/A repeats); changes must exceed 1.5 × it. 0 estimates it from each series.")
	return cmd
}

// Validate checks the flags.
func (o *HistoryOptions) Validate() error {
	if o.MinMagnitude < 0 || o.MinMagnitude >= 1 {
		return fmt.Errorf("--min-magnitude %v: must be in [0, 1)", o.MinMagnitude)
	}
	if o.NoiseCV < 0 || o.NoiseCV >= 1 {
		return fmt.Errorf("--noise-cv %v: must be in [0, 1)", o.NoiseCV)
	}
	if len(o.Metrics) == 0 {
		return fmt.Errorf("--metrics: name at least one of %s", metricNames())
	}
	for _, m := range o.Metrics {
		if err := analysis.Metric(m).Validate(); err != nil {
			return fmt.Errorf("--metrics: %w", err)
		}
	}
	if o.NoiseCV > 0 && o.Otava {
		return fmt.Errorf("--noise-cv: Otava's settings have no noise-relative filter; drop --otava or --noise-cv")
	}
	return o.OutputFlags.Validate()
}

func (o *HistoryOptions) detectorOptions() changepoint.Options {
	opts := changepoint.DefaultOptions()
	if o.Otava {
		opts = changepoint.OtavaOptions()
	}
	if o.MinMagnitude > 0 {
		opts.MinMagnitude = o.MinMagnitude
	}
	opts.NoiseCV = o.NoiseCV
	return opts
}

// Run loads the suite's runs and prints the history.
func (o *HistoryOptions) Run(ctx context.Context) error {
	runs, err := readSuiteRuns(ctx, &o.suiteOptions, historyRuns, func(v *dbbenchv1alpha1.BenchmarkRun) (analysis.HistoryRun, error) {
		ds, _, err := o.cluster.Dataset(ctx, v)
		return analysis.HistoryRun{Name: v.Name, Time: runTime(v), Data: ds}, err
	})
	if err != nil {
		return err
	}
	cpo := o.detectorOptions()
	metrics := make([]analysis.Metric, len(o.Metrics))
	for i, m := range o.Metrics {
		metrics[i] = analysis.Metric(m)
	}
	h, err := analysis.History(runs, analysis.HistoryOptions{ChangePoint: &cpo, Metrics: metrics, IncludeUnreported: o.AllSteps})
	if err != nil {
		return err
	}
	if err := o.write(o.Out, o.ErrOut, h.Tables(), h); err != nil {
		return err
	}
	return o.writeHTML(o.ErrOut, nil, reporthtml.HTMLOptions{Title: "dbbench history: " + o.Suite, History: h})
}

// historyRuns are the stored runs as the history reads them.
func historyRuns(lrs []*LocalRun) []analysis.HistoryRun {
	runs := make([]analysis.HistoryRun, len(lrs))
	for i, lr := range lrs {
		runs[i] = analysis.HistoryRun{Name: lr.Name, Time: lr.Time, Data: lr.Data}
	}
	return runs
}

// metricNames lists the metrics --metrics takes.
func metricNames() string {
	names := make([]string, len(analysis.Metrics))
	for i, m := range analysis.Metrics {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}
