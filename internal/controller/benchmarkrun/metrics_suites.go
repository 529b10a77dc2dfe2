package benchmarkrun

import (
	"math"
	"sort"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/runverdict"
)

// The suites' verdicts, for alerts: computed at scrape time, like
// dbbench_runs, from the newest judged run of each suite. These are the one
// deliberate exception to the rule that no name is a label value: suite
// names are declared by users (a schedule, a GitOps repository) and their
// number is that of the suites, not of the runs; only the newest judged run
// of a suite is exported, so its name is one value per suite at a time; and
// a run holds at most runverdict.MaxRegressedSteps regressed pairs, each with at most
// one change per metric. docs/metrics.md gives the bound.

const (
	suiteRegressedHelp = "1 when the newest judged run of the suite (spec.suite) in the manager's cache ended Regressed=True, 0 when Regressed=False; suites without a judged run have no series."
	suiteChangeHelp    = "Change in percent of each regressed (database, step, threads, metric) of the newest judged run of the suite, when it ended Regressed=True: negative for a throughput drop, positive for a latency rise; the largest move over the database's cells."
)

var (
	suiteRegressedDesc = prometheus.NewDesc("dbbench_suite_regressed", suiteRegressedHelp, []string{"namespace", "suite"}, nil)
	suiteChangeDesc    = prometheus.NewDesc("dbbench_suite_regression_change_percent", suiteChangeHelp,
		[]string{"namespace", "suite", "run", "database", "step", "threads", "metric"}, nil)
)

var regressionMetrics = []string{string(dbbenchv1alpha1.MetricThroughput), string(dbbenchv1alpha1.MetricP95Latency), string(dbbenchv1alpha1.MetricP99Latency)}

// suiteVerdict is the verdict of the newest judged run of one suite.
type suiteVerdict struct {
	namespace, suite, run string
	regressed             bool
	// changes are the regressed (database, step, threads, metric), sorted.
	changes []suiteChange
}

type suiteChange struct {
	database, step, threads, metric string
	percent                         float64
}

// suiteVerdicts returns, per (namespace, suite), the verdict of the newest
// finished run (by completion time) whose Regressed condition is True or
// False, sorted by namespace and suite. Runs without a suite, unfinished
// runs and runs whose verdict is Unknown or absent are passed over, so an
// earlier verdict stands until a newer one replaces it.
func suiteVerdicts(items []dbbenchv1alpha1.BenchmarkRun) []suiteVerdict {
	type key struct{ namespace, suite string }
	newest := map[key]*dbbenchv1alpha1.BenchmarkRun{}
	for i := range items {
		r := &items[i]
		if r.Spec.Suite == "" || r.Status.CompletionTime == nil {
			continue
		}
		c := meta.FindStatusCondition(r.Status.Conditions, dbbenchv1alpha1.ConditionRegressed)
		if c == nil || (c.Status != metav1.ConditionTrue && c.Status != metav1.ConditionFalse) {
			continue
		}
		k := key{r.Namespace, r.Spec.Suite}
		if cur, ok := newest[k]; !ok || newerRun(r, cur) {
			newest[k] = r
		}
	}
	out := make([]suiteVerdict, 0, len(newest))
	for k, r := range newest {
		v := suiteVerdict{namespace: k.namespace, suite: k.suite, run: r.Name,
			regressed: meta.IsStatusConditionTrue(r.Status.Conditions, dbbenchv1alpha1.ConditionRegressed)}
		if v.regressed {
			v.changes = regressedChanges(r)
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].namespace != out[j].namespace {
			return out[i].namespace < out[j].namespace
		}
		return out[i].suite < out[j].suite
	})
	return out
}

// newerRun orders runs by completion time, then creation time, then name,
// so two runs finished in the same second still give one answer.
func newerRun(a, b *dbbenchv1alpha1.BenchmarkRun) bool {
	if !a.Status.CompletionTime.Equal(b.Status.CompletionTime) {
		return b.Status.CompletionTime.Before(a.Status.CompletionTime)
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	return a.Name > b.Name
}

// regressedChanges flattens status.regression.regressed into one change per
// (database, step, threads, metric): the cells of one database (its
// versions, config variants, repeats) share a series, which keeps the
// largest move. Versions are left out of the labels: they change from run
// to run, and would make every verdict a new set of series. Only the first
// runverdict.MaxRegressedSteps pairs (the largest moves) count, as the controller
// writes them, whoever wrote the status.
func regressedChanges(r *dbbenchv1alpha1.BenchmarkRun) []suiteChange {
	if r.Status.Regression == nil {
		return nil
	}
	pairs := r.Status.Regression.Regressed
	if len(pairs) > runverdict.MaxRegressedSteps {
		pairs = pairs[:runverdict.MaxRegressedSteps]
	}
	databases := make(map[string]string, len(r.Status.Cells))
	for _, c := range r.Status.Cells {
		databases[c.Name] = c.Database
	}
	type key struct{ database, step, threads, metric string }
	worst := map[key]float64{}
	for _, rs := range pairs {
		for _, mc := range append([]dbbenchv1alpha1.MetricChange{rs.MetricChange}, rs.AlsoRegressed...) {
			pct, err := strconv.ParseFloat(mc.ChangePercent, 64)
			if err != nil || math.IsNaN(pct) || math.IsInf(pct, 0) {
				continue
			}
			k := key{databases[rs.Cell], rs.Step, strconv.Itoa(int(rs.Threads)), regressionMetricLabel(mc.Metric)}
			if w, ok := worst[k]; !ok || math.Abs(pct) > math.Abs(w) {
				worst[k] = pct
			}
		}
	}
	out := make([]suiteChange, 0, len(worst))
	for k, pct := range worst {
		out = append(out, suiteChange{database: k.database, step: k.step, threads: k.threads, metric: k.metric, percent: pct})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.database != b.database {
			return a.database < b.database
		}
		if a.step != b.step {
			return a.step < b.step
		}
		if a.threads != b.threads {
			return a.threads < b.threads
		}
		return a.metric < b.metric
	})
	return out
}

// regressionMetricLabel is a change's metric: Throughput when unnamed (a
// status written before latency verdicts), other for anything outside the
// API's enum.
func regressionMetricLabel(m dbbenchv1alpha1.RegressionMetric) string {
	if m == "" {
		return string(dbbenchv1alpha1.MetricThroughput)
	}
	for _, v := range regressionMetrics {
		if string(m) == v {
			return v
		}
	}
	return otherValue
}

// collectSuiteVerdicts sends the suites' verdict series.
func collectSuiteVerdicts(ch chan<- prometheus.Metric, items []dbbenchv1alpha1.BenchmarkRun) {
	for _, v := range suiteVerdicts(items) {
		regressed := 0.0
		if v.regressed {
			regressed = 1
		}
		ch <- prometheus.MustNewConstMetric(suiteRegressedDesc, prometheus.GaugeValue, regressed, v.namespace, v.suite)
		for _, c := range v.changes {
			ch <- prometheus.MustNewConstMetric(suiteChangeDesc, prometheus.GaugeValue, c.percent,
				v.namespace, v.suite, v.run, c.database, c.step, c.threads, c.metric)
		}
	}
}
