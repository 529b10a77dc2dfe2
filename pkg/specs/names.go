// Package specs builds the Kubernetes objects of a BenchmarkRun's cells: pure
// functions from the spec (and a few observed facts, such as the database
// pod's IP) to objects, with no client, so they are unit-tested directly.
package specs

import (
	"fmt"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
)

// Labels put on every child object. The run label lets the controller list a
// run's children from its cache; the cell and role labels drive placement.
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

// Roles of child objects.
const (
	RoleDatabase = "database"
	RoleClient   = "client"
	RoleConfig   = "config"
	RoleResult   = "result"
	RoleRunData  = "run-results"
)

// Container names.
const (
	DatabaseContainer = "database"
	AgentContainer    = "agent"
)

// Names of a cell's children. Attempt-scoped objects carry the attempt in
// their name so that a retry never waits for the old object to disappear.
func SecretName(c matrix.Cell) string          { return c.ObjectBase + "-creds" }
func ConfigMapName(c matrix.Cell) string       { return c.ObjectBase + "-config" }
func ResultConfigMapName(c matrix.Cell) string { return c.ObjectBase + "-result" }
func ServiceName(c matrix.Cell) string         { return c.ObjectBase + "-db" }
func DatabasePodName(c matrix.Cell, attempt int32) string {
	return fmt.Sprintf("%s-db-a%d", c.ObjectBase, attempt)
}
func ClientJobName(c matrix.Cell, attempt int32) string {
	return fmt.Sprintf("%s-client-a%d", c.ObjectBase, attempt)
}
func DataClaimName(c matrix.Cell, attempt int32) string {
	return fmt.Sprintf("%s-data-a%d", c.ObjectBase, attempt)
}
func LogClaimName(c matrix.Cell, attempt int32) string {
	return fmt.Sprintf("%s-log-a%d", c.ObjectBase, attempt)
}

// AgentServiceAccountName is the run's agent identity; its Role allows only
// get/update/patch of the run's result ConfigMaps.
func AgentServiceAccountName(run *dbbenchv1alpha1.BenchmarkRun) string {
	return run.Name + "-agent"
}

// RunResultsConfigMapName is the run-level results ConfigMap.
func RunResultsConfigMapName(run *dbbenchv1alpha1.BenchmarkRun) string {
	return run.Name + "-results"
}

// RunLabels are the labels of every child of a run.
func RunLabels(run *dbbenchv1alpha1.BenchmarkRun) map[string]string {
	return map[string]string{LabelManagedBy: ManagedByValue, LabelRun: run.Name}
}

// CellLabels are the labels of a cell's children.
func CellLabels(run *dbbenchv1alpha1.BenchmarkRun, c matrix.Cell, role string) map[string]string {
	l := RunLabels(run)
	l[LabelCell] = c.ObjectBase
	l[LabelRole] = role
	return l
}

func attemptLabels(run *dbbenchv1alpha1.BenchmarkRun, c matrix.Cell, role string, attempt int32) map[string]string {
	l := CellLabels(run, c, role)
	l[LabelAttempt] = fmt.Sprint(attempt)
	if exclusive(run) {
		l[LabelExclusive] = "true"
	}
	return l
}

func exclusive(run *dbbenchv1alpha1.BenchmarkRun) bool {
	e := run.Spec.Placement.ExclusiveNodes
	return e == nil || *e
}
