package agent

import (
	"time"

	"github.com/dbbench/dbbench/pkg/plan"
)

// Record is everything the agent measured in one cell, as it goes. The
// results document (pkg/results) is built from it after every step, so a
// failure later never loses what was measured before.
type Record struct {
	Run        plan.RunRef `json:"run"`
	Cell       plan.Cell   `json:"cell"`
	StartedAt  time.Time   `json:"startedAt"`
	FinishedAt time.Time   `json:"finishedAt,omitzero"`
	Provenance Provenance  `json:"provenance"`
	Load       *LoadRecord `json:"load,omitempty"`
	TPCCLoad   *LoadRecord `json:"tpccLoad,omitempty"`
	Steps      []StepRecord
	// Failure is set when the cell did not complete.
	Failure *Failure `json:"failure,omitempty"`
}

// Failure is why the agent stopped early.
type Failure struct {
	Class    plan.FailureClass `json:"class"`
	ExitCode int               `json:"exitCode"`
	Step     string            `json:"step,omitempty"`
	Threads  int               `json:"threads,omitempty"`
	Message  string            `json:"message"`
}

// Provenance is what the result must carry to be trusted later.
type Provenance struct {
	ServerVersion   string            `json:"serverVersion,omitempty"`
	Variables       map[string]string `json:"variables,omitempty"`
	VariablesDigest string            `json:"variablesDigest,omitempty"`
	Node            string            `json:"node,omitempty"`
	Pod             string            `json:"pod,omitempty"`
	Hostname        string            `json:"hostname,omitempty"`
	CPUModel        string            `json:"cpuModel,omitempty"`
	CPUs            int               `json:"cpus,omitempty"`
	Kernel          string            `json:"kernel,omitempty"`
	SysbenchVersion string            `json:"sysbenchVersion,omitempty"`
	AgentVersion    string            `json:"agentVersion,omitempty"`
	// MetricsScope says where hardware metrics were sampled.
	MetricsScope string `json:"metricsScope,omitempty"`
}

// LoadRecord is the data load of a cell (sysbench prepare or the TPC-C load).
type LoadRecord struct {
	Command       string       `json:"command"`
	Seconds       float64      `json:"seconds"`
	Rows          int64        `json:"rows"`
	InsertsPerSec float64      `json:"insertsPerSec"`
	Warmup        *StepRecord  `json:"warmup,omitempty"`
	Flush         *FlushReport `json:"flush,omitempty"`
}

// StepRecord is one (step, threads) pair.
type StepRecord struct {
	Step    string    `json:"step"`
	Kind    StepKind  `json:"kind"`
	Group   string    `json:"group,omitempty"`
	Script  string    `json:"script"`
	Threads int       `json:"threads"`
	Command string    `json:"command"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// Seconds is the measured duration asked for; WarmupSeconds were added
	// to sysbench's --time and dropped from the steady-state figures.
	Seconds       int `json:"seconds"`
	WarmupSeconds int `json:"warmupSeconds"`

	// QPS and TPS are sysbench's final-report rates (whole run, warm-up
	// included): the reference studies' figure.
	QPS float64 `json:"qps"`
	TPS float64 `json:"tps"`
	// SteadyQPS and SteadyTPS average the interval samples after warm-up.
	SteadyQPS float64 `json:"steadyQps"`
	SteadyTPS float64 `json:"steadyTps"`
	// RowsPerScan and RowsPerSec are set for steps reported as rows/s.
	RowsPerScan float64 `json:"rowsPerScan,omitempty"`
	RowsPerSec  float64 `json:"rowsPerSec,omitempty"`
	// NewOrdersPerMin is TPC-C's NOTPM, from SUM(d_next_o_id) before/after.
	NewOrdersPerMin float64 `json:"newOrdersPerMin,omitempty"`

	LatencyAvgMs  float64 `json:"latencyAvgMs"`
	LatencyP95Ms  float64 `json:"latencyP95Ms"`
	LatencyMaxMs  float64 `json:"latencyMaxMs"`
	Queries       int64   `json:"queries"`
	Transactions  int64   `json:"transactions"`
	IgnoredErrors int64   `json:"ignoredErrors"`
	Reconnects    int64   `json:"reconnects"`

	Intervals []Sample  `json:"intervals,omitempty"`
	HW        *HWResult `json:"hw,omitempty"`
	Error     string    `json:"error,omitempty"`
}

// Sample is one second of the throughput-over-time series.
type Sample struct {
	Second    float64 `json:"s"`
	TPS       float64 `json:"tps"`
	QPS       float64 `json:"qps"`
	LatencyMs float64 `json:"latMs"`
	ErrPerSec float64 `json:"errPerSec,omitempty"`
}

// HWResult is methodology §4's efficiency per operation for one step.
type HWResult struct {
	// Scope says where the sample was taken ("node", "in-process").
	Scope string `json:"scope"`
	// Raw averages over the measured window.
	CPUUserSysPct float64 `json:"cpuUserSysPct"`
	CtxSwitches   float64 `json:"csPerSec"`
	ReadsPerSec   float64 `json:"readsPerSec"`
	ReadKBPerSec  float64 `json:"readKBPerSec"`
	WriteKBPerSec float64 `json:"writeKBPerSec"`
	// ServerCPUSeconds is the server cgroup's CPU-seconds per second (0 when
	// not available).
	ServerCPUPerSec float64 `json:"serverCpuPerSec,omitempty"`
	CPUs            int     `json:"cpus"`
	// Per operation, q = the step's steady QPS.
	CPUPerOp          float64 `json:"cpuPerOp"`
	CSPerOp           float64 `json:"csPerOp"`
	ReadsPerOp        float64 `json:"readsPerOp"`
	ReadKBPerOp       float64 `json:"readKBPerOp"`
	WriteKBPerOp      float64 `json:"writeKBPerOp"`
	OpsPerSec         float64 `json:"opsPerSec"`
	ServerCPUSecPerOp float64 `json:"serverCpuSecPerOp,omitempty"`
}
