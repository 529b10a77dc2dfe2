// Package specs builds the Kubernetes objects of a BenchmarkRun's cells: pure
// functions from the spec (and a few observed facts, such as the database
// pod's IP) to objects, with no client, so they are unit-tested directly.
package specs

import (
	"fmt"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
)

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
	return map[string]string{dbbenchv1alpha1.LabelManagedBy: dbbenchv1alpha1.ManagedByValue, dbbenchv1alpha1.LabelRun: run.Name}
}

// CellLabels are the labels of a cell's children.
func CellLabels(run *dbbenchv1alpha1.BenchmarkRun, c matrix.Cell, role string) map[string]string {
	l := RunLabels(run)
	l[dbbenchv1alpha1.LabelCell] = c.ObjectBase
	l[dbbenchv1alpha1.LabelRole] = role
	return l
}

func attemptLabels(run *dbbenchv1alpha1.BenchmarkRun, c matrix.Cell, role string, attempt int32) map[string]string {
	l := CellLabels(run, c, role)
	l[dbbenchv1alpha1.LabelAttempt] = fmt.Sprint(attempt)
	if exclusive(run) {
		l[dbbenchv1alpha1.LabelExclusive] = labelTrue
	}
	return l
}

func exclusive(run *dbbenchv1alpha1.BenchmarkRun) bool {
	return run.Spec.Placement.Exclusive()
}
