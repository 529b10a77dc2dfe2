//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/specs"
)

// TestVolumeClaimsOnRealNodes: storage.volumeClaim and storage.log's
// volumeClaim on the local cluster's dynamic provisioner (local-path, the
// default class hack/cluster/up.sh installs): while the cell runs, both
// claims are bound to volumes on the database pod's node and hold the
// server's data directory and its redo log; when the cell ends, the claims
// and their volumes are gone, and so are the directories on the node.
func TestVolumeClaimsOnRealNodes(t *testing.T) {
	tier.Core(t)
	t.Parallel()
	var sc storagev1.StorageClass
	if err := k8sClient.Get(ctx, types.NamespacedName{Name: "local-path"}, &sc); err != nil {
		t.Fatalf("the local cluster has no StorageClass local-path (hack/cluster/up.sh installs it): %v", err)
	}
	ns := newNamespace(t, "claims")
	run := smallRun(ns, "claims", "10.11")
	run.Spec.Workload.Threads = []int32{2}
	run.Spec.Workload.ReadSeconds, run.Spec.Workload.WriteSeconds = 5, 5
	db := &run.Spec.Databases[0]
	db.Storage.VolumeClaim = &dbbenchv1alpha1.VolumeClaimSpec{StorageClassName: ptr.To("local-path"), Size: resource.MustParse("256Mi")}
	// The log's claim names no class: the cluster's default.
	db.Storage.Log = &dbbenchv1alpha1.LogVolumeSpec{VolumeClaim: &dbbenchv1alpha1.VolumeClaimSpec{Size: resource.MustParse("64Mi")}}
	createRun(t, run)

	// While the cell runs: both claims bound, on the database's node, with
	// the server's files in them.
	var paths []string
	eventually(t, 3*time.Minute, "the claims bound and the server's files in them", func() string {
		var pvcs corev1.PersistentVolumeClaimList
		if err := k8sClient.List(ctx, &pvcs, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		pods := dbPodsOf(t, ns)
		if len(pvcs.Items) != 2 || len(pods) != 1 || pods[0].Spec.NodeName == "" {
			return fmt.Sprintf("%d claims, %d database pods", len(pvcs.Items), len(pods))
		}
		node := pods[0].Spec.NodeName
		paths = paths[:0]
		for _, pvc := range pvcs.Items {
			if pvc.Status.Phase != corev1.ClaimBound {
				return fmt.Sprintf("claim %s is %s", pvc.Name, pvc.Status.Phase)
			}
			if got := ptr.Deref(pvc.Spec.StorageClassName, ""); got != "local-path" {
				return fmt.Sprintf("claim %s has class %q, want local-path (named, or the default)", pvc.Name, got)
			}
			var pv corev1.PersistentVolume
			if err := k8sClient.Get(ctx, types.NamespacedName{Name: pvc.Spec.VolumeName}, &pv); err != nil {
				return err.Error()
			}
			if on := volumeNode(&pv); on != node {
				return fmt.Sprintf("volume %s is on node %q, the database on %q", pv.Name, on, node)
			}
			dir := volumePath(&pv)
			want := "ibdata1" // the data directory
			if strings.Contains(pvc.Name, "-log-") {
				want = "ib_logfile0" // innodb_log_group_home_dir
			}
			if _, err := os.Stat(filepath.Join(dir, want)); err != nil {
				return fmt.Sprintf("volume %s (%s): %v", pv.Name, dir, err)
			}
			paths = append(paths, dir)
		}
		return ""
	})
	t.Logf("claims bound; the server's files in %v", paths)

	run = waitForRunFinished(t, ns, run.Name, runTimeout)
	requireSucceeded(t, run)
	// The cell's end deletes its claims; the class's reclaim policy
	// (Delete) then deletes their volumes and the provisioner's helper
	// removes the directories.
	eventually(t, 2*time.Minute, "the claims, volumes and directories gone", func() string {
		var pvcs corev1.PersistentVolumeClaimList
		if err := k8sClient.List(ctx, &pvcs, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		if len(pvcs.Items) > 0 {
			return fmt.Sprintf("%d claims left", len(pvcs.Items))
		}
		for _, dir := range paths {
			if _, err := os.Stat(dir); err == nil {
				return dir + " still exists"
			}
		}
		return ""
	})
}

// TestVolumeClaimOfAMissingClass: a claim whose storage class the cluster
// does not have ends the cell at once (StorageClassNotFound, not retried),
// naming the claim's spec field, and nothing of the cell is left.
func TestVolumeClaimOfAMissingClass(t *testing.T) {
	tier.Core(t)
	t.Parallel()
	ns := newNamespace(t, "noclass")
	run := smallRun(ns, "noclass", "10.11")
	run.Spec.Databases[0].Storage.VolumeClaim = &dbbenchv1alpha1.VolumeClaimSpec{StorageClassName: ptr.To("no-such-class"), Size: resource.MustParse("64Mi")}
	createRun(t, run)
	run = waitForRunFinished(t, ns, run.Name, 2*time.Minute)
	cs := run.Status.Cells[0]
	if run.Status.Phase != dbbenchv1alpha1.RunFailed || cs.Reason != dbbenchv1alpha1.ReasonStorageClassNotFound || cs.Attempts != 1 ||
		!strings.Contains(cs.Message, "spec.databases[0].storage.volumeClaim.storageClassName") {
		t.Fatalf("run %s, cell %s after %d attempt(s): %s: %s; want Failed, StorageClassNotFound at once, naming the field",
			run.Status.Phase, cs.Reason, cs.Attempts, cs.Reason, cs.Message)
	}
	eventually(t, time.Minute, "the cell's pod and claim gone", func() string { return claimsAndDBPodsLeft(t, ns) })
}

// claimsAndDBPodsLeft says how many claims and database pods are left in
// ns; "" when none.
func claimsAndDBPodsLeft(t *testing.T, ns string) string {
	var pvcs corev1.PersistentVolumeClaimList
	if err := k8sClient.List(ctx, &pvcs, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	if n, pods := len(pvcs.Items), len(dbPodsOf(t, ns)); n > 0 || pods > 0 {
		return fmt.Sprintf("%d claims, %d database pods", n, pods)
	}
	return ""
}

// dbPodsOf lists the namespace's database pods.
func dbPodsOf(t *testing.T, ns string) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := k8sClient.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{dbbenchv1alpha1.LabelRole: specs.RoleDatabase}); err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	return pods.Items
}

// volumeNode is the node a local volume is bound to (its required node
// affinity on kubernetes.io/hostname).
func volumeNode(pv *corev1.PersistentVolume) string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			if e.Key == corev1.LabelHostname && len(e.Values) == 1 {
				return e.Values[0]
			}
		}
	}
	return ""
}

