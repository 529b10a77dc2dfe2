package runverdict

import (
	"math"
	"testing"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/google/go-cmp/cmp"
)

// Every verdict method has its API name, and the names agree.
func TestAPIMethodCoversEveryVerdictMethod(t *testing.T) {
	seen := map[dbbenchv1alpha1.RegressionMethod]bool{}
	for _, m := range regression.VerdictMethods {
		got := apiMethod(m)
		if string(got) != string(m) {
			t.Errorf("%s maps to %s", m, got)
		}
		seen[got] = true
	}
	if len(seen) != len(regression.VerdictMethods) {
		t.Errorf("%d API methods for %d verdict methods", len(seen), len(regression.VerdictMethods))
	}
	if CorrectionOf("") != inference.CorrectionHolm || CorrectionOf(dbbenchv1alpha1.CorrectionHolm) != inference.CorrectionHolm ||
		CorrectionOf(dbbenchv1alpha1.CorrectionBenjaminiHochberg) != inference.CorrectionBH {
		t.Errorf("corrections map wrongly")
	}
	for _, tc := range []struct {
		api  dbbenchv1alpha1.RegressionMagnitudeRule
		want regression.MagnitudeRule
	}{{"", regression.MagnitudeTested}, {dbbenchv1alpha1.MagnitudeTested, regression.MagnitudeTested}, {dbbenchv1alpha1.MagnitudeEstimated, regression.MagnitudeEstimated}} {
		got := magnitudeRuleOf(tc.api)
		if got != tc.want {
			t.Errorf("magnitude rule %q maps to %q, want %q", tc.api, got, tc.want)
		}
		if back := apiMagnitudeRule(got); string(back) != string(got) {
			t.Errorf("magnitude rule %q maps back to %q", got, back)
		}
	}
}

