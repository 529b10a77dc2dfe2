package matrix

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// TestExternalCells: an external database contributes one combination
// labelled ExternalVersion, repeated like any other, is the baseline's
// default version, and has no pre-flight pair and no image.
func TestExternalCells(t *testing.T) {
	run := &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "r", UID: "0123abcd-0000"},
		Spec: dbbenchv1alpha1.BenchmarkRunSpec{
			Databases: []dbbenchv1alpha1.DatabaseSpec{
				{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"11.8"}},
				{Name: "shop", Engine: dbbenchv1alpha1.EnginePostgres, External: &dbbenchv1alpha1.ExternalDatabase{Host: "pg"}},
			},
			Workload: dbbenchv1alpha1.WorkloadSpec{Repeats: 2},
		},
	}
	var names []string
	for _, c := range Expand(run) {
		names = append(names, c.Name)
		if c.External() != (c.Database.Name == "shop") {
			t.Errorf("cell %s: External() = %v", c.Name, c.External())
		}
		if c.External() && c.Image != "" {
			t.Errorf("cell %s has image %q; an external cell runs none", c.Name, c.Image)
		}
	}
	want := []string{"maria-11.8-default-r1", "shop-external-default-r1", "maria-11.8-default-r2", "shop-external-default-r2"}
	if !slices.Equal(names, want) {
		t.Errorf("cells %v, want %v", names, want)
	}
	var pairs []string
	for _, c := range PreflightCells(run) {
		pairs = append(pairs, c.Name)
	}
	if !slices.Equal(pairs, []string{"maria-11.8-default"}) {
		t.Errorf("pre-flight pairs %v, want only the started server's", pairs)
	}
	run.Spec.Baseline = &dbbenchv1alpha1.BaselineSpec{Database: "shop"}
	if got := BaselineName(run); got != "shop-external-default-r1" {
		t.Errorf("baseline %q, want shop-external-default-r1", got)
	}
}

// TestTemplatedCells: a templated database contributes one cell per version
// (its {version}), with no image of dbbench's and no pre-flight pair (its
// object's ready condition is the check); it is not external until the
// controller gives it the endpoint of its ready object.
func TestTemplatedCells(t *testing.T) {
	run := &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "r", UID: "0123abcd-0000"},
		Spec: dbbenchv1alpha1.BenchmarkRunSpec{
			Databases: []dbbenchv1alpha1.DatabaseSpec{
				{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"11.8"}},
				{Name: "cnpg", Engine: dbbenchv1alpha1.EnginePostgres, Versions: []string{"16", "17"},
					Template: &dbbenchv1alpha1.DatabaseTemplate{ReadyCondition: "Ready"}},
			},
		},
	}
	var names []string
	for _, c := range Expand(run) {
		names = append(names, c.Name)
		if c.Templated() != (c.Database.Name == "cnpg") || c.External() {
			t.Errorf("cell %s: Templated() = %v, External() = %v", c.Name, c.Templated(), c.External())
		}
		if c.Templated() && c.Image != "" {
			t.Errorf("cell %s has image %q; its object runs the server", c.Name, c.Image)
		}
	}
	if want := []string{"maria-11.8-default", "cnpg-16-default", "cnpg-17-default"}; !slices.Equal(names, want) {
		t.Errorf("cells %v, want %v", names, want)
	}
	var pairs []string
	for _, c := range PreflightCells(run) {
		pairs = append(pairs, c.Name)
	}
	if !slices.Equal(pairs, []string{"maria-11.8-default"}) {
		t.Errorf("pre-flight pairs %v, want only the started server's", pairs)
	}
}
