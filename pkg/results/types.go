package results

import (
	"encoding/json"
	"math"
	"slices"
	"time"

	"github.com/dbbench/dbbench/pkg/agentapi"
)

// SchemaV1 identifies version 1 of the cell document.
const SchemaV1 = "dbbench.io/results/v1"

// ManifestSchemaV1 identifies version 1 of the run manifest.
const ManifestSchemaV1 = "dbbench.io/results-manifest/v1"

// Form says which of the two shapes of a v1 document this is.
type Form string

const (
	// FormFull carries the raw per-second series (object storage).
	FormFull Form = "full"
	// FormCompact carries series summaries only (ConfigMap).
	FormCompact Form = "compact"
)

// Document is the results of one cell: everything needed to interpret its
// numbers years later without the cluster it ran on.
type Document struct {
	// SchemaVersion is always SchemaV1 for this type.
	SchemaVersion string `json:"schemaVersion"`
	Form          Form   `json:"form"`
	Run           Run    `json:"run"`
	Cell          Cell   `json:"cell"`
	// StartedAt is when the cell's agent started (the server was ready);
	// FinishedAt when it wrote its final document. UTC, RFC 3339.
	StartedAt  time.Time  `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	Status     Status     `json:"status"`
	Provenance Provenance `json:"provenance"`
	// Load is the prepare phase; absent if the cell failed before it.
	Load *Load `json:"load,omitempty"`
	// Steps are the measured (step, threads) pairs in run order.
	Steps []StepResult `json:"steps"`
	// Extensions hold fields that later v1 writers or other tools add
	// without a schema change; keys should be namespaced ("example.com/x").
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// Run identifies the BenchmarkRun the cell belongs to.
type Run struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// UID is the run object's Kubernetes UID: names are reused, UIDs are not.
	UID string `json:"uid,omitempty"`
	// Suite names the step set or study ("standard", "extended", "tpcc").
	Suite string `json:"suite,omitempty"`
}

// Cell identifies one (engine, version, config variant, repeat) combination.
type Cell struct {
	Name string `json:"name"`
	// Database is the user's label for the database entry ("mariadb-10.11").
	Database string `json:"database,omitempty"`
	// Engine is "mysql", "mariadb" or "postgres".
	Engine string `json:"engine"`
	// Version is the version the user asked for; Provenance.ServerVersion is
	// what the server reported.
	Version string `json:"version"`
	// Config is the config variant's name.
	Config string `json:"config,omitempty"`
	// Repeat numbers repeats of the same combination from 1 (dbbench's cell
	// names end in -r<repeat>); imported studies may use 0.
	Repeat int `json:"repeat"`
	// Attempt numbers infrastructure retries of this repeat from 1; only the
	// last attempt's document is normally kept.
	Attempt int `json:"attempt"`
	// Block numbers the block the cell ran in from 1 (0: not blocked).
	// The cells of one block ran one after another on one node
	// (spec.placement.blocks), so comparisons pair them block by block.
	Block int `json:"block,omitempty"`
}

// Outcome is a cell's end state.
type Outcome string

const (
	OutcomeSucceeded Outcome = "Succeeded"
	OutcomeFailed    Outcome = "Failed"
	// OutcomeRunning marks a document written mid-run (partial results).
	OutcomeRunning Outcome = "Running"
)

// FailureClass says whose fault a failure was; it decides retries. The
// values are the agent's own (agentapi.FailureClass), which it reports in its
// progress record and copies into the document.
type FailureClass string

const (
	// FailureBenchmark is the benchmark's own failure (SQL error, bad script).
	FailureBenchmark = FailureClass(agentapi.FailureBenchmark)
	// FailureInfrastructure is the platform's (pod evicted, node lost).
	FailureInfrastructure = FailureClass(agentapi.FailureInfrastructure)
)

// Status is how the cell ended.
type Status struct {
	Outcome Outcome `json:"outcome"`
	// FailureClass and Error are set when Outcome is Failed.
	FailureClass FailureClass `json:"failureClass,omitempty"`
	Error        string       `json:"error,omitempty"`
	// FailedStep is the step that failed, if one did.
	FailedStep string `json:"failedStep,omitempty"`
}

// Provenance is what the numbers were measured on. Without it a result cannot
// be compared to another: same version and config but a different kernel,
// image or CPU is a different experiment.
type Provenance struct {
	// ServerVersion is what the server reports (SELECT VERSION(), SHOW
	// server_version), e.g. "10.11.19-MariaDB-0+deb12u1".
	ServerVersion string `json:"serverVersion,omitempty"`
	// ServerSettings are the effective server variables after start-up
	// (SHOW GLOBAL VARIABLES, pg_settings), name → value as text.
	ServerSettings map[string]string `json:"serverSettings,omitempty"`
	// ServerSettingsSHA256 is SettingsDigest(ServerSettings), so that two
	// cells' settings can be compared without the map (the compact form and
	// the manifest may drop it). It leaves out the variables that name the
	// instance (ComparableSettings); documents written before that digest
	// every variable, and still validate.
	ServerSettingsSHA256 string `json:"serverSettingsSha256,omitempty"`
	// ConfigText is the config variant's text as given to the server.
	ConfigText string `json:"configText,omitempty"`
	// ConfigCheck is the agent's comparison of the config variant with the
	// server's effective settings, made before the load; absent when the
	// agent had no variant text to check.
	ConfigCheck *ConfigCheck `json:"configCheck,omitempty"`
	// Image is the server image reference; ImageDigest its resolved digest
	// ("sha256:..."), the only reliable identity of the binary.
	Image       string `json:"image,omitempty"`
	ImageDigest string `json:"imageDigest,omitempty"`
	// ClientImage and ClientImageDigest are the same for the client pod.
	ClientImage       string `json:"clientImage,omitempty"`
	ClientImageDigest string `json:"clientImageDigest,omitempty"`
	// DatabaseNode is the host the server ran on.
	DatabaseNode Host `json:"databaseNode"`
	// ClientNode is where sysbench ran; absent if unknown.
	ClientNode *Host `json:"clientNode,omitempty"`
	// SysbenchVersion is `sysbench --version` ("1.0.20").
	SysbenchVersion string `json:"sysbenchVersion,omitempty"`
	// DBBenchVersion is the agent's build version.
	DBBenchVersion string `json:"dbbenchVersion,omitempty"`
	// External is set when the server was an external target
	// (databases[].external), one dbbench did not start.
	External *ExternalTarget `json:"external,omitempty"`
}

// ExternalTarget records a cell on a server dbbench did not start: where it
// was, the database of its own the agent used, whether that database was
// dropped, and what the fresh-server method could not guarantee.
type ExternalTarget struct {
	// Endpoint is the host as the run named it.
	Endpoint string `json:"endpoint"`
	// Database is the agent's own database (dbbench_...), created before
	// the load and dropped at the end.
	Database string `json:"database"`
	// Dropped is true once the agent dropped Database; DropError says why
	// it could not (the database is then left on the server).
	Dropped   bool   `json:"dropped"`
	DropError string `json:"dropError,omitempty"`
	// NotGuaranteed lists, as Caveat* values, what the cell's figures do
	// not have that a cell on a fresh server of dbbench's has.
	NotGuaranteed []string `json:"notGuaranteed"`
}

// What a cell on an external target cannot guarantee (ExternalTarget's
// NotGuaranteed). Values are stable: reports and other tools match them.
const (
	// CaveatNoFreshServer: the server was not started for the cell; what
	// earlier cells and other work left (caches, statistics, fragmentation)
	// carries over.
	CaveatNoFreshServer = "no-fresh-server"
	// CaveatSharedBufferPool: the buffer pool / shared buffers hold other
	// databases' pages too.
	CaveatSharedBufferPool = "shared-buffer-pool"
	// CaveatOtherClients: other clients may load the server during the
	// measurement.
	CaveatOtherClients = "other-clients"
	// CaveatNoServerNodeFigures: no hardware metrics or host facts from the
	// server's node (no collector beside a server dbbench did not start).
	CaveatNoServerNodeFigures = "no-server-node-figures"
	// CaveatNoFlush: the post-load flush (global settings, CHECKPOINT) is
	// not made, so dirty pages of the load may be written during steps.
	CaveatNoFlush = "no-post-load-flush"
	// CaveatServerConfigNotOurs: the server runs with its owner's settings
	// (recorded in serverSettings), not a config variant of the run.
	CaveatServerConfigNotOurs = "server-config-not-ours"
)

// ExternalCaveats are the caveats of every cell on an external target.
func ExternalCaveats() []string {
	return []string{CaveatNoFreshServer, CaveatSharedBufferPool, CaveatOtherClients,
		CaveatNoServerNodeFigures, CaveatNoFlush, CaveatServerConfigNotOurs}
}

// ConfigCheck says, setting by setting, whether the server ran with the
// config variant: what was verified, what the server runs with instead
// (the cell then fails) and what the server cannot confirm.
type ConfigCheck struct {
	// Verified are the settings the server reports with the requested value.
	Verified []ConfigSetting `json:"verified,omitempty"`
	// NotApplied are the settings the server reports with another value.
	NotApplied []ConfigSetting `json:"notApplied,omitempty"`
	// Unverified are settings and include directives the server cannot
	// confirm either way, each with its reason.
	Unverified []ConfigSetting `json:"unverified,omitempty"`
	// Mistakes are the variant's structural mistakes ("line 1: ...").
	Mistakes []string `json:"mistakes,omitempty"`
}

// ConfigSetting is one setting of a config variant and what the server
// reports for it.
type ConfigSetting struct {
	// Name is the server's name for the setting (or an include directive).
	Name string `json:"name"`
	// Line is the setting's line in the variant's text.
	Line int `json:"line,omitempty"`
	// Requested is the value as written; Normalized the same in the
	// server's terms when that differs ("256M" → "268435456").
	Requested  string `json:"requested"`
	Normalized string `json:"normalized,omitempty"`
	// Effective is the value the server reports.
	Effective string `json:"effective,omitempty"`
	// Source is where the server says the value came from.
	Source string `json:"source,omitempty"`
	// Reason explains why a setting is unverified or not applied.
	Reason string `json:"reason,omitempty"`
}

// Host describes a node.
type Host struct {
	NodeName string `json:"nodeName,omitempty"`
	// CPUModel is /proc/cpuinfo's "model name".
	CPUModel string `json:"cpuModel,omitempty"`
	// CPUs is the CPUs the node has (not the pod's limit).
	CPUs int `json:"cpus,omitempty"`
	// PodCPUs is the CPU limit of the pod on this node, in CPUs.
	PodCPUs float64 `json:"podCpus,omitempty"`
	// Kernel is `uname -r`.
	Kernel string `json:"kernel,omitempty"`
	// MemoryBytes is the node's memory.
	MemoryBytes int64 `json:"memoryBytes,omitempty"`
}

// Load is the prepare phase: bulk insert, secondary index, warm-up, flush.
type Load struct {
	// Seconds is the whole load phase, flush wait included.
	Seconds float64 `json:"seconds"`
	// InsertSeconds is the bulk insert alone; InsertsPerSecond is Rows /
	// InsertSeconds, the figure the studies report.
	InsertSeconds    float64 `json:"insertSeconds,omitempty"`
	InsertsPerSecond float64 `json:"insertsPerSecond"`
	// IndexSeconds is the secondary-index creation; FlushSeconds the wait
	// for dirty pages / VACUUM + CHECKPOINT. Absent when not measured.
	IndexSeconds *float64 `json:"indexSeconds,omitempty"`
	FlushSeconds *float64 `json:"flushSeconds,omitempty"`
	Tables       int      `json:"tables"`
	// RowsPerTable is --table-size; Rows is the total inserted.
	RowsPerTable int64 `json:"rowsPerTable"`
	Rows         int64 `json:"rows"`
	// Commands are the exact command lines run, passwords redacted.
	Commands [][]string `json:"commands,omitempty"`
}

// StepResult is one step at one thread count.
type StepResult struct {
	// Step is the catalog name ("point-query", "read-write_range=100").
	Step string `json:"step"`
	// Group is the report group ("point", "range-noagg", "range-agg",
	// "write"); reports may regroup, this is the catalog's.
	Group   string `json:"group,omitempty"`
	Threads int    `json:"threads"`
	// StartedAt is when the measured run started, to line up with node
	// metrics from elsewhere.
	StartedAt *time.Time `json:"startedAt,omitempty"`
	// DurationSeconds is the requested run time (--time); ElapsedSeconds the
	// time the final report measured. For a step of adaptive duration
	// (Adaptive set) it is the warm-up plus the steady seconds the step
	// ran before it was asked to stop, so the quality gate judges the
	// window it actually had.
	DurationSeconds float64  `json:"durationSeconds"`
	ElapsedSeconds  *float64 `json:"elapsedSeconds,omitempty"`
	// WarmupSeconds were dropped from the start of the series before the
	// steady-state figures and summaries.
	WarmupSeconds float64 `json:"warmupSeconds"`
	// Command is the exact command line, passwords redacted.
	Command []string `json:"command,omitempty"`
	// Error is set when this step failed; the figures are then partial.
	Error string `json:"error,omitempty"`

	// SteadyQPS and SteadyTPS are the mean of the per-second samples after
	// the warm-up: what relative tables use.
	SteadyQPS float64 `json:"steadyQps"`
	SteadyTPS float64 `json:"steadyTps"`
	// SteadySamples is how many samples they average.
	SteadySamples int `json:"steadySamples"`
	// FinalQPS and FinalTPS are sysbench's final report ("queries: N (X per
	// sec.)"): whole run, warm-up included; comparable with published runs.
	FinalQPS float64 `json:"finalQps"`
	FinalTPS float64 `json:"finalTps"`
	// Queries and Transactions are the final report's counters.
	Queries      int64 `json:"queries"`
	Transactions int64 `json:"transactions"`
	// RowsPerSecond is set for scan-like steps, reported as rows/s.
	RowsPerSecond *float64 `json:"rowsPerSecond,omitempty"`

	// Latency of the final report, in milliseconds, over the whole run.
	LatencyAvgMs float64  `json:"latencyAvgMs"`
	LatencyMinMs *float64 `json:"latencyMinMs,omitempty"`
	LatencyP95Ms *float64 `json:"latencyP95Ms,omitempty"`
	LatencyP99Ms *float64 `json:"latencyP99Ms,omitempty"`
	LatencyMaxMs float64  `json:"latencyMaxMs"`
	// LatencyP50Ms and LatencyP999Ms (99.9th) come, like LatencyP99Ms when
	// sysbench printed only its 95th percentile line, from sysbench's latency
	// histogram of the whole run (--histogram=on); absent without one.
	LatencyP50Ms  *float64 `json:"latencyP50Ms,omitempty"`
	LatencyP999Ms *float64 `json:"latencyP999Ms,omitempty"`
	// StopReason says why a step of adaptive duration ended: Converged
	// (its mean's error is small beside the between-run noise),
	// TargetReached (its interval is as narrow as asked) or MaxDuration
	// (the configured time ran out). Empty for a step of fixed duration.
	StopReason string `json:"stopReason,omitempty"`
	// Adaptive is the adaptive duration's record (docs/agent.md, "Adaptive
	// step duration"); absent for a step of fixed duration.
	Adaptive *AdaptiveDuration `json:"adaptive,omitempty"`
	// Rate is set when the run was open-loop, at a fixed target rate (a
	// variant of the closed-loop step; Step then carries RateSuffix).
	Rate *Rate `json:"rate,omitempty"`

	// Errors and Reconnects are the final report's ignored-error and
	// reconnect counts and their per-second rates.
	Errors              int64   `json:"errors"`
	ErrorsPerSecond     float64 `json:"errorsPerSecond"`
	Reconnects          int64   `json:"reconnects"`
	ReconnectsPerSecond float64 `json:"reconnectsPerSecond"`

	// Quality is the quality gate's verdict (quality.go): whether the
	// figures above are a value. Absent: not checked (an older agent, an
	// imported study), which counts as valid.
	Quality *Quality `json:"quality,omitempty"`

	// Series is the per-second series (full form only).
	Series *Series `json:"series,omitempty"`
	// Summary summarises Series.QPS after the warm-up (both forms).
	Summary *SeriesSummary `json:"summary,omitempty"`
	// LatencyMoments describe Series.LatencyMs after the warm-up (compact
	// form): the per-second spread a latency verdict without repeats falls
	// back on.
	LatencyMoments *SeriesMoments `json:"latencyMoments,omitempty"`
	// EncodedQPS is the QPS series compressed (compact form, when it fits).
	EncodedQPS *EncodedSeries `json:"encodedQps,omitempty"`
	// Hardware is the per-operation efficiency of the database node.
	Hardware *Hardware `json:"hardware,omitempty"`
	// Counters are the engine's own counters per operation over the
	// measured window (absent: not read, or written by an older agent).
	Counters *Counters `json:"counters,omitempty"`
	// Profile is the database server's on-CPU profile, taken in an
	// unmeasured pass of this step and thread count after the measured
	// ones (absent: not asked for, spec.workload.profile, or an older
	// agent). Nothing else in this result comes from that pass.
	Profile *Profile `json:"profile,omitempty"`

	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// Series is the per-second output of sysbench --report-interval, column-wise.
// Sample i covers (i·IntervalSeconds, (i+1)·IntervalSeconds] from the start
// of the run, unless Seconds says otherwise; the warm-up samples are
// included. All slices have the same length.
type Series struct {
	IntervalSeconds float64 `json:"intervalSeconds"`
	// Seconds are the samples' end times, in seconds since the run
	// started, when they are not every IntervalSeconds: a client that did
	// not run for a while reports late, one sample for the seconds it
	// missed (its rates are over the whole span). Sample i then covers
	// (Seconds[i−1], Seconds[i]]. Absent for a regular series.
	Seconds []float64 `json:"seconds,omitempty"`
	QPS     []float64 `json:"qps"`
	TPS     []float64 `json:"tps"`
	// LatencyMs is the interval latency at LatencyPercentile (95 unless
	// sysbench ran with --percentile).
	LatencyPercentile   float64   `json:"latencyPercentile"`
	LatencyMs           []float64 `json:"latencyMs"`
	ErrorsPerSecond     []float64 `json:"errorsPerSecond"`
	ReconnectsPerSecond []float64 `json:"reconnectsPerSecond"`
	// QueueLength and Concurrency are a fixed-rate run's per-second queue
	// reports (events generated but not started; events executing), one
	// per sample; absent for closed-loop runs.
	QueueLength []float64 `json:"queueLength,omitempty"`
	Concurrency []float64 `json:"concurrency,omitempty"`
}

// Truncate keeps the first n samples of every column.
func (s *Series) Truncate(n int) {
	for _, col := range []*[]float64{&s.Seconds, &s.QPS, &s.TPS, &s.LatencyMs, &s.ErrorsPerSecond, &s.ReconnectsPerSecond, &s.QueueLength, &s.Concurrency} {
		if len(*col) > n {
			*col = (*col)[:n]
		}
	}
}

// Ends are the samples' end times: Seconds, or every IntervalSeconds.
func (s *Series) Ends() []float64 {
	if len(s.Seconds) == len(s.QPS) && len(s.Seconds) > 0 {
		return slices.Clone(s.Seconds)
	}
	iv := s.IntervalSeconds
	if !(iv > 0) {
		iv = 1
	}
	out := make([]float64, len(s.QPS))
	for i := range out {
		out[i] = float64(i+1) * iv
	}
	return out
}

// SteadyFrom is the index of the first sample that starts at or after
// warmupSeconds (len(QPS) when none does).
func (s *Series) SteadyFrom(warmupSeconds float64) int {
	ends := s.Ends()
	for i := range ends {
		start := 0.0
		if i > 0 {
			start = ends[i-1]
		}
		if start >= warmupSeconds-1e-9 {
			return i
		}
	}
	return len(ends)
}

// Regular is a column of s on the regular grid of IntervalSeconds: a
// sample that covers k intervals (Seconds) is repeated k times, its mean
// rate over each of them; a regular series' column is returned as it is.
// It is what a chart or an encoding that knows no sample times shows.
func (s *Series) Regular(col []float64) []float64 {
	if len(s.Seconds) != len(col) || len(col) == 0 || !(s.IntervalSeconds > 0) {
		return col
	}
	out := make([]float64, 0, len(col))
	prev := 0.0
	for i, end := range s.Seconds {
		k := max(1, int(math.Round((end-prev)/s.IntervalSeconds)))
		for range k {
			out = append(out, col[i])
		}
		prev = end
	}
	return out
}

// SeriesSummary describes the steady part of a QPS series: enough for box
// plots and for flagging stalls without the series.
type SeriesSummary struct {
	Samples int     `json:"samples"`
	Min     float64 `json:"min"`
	P5      float64 `json:"p5"`
	Median  float64 `json:"median"`
	P95     float64 `json:"p95"`
	Max     float64 `json:"max"`
	Mean    float64 `json:"mean"`
	// CV is the coefficient of variation: population stddev / mean (0 when
	// the mean is 0).
	CV float64 `json:"cv"`
	// StallSeconds counts samples below half the median, times the interval:
	// the write stalls and checkpoint dips of the throughput-over-time charts.
	StallSeconds float64 `json:"stallSeconds"`
	// Lag1Autocorrelation is the samples' lag-1 autocorrelation (absent:
	// 0, or not computed by an older agent). Consecutive seconds of a
	// benchmark are positively correlated; this says by how much, so that
	// significance tests can count effective rather than raw samples.
	Lag1Autocorrelation float64 `json:"lag1Autocorrelation,omitempty"`
}

// SeriesMoments are the mean and spread of a series after the warm-up: the
// little a significance test needs, where the full summary would cost a
// compact document too much.
type SeriesMoments struct {
	Samples int     `json:"samples"`
	Mean    float64 `json:"mean"`
	// CV is the population stddev / mean (0 when the mean is 0).
	CV float64 `json:"cv"`
	// Lag1Autocorrelation as in SeriesSummary.
	Lag1Autocorrelation float64 `json:"lag1Autocorrelation,omitempty"`
}

// MomentsOf keeps a summary's moments, rounded to what a test needs.
func MomentsOf(s SeriesSummary) SeriesMoments {
	r := func(x, scale float64) float64 { return math.Round(x*scale) / scale }
	return SeriesMoments{Samples: s.Samples, Mean: r(s.Mean, 1000), CV: r(s.CV, 1e4), Lag1Autocorrelation: r(s.Lag1Autocorrelation, 1000)}
}

// EffectiveSamples is the number of independent samples the summary's
// samples are worth, by the AR(1) approximation n·(1−r)/(1+r) for a
// positive lag-1 autocorrelation r (never below 2 or above n); n otherwise.
func (s SeriesSummary) EffectiveSamples() int {
	n, r := s.Samples, s.Lag1Autocorrelation
	if n < 2 || r <= 0 {
		return n
	}
	e := int(math.Round(float64(n) * (1 - r) / (1 + r)))
	return min(max(e, 2), n)
}

// EncodedSeries is a QPS series packed for the compact form: each value is
// averaged over ResolutionSeconds, rounded to 1/Scale, delta-encoded,
// zigzag-varint-encoded, gzip-compressed and base64-encoded (standard
// alphabet, padded). See EncodeSeries.
type EncodedSeries struct {
	Encoding          string  `json:"encoding"`
	ResolutionSeconds float64 `json:"resolutionSeconds"`
	Scale             int     `json:"scale"`
	Samples           int     `json:"samples"`
	Data              string  `json:"data"`
}

// Hardware is the efficiency per operation on the database node, as the
// methodology (§4) defines it: node-wide vmstat/iostat-style averages over
// the measured window, divided by the step's throughput. Each per-op field is
// absent when its source was not sampled, and absent (not infinite) when
// OpsPerSecond is 0.
type Hardware struct {
	// OpsPerSecond is q, the divisor ("o/s"); OpsBasis says which figure it
	// is ("steadyQps" normally, "rowsPerSecond" for scans).
	OpsPerSecond float64 `json:"opsPerSecond"`
	OpsBasis     string  `json:"opsBasis"`
	// CPUs is nCPU of the node, for CPU-seconds per op = cpu/o × nCPU / 100.
	CPUs int `json:"cpus"`
	// Samples is the number of 1 s samples averaged.
	Samples int `json:"samples"`
	// Device is the data device the disk figures are for ("nvme0n1").
	Device string `json:"device,omitempty"`
	// ClientCPUIncluded is true when the client ran on the database node, so
	// the node-wide CPU figures include sysbench's own CPU (as in the
	// reference studies).
	ClientCPUIncluded bool `json:"clientCpuIncluded"`

	// CPUPerOp is "cpu/o": avg(us+sy) in % of all CPUs / q.
	CPUPerOp *float64 `json:"cpuPerOp,omitempty"`
	// ContextSwitchesPerOp is "cs/o".
	ContextSwitchesPerOp *float64 `json:"csPerOp,omitempty"`
	// ReadsPerOp is "r/o": device reads / q.
	ReadsPerOp *float64 `json:"readsPerOp,omitempty"`
	// ReadKBPerOp is "rKB/o"; WriteKBPerOp "wKB/o".
	ReadKBPerOp  *float64 `json:"readKbPerOp,omitempty"`
	WriteKBPerOp *float64 `json:"writeKbPerOp,omitempty"`
	// ServerCPUMicrosPerOp is the server process's own CPU (its cgroup's
	// usage) in microseconds per operation: precise, client excluded.
	ServerCPUMicrosPerOp *float64 `json:"serverCpuMicrosPerOp,omitempty"`

	// The averages the per-op figures came from, so they can be recomputed
	// against another q.
	CPUPercent                *float64 `json:"cpuPercent,omitempty"`
	ContextSwitchesPerSecond  *float64 `json:"csPerSecond,omitempty"`
	ReadsPerSecond            *float64 `json:"readsPerSecond,omitempty"`
	ReadKBPerSecond           *float64 `json:"readKbPerSecond,omitempty"`
	WriteKBPerSecond          *float64 `json:"writeKbPerSecond,omitempty"`
	ServerCPUSecondsPerSecond *float64 `json:"serverCpuSecondsPerSecond,omitempty"`

	// Volumes split the disk figures by the database's volumes ("data",
	// and "log" with storage.log): each is the block device behind the
	// volume. Absent in documents written before the split (v1, additive).
	Volumes []VolumeIO `json:"volumes,omitempty"`
}

// VolumeIO is the disk activity of the device behind one database volume
// over the measured window, per operation and per second. A device serves
// everything on it, so other I/O on the same device is counted too.
type VolumeIO struct {
	// Name is the volume: "data" or "log".
	Name string `json:"name"`
	// Device is the block device ("vda", "nvme1n1p2", "dm-0").
	Device string `json:"device,omitempty"`
	// SharedDevice is true when another volume of the step is on the same
	// device: its figures are then those of both volumes together, not a
	// split (an emptyDir log beside an emptyDir data directory).
	SharedDevice bool `json:"sharedDevice,omitempty"`
	// Unresolved says why no device was found; the figures are absent.
	Unresolved string `json:"unresolved,omitempty"`

	// ReadsPerOp is r/o on this device; ReadKBPerOp rKB/o, WriteKBPerOp
	// wKB/o; IOsPerOp is completed reads plus writes per op.
	ReadsPerOp   *float64 `json:"readsPerOp,omitempty"`
	ReadKBPerOp  *float64 `json:"readKbPerOp,omitempty"`
	WriteKBPerOp *float64 `json:"writeKbPerOp,omitempty"`
	IOsPerOp     *float64 `json:"iosPerOp,omitempty"`

	ReadsPerSecond   *float64 `json:"readsPerSecond,omitempty"`
	ReadKBPerSecond  *float64 `json:"readKbPerSecond,omitempty"`
	WriteKBPerSecond *float64 `json:"writeKbPerSecond,omitempty"`
	IOsPerSecond     *float64 `json:"iosPerSecond,omitempty"`
}

// SharedDevice reports whether any of h's volumes share a device.
func (h *Hardware) SharedDevice() bool {
	for _, v := range h.Volumes {
		if v.SharedDevice {
			return true
		}
	}
	return false
}

// Volume returns the volume named name, or nil.
func (h *Hardware) Volume(name string) *VolumeIO {
	if h == nil {
		return nil
	}
	for i := range h.Volumes {
		if h.Volumes[i].Name == name {
			return &h.Volumes[i]
		}
	}
	return nil
}

// Counters are the database engine's own cumulative counters (SHOW GLOBAL
// STATUS; PostgreSQL's pg_stat_database, pg_stat_wal, pg_stat_bgwriter,
// pg_stat_checkpointer, pg_stat_io) over the measured window, divided by
// the operations in it: the same window and the same operations as
// Hardware, so the two explain each other.
type Counters struct {
	// Source says what was read: "SHOW GLOBAL STATUS", or the PostgreSQL
	// views the server has, comma-separated.
	Source string `json:"source"`
	// Seconds is the window: from the snapshot when the warm-up ended to
	// the end of the run.
	Seconds float64 `json:"seconds"`
	// OpsPerSecond and OpsBasis are the throughput the counters are per,
	// as in Hardware; Operations = OpsPerSecond × Seconds is the divisor.
	OpsPerSecond float64 `json:"opsPerSecond"`
	OpsBasis     string  `json:"opsBasis"`
	Operations   float64 `json:"operations"`
	// PerOp is each counter's growth over the window / Operations; absent
	// when Operations is 0.
	PerOp map[string]float64 `json:"perOp,omitempty"`
	// Delta is each counter's growth over the window (full form only: it
	// is PerOp × Operations).
	Delta map[string]float64 `json:"delta,omitempty"`
	// Missing are requested extra counters the server does not report.
	Missing []string `json:"missing,omitempty"`
	// Decreased are counters that fell over the window (reset, or not
	// cumulative); they have no value.
	Decreased []string `json:"decreased,omitempty"`
}

// ProfileToolPerf is Profile.Tool for Linux perf.
const ProfileToolPerf = "perf"

// Profile is an on-CPU profile of the database server over a separate,
// unmeasured pass of a step: folded stacks (pkg/profile) and how they were
// taken. Its throughput is not the step's: the pass runs under the
// profiler, and PassQPS against the measured figure is the
// profiler's cost.
type Profile struct {
	// Tool and Event say how samples were taken: "perf", "cpu-clock"
	// (software clock: no hardware counters are needed).
	Tool  string `json:"tool"`
	Event string `json:"event"`
	// FrequencyHz is the sampling rate per CPU; Seconds the sampled time.
	FrequencyHz int     `json:"frequencyHz"`
	Seconds     float64 `json:"seconds"`
	// Samples are all samples taken; Dropped those whose stacks were left
	// out of Folded to keep the document small (the rarest stacks). Shares
	// are of Samples, so the stacks kept keep their true share.
	Samples int64 `json:"samples"`
	Dropped int64 `json:"dropped,omitempty"`
	// Folded holds the stacks, one per line, root first: "a;b;c 12".
	// Empty when the compact document had to leave it out to fit
	// (FoldedOmitted; the full form keeps it) or when Error is set.
	Folded        string `json:"folded,omitempty"`
	FoldedOmitted bool   `json:"foldedOmitted,omitempty"`
	// PassQPS is the profiled pass's steady QPS: against the step's
	// measured SteadyQPS, the profiler's cost.
	PassQPS float64 `json:"passQps,omitempty"`
	// Error says why there is no profile (perf missing, not permitted);
	// the measured results are unaffected.
	Error string `json:"error,omitempty"`
}

// AdaptiveDuration records how a step of adaptive duration was run and
// judged (inference.StopRule): the bounds it ran between, what it was
// compared with, and where the within-run interval stood when it stopped.
type AdaptiveDuration struct {
	// MinSeconds and MaxSeconds bound the steady seconds (after the
	// warm-up); sysbench ran with --time = warm-up + MaxSeconds.
	MinSeconds float64 `json:"minSeconds"`
	MaxSeconds float64 `json:"maxSeconds"`
	// SteadySeconds are the steady per-second samples the rule had seen
	// when it stopped the step (the step's last second ends within about
	// a second after).
	SteadySeconds int `json:"steadySeconds"`
	// RelHalfWidth is the within-run relative half-width of the mean at the
	// stop (95 %, the long-run variance's t quantile; 0.01 = ±1 %), DF its
	// degrees of freedom; absent when there were too few samples to judge.
	RelHalfWidth *float64 `json:"relHalfWidth,omitempty"`
	DF           int      `json:"df,omitempty"`
	// ConvergedHalfWidth is the half-width at which the step counts as
	// Converged (0.5 × 1.96 × the between-run CV); TargetHalfWidth the
	// target's. Absent when not asked for.
	ConvergedHalfWidth *float64 `json:"convergedHalfWidth,omitempty"`
	TargetHalfWidth    *float64 `json:"targetHalfWidth,omitempty"`
}

// AgentExtensionKey is the key of the dbbench agent's additions to a
// document's and a step's Extensions (pkg/agent's CellExtension and
// StepExtension).
const AgentExtensionKey = "dbbench.io/agent"
