// Package agentapi is the contract between the dbbench controller and the
// agent that runs in each cell's client pod: what the agent receives (a Task,
// plus
// connection secrets in the environment) and how it reports back (a Progress
// record and the results document in the cell's results ConfigMap, and its
// exit code). It also declares the keys of the ConfigMaps that kubectl-dbbench
// reads, so that controller, agent and plugin share one set of names. (The
// object store's names are pkg/store's Object* constants: another format,
// with its own compatibility promise.)
//
// The Go names say what things are (a cell's Task); the strings on the wire
// keep the names of the package's first version, pkg/plan: the document's
// apiVersion "dbbench.io/plan/v1", the DBBENCH_PLAN variable, the
// plan.json ConfigMap key and mount path, and every JSON field name. Agents,
// controllers and plugins of other versions read them, so they never change.
// ("Plan" in dbbench is the planning of a run's repeats and step lengths:
// pkg/regression, pkg/runplan, `kubectl dbbench plan`.)
//
// It has no Kubernetes dependencies so that the agent's local mode and other
// tools can use it.
package agentapi

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// APIVersion identifies this version of the plan document.
const APIVersion = "dbbench.io/plan/v1"

// Environment variables the client pod receives. Credentials never appear in
// the plan (which lives in a ConfigMap); they come from the cell's Secret.
const (
	EnvTaskPath = "DBBENCH_PLAN"        // path of plan.json
	EnvHost     = "DBBENCH_DB_HOST"     // database pod IP (no Service NAT in the measured path)
	EnvUser     = "DBBENCH_DB_USER"     // from the cell Secret
	EnvPassword = "DBBENCH_DB_PASSWORD" // from the cell Secret
	// EnvAdminUser and EnvAdminPassword are an account for maintenance the
	// benchmark user may not do (the post-load InnoDB flush sets global
	// variables); optional.
	EnvAdminUser     = "DBBENCH_DB_ADMIN_USER"
	EnvAdminPassword = "DBBENCH_DB_ADMIN_PASSWORD"
	EnvNodeName      = "DBBENCH_NODE_NAME" // downward API: where the client runs
	// EnvAttempt is the attempt the client Job belongs to. The plan lives in
	// the cell's immutable config ConfigMap, written once at the cell's
	// start, so the attempt comes from the Job and overrides plan.cell.attempt.
	EnvAttempt = "DBBENCH_ATTEMPT"
	EnvPodName = "DBBENCH_POD_NAME" // downward API
	// EnvOutbox ("true" or "1") asks the agent to attach the gzip'd full
	// document and its log to its final write into the results ConfigMap
	// (binaryData ResultKeyFullDocument and ResultKeyAgentLog, within
	// ResultBudgetBytes). The controller sets it when the run uploads to
	// object storage (and removes the attachments once the store has
	// confirmed them). It is an environment variable, not a plan field, so
	// that an older agent image, which decodes plans strictly, ignores it.
	EnvOutbox = "DBBENCH_OUTBOX"
	// EnvCollectorURL is the hardware-metrics collector beside the database
	// (http://<db pod IP>:<port>); empty when there is none.
	EnvCollectorURL = "DBBENCH_COLLECTOR_URL"
)

// Paths inside the client pod.
const (
	TaskDir = "/etc/dbbench/plan"
	// TaskFile is the task's file name (plan.json): the pod mounts the config
	// ConfigMap's key under its own name.
	TaskFile         = ConfigKeyTask
	CustomScriptsDir = TaskDir + "/custom" // custom step scripts, beside the plan

	// ServerConfigFile is the config variant's text (ConfigKeyServer),
	// mounted beside the plan so the agent can verify that the server runs
	// with it; absent when the controller does not mount it (the agent then
	// verifies nothing).
	ServerConfigFile = ConfigKeyServer
)

