package v1alpha1

// FailureReason names why an attempt of a cell ended badly. The controller
// records the last one in status.cells[].reason (with the details for people
// in status.cells[].message) and counts retries by it in the metric
// dbbench_cell_retries_total. Reasons are either infrastructure failures,
// retried within spec.retry, or the benchmark's own findings (and spec
// errors no retry fixes), which fail the cell at once.
type FailureReason string

// Infrastructure failures: the attempt is retried while spec.retry allows.
const (
	// ReasonDatabasePodDeleted: the database pod was deleted, or disappeared
	// during the benchmark.
	ReasonDatabasePodDeleted FailureReason = "DatabasePodDeleted"
	// ReasonDatabaseEvicted: the database pod was evicted or preempted.
	ReasonDatabaseEvicted FailureReason = "DatabaseEvicted"
	// ReasonNodeLost: the node of the attempt's database or client pod
	// stopped answering (not ready or unreachable) and Kubernetes evicted
	// the pod once its toleration of that ran out (30 s, see
	// docs/design.md, "Node loss"). The retry lands on another node, since
	// the lost one is tainted.
	ReasonNodeLost FailureReason = "NodeLost"
	// ReasonDatabasePodFailed: the database pod failed as a whole.
	ReasonDatabasePodFailed FailureReason = "DatabasePodFailed"
	// ReasonDatabaseNotReady: the database pod did not run within
	// timeouts.databaseReady (image pulls included).
	ReasonDatabaseNotReady FailureReason = "DatabaseNotReady"
	// ReasonCellTimeout: the attempt outlived timeouts.cell.
	ReasonCellTimeout FailureReason = "CellTimeout"
	// ReasonClientEvicted: the agent's pod was evicted or disrupted.
	ReasonClientEvicted FailureReason = "ClientEvicted"
	// ReasonClientOOMKilled: the agent's pod ran out of memory.
	ReasonClientOOMKilled FailureReason = "ClientOOMKilled"
	// ReasonAgentFailed: the agent gave up for a reason outside the
	// benchmark (it could not reach the server, for one).
	ReasonAgentFailed FailureReason = "AgentFailed"
	// ReasonClientFailed: the agent's Job failed without a pod to say why.
	ReasonClientFailed FailureReason = "ClientFailed"
	// ReasonAPIError: the Kubernetes API failed a read the cell needed.
	ReasonAPIError FailureReason = "APIError"
	// ReasonClientStarved: the agent finished, but a step result is
	// invalid (the quality gate) with the evidence that the client itself
	// did not run: seconds of the step no interval report covered, at
	// least the step's stall limit (status.cells[].quality). The machine
	// starved the client, so the cell is retried; once spec.retry is
	// spent, it succeeds with the result flagged invalid.
	ReasonClientStarved FailureReason = "ClientStarved"
)

// Benchmark failures and spec errors: the cell fails without a retry.
const (
	// ReasonBenchmarkFailed: a step failed (an SQL error, a bad script) or
	// the agent refused its plan.
	ReasonBenchmarkFailed FailureReason = "BenchmarkFailed"
	// ReasonNoResults: the agent finished without a completed results
	// document.
	ReasonNoResults FailureReason = "NoResults"
	// ReasonDatabaseCrashed: the database server exited during the
	// benchmark: a finding about the version under test.
	ReasonDatabaseCrashed FailureReason = "DatabaseCrashed"
	// ReasonConfigRejected: the database server exited before it answered,
	// and its log blames the config variant (an unknown option, a bad
	// value); the message quotes the server's error lines.
	ReasonConfigRejected FailureReason = "ConfigRejected"
	// ReasonDatabaseStartFailed: the database server exited before it
	// answered for another reason; the message quotes its error lines.
	ReasonDatabaseStartFailed FailureReason = "DatabaseStartFailed"
	// ReasonConfigNotApplied: the server runs, but not with a setting of
	// the config variant (the agent's check before the load); the message
	// names the setting, the requested and the effective value.
	ReasonConfigNotApplied FailureReason = "ConfigNotApplied"
	// ReasonInvalidImage: the database image name is invalid, or the image
	// may not be pulled.
	ReasonInvalidImage FailureReason = "InvalidImage"
	// ReasonConfigMissing: a ConfigMap (or key) a config variant or a
	// custom step names does not exist.
	ReasonConfigMissing FailureReason = "ConfigMissing"
	// ReasonTemplateNotReady: the object created from databases[].template
	// did not report its readyCondition True within template.readyTimeout.
	ReasonTemplateNotReady FailureReason = "TemplateNotReady"
	// ReasonTemplateRejected: the API server refused the templated object
	// (an unknown kind, an invalid spec, no RBAC right to create it), or
	// the ready object lacks the endpoint field the template names.
	ReasonTemplateRejected FailureReason = "TemplateRejected"
)

// Reasons of the PreflightPassed condition; PreflightFailed is also the
// reason of the Failed and Succeeded conditions of a run the pre-flight
// stopped.
const (
	// ReasonPreflightRunning: the pairs are being started and checked.
	ReasonPreflightRunning = "PreflightRunning"
	// ReasonPairsReady: every pair started with its settings in effect.
	ReasonPairsReady = "PairsReady"
	// ReasonPreflightFailed: at least one pair did not start, or ran with
	// other settings than its variant's; the message names every one.
	ReasonPreflightFailed = "PreflightFailed"
)
