package integration_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/pkg/agentapi"
)

// storage.volumeClaim: an attempt's claims are created with its database
// pod and deleted with it when the cell ends, not left until the run is
// deleted (found on the local cluster's provisioner: a finished cell's
// volumes stayed bound on its node).
func TestCellClaimsGoWhenTheCellEnds(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	class := storageClass(t)
	run := minimalRun(ns, "claims")
	run.Spec.Workload.Steps = []string{"point-query"}
	run.Spec.Databases[0].Storage.VolumeClaim = &dbbenchv1alpha1.VolumeClaimSpec{StorageClassName: &class, Size: resource.MustParse("1Gi")}
	run.Spec.Databases[0].Storage.Log = &dbbenchv1alpha1.LogVolumeSpec{VolumeClaim: &dbbenchv1alpha1.VolumeClaimSpec{StorageClassName: &class, Size: resource.MustParse("64Mi")}}
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	claims := func() []string {
		var pvcs corev1.PersistentVolumeClaimList
		if err := k8sClient.List(ctx, &pvcs, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range pvcs.Items {
			if c.DeletionTimestamp == nil {
				out = append(out, c.Name)
			}
		}
		return out
	}
	eventually(t, "the cell's two claims", func() string {
		if got := claims(); len(got) != 2 {
			return fmt.Sprintf("claims %v", got)
		}
		return ""
	})
	driveUntil(t, ns, "claims", "the run's end", succeeded)
	eventually(t, "the claims gone with the cell", func() string {
		if got := claims(); len(got) > 0 {
			return fmt.Sprintf("claims %v left after the cell ended", got)
		}
		return ""
	})
}

// storageClass creates a StorageClass for the test (envtest's API server
// has none, and no provisioner: its claims stay Pending) and returns its
// name; it is deleted after the test.
func storageClass(t *testing.T) string {
	t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{GenerateName: "dbbench-test-"}, Provisioner: "example.com/none"}
	if err := k8sClient.Create(ctx, sc); err != nil {
		t.Fatalf("creating a storage class: %v", err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, sc) })
	return sc.Name
}

// A claim whose storage class does not exist ends the cell at once,
// StorageClassNotFound, not retried, the message naming the claim and the
// spec field; one whose class exists but never binds is the provisioner's
// failure once timeouts.databaseReady passes (VolumeClaimNotBound), and
// retried with a fresh claim.
func TestClaimsThatCannotBindEndTheCellNamingThem(t *testing.T) {
	ns := newNamespace(t)
	m := startManager(t, nil)
	class := storageClass(t)

	missing := minimalRun(ns, "noclass")
	missing.Spec.Workload.Steps = []string{"point-query"}
	missing.Spec.Databases[0].Storage.VolumeClaim = &dbbenchv1alpha1.VolumeClaimSpec{StorageClassName: &class, Size: resource.MustParse("1Gi")}
	missing.Spec.Databases[0].Storage.Log = &dbbenchv1alpha1.LogVolumeSpec{VolumeClaim: &dbbenchv1alpha1.VolumeClaimSpec{
		StorageClassName: ptr.To("no-such-class"), Size: resource.MustParse("64Mi")}}
	if err := k8sClient.Create(ctx, missing); err != nil {
		t.Fatal(err)
	}
	// Which claim, field and class the message names: TestClaimStates and
	// TestDeadlines.
	eventually(t, "the cell to fail at once", func() string {
		run := kubetest.GetRun(t, k8sClient, ns, missing.Name)
		c := onlyCell(run)
		if c == nil || c.Phase != dbbenchv1alpha1.CellFailed {
			return cellPhases(run)
		}
		if c.Reason != dbbenchv1alpha1.ReasonStorageClassNotFound || c.Attempts != 1 || run.Status.RetriesUsed != 0 {
			return fmt.Sprintf("reason %s after %d attempts (%d retries), want StorageClassNotFound at once: %s", c.Reason, c.Attempts, run.Status.RetriesUsed, c.Message)
		}
		return ""
	})

	unbound := minimalRun(ns, "unbound")
	unbound.Spec.Workload.Steps = []string{"point-query"}
	unbound.Spec.Timeouts.DatabaseReady = &metav1.Duration{Duration: time.Minute}
	unbound.Spec.Databases[0].Storage.VolumeClaim = &dbbenchv1alpha1.VolumeClaimSpec{StorageClassName: &class, Size: resource.MustParse("1Gi")}
	if err := k8sClient.Create(ctx, unbound); err != nil {
		t.Fatal(err)
	}
	eventually(t, "attempt 1", func() string { return ifNot(len(dbPods(t, ns, unbound.Name)) == 1) })
	// No provisioner: the claim stays Pending; time passes beyond the
	// timeout, and the agent's ConfigMap is touched to start a pass.
	m.clock.SetTime(m.clock.Now().Add(2 * time.Minute))
	cell := dbPods(t, ns, unbound.Name)[0].Labels[dbbenchv1alpha1.LabelCell]
	writeProgress(t, ns, cell+"-result", agentapi.Progress{Attempt: 0}, "")
	eventually(t, "attempt 2 after VolumeClaimNotBound", func() string {
		c := onlyCell(kubetest.GetRun(t, k8sClient, ns, unbound.Name))
		if c == nil || c.Attempts != 2 || c.Reason != dbbenchv1alpha1.ReasonVolumeClaimNotBound {
			return fmt.Sprintf("cell %+v", c)
		}
		return ""
	})
}

// A node lost under an attempt whose claim is bound there: the attempt is
// retried (NodeLost) on fresh claims of its own, which the scheduler may
// place on another node, and the lost attempt's claims are deleted with
// its pod: a volume on a lost node never holds the retry back.
func TestNodeLossRetriesOnFreshClaims(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	class := storageClass(t)
	run := minimalRun(ns, "lostclaim")
	run.Spec.Workload.Steps = []string{"point-query"}
	run.Spec.Databases[0].Storage.VolumeClaim = &dbbenchv1alpha1.VolumeClaimSpec{StorageClassName: &class, Size: resource.MustParse("1Gi")}
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	eventually(t, "attempt 1's pod", func() string { return ifNot(len(dbPods(t, ns, run.Name)) == 1) })
	pod := dbPods(t, ns, run.Name)[0]
	cell := pod.Labels[dbbenchv1alpha1.LabelCell]
	markPodReady(t, &pod, "node-1", "10.88.0.41")
	playStatus(t, client.ObjectKeyFromObject(&pod), func(fresh *corev1.Pod) {
		fresh.Status.Phase, fresh.Status.Reason, fresh.Status.Message = corev1.PodFailed, "NodeLost", "node node-1 is unreachable"
	})
	eventually(t, "attempt 2 on a claim of its own, attempt 1's claim deleted", func() string {
		c := onlyCell(kubetest.GetRun(t, k8sClient, ns, run.Name))
		if c == nil || c.Attempts != 2 || c.Reason != dbbenchv1alpha1.ReasonNodeLost {
			return fmt.Sprintf("cell %+v", c)
		}
		var pvcs corev1.PersistentVolumeClaimList
		if err := k8sClient.List(ctx, &pvcs, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		live := map[string]bool{}
		for _, p := range pvcs.Items {
			live[p.Name] = p.DeletionTimestamp == nil
		}
		if !live[cell+"-data-a2"] || live[cell+"-data-a1"] {
			return fmt.Sprintf("claims (name: not being deleted) %v, want %s-data-a2 only", live, cell)
		}
		return ""
	})
	driveUntil(t, ns, run.Name, "the run's end", succeeded)
}