// Keys of the per-cell and run-level ConfigMaps. They are read by agents and
// plugins of other versions: never rename one, only add new ones.
const (
	// ConfigKeyTask holds the Task JSON (plan.json, the name of the first version) in the cell's config ConfigMap.
	ConfigKeyTask = "plan.json"
	// ConfigKeyServer holds the config variant's text (my.cnf drop-in or
	// postgresql.conf) in the cell's config ConfigMap.
	ConfigKeyServer = "server.cnf"
	// ResultKeyProgress holds the agent's Progress JSON in the results ConfigMap.
	ResultKeyProgress = "progress.json"
	// ResultKeyDocument holds the compact results document (schema v1).
	ResultKeyDocument = "result.json"

	// The cell's outbox: keys of the results ConfigMap's binaryData that
	// only the agent's final write carries (and only when EnvOutbox is set), for the controller to upload to object storage and then remove.
	// Progress writes remove them, so they never outlive the attempt that
	// wrote them.
	//
	// ResultKeyFullDocument holds the gzip'd full-form document (results.Marshal,
	// per-second series included).
	ResultKeyFullDocument = "full.json.gz"
	// ResultKeyAgentLog holds the gzip'd agent log (its own log lines; a
	// long log keeps its head and tail).
	ResultKeyAgentLog = "agent.log.gz"
	// ResultKeyServerLog holds the gzip'd log of the database container of
	// the cell's last attempt. The controller, not the agent, writes it,
	// when the cell ends and before it deletes the database pod; it is
	// uploaded and removed with the agent's attachments.
	ResultKeyServerLog = "server.log.gz"

	// RunResultKeyManifest holds the run manifest (results.Manifest) in the
	// run-level results ConfigMap (specs.RunResultsConfigMapName), which the
	// controller writes once every cell has ended.
	RunResultKeyManifest = "manifest.json"
	// RunResultKeyVerdict holds the run's regression verdict with its cases
	// (triage.Verdict) beside the manifest, and RunResultKeyJUnit the same
	// as JUnit XML (pkg/verdictformat), when spec.regression is set.
	RunResultKeyVerdict = "verdict.json"
	RunResultKeyJUnit   = "junit.xml"
)

// ResultBudgetBytes bounds the values (data and binaryData) of a results
// ConfigMap, under Kubernetes' 1 MiB: the agent's final write leaves out the
// agent log first, then the full document, to stay within it, and says so
// in the document (extension dbbench.io/agent, outboxDropped).
const ResultBudgetBytes = 900 << 10

// Exit codes of the agent. The controller classifies a failed client pod by
// them: a benchmark failure fails the cell, anything else is treated as the
// infrastructure's and retried within the run's budget.
const (
	ExitOK = 0
	// ExitBenchmarkFailed: a step failed (SQL error, bad Lua script, unknown
	// step). Not retried.
	ExitBenchmarkFailed = 2
	// ExitServerUnreachable: the database never answered at the SQL level
	// within the deadline. Retried.
	ExitServerUnreachable = 3
	// ExitInvalidTask: the task document is malformed. Not retried.
	ExitInvalidTask = 4
	// ExitConfigNotApplied: the server runs with values other than the
	// config variant's (a setting ignored, overridden or pending a restart;
	// Progress.Reason is FailureConfigNotApplied). A benchmark failure, not
	// retried: the same variant on the same server would do the same again.
	ExitConfigNotApplied = 5
)

// Engine is a database engine.
type Engine string

const (
	MySQL    Engine = "mysql"
	MariaDB  Engine = "mariadb"
	Postgres Engine = "postgres"
)

// DefaultPort returns the engine's standard port.
func (e Engine) DefaultPort() int {
	if e == Postgres {
		return 5432
	}
	return 3306
}

// Task is everything a cell's agent needs besides credentials: the
// document of apiVersion APIVersion ("dbbench.io/plan/v1").
type Task struct {
	APIVersion string   `json:"apiVersion"`
	Run        RunRef   `json:"run"`
	Cell       Cell     `json:"cell"`
	Server     Server   `json:"server"`
	Workload   Workload `json:"workload"`
	Results    Results  `json:"results"`
	// Preflight asks for the run's pre-flight check of the cell's (image,
	// config variant) pair: the agent waits for the server, records its
	// provenance, verifies the config variant, and ends Done (a document
	// with no steps) without loading data or running a step. A failure ends
	// as it would in a cell (ExitConfigNotApplied, ...).
	Preflight bool `json:"preflight,omitempty"`
}

