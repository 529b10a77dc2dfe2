package benchmarkrun

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// Metrics of the dbbench controllers, served by the manager's metrics
// endpoint with controller-runtime's own. Every label value comes from a
// small fixed set (phases, outcomes, retry reasons, upload kinds): never a
// run, cell or namespace name, so the number of series stays constant
// however many runs a cluster keeps. The one exception is the suites'
// verdicts (metrics_suites.go), bounded by the number of suites.
// docs/metrics.md lists them.

// Label values.
const (
	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed"

	UploadKindCell = "cell"
	UploadKindRun  = "run"

	// RetryReasonOther stands for any reason outside RetryReasons.
	RetryReasonOther = "Other"
	// otherValue is the label value for anything outside a fixed set.
	otherValue = "other"
)

// RetryReasons are the infrastructure-failure reasons the run controller
// retries a cell for, sorted: derived from the failure policy
// (failureClasses), so every reason it retries has its own series.
// RecordRetry maps anything else to RetryReasonOther.
var RetryReasons = retriedReasons()

var (
	runPhases = []string{
		string(dbbenchv1alpha1.RunPending),
		string(dbbenchv1alpha1.RunRunning),
		string(dbbenchv1alpha1.RunSucceeded),
		string(dbbenchv1alpha1.RunFailed),
	}
	cellPhases = []string{
		string(dbbenchv1alpha1.CellPending),
		string(dbbenchv1alpha1.CellStarting),
		string(dbbenchv1alpha1.CellRunning),
		string(dbbenchv1alpha1.CellSucceeded),
		string(dbbenchv1alpha1.CellFailed),
	}
	outcomes = []string{OutcomeSucceeded, OutcomeFailed}
	kinds    = []string{UploadKindCell, UploadKindRun}
)

var (
	cellDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "dbbench_cell_duration_seconds",
		Help: "Time from a cell's start to its end (all attempts), by outcome.",
		// A cell loads data and runs every step at every thread count:
		// minutes to a day.
		Buckets: []float64{60, 300, 600, 1800, 3600, 2 * 3600, 4 * 3600, 8 * 3600, 16 * 3600, 24 * 3600, 48 * 3600},
	}, []string{"outcome"})
	cellRetries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "dbbench_cell_retries_total",
		Help: "Cell attempts retried after an infrastructure failure, by reason.",
	}, []string{"reason"})
	uploads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "dbbench_uploads_total",
		Help: "Uploads of results to the object store, by kind (cell or run), failed ones included.",
	}, []string{"kind"})
	uploadFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "dbbench_upload_failures_total",
		Help: "Failed uploads of results to the object store, by kind (cell or run).",
	}, []string{"kind"})

	runsDesc  = prometheus.NewDesc("dbbench_runs", "BenchmarkRuns in the manager's cache, by phase.", []string{"phase"}, nil)
	cellsDesc = prometheus.NewDesc("dbbench_cells", "Cells of the BenchmarkRuns in the manager's cache, by phase.", []string{"phase"}, nil)

	stateCollector = &runStateCollector{}
)

func init() {
	// Every series exists from the start (at zero), so rates and alerts
	// work before the first event.
	for _, o := range outcomes {
		cellDuration.WithLabelValues(o)
	}
	for _, r := range append(RetryReasons, RetryReasonOther) {
		cellRetries.WithLabelValues(r)
	}
	for _, k := range kinds {
		uploads.WithLabelValues(k)
		uploadFailures.WithLabelValues(k)
	}
	metrics.Registry.MustRegister(cellDuration, cellRetries, uploads, uploadFailures, stateCollector)
}

// RecordCellFinished observes a finished cell's duration; outcome is
// OutcomeSucceeded or OutcomeFailed (anything else counts as failed).
func RecordCellFinished(outcome string, d time.Duration) {
	if outcome != OutcomeSucceeded {
		outcome = OutcomeFailed
	}
	cellDuration.WithLabelValues(outcome).Observe(d.Seconds())
}

// RecordRetry counts a retried cell attempt; reasons outside RetryReasons
// count as RetryReasonOther.
func RecordRetry(reason string) {
	cellRetries.WithLabelValues(retryReasonLabel(reason)).Inc()
}

// RecordUpload counts an upload of kind UploadKindCell or UploadKindRun,
// and a failure when err is not nil.
func RecordUpload(kind string, err error) {
	if kind != UploadKindCell && kind != UploadKindRun {
		kind = otherValue
	}
	uploads.WithLabelValues(kind).Inc()
	if err != nil {
		uploadFailures.WithLabelValues(kind).Inc()
	}
}

func retryReasonLabel(reason string) string {
	for _, r := range RetryReasons {
		if r == reason {
			return r
		}
	}
	return RetryReasonOther
}

// SetupMetricsWithManager makes dbbench_runs, dbbench_cells and the suites'
// verdicts read the BenchmarkRuns from mgr's cache at scrape time. With several managers in
// one process (tests), the last one set up is read.
func SetupMetricsWithManager(mgr ctrl.Manager) error {
	stateCollector.reader.Store(&cacheReader{Reader: mgr.GetCache()})
	return nil
}

type cacheReader struct{ client.Reader }

// runStateCollector counts runs and cells by phase, and reads each suite's
// newest verdict, from a cache when scraped, so the gauges are never out of
// step with the cluster and the reconciler has nothing to update.
type runStateCollector struct {
	reader atomic.Pointer[cacheReader]
}

func (c *runStateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- runsDesc
	ch <- cellsDesc
	ch <- suiteRegressedDesc
	ch <- suiteChangeDesc
}

func (c *runStateCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.reader.Load()
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var list dbbenchv1alpha1.BenchmarkRunList
	if err := r.List(ctx, &list); err != nil {
		// A cache that has not synced yet: leave the gauges out of this
		// scrape rather than report zeros.
		logf.Log.WithName("metrics").V(1).Info("Could not list runs for the metrics", "error", err.Error())
		return
	}
	runs, cells := countPhases(list.Items)
	for _, ph := range runPhases {
		ch <- prometheus.MustNewConstMetric(runsDesc, prometheus.GaugeValue, runs[ph], ph)
	}
	for _, ph := range cellPhases {
		ch <- prometheus.MustNewConstMetric(cellsDesc, prometheus.GaugeValue, cells[ph], ph)
	}
	collectSuiteVerdicts(ch, list.Items)
}

// countPhases counts runs and cells by phase. A run without a phase yet
// counts as Pending; phases outside the fixed sets are not counted.
func countPhases(items []dbbenchv1alpha1.BenchmarkRun) (runs, cells map[string]float64) {
	runs, cells = map[string]float64{}, map[string]float64{}
	for i := range items {
		ph := string(items[i].Status.Phase)
		if ph == "" {
			ph = string(dbbenchv1alpha1.RunPending)
		}
		runs[ph]++
		for _, cs := range items[i].Status.Cells {
			cells[string(cs.Phase)]++
		}
	}
	return runs, cells
}
