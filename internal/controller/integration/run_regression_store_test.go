package integration_test

import (
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
)

// A GitOps suite prunes its old run objects; the verdict must still find
// them in the object store. The first run is uploaded and deleted from the
// cluster; the second, 10 % slower, is judged against it.
func TestRegressedVerdictReadsTheSuiteHistoryFromTheObjectStore(t *testing.T) {
	srv := startS3(t)
	ns := newNamespace(t)
	startManager(t, nil)
	newRun := func(name string) {
		s3RunWith(t, srv, ns, name, s3SecretKey, func(r *dbbenchv1alpha1.BenchmarkRun) {
			r.Spec.Suite = "pruned-history"
			r.Spec.Databases[0].Versions = []string{"10.11"}
			r.Spec.Workload.Threads = []int32{1, 4}
			r.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{MaxPValue: "0.01"}
		})
	}

	newRun("kept-in-s3")
	driveCellsToCompletion(t, ns, "kept-in-s3", 1.0)
	old := waitUpload(t, ns, "kept-in-s3", metav1.ConditionTrue, dbbenchv1alpha1.ReasonUploaded)
	if err := k8sClient.Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first run is gone from the cluster", func() string {
		var r dbbenchv1alpha1.BenchmarkRun
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "kept-in-s3"}, &r); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("still there (%v)", err)
		}
		return ""
	})

	newRun("slower")
	driveCellsToCompletion(t, ns, "slower", 0.9)
	var c *metav1.Condition
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c = meta.FindStatusCondition(kubetest.GetRun(t, k8sClient, ns, "slower").Status.Conditions, dbbenchv1alpha1.ConditionRegressed); c != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != dbbenchv1alpha1.ReasonRegressed {
		t.Fatalf("verdict %+v", c)
	}
	// kept-in-s3 is gone from the cluster (above), so a baseline of that
	// name came from the object store.
	st := kubetest.GetRun(t, k8sClient, ns, "slower").Status.Regression
	if st == nil || len(st.ComparedTo) != 1 || st.ComparedTo[0] != "kept-in-s3" || st.ComparedPairs != 2 ||
		len(st.Regressed) != 1 || st.Regressed[0].Step != "point-query" || st.Regressed[0].Threads != 4 || st.Regressed[0].ChangePercent != "-10.0" {
		t.Fatalf("regression status %+v", st)
	}
}
