package v1alpha1

// Condition types of a BenchmarkRun.
const (
	// ConditionProgressing is True while cells are pending or running.
	ConditionProgressing = "Progressing"
	// ConditionSucceeded is True when every cell succeeded.
	ConditionSucceeded = "Succeeded"
	// ConditionFailed is True when the run finished with failed cells.
	ConditionFailed = "Failed"
	// ConditionPreflightPassed is Unknown while the pre-flight checks the
	// run's (database, version, config variant) pairs, True when every pair
	// started with its settings in effect, and False, naming every failing
	// pair, when one did not (the run then fails without starting a cell).
	// Absent when the run made no pre-flight (status.preflight says why).
	ConditionPreflightPassed = "PreflightPassed"
	// ConditionRegressed is True when spec.regression found steps slower
	// than the suite's history, False when it found none.
	ConditionRegressed = "Regressed"
	// ConditionResultsUploaded, with spec.output.s3 only, is True once every
	// finished cell's document and the run manifest are confirmed in the
	// object store; False with reason Uploading while cells still run,
	// PreflightFailed when the check before the first cell could not reach
	// the bucket (the benchmark proceeds), UploadPending while a failed
	// upload is retried, and UploadFailed when the user must act: refused
	// credentials or a bad Secret (still retried, up to every 5 minutes,
	// so fixing the Secret is enough) or a permanent error such as a missing
	// bucket (retried only when the run is annotated
	// dbbench.io/retry-upload).
	ConditionResultsUploaded = "ResultsUploaded"
)

// Reasons of a BenchmarkRun's Progressing, Succeeded and Failed conditions.
const (
	ReasonCellsRunning      = "CellsRunning"
	ReasonFinished          = "Finished"
	ReasonInvalidSpec       = "InvalidSpec"
	ReasonCellsFailed       = "CellsFailed"
	ReasonAllCellsSucceeded = "AllCellsSucceeded"
	// ReasonGoalOutOfReach: spec.goal's prediction says the run's design
	// falls short of the goal (status.plan), and onOutOfReach is Fail; no
	// cell started.
	ReasonGoalOutOfReach = "GoalOutOfReach"
)

// Reasons of a BenchmarkRun's Regressed condition.
const (
	ReasonRegressed        = "Regressed"
	ReasonNoRegression     = "NoRegression"
	ReasonNoHistory        = "NoHistory"
	ReasonBaselineNotFound = "BaselineNotFound"
	ReasonAnalysisFailed   = "AnalysisFailed"
	// ReasonRegressionSuspected: only this run, the newest of a
	// ChangePoints history, shows a drop (changepoint.Suspected); the next
	// run confirms it or clears it. Not a regression yet, so one outlier run
	// does not fail a suite; this verdict is not revised when the next run
	// confirms it (that run's verdict says Regressed).
	ReasonRegressionSuspected = "RegressionSuspected"
	// ReasonRegressionAcknowledged: every pair that moved the wrong way is
	// covered by a BenchmarkAck (status.regression.acknowledged); the
	// condition is False.
	ReasonRegressionAcknowledged = "RegressionAcknowledged"
	// ReasonEnvironmentChanged: every reported pair coincides with a
	// change of the environment and no change of the build
	// (regressed[].environmentOnly); the condition is True (the figures
	// did move) and no bisection is started.
	ReasonEnvironmentChanged = "EnvironmentChanged"
)

// Reasons of the ResultsUploaded condition (with ReasonPreflightFailed:
// the check of spec.output.s3 before the run's first cell failed; the
// benchmark runs anyway, and the reason stays until an upload is attempted).
const (
	ReasonUploading     = "Uploading"
	ReasonUploadPending = "UploadPending"
	ReasonUploadFailed  = "UploadFailed"
	ReasonUploaded      = "Uploaded"
)

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
	// ReasonVolumeClaimNotBound: a database claim whose storage class
	// exists was still not bound at timeouts.databaseReady (the
	// provisioner failed or has no room); the message names the claim.
	ReasonVolumeClaimNotBound FailureReason = "VolumeClaimNotBound"
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
	// ReasonStorageClassNotFound: a database claim's storage class does
	// not exist, or the claim names none and the cluster has no default
	// class; the message names the claim and its spec field.
	ReasonStorageClassNotFound FailureReason = "StorageClassNotFound"
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
