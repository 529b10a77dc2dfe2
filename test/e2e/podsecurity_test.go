//go:build e2e

package e2e

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/tier"
)

// Pod Security Admission's namespace labels (the restricted level, at the
// cluster's own version of the standard).
const (
	psaEnforceLabel        = "pod-security.kubernetes.io/enforce"
	psaEnforceVersionLabel = "pod-security.kubernetes.io/enforce-version"
	psaRestricted          = "restricted"
)

// TestRestrictedNamespace: benchmark runs in a namespace that enforces the
// restricted Pod Security Standard succeed, for MariaDB and PostgreSQL: the
// database pod (server and collector sidecar) and the client Job's pod are
// all admitted and run as their images' non-root users. The test first
// checks that the namespace really refuses a privileged pod, so it fails
// when the cluster does not enforce the label instead of passing vacuously.
func TestRestrictedNamespace(t *testing.T) {
	tier.Core(t)
	t.Parallel()
	ns := newNamespace(t, "restricted")
	patch := []byte(`{"metadata":{"labels":{"` + psaEnforceLabel + `":"` + psaRestricted + `","` + psaEnforceVersionLabel + `":"latest"}}}`)
	if err := k8sClient.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("labelling namespace %s: %v", ns, err)
	}

	// A server-side dry run goes through admission and creates nothing.
	privileged := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "privileged"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "docker.io/dbbench/agent:dev",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
		}}},
	}
	err := k8sClient.Create(ctx, privileged, client.DryRunAll)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "PodSecurity") {
		t.Fatalf("a privileged pod in namespace %s (enforce=%s): got %v, want Forbidden by PodSecurity; the cluster does not enforce Pod Security Admission, so this test proves nothing", ns, psaRestricted, err)
	}
	t.Logf("a privileged pod is refused as expected: %v", err)

	maria := smallRun(ns, "restricted-mariadb", "11.8")
	maria.Spec.Workload.Steps = []string{"point-query", "update-index"}
	maria.Spec.Workload.Threads = []int32{1}

	pg := smallRun(ns, "restricted-postgres", "17")
	pg.Spec.Databases[0] = dbbenchv1alpha1.DatabaseSpec{
		Name: "postgres", Engine: dbbenchv1alpha1.EnginePostgres, Versions: []string{"17"},
		Configs: []dbbenchv1alpha1.ConfigVariant{{
			Name:   "small",
			Inline: ptr.To("shared_buffers = 64MB\nsynchronous_commit = off\n"),
		}},
	}
	// pgbench's select-only script too: the pgbench binary of the agent
	// image, as the restricted namespace's non-root user.
	pg.Spec.Workload.Steps = []string{"point-query", "update-index", "pgbench-select"}
	pg.Spec.Workload.Pgbench = &dbbenchv1alpha1.PgbenchSpec{Scale: 1}
	pg.Spec.Workload.Threads = []int32{1}

	for _, run := range []*dbbenchv1alpha1.BenchmarkRun{maria, pg} {
		createRun(t, run)
	}
	for _, run := range []*dbbenchv1alpha1.BenchmarkRun{maria, pg} {
		done := waitForRunFinished(t, ns, run.Name, runTimeout)
		requireSucceeded(t, done)
		for _, cs := range done.Status.Cells {
			requireAllSteps(t, done, cs, resultDocument(t, ns, cs), cellAttempt(t, cs))
		}
	}
}
