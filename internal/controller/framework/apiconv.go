package framework

// Mappings between the API's types and the domain packages' that more than
// one kind uses.

import (
	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/triage"
)

// The two ends of a bisection, as regression.bisect and the bisection's
// spec name them.
const (
	SideGood = "good"
	SideBad  = "bad"
)

// RegressedMetrics are the metrics a pair regressed on; a verdict that
// names none judged throughput alone.
func RegressedMetrics(r dbbenchv1alpha1.RegressedStep) []dbbenchv1alpha1.RegressionMetric {
	if len(r.Metrics) == 0 {
		return []dbbenchv1alpha1.RegressionMetric{dbbenchv1alpha1.MetricThroughput}
	}
	return r.Metrics
}

// PointName is how status and messages name a point.
func PointName(pt dbbenchv1alpha1.BisectionPoint) string {
	if pt.Image != "" {
		return pt.Image
	}
	return pt.Version
}

// AckOf is a BenchmarkAck as pkg/triage matches it and the object store
// keeps it.
func AckOf(a *dbbenchv1alpha1.BenchmarkAck) triage.Ack {
	return triage.Ack{SchemaVersion: triage.AckSchemaV1, Name: a.Name, Namespace: a.Namespace, UID: string(a.UID),
		Suite: a.Spec.Suite, Run: a.Spec.Run, Cell: a.Spec.Cell, Step: a.Spec.Step, Threads: int(a.Spec.Threads),
		Metric: string(
			a.Spec.Metric,
		), Resolution: triage.Resolution(a.Spec.ResolutionOrDefault()), Reason: a.Spec.Reason, Link: a.Spec.Link, Bisection: a.Spec.Bisection,
		CreatedAt: a.CreationTimestamp.UTC()}
}
