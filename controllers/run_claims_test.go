package controllers_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// storage.volumeClaim: an attempt's claims are created with its database
// pod and deleted with it when the cell ends, not left until the run is
// deleted (found on the local cluster's provisioner: a finished cell's
// volumes stayed bound on its node).
func TestCellClaimsGoWhenTheCellEnds(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	run := minimalRun(ns, "claims")
	run.Spec.Workload.Steps = []string{"point-query"}
	run.Spec.Databases[0].Storage.VolumeClaim = &dbbenchv1alpha1.VolumeClaimSpec{Size: resource.MustParse("1Gi")}
	run.Spec.Databases[0].Storage.Log = &dbbenchv1alpha1.LogVolumeSpec{VolumeClaim: &dbbenchv1alpha1.VolumeClaimSpec{Size: resource.MustParse("64Mi")}}
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