// volumePath is a local-path volume's directory on its node (hostPath or
// local, as the provisioner's volumeType makes it); the nodes share this
// machine's filesystem.
func volumePath(pv *corev1.PersistentVolume) string {
	switch {
	case pv.Spec.HostPath != nil:
		return pv.Spec.HostPath.Path
	case pv.Spec.Local != nil:
		return pv.Spec.Local.Path
	}
	return ""
}

// TestVolumeClaimThatNeverBinds: a claim of a StorageClass that exists but
// whose provisioner does not answer (a CSI driver that is down, here a
// provisioner name nothing serves) stays Pending. That is the
// infrastructure's fault: the attempt ends VolumeClaimNotBound once
// timeouts.databaseReady passes, naming the claim, the field and the class,
// and is retried on a fresh claim; when the retries run out the cell fails
// with that reason, and no claim or pod is left. No server starts, so it
// costs about two databaseReady timeouts, in parallel.
func TestVolumeClaimThatNeverBinds(t *testing.T) {
	tier.Long(t)
	t.Parallel()
	ns := newNamespace(t, "unbound")
	class := &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: ns + "-unprovisioned", Labels: map[string]string{e2eLabel: "true"}},
		Provisioner: "e2e.dbbench.io/nobody",
	}
	if err := k8sClient.Create(ctx, class); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, class) })

	run := smallRun(ns, "unbound", "10.11")
	run.Spec.Databases[0].Storage.VolumeClaim = &dbbenchv1alpha1.VolumeClaimSpec{StorageClassName: ptr.To(class.Name), Size: resource.MustParse("64Mi")}
	run.Spec.Timeouts.DatabaseReady = &metav1.Duration{Duration: 20 * time.Second}
	run.Spec.Retry.MaxAttemptsPerCell = 2
	createRun(t, run)
	run = waitForRunFinished(t, ns, run.Name, 3*time.Minute)
	cs := run.Status.Cells[0]
	t.Logf("cell %s: %s: %s", cs.Name, cs.Reason, cs.Message)
	if run.Status.Phase != dbbenchv1alpha1.RunFailed || cs.Reason != dbbenchv1alpha1.ReasonVolumeClaimNotBound || cs.Attempts != 2 ||
		len(cs.RetryReasons) != 1 || cs.RetryReasons[0] != dbbenchv1alpha1.ReasonVolumeClaimNotBound {
		t.Fatalf("run %s, cell %s after %d attempt(s), retried for %v; want Failed, VolumeClaimNotBound after 2 attempts, retried once for it",
			run.Status.Phase, cs.Reason, cs.Attempts, cs.RetryReasons)
	}
	for _, w := range []string{"spec.databases[0].storage.volumeClaim", class.Name, "-a2"} {
		if !strings.Contains(cs.Message, w) {
			t.Errorf("message %q does not name %q", cs.Message, w)
		}
	}
	eventually(t, time.Minute, "the cell's pods and claims gone", func() string { return claimsAndDBPodsLeft(t, ns) })
}