// RunRef identifies the BenchmarkRun the cell belongs to.
type RunRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	UID       string `json:"uid,omitempty"`
	Suite     string `json:"suite,omitempty"`
}

// Cell identifies one (engine, version, config, repeat) combination.
type Cell struct {
	Name     string `json:"name"`
	Database string `json:"database"`
	Engine   Engine `json:"engine"`
	Version  string `json:"version"`
	Config   string `json:"config"`
	Repeat   int    `json:"repeat"`
	Attempt  int    `json:"attempt"`
	Image    string `json:"image,omitempty"`
	// Block is the cell's block (spec.placement.blocks), 0 when unblocked.
	Block int `json:"block,omitempty"`
}

// Server says how to reach the database (the host comes from EnvHost).
type Server struct {
	Engine   Engine `json:"engine"`
	Port     int    `json:"port"`
	Database string `json:"database"`
	// ReadyTimeoutSeconds bounds the SQL-level wait for the server.
	ReadyTimeoutSeconds int `json:"readyTimeoutSeconds"`
	// External is set for a server dbbench did not start
	// (databases[].external). Database is then the agent's own database,
	// which it creates, uses and drops; it must be an OwnDatabasePattern
	// name, so that the agent can never drop a database it did not create.
	External *ExternalServer `json:"external,omitempty"`
}

// ExternalServer says how the agent reaches an external target besides the
// host (EnvHost) and credentials (EnvUser, EnvPassword, from the user's
// Secret).
type ExternalServer struct {
	// Endpoint is the host as the run gives it, for provenance.
	Endpoint string `json:"endpoint"`
	// ConnectDatabase is the existing database the agent connects to in
	// order to create and drop its own; "" for none (MySQL, MariaDB).
	ConnectDatabase string `json:"connectDatabase,omitempty"`
}

// OwnDatabasePattern is the shape of the database the agent creates on an
// external target: the prefix marks it as dbbench's, and the name is a
// plain identifier that needs no quoting in either engine.
var OwnDatabasePattern = regexp.MustCompile(`^dbbench_[a-z0-9_]{1,55}$`)

// Workload is what to run, in order.
type Workload struct {
	// Steps are catalog step names, "tpcc", or names of Custom steps, in run order.
	Steps              []string `json:"steps"`
	Tables             int      `json:"tables"`
	TableSize          int64    `json:"tableSize"`
	ReadSeconds        int      `json:"readSeconds"`
	WriteSeconds       int      `json:"writeSeconds"`
	WarmupSeconds      int      `json:"warmupSeconds"`
	Threads            []int    `json:"threads"`
	PreparedStatements bool     `json:"preparedStatements"`
	// FlushWaitSeconds caps the post-load flush wait (0 = the reference
	// method's min(1200, 60 + rows/1e6)).
	FlushWaitSeconds int          `json:"flushWaitSeconds,omitempty"`
	TPCC             *TPCC        `json:"tpcc,omitempty"`
	Pgbench          *Pgbench     `json:"pgbench,omitempty"`
	Custom           []CustomStep `json:"custom,omitempty"`
	// FixedRate adds open-loop runs after closed-loop ones (fixedrate.go).
	FixedRate *FixedRate `json:"fixedRate,omitempty"`
	// ExtraCounters are engine counters read around every measured run
	// besides the agent's default set (SHOW GLOBAL STATUS names; for
	// PostgreSQL view.column, e.g. "pg_stat_database.conflicts").
	ExtraCounters []string `json:"extraCounters,omitempty"`
	// Profile asks for an unmeasured, profiled pass of some steps after
	// the measured ones (nil: none; docs/explain.md).
	Profile *Profile `json:"profile,omitempty"`
	// Adaptive ends each closed-loop step once more seconds stop helping
	// (adaptive.go; nil: the configured seconds, the default).
	Adaptive *Adaptive `json:"adaptive,omitempty"`
}

