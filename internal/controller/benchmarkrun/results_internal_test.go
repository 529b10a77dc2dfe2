package benchmarkrun

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
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

// A cell's environment in the manifest names the digest of the image its
// client ran, from the client pod of the cell's last attempt (its Job keeps
// it): the agent cannot know its own image's digest. An earlier attempt's
// pod, or a cell whose client pod is gone, gives none.
func TestManifestRecordsTheClientImageDigest(t *testing.T) {
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	run, cell := oneCellRun(now, 2)
	clientPod := func(attempt int32, digest string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("client-a%d", attempt), Labels: map[string]string{
				dbbenchv1alpha1.LabelCell: cell.ObjectBase, dbbenchv1alpha1.LabelRole: specs.RoleClient,
				dbbenchv1alpha1.LabelAttempt: fmt.Sprint(attempt)}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: specs.AgentContainer,
				ImageID: "docker.io/dbbench/agent@" + digest}}},
		}
	}
	const first, last = "sha256:1111111111111111111111111111111111111111111111111111111111111111", "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	for _, tt := range []struct {
		name string
		pods []*corev1.Pod
		want string
	}{
		{"the last attempt's client", []*corev1.Pod{clientPod(1, first), clientPod(2, last)}, last},
		{"only an earlier attempt's client", []*corev1.Pod{clientPod(1, first)}, ""},
		{"no client pod", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &runPass{r: &Reconciler{KubernetesVersion: "v1.36.3"}, run: run.DeepCopy(), now: now,
				kids: children{pods: map[string]*corev1.Pod{}}}
			for _, pod := range tt.pods {
				p.kids.pods[pod.Name] = pod
			}
			m := p.manifest([]matrix.Cell{cell})
			e := m.Cells[0].Environment
			if e == nil || e.ClientImageDigest != tt.want {
				t.Errorf("environment %+v, want clientImageDigest %q", e, tt.want)
			}
		})
	}
}
