package agent

import (
	"encoding/json"

	"github.com/dbbench/dbbench/pkg/results"
)

// ExtensionKey namespaces the agent's additions to the results document
// (results.Document.Extensions and StepResult.Extensions).
const ExtensionKey = results.AgentExtensionKey

// CellExtension is what the agent records about a cell beyond schema v1's
// fields.
type CellExtension struct {
	// Warmup is the post-load warm-up read step (not a reported step).
	Warmup *results.StepResult `json:"warmup,omitempty"`
	// Flushes are the engine flushes: after the load, and after steps that
	// ask for one (read-write_range=100).
	Flushes []FlushReport `json:"flushes,omitempty"`
	// TPCCLoad is the TPC-C data load, when the plan has a tpcc step.
	TPCCLoad *results.Load `json:"tpccLoad,omitempty"`
	// PgbenchLoad is pgbench -i's load, when the plan has a pgbench step.
	PgbenchLoad *results.Load `json:"pgbenchLoad,omitempty"`
	// MetricsScope says where hardware metrics were sampled.
	MetricsScope string `json:"metricsScope,omitempty"`
	// FailureExitCode is the agent's exit code when the cell failed.
	FailureExitCode int `json:"failureExitCode,omitempty"`
	// OutboxDropped says what the final write left out of the results
	// ConfigMap's outbox (the agent log, then the full document) to stay
	// within plan.ResultBudgetBytes, and why.
	OutboxDropped []string `json:"outboxDropped,omitempty"`
}

// StepExtension is what the agent records about a step beyond schema v1.
type StepExtension struct {
	// Kind is catalog, tpcc or custom; Script the sysbench script run.
	Kind   StepKind `json:"kind"`
	Script string   `json:"script"`
	// RowsPerScan is the average table size counted before a rows/s step;
	// rowsPerSecond = steadyQps × RowsPerScan.
	RowsPerScan float64 `json:"rowsPerScan,omitempty"`
	// NewOrdersPerMinute is TPC-C's NOTPM over the whole run (warm-up
	// included), from SUM(d_next_o_id) before and after.
	NewOrdersPerMinute float64 `json:"newOrdersPerMinute,omitempty"`
	// SteadyFromFinal is true when the run was too short for interval
	// samples after the warm-up, so steadyQps/steadyTps are the final report's.
	SteadyFromFinal bool `json:"steadyFromFinal,omitempty"`
}

func setExt(m *map[string]json.RawMessage, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	if *m == nil {
		*m = map[string]json.RawMessage{}
	}
	(*m)[ExtensionKey] = b
}
