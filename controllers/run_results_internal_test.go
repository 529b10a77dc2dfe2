package controllers

import (
	"testing"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/results"
)

// The manifest copies a cell's phase as the API spells it, and its readers
// (the suite's site, the suite noise) count a cell at
// results.ManifestPhaseSucceeded: the two packages may not import each
// other, so this test holds the values together.
func TestManifestPhaseIsTheAPIsCellPhase(t *testing.T) {
	if got, want := string(dbbenchv1alpha1.CellSucceeded), results.ManifestPhaseSucceeded; got != want {
		t.Errorf("CellSucceeded is %q, the manifest's readers count %q", got, want)
	}
}