// Profile is the profiled pass: for each of Steps, one more run at
// Threads (0: the step's largest thread count) of WarmupSeconds +
// Seconds, with the database server's on-CPU time sampled at FrequencyHz
// over the Seconds after the warm-up. Its results are a profile attached
// to the step's measured result, never a measurement.
type Profile struct {
	Steps       []string `json:"steps"`
	Threads     int      `json:"threads,omitempty"`
	Seconds     int      `json:"seconds"`
	FrequencyHz int      `json:"frequencyHz"`
}

// Profile limits: perf's default rate is 4000 Hz; 99 Hz (not 100, to stay
// out of step with timers) is the usual choice for whole-server profiles.
const (
	DefaultProfileSeconds     = 30
	DefaultProfileFrequencyHz = 99
	MaxProfileFrequencyHz     = 1000
)

func (pr *Profile) validate(steps []string, add func(string, ...any)) {
	if pr == nil {
		return
	}
	if len(pr.Steps) == 0 {
		add("workload.profile.steps: at least one step is required")
	}
	for i, s := range pr.Steps {
		if !slices.Contains(steps, s) {
			add("workload.profile.steps[%d]: %q is not one of workload.steps", i, s)
		}
	}
	if pr.Threads < 0 {
		add("workload.profile.threads: %d must not be negative", pr.Threads)
	}
	if pr.Seconds < 1 {
		add("workload.profile.seconds: %d must be at least 1", pr.Seconds)
	}
	if pr.FrequencyHz < 1 || pr.FrequencyHz > MaxProfileFrequencyHz {
		add("workload.profile.frequencyHz: %d must be in [1, %d]", pr.FrequencyHz, MaxProfileFrequencyHz)
	}
}

