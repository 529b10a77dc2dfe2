package benchmarkrun

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/specs"
)

// The database container pulls through the operator's database image
// registry; the collector sidecar (the agent's image, set by its own flag)
// and the cell's recorded image do not change.
func TestDatabasePodPullsThroughTheDatabaseImageRegistry(t *testing.T) {
	const agent = "example.test/dbbench/agent:test"
	tests := []struct {
		name, specImage, registry, wantDB string
	}{
		{"no registry: the official image", "", "", "mariadb:10.11"},
		{"registry: the official image from the mirror", "", "127.0.0.1:5000", "127.0.0.1:5000/library/mariadb:10.11"},
		{"registry: a Docker Hub image the spec names", "docker.io/library/mariadb:{version}", "mirror.example/hub", "mirror.example/hub/library/mariadb:10.11"},
		{"registry: another registry's image is left alone", "quay.io/org/mariadb:{version}", "127.0.0.1:5000", "quay.io/org/mariadb:10.11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := &dbbenchv1alpha1.BenchmarkRun{
				ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", UID: "u-1"},
				Spec: dbbenchv1alpha1.BenchmarkRunSpec{Databases: []dbbenchv1alpha1.DatabaseSpec{{
					Name: "db", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"10.11"}, Image: tt.specImage,
				}}},
			}
			cells := matrix.Expand(run)
			if len(cells) != 1 {
				t.Fatalf("matrix.Expand: %d cells, want 1", len(cells))
			}
			p := &runPass{r: &Reconciler{AgentImage: agent, DatabaseImageRegistry: tt.registry}, run: run}
			pod := p.databasePod(cells[0], 1)
			images := map[string]string{}
			for _, c := range pod.Spec.Containers {
				images[c.Name] = c.Image
			}
			if got := images[specs.DatabaseContainer]; got != tt.wantDB {
				t.Errorf("database container image = %q, want %q", got, tt.wantDB)
			}
			if got := images[specs.CollectorContainer]; got != agent {
				t.Errorf("collector container image = %q, want the agent image %q unchanged", got, agent)
			}
			if want := "mariadb:10.11"; tt.specImage == "" && cells[0].Image != want {
				t.Errorf("cell image = %q, want %q (the spec's, not the mirror's)", cells[0].Image, want)
			}
		})
	}
}