func TestRegressionStatusOf(t *testing.T) {
	tp, p99 := analysis.MetricThroughput, analysis.MetricP99Latency
	v := &regression.Verdict{
		Metrics: []analysis.Metric{tp, p99},
		Points: []regression.PointVerdict{
			{Cell: "m", Step: "insert", Threads: 4, Metric: tp, Method: regression.MethodNoiseFloor, Detail: "noise floor CV 4.1 % over 12 df",
				Detectable: 0.12, CV: 0.041},
			{Cell: "m", Step: "insert", Threads: 4, Metric: p99, Method: regression.MethodBetweenRuns, Detail: "between runs (3+3 repeats)",
				Detectable: 0.354, CV: 0.2},
			{Cell: "m", Step: "scan", Threads: 4, Metric: tp, Method: regression.MethodMagnitudeOnly, Detail: "magnitude only",
				Detectable: math.NaN(), CV: math.NaN()},
			{Cell: "m", Step: "scan", Threads: 4, Metric: p99, Method: regression.MethodMagnitudeOnly, Detail: "magnitude only",
				Detectable: math.NaN(), CV: math.NaN()},
		},
	}
	// Worst first, as JudgeRuns sorts them: the p99 rise of insert, then
	// its throughput drop, then scan's.
	v.Regressed = []regression.PointVerdict{
		{Cell: "m", Step: "insert", Threads: 4, Metric: p99, Before: 2.5, After: 6.25, ChangePercent: 150, Method: regression.MethodBetweenRuns,
			Detail: "between runs (3+3 repeats)", P: 0.0001, AdjustedP: 0.0004},
		{Cell: "m", Step: "insert", Threads: 4, Metric: tp, Before: 1000, After: 800, ChangePercent: -20, Method: regression.MethodNoiseFloor,
			Detail: "noise floor CV 4.1 % over 12 df", P: 0.0012, AdjustedP: 0.0024},
		{Cell: "m", Step: "scan", Threads: 4, Metric: tp, Before: 10, After: 9, ChangePercent: -10, Method: regression.MethodMagnitudeOnly,
			Detail: "magnitude only", P: math.NaN(), AdjustedP: math.NaN()},
	}
	got := regressionStatusOf(v, "night-1", "")
	want := &dbbenchv1alpha1.RegressionStatus{
		ComparedTo: []string{"night-1"}, ComparedPairs: 2, Correction: dbbenchv1alpha1.CorrectionHolm, MagnitudeRule: dbbenchv1alpha1.MagnitudeTested,
		DetectableChangePercent: "35.4", DetectableAt: "m insert@4 p99 latency (CV 20.0 %)",
		Methods: []dbbenchv1alpha1.RegressionMethodCount{
			{Method: dbbenchv1alpha1.MethodBetweenRuns, Pairs: 1, Detail: "between runs (3+3 repeats)"},
			{Method: dbbenchv1alpha1.MethodNoiseFloor, Pairs: 1, Detail: "noise floor CV 4.1 % over 12 df"},
			{Method: dbbenchv1alpha1.MethodMagnitudeOnly, Pairs: 2, Detail: "magnitude only"},
		},
		Regressed: []dbbenchv1alpha1.RegressedStep{
			{Cell: "m", Step: "insert", Threads: 4,
				Metrics: []dbbenchv1alpha1.RegressionMetric{dbbenchv1alpha1.MetricThroughput, dbbenchv1alpha1.MetricP99Latency},
				MetricChange: dbbenchv1alpha1.MetricChange{Metric: dbbenchv1alpha1.MetricThroughput, Before: "1000.00", After: "800.00", ChangePercent: "-20.0",
					PValue: "0.0012", AdjustedPValue: "0.0024", Method: dbbenchv1alpha1.MethodNoiseFloor, Detail: "noise floor CV 4.1 % over 12 df"},
				AlsoRegressed: []dbbenchv1alpha1.MetricChange{{Metric: dbbenchv1alpha1.MetricP99Latency, Before: "2.500", After: "6.250", ChangePercent: "150.0",
					PValue: "0.0001", AdjustedPValue: "0.0004", Method: dbbenchv1alpha1.MethodBetweenRuns, Detail: "between runs (3+3 repeats)"}}},
			{Cell: "m", Step: "scan", Threads: 4, Metrics: []dbbenchv1alpha1.RegressionMetric{dbbenchv1alpha1.MetricThroughput},
				MetricChange: dbbenchv1alpha1.MetricChange{Metric: dbbenchv1alpha1.MetricThroughput, Before: "10.00", After: "9.00", ChangePercent: "-10.0",
					Method: dbbenchv1alpha1.MethodMagnitudeOnly, Detail: "magnitude only"}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The note says detectableChangePercent and detectableAt, checked above,
	// to people.
	if sensitivityNote(got) == "" {
		t.Errorf("a verdict with a detectable change has no sensitivity note")
	}
	if note := sensitivityNote(&dbbenchv1alpha1.RegressionStatus{}); note != "" {
		t.Errorf("a verdict with nothing tested has a sensitivity note %q", note)
	}
	if fallbackNote(v) == "" {
		t.Errorf("a magnitude-only point gave no fallback note")
	}
	if note := fallbackNote(&regression.Verdict{Points: v.Points[:2]}); note != "" {
		t.Errorf("a verdict between runs and on the floor has a fallback note %q", note)
	}
}

// Every metric has its API name; the wording of the condition names the
// latencies judged.
func TestMetricsAndWording(t *testing.T) {
	for _, m := range analysis.Metrics {
		if got := APIMetric(m); string(got) != string(m) {
			t.Errorf("%s maps to %s", m, got)
		}
	}
	if got := MetricsOf(&dbbenchv1alpha1.RegressionSpec{}); !cmp.Equal(got, []analysis.Metric{analysis.MetricThroughput}) {
		t.Errorf("no metrics: %v, want throughput", got)
	}
	for _, tc := range []struct {
		metrics []analysis.Metric
		want    string
	}{
		{[]analysis.Metric{analysis.MetricThroughput}, "slower"},
		{[]analysis.Metric{analysis.MetricThroughput, analysis.MetricP99Latency}, "slower or with higher p99 latency"},
		{[]analysis.Metric{analysis.MetricP95Latency, analysis.MetricP99Latency}, "with higher p95/p99 latency"},
	} {
		if got := worseWording(tc.metrics); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.metrics, got, tc.want)
		}
	}
	for _, tc := range []struct {
		rule regression.MagnitudeRule
		want string
	}{
		{regression.MagnitudeTested, "slower by more than 5% than run night-1"},
		{regression.MagnitudeEstimated, "slower than run night-1, by a measured 5% or more"},
	} {
		if got := verdictClaim("slower", 5, "run night-1", tc.rule); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.rule, got, tc.want)
		}
	}
}

// TestRegressionStatusCountsInvalid: the run's regression status says how
// many invalid values its verdict left out.
func TestRegressionStatusCountsInvalid(t *testing.T) {
	v := &regression.Verdict{Invalid: []regression.InvalidPoint{{Run: regression.RunCurrent, Cell: "c", Step: "point-query", Threads: 1},
		{Run: regression.RunBaseline, Cell: "c", Step: "point-query", Threads: 8}}}
	if st := regressionStatusOf(v, "base", ""); st.InvalidLeftOut != 2 {
		t.Errorf("invalidLeftOut %d, want 2", st.InvalidLeftOut)
	}
}
