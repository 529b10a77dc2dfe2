package runverdict

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/changepoint"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/triage"
)

// Every compared point is a case: regressed, acknowledged when an ack
// covers its pair, else passed, with the point's figures.
func TestCasesOfVerdict(t *testing.T) {
	tp, p99 := analysis.MetricThroughput, analysis.MetricP99Latency
	between := "between runs (3+3 repeats)"
	v := &regression.Verdict{Points: []regression.PointVerdict{
		{Cell: "a", Step: "insert", Threads: 4, Metric: tp, Before: 1000, After: 800, ChangePercent: -20,
			Method: regression.MethodBetweenRuns, Detail: between, P: 0.001, AdjustedP: 0.002, Regressed: true},
		{Cell: "a", Step: "insert", Threads: 4, Metric: p99, Before: 2.5, After: 2.55, ChangePercent: 2,
			Method: regression.MethodBetweenRuns, Detail: between, P: 0.4, AdjustedP: 0.8},
		{Cell: "b", Step: "scan", Threads: 1, Metric: tp, Before: 10, After: 8, ChangePercent: -20,
			Method: regression.MethodMagnitudeOnly, Detail: "magnitude only", P: math.NaN(), AdjustedP: math.NaN(), Regressed: true},
	}}
	got := casesOfVerdict(v, map[string]bool{pairKey("b", "scan", 1): true})
	want := []triage.VerdictCase{
		{Cell: "a", Step: "insert", Threads: 4, Metric: "Throughput", Result: triage.CaseRegressed, Before: "1000.00", After: "800.00",
			ChangePercent: "-20.0", PValue: "0.002", Method: between, Message: "a insert@4 throughput -20.0% (" + between + ")"},
		{Cell: "a", Step: "insert", Threads: 4, Metric: "P99Latency", Result: triage.CasePassed, Before: "2.500", After: "2.550",
			ChangePercent: "2.0", PValue: "0.8", Method: between},
		{Cell: "b", Step: "scan", Threads: 1, Metric: "Throughput", Result: triage.CaseAcknowledged, Before: "10.00", After: "8.00",
			ChangePercent: "-20.0", Method: "magnitude only", Message: "b scan@1 throughput -20.0% (magnitude only)"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
}

// Against change points every (cell, step, threads) of the run times
// every judged metric is a case, sorted; confirmed, suspected and
// acknowledged changes mark theirs.
func TestCasesOfChangePoints(t *testing.T) {
	cur := &results.Manifest{Cells: []results.ManifestCell{
		{Cell: results.Cell{Name: "pg"}, QPS: map[string]map[int]float64{"point-query": {1: 9000, 4: 30000}, "insert": {1: 5000}}},
	}}
	metrics := []analysis.Metric{analysis.MetricThroughput, analysis.MetricP99Latency}
	found := []regression.StepChange{{Cell: "pg", Step: "point-query", Threads: 1, Before: 10000, After: 9000, ChangePercent: -10,
		PValue: 0.004, Status: changepoint.Confirmed}}
	suspected := []regression.StepChange{{Cell: "pg", Step: "insert", Threads: 1, Metric: analysis.MetricP99Latency, Before: 2, After: 2.5,
		ChangePercent: 25, PValue: math.NaN(), Status: changepoint.Suspected}}
	acked := []dbbenchv1alpha1.AcknowledgedStep{{Cell: "pg", Step: "point-query", Threads: 4, ChangePercent: "-12.0", Ack: "ack-1",
		Resolution: dbbenchv1alpha1.AckAcknowledged}}
	method := "change points over the last 5 runs"
	got := casesOfChangePoints(cur, metrics, found, suspected, acked, method)
	type short struct {
		Name   string
		Result triage.CaseResult
	}
	var names []short
	for _, c := range got {
		names = append(names, short{c.Cell + " " + c.Name(), c.Result})
		if c.Method != method {
			t.Errorf("%s: method %q", c.Name(), c.Method)
		}
	}
	want := []short{
		{"pg insert@1 Throughput", triage.CasePassed},
		{"pg insert@1 P99Latency", triage.CaseSuspected},
		{"pg point-query@1 Throughput", triage.CaseRegressed},
		{"pg point-query@1 P99Latency", triage.CasePassed},
		{"pg point-query@4 Throughput", triage.CaseAcknowledged},
		{"pg point-query@4 P99Latency", triage.CasePassed},
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("cases (-want +got):\n%s", diff)
	}
	if c := got[2]; c.Before != "10000.00" || c.After != "9000.00" || c.ChangePercent != "-10.0" || c.PValue != "0.004" || c.Message == "" {
		t.Errorf("the confirmed change's case: %+v", c)
	}
	if c := got[1]; c.Before != "2.000" || c.PValue != "" {
		t.Errorf("the suspected latency's case: %+v", c)
	}
	if c := got[4]; c.ChangePercent != "-12.0" || c.Message != "pg point-query@4 -12.0%: Acknowledged by ack-1" {
		t.Errorf("the acknowledged case: %+v", c)
	}
}
