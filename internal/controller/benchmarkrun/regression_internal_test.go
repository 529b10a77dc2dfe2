package benchmarkrun

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/runverdict"
)

func TestMergeHistory(t *testing.T) {
	at := func(minute int) metav1.Time { return metav1.NewTime(time.Date(2026, 11, 1, 0, minute, 0, 0, time.UTC)) }
	cluster := []runverdict.Run{{Name: "b", Finished: at(20)}, {Name: "d", Finished: at(40)}}
	remote := []runverdict.Run{
		{Name: "a", Finished: at(10), FromStore: true},
		{Name: "b", Finished: at(21), FromStore: true}, // in both: the cluster's wins
		{Name: "c", Finished: at(30), FromStore: true},
		{Name: "c2", Finished: at(30), FromStore: true}, // same time: by name
	}
	got := mergeHistory(cluster, remote)
	var names []string
	for _, r := range got {
		n := r.Name
		if r.FromStore {
			n += "*"
		}
		names = append(names, n)
	}
	if s := strings.Join(names, " "); s != "a* b c* c2* d" {
		t.Errorf("merged history %q, want %q", s, "a* b c* c2* d")
	}
}

func TestManifestSucceeded(t *testing.T) {
	cell := func(phase string) results.ManifestCell {
		return results.ManifestCell{Cell: results.Cell{Name: "x"}, Phase: phase}
	}
	tests := []struct {
		name  string
		cells []results.ManifestCell
		want  bool
	}{
		{"every cell succeeded", []results.ManifestCell{cell("Succeeded"), cell("Succeeded")}, true},
		{"one failed", []results.ManifestCell{cell("Succeeded"), cell("Failed")}, false},
		{"no cells", nil, false},
	}
	for _, tt := range tests {
		if got := manifestSucceeded(&results.Manifest{Cells: tt.cells}); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
