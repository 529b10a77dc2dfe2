package analysis

import (
	"fmt"

	"github.com/dbbench/dbbench/pkg/results"
)

// Metric is a figure a regression verdict judges per (cell, step,
// threads). Throughput regresses when it falls; a latency when it rises.
type Metric string

const (
	// MetricThroughput is the steady-state QPS: higher is better.
	MetricThroughput Metric = "Throughput"
	// MetricP95Latency is the step's whole-run 95th-percentile response
	// time: lower is better.
	MetricP95Latency Metric = "P95Latency"
	// MetricP99Latency is the 99th percentile: lower is better.
	MetricP99Latency Metric = "P99Latency"
)

// Metrics are every metric, in the order verdicts list them.
var Metrics = []Metric{MetricThroughput, MetricP95Latency, MetricP99Latency}

// Validate checks the name.
func (m Metric) Validate() error {
	switch m {
	case MetricThroughput, MetricP95Latency, MetricP99Latency:
		return nil
	}
	return fmt.Errorf("metric %q: must be %q, %q or %q", m, MetricThroughput, MetricP95Latency, MetricP99Latency)
}

// LowerIsBetter is true for the latencies: their regression is a rise.
func (m Metric) LowerIsBetter() bool { return m == MetricP95Latency || m == MetricP99Latency }

// Label names the metric for people: "throughput", "p99 latency".
func (m Metric) Label() string {
	switch m {
	case MetricP95Latency:
		return "p95 latency"
	case MetricP99Latency:
		return "p99 latency"
	}
	return "throughput"
}

// Unit is what Before and After are in.
func (m Metric) Unit() string {
	if m.LowerIsBetter() {
		return "ms"
	}
	return "QPS"
}

// Worse reports whether a change of changePercent (100 × (after/before −
// 1)) is a move of at least magnitude (0.05 = 5 %) in the bad direction.
func (m Metric) Worse(changePercent, magnitude float64) bool {
	if m.LowerIsBetter() {
		return changePercent >= 100*magnitude
	}
	return changePercent <= -100*magnitude
}

// values is the metric's {step → {threads → value}} in a manifest cell.
func (m Metric) Values(c *results.ManifestCell) map[string]map[int]float64 {
	switch m {
	case MetricP95Latency:
		return c.LatencyP95Ms
	case MetricP99Latency:
		return c.LatencyP99Ms
	}
	return c.QPS
}

// Value is the metric of (step, threads) in c: its steady-state QPS, or
// its latency percentile in milliseconds.
func (m Metric) Value(c *results.ManifestCell, step string, threads int) (float64, bool) {
	v, ok := m.Values(c)[step][threads]
	return v, ok
}

// Judged reports whether the metric is judged on step: a fixed-rate
// variant's throughput is the rate it was given, not a measurement, so
// only its latency is judged.
func (m Metric) Judged(step string) bool {
	return m.LowerIsBetter() || !IsFixedRateStep(step)
}

// MetricsOrDefault is metrics, or throughput alone when empty.
func MetricsOrDefault(metrics []Metric) []Metric {
	if len(metrics) == 0 {
		return []Metric{MetricThroughput}
	}
	return metrics
}

// worse reports whether a move from before to after is a regression of m.
func (m Metric) Worsened(before, after float64) bool {
	if m.LowerIsBetter() {
		return after > before
	}
	return after < before
}
