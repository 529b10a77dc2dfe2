package benchmarkrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/runverdict"
)

// judgedRun is a finished run of suite, done minutes after a fixed time,
// whose Regressed condition is verdict ("" for none) with the regressed
// pairs given. Its cells are mariadb-10.11-default and mariadb-11.8-default
// (database mariadb) and postgres-17-default (database postgres).
func judgedRun(ns, name, suite string, done int, verdict metav1.ConditionStatus, regressed ...dbbenchv1alpha1.RegressedStep) *dbbenchv1alpha1.BenchmarkRun {
	t0 := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	r := &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(t0)},
		Spec:       dbbenchv1alpha1.BenchmarkRunSpec{Suite: suite},
	}
	r.Status.Phase = dbbenchv1alpha1.RunSucceeded
	if done >= 0 {
		ct := metav1.NewTime(t0.Add(time.Duration(done) * time.Minute))
		r.Status.CompletionTime = &ct
	}
	for _, c := range []struct{ name, database string }{
		{"mariadb-10.11-default", "mariadb"}, {"mariadb-11.8-default", "mariadb"}, {"postgres-17-default", "postgres"},
	} {
		r.Status.Cells = append(r.Status.Cells, dbbenchv1alpha1.CellStatus{Name: c.name, Database: c.database, Phase: dbbenchv1alpha1.CellSucceeded})
	}
	if verdict != "" {
		r.Status.Conditions = []metav1.Condition{{Type: dbbenchv1alpha1.ConditionRegressed, Status: verdict, Reason: "Test"}}
		r.Status.Regression = &dbbenchv1alpha1.RegressionStatus{Regressed: regressed}
	}
	return r
}

// pair is a regressed pair whose first metric moved by change percent;
// more are the other metrics' changes, as "P99Latency=+31.0".
func pair(cell, step string, threads int32, metric dbbenchv1alpha1.RegressionMetric, change string, more ...string) dbbenchv1alpha1.RegressedStep {
	rs := dbbenchv1alpha1.RegressedStep{Cell: cell, Step: step, Threads: threads,
		MetricChange: dbbenchv1alpha1.MetricChange{Metric: metric, Before: "1", After: "1", ChangePercent: change}}
	for _, m := range more {
		name, pct, _ := strings.Cut(m, "=")
		rs.AlsoRegressed = append(rs.AlsoRegressed, dbbenchv1alpha1.MetricChange{Metric: dbbenchv1alpha1.RegressionMetric(name), Before: "1", After: "1", ChangePercent: pct})
	}
	return rs
}

// collectorOver is the metrics collector reading runs from a fake cache.
func collectorOver(t *testing.T, runs []*dbbenchv1alpha1.BenchmarkRun) *runStateCollector {
	t.Helper()
	objs := make([]client.Object, 0, len(runs))
	for _, r := range runs {
		objs = append(objs, r)
	}
	c := &runStateCollector{}
	c.reader.Store(&cacheReader{Reader: fake.NewClientBuilder().WithScheme(framework.Scheme()).WithObjects(objs...).Build()})
	return c
}

const (
	regressedHeader = "# HELP dbbench_suite_regressed " + suiteRegressedHelp + "\n# TYPE dbbench_suite_regressed gauge\n"
	changeHeader    = "# HELP dbbench_suite_regression_change_percent " + suiteChangeHelp + "\n# TYPE dbbench_suite_regression_change_percent gauge\n"
)

