package v1alpha1

// Label, annotation and finalizer keys the controllers put on objects, the
// API's and their children's, declared once (docs/design.md, "Reasons, keys
// and labels"). Their values are API: selectors, kubectl commands and other
// tools name them.

// Labels on every child object of a BenchmarkRun. The run label lets the
// controller list a run's children from its cache; the cell and role labels
// drive placement.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedByValue = "dbbench"
	LabelRun       = "dbbench.io/run"
	LabelCell      = "dbbench.io/cell"
	LabelRole      = "dbbench.io/role"
	LabelAttempt   = "dbbench.io/attempt"
	// LabelExclusive marks pods of cells that claim their node exclusively;
	// the anti-affinity of every exclusive pod selects on it.
	LabelExclusive = "dbbench.io/exclusive"
)

// AnnotationRetryUpload, set on a BenchmarkRun with any value, asks the
// controller to retry a failed or waiting upload to spec.output.s3 at once
// (after the credentials Secret or the bucket was fixed); the controller
// resets the upload's backoff, makes one attempt and removes the annotation.
// Like Argo CD's refresh annotation: kubectl annotate benchmarkrun NAME
// dbbench.io/retry-upload=now
const AnnotationRetryUpload = "dbbench.io/retry-upload"

// AnnotationRetryOf, on the database pod of attempt N > 1, says why attempt
// N−1 ended ("attempt 1: DatabaseEvicted: ..."). The pod is created in the
// same pass that records the retry in the status; if that status write is
// lost (a pass that acted on a stale copy of the run), the next pass adopts
// the pod and takes the reason from here rather than losing it.
const AnnotationRetryOf = "dbbench.io/retry-of"

// AnnotationRetryReason, next to AnnotationRetryOf, is the reason alone
// (status.cells[].reason, "DatabaseEvicted"), so an adopting pass restores
// the typed field without parsing the message.
const AnnotationRetryReason = "dbbench.io/retry-reason"

// Labels the bisection puts on the runs it creates.
const (
	// LabelBisection names the BenchmarkBisection that created a run.
	LabelBisection = "dbbench.io/bisection"
	// LabelBisectionRound is the round number of a run, from 0 (the
	// endpoint round).
	LabelBisectionRound = "dbbench.io/bisection-round"
	// LabelRegressedRun names the BenchmarkRun whose Regressed=True verdict
	// created a bisection (spec.regression.bisect).
	LabelRegressedRun = "dbbench.io/regressed-run"
	// LabelSuite names the suite of the run whose verdict created a
	// bisection: a later run of the suite that finds the same change
	// points to that bisection instead of making another.
	LabelSuite = "dbbench.io/suite"
)

// Labels and annotations the schedule puts on the runs it creates.
const (
	// LabelSchedule names the BenchmarkSchedule that created a run.
	LabelSchedule = "dbbench.io/schedule"
	// AnnotationScheduledTime is the schedule time (RFC 3339, UTC) a run
	// was created for.
	AnnotationScheduledTime = "dbbench.io/scheduled-time"
)

// Annotations a bisection records on a round's run, so that the search
// can be recomputed from the runs alone: the indexes of the points it
// measures, those of them that are references, and the round's kind.
const (
	AnnotationBisectionPoints     = "dbbench.io/bisection-points"
	AnnotationBisectionReferences = "dbbench.io/bisection-references"
	AnnotationBisectionRoundKind  = "dbbench.io/bisection-round-kind"
)

// AckFinalizer keeps a published BenchmarkAck until its object is removed
// from the suite's object store and the suite's site regenerated without
// it: deleting the ack un-acknowledges the change there too.
const AckFinalizer = "dbbench.io/ack-published"