// CounterNameRE is what an extra counter name looks like: a MySQL status
// variable or a PostgreSQL view.column (view.backend_type.object.column for
// pg_stat_io). The API's workload.counters.extra has the same pattern.
var CounterNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.]*$`)

// Pgbench configures the pgbench steps.
type Pgbench struct {
	// Scale is pgbench -i's scaling factor: 100,000 accounts per unit.
	Scale int `json:"scale,omitempty"`
}

// DefaultPgbenchScale is Pgbench.Scale when unset: 10 units, about 160 MB.
const DefaultPgbenchScale = 10

// TPCC configures the TPC-C step (sysbench-tpcc's familiar knobs).
type TPCC struct {
	Warehouses      int    `json:"warehouses"`
	Tables          int    `json:"tables"`
	DurationSeconds int    `json:"durationSeconds"`
	Threads         []int  `json:"threads"`
	UseForeignKeys  bool   `json:"useForeignKeys"`
	Isolation       string `json:"isolation"` // RR, RC or SER
}

// CustomStep is a user Lua script run like a catalog step.
type CustomStep struct {
	Name string `json:"name"`
	// Script is the path of the Lua file inside the client pod.
	Script          string   `json:"script"`
	DurationSeconds int      `json:"durationSeconds"`
	Args            []string `json:"args,omitempty"`
}

// Results says where the agent reports.
type Results struct {
	// ConfigMap is the cell's results ConfigMap (in Run.Namespace), created
	// empty by the controller; the agent may only get/update/patch it.
	ConfigMap string `json:"configMap,omitempty"`
	// Dir is a local directory (local mode) for the results documents.
	Dir string `json:"dir,omitempty"`
}

// Validate checks the plan and names the first bad field.
func (p *Task) Validate() error {
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if p.APIVersion != APIVersion {
		add("apiVersion: %q is not %q", p.APIVersion, APIVersion)
	}
	switch p.Server.Engine {
	case MySQL, MariaDB, Postgres:
	default:
		add("server.engine: %q is not one of mysql, mariadb, postgres", p.Server.Engine)
	}
	if p.Server.Port <= 0 || p.Server.Port > 65535 {
		add("server.port: %d is out of range", p.Server.Port)
	}
	if p.Server.Database == "" {
		add("server.database: must be set")
	}
	if p.Server.External != nil && !OwnDatabasePattern.MatchString(p.Server.Database) {
		add("server.database: %q must match %s on an external server (the agent drops it at the end)", p.Server.Database, OwnDatabasePattern)
	}
	wl := p.Workload
	if len(wl.Steps) == 0 {
		add("workload.steps: at least one step is required")
	}
	if wl.Tables < 1 {
		add("workload.tables: %d must be at least 1", wl.Tables)
	}
	if wl.TableSize < 1 {
		add("workload.tableSize: %d must be at least 1", wl.TableSize)
	}
	if wl.ReadSeconds < 1 || wl.WriteSeconds < 1 {
		add("workload.readSeconds/writeSeconds: must be at least 1")
	}
	if wl.WarmupSeconds < 0 {
		add("workload.warmupSeconds: %d must not be negative", wl.WarmupSeconds)
	}
	if len(wl.Threads) == 0 {
		add("workload.threads: at least one thread count is required")
	}
	for i, t := range wl.Threads {
		if t < 1 {
			add("workload.threads[%d]: %d must be at least 1", i, t)
		}
	}
	wl.FixedRate.validate(wl.Steps, add)
	wl.Profile.validate(wl.Steps, add)
	wl.Adaptive.validate(add)
	for i, n := range wl.ExtraCounters {
		if !CounterNameRE.MatchString(n) {
			add("workload.extraCounters[%d]: %q is not a counter name (%s)", i, n, CounterNameRE)
		}
	}
	if p.Results.ConfigMap == "" && p.Results.Dir == "" {
		add("results: one of configMap or dir is required")
	}
	if len(errs) > 0 {
		return errors.New("invalid plan: " + strings.Join(errs, "; "))
	}
	return nil
}

// Phase is the agent's coarse state, as reported in Progress.
type Phase string

const (
	PhaseConnecting Phase = "Connecting"
	PhaseLoading    Phase = "Loading"
	PhaseRunning    Phase = "Running"
	PhaseDone       Phase = "Done"
	PhaseFailed     Phase = "Failed"
)

// FailureClass says whose fault a failure is.
type FailureClass string

const (
	FailureBenchmark      FailureClass = "Benchmark"
	FailureInfrastructure FailureClass = "Infrastructure"
)

// FailureReason is a machine-readable cause of a failure, for the
// controller's condition reasons; the message stays in Progress.Error.
type FailureReason string

const (
	// FailureConfigNotApplied: the server does not run with the config
	// variant's settings (exit code ExitConfigNotApplied).
	FailureConfigNotApplied FailureReason = "ConfigNotApplied"
)

// Progress is what the agent writes to the results ConfigMap as it goes. The
// agent writes it at phase changes and step boundaries, at most once every
// few seconds, so a cell costs the API server a bounded number of writes.
type Progress struct {
	Attempt int   `json:"attempt"`
	Phase   Phase `json:"phase"`
	// Step is the step running now (or the last one).
	Step string `json:"step,omitempty"`
	// Threads is the concurrency of the step running now.
	Threads int `json:"threads,omitempty"`
	// StepsDone counts finished (step, threads) pairs; StepsTotal all of them.
	StepsDone  int    `json:"stepsDone"`
	StepsTotal int    `json:"stepsTotal"`
	UpdatedAt  string `json:"updatedAt,omitempty"` // RFC 3339
	// Error and FailureClass are set when Phase is Failed.
	Error        string       `json:"error,omitempty"`
	FailureClass FailureClass `json:"failureClass,omitempty"`
	// Reason is set for failures with a machine-readable cause.
	Reason FailureReason `json:"reason,omitempty"`
}

// ExpandedSteps counts the (step, threads) pairs a plan runs, for progress.
func (w Workload) ExpandedSteps() int {
	n := 0
	for _, s := range w.Steps {
		runs := 1
		if w.FixedRate.Applies(s) {
			runs += w.FixedRate.Runs()
		}
		switch {
		case s == "tpcc" && w.TPCC != nil && len(w.TPCC.Threads) > 0:
			n += runs * len(w.TPCC.Threads)
		default:
			n += runs * len(w.Threads)
		}
	}
	return n
}