func TestSuiteVerdictMetrics(t *testing.T) {
	const tp, p99 = dbbenchv1alpha1.MetricThroughput, dbbenchv1alpha1.MetricP99Latency
	tests := []struct {
		name string
		runs []*dbbenchv1alpha1.BenchmarkRun
		// regressed and changes are the series expected, without headers
		// ("" for none).
		regressed, changes string
	}{{
		name: "no runs, no series",
	}, {
		name: "runs without a suite, unfinished, or never judged have no series",
		runs: []*dbbenchv1alpha1.BenchmarkRun{
			judgedRun("a", "no-suite", "", 1, metav1.ConditionTrue, pair("mariadb-11.8-default", "point-query", 8, tp, "-20.0")),
			judgedRun("a", "running", "nightly", -1, ""),
			judgedRun("a", "no-regression-spec", "nightly", 2, ""),
			judgedRun("a", "baseline-missing", "nightly", 3, metav1.ConditionUnknown),
		},
	}, {
		name: "several suites and namespaces: the newest judged run of each wins",
		runs: []*dbbenchv1alpha1.BenchmarkRun{
			judgedRun("a", "nightly-1", "nightly", 10, metav1.ConditionFalse),
			judgedRun("a", "nightly-2", "nightly", 20, metav1.ConditionTrue, pair("mariadb-11.8-default", "point-query", 8, tp, "-12.3")),
			judgedRun("a", "weekly-1", "weekly", 30, metav1.ConditionTrue, pair("postgres-17-default", "insert", 1, tp, "-40.0")),
			judgedRun("a", "weekly-2", "weekly", 40, metav1.ConditionFalse),
			judgedRun("b", "nightly-1", "nightly", 5, metav1.ConditionTrue, pair("postgres-17-default", "insert", 16, p99, "25.0")),
		},
		regressed: `dbbench_suite_regressed{namespace="a",suite="nightly"} 1
dbbench_suite_regressed{namespace="a",suite="weekly"} 0
dbbench_suite_regressed{namespace="b",suite="nightly"} 1
`,
		changes: `dbbench_suite_regression_change_percent{database="mariadb",metric="Throughput",namespace="a",run="nightly-2",step="point-query",suite="nightly",threads="8"} -12.3
dbbench_suite_regression_change_percent{database="postgres",metric="P99Latency",namespace="b",run="nightly-1",step="insert",suite="nightly",threads="16"} 25
`,
	}, {
		name: "a newer run without a verdict leaves the last verdict standing",
		runs: []*dbbenchv1alpha1.BenchmarkRun{
			judgedRun("a", "nightly-1", "nightly", 10, metav1.ConditionTrue, pair("mariadb-11.8-default", "point-query", 8, tp, "-12.3")),
			judgedRun("a", "nightly-2", "nightly", 20, metav1.ConditionUnknown),
			judgedRun("a", "nightly-3", "nightly", 30, ""),
			judgedRun("a", "nightly-4", "nightly", -1, ""),
		},
		regressed: `dbbench_suite_regressed{namespace="a",suite="nightly"} 1
`,
		changes: `dbbench_suite_regression_change_percent{database="mariadb",metric="Throughput",namespace="a",run="nightly-1",step="point-query",suite="nightly",threads="8"} -12.3
`,
	}, {
		name: "Regressed=False after a regression: 0 and no change series",
		runs: []*dbbenchv1alpha1.BenchmarkRun{
			judgedRun("a", "nightly-1", "nightly", 10, metav1.ConditionTrue, pair("mariadb-11.8-default", "point-query", 8, tp, "-12.3")),
			judgedRun("a", "nightly-2", "nightly", 20, metav1.ConditionFalse),
		},
		regressed: `dbbench_suite_regressed{namespace="a",suite="nightly"} 0
`,
	}, {
		name: "runs finished in the same second: the later created, then the greater name",
		runs: func() []*dbbenchv1alpha1.BenchmarkRun {
			older := judgedRun("a", "z-older", "nightly", 10, metav1.ConditionFalse)
			older.CreationTimestamp = metav1.NewTime(older.CreationTimestamp.Add(-time.Hour))
			return []*dbbenchv1alpha1.BenchmarkRun{
				older,
				judgedRun("a", "nightly-a", "nightly", 10, metav1.ConditionFalse),
				judgedRun("a", "nightly-b", "nightly", 10, metav1.ConditionTrue, pair("mariadb-11.8-default", "point-query", 8, tp, "-9.0")),
			}
		}(),
		regressed: `dbbench_suite_regressed{namespace="a",suite="nightly"} 1
`,
		changes: `dbbench_suite_regression_change_percent{database="mariadb",metric="Throughput",namespace="a",run="nightly-b",step="point-query",suite="nightly",threads="8"} -9
`,
	}, {
		name: "a database's cells share a series with the largest move; every metric of a pair counts",
		runs: []*dbbenchv1alpha1.BenchmarkRun{
			judgedRun("a", "nightly-1", "nightly", 10, metav1.ConditionTrue,
				pair("mariadb-11.8-default", "point-query", 8, tp, "-30.5", "P99Latency=41.0"),
				pair("mariadb-10.11-default", "point-query", 8, tp, "-12.0", "P99Latency=55.5"),
				pair("postgres-17-default", "point-query", 8, tp, "-6.0"),
				// A status written before latency verdicts names no metric.
				pair("mariadb-10.11-default", "point-query", 64, "", "-7.5"),
			),
		},
		regressed: `dbbench_suite_regressed{namespace="a",suite="nightly"} 1
`,
		changes: `dbbench_suite_regression_change_percent{database="mariadb",metric="P99Latency",namespace="a",run="nightly-1",step="point-query",suite="nightly",threads="8"} 55.5
dbbench_suite_regression_change_percent{database="mariadb",metric="Throughput",namespace="a",run="nightly-1",step="point-query",suite="nightly",threads="64"} -7.5
dbbench_suite_regression_change_percent{database="mariadb",metric="Throughput",namespace="a",run="nightly-1",step="point-query",suite="nightly",threads="8"} -30.5
dbbench_suite_regression_change_percent{database="postgres",metric="Throughput",namespace="a",run="nightly-1",step="point-query",suite="nightly",threads="8"} -6
`,
	}, {
		name: "an unreadable change is left out; an unknown metric is other",
		runs: []*dbbenchv1alpha1.BenchmarkRun{
			judgedRun("a", "nightly-1", "nightly", 10, metav1.ConditionTrue,
				pair("mariadb-11.8-default", "point-query", 8, tp, "a lot", "Joules=12.0", "P99Latency=NaN")),
		},
		regressed: `dbbench_suite_regressed{namespace="a",suite="nightly"} 1
`,
		changes: `dbbench_suite_regression_change_percent{database="mariadb",metric="other",namespace="a",run="nightly-1",step="point-query",suite="nightly",threads="8"} 12
`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := collectorOver(t, tc.runs)
			want := ""
			if tc.regressed != "" {
				want += regressedHeader + tc.regressed
			}
			if tc.changes != "" {
				want += changeHeader + tc.changes
			}
			if err := testutil.CollectAndCompare(c, strings.NewReader(want),
				"dbbench_suite_regressed", "dbbench_suite_regression_change_percent"); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestSuiteVerdictMetricsAreBounded: a status holding more regressed pairs
// than the controller writes (runverdict.MaxRegressedSteps) exports only the first
// ones, each with one series per metric.
func TestSuiteVerdictMetricsAreBounded(t *testing.T) {
	var pairs []dbbenchv1alpha1.RegressedStep
	for i := range runverdict.MaxRegressedSteps + 10 {
		pairs = append(pairs, pair("postgres-17-default", fmt.Sprintf("step_%02d", i), 8, dbbenchv1alpha1.MetricThroughput, "-20.0",
			"P95Latency=30.0", "P99Latency=40.0"))
	}
	c := collectorOver(t, []*dbbenchv1alpha1.BenchmarkRun{judgedRun("a", "nightly-1", "nightly", 10, metav1.ConditionTrue, pairs...)})
	if got, want := testutil.CollectAndCount(c, "dbbench_suite_regression_change_percent"), 3*runverdict.MaxRegressedSteps; got != want {
		t.Errorf("%d change series, want %d (%d pairs × 3 metrics)", got, want, runverdict.MaxRegressedSteps)
	}
	if got := testutil.CollectAndCount(c, "dbbench_suite_regressed"); got != 1 {
		t.Errorf("%d regressed series, want 1", got)
	}
}
