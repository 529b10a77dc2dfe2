package integration_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
)

// A suite whose runs carry regression.bisect: the run that regresses
// creates exactly one bisection (good from regression.bisect.good; bad
// this run's build, by the digest its database pod ran; judged on the
// regressed point-query@4), also after a manager restart; a run that does
// not regress creates none.
func TestRegressedRunCreatesItsBisection(t *testing.T) {
	ns := newNamespace(t)
	first := startManager(t, nil)
	candidates := []dbbenchv1alpha1.BisectionPoint{{Version: "11.8.1"}, {Image: "reg.example/mariadb@sha256:0123"}}
	newRun := func(name string) {
		r := minimalRun(ns, name)
		r.Spec.Suite = "nightly"
		r.Spec.Workload.Steps = []string{"point-query"}
		r.Spec.Workload.Threads = []int32{1, 4}
		r.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{Bisect: &dbbenchv1alpha1.RegressionBisect{
			Good: &dbbenchv1alpha1.BisectionPoint{Version: "11.8.0"}, Candidates: candidates, Parallelism: 2, MaxCells: 30,
		}}
		if err := k8sClient.Create(ctx, r); err != nil {
			t.Fatalf("creating %s: %v", name, err)
		}
	}
	bisections := func() []dbbenchv1alpha1.BenchmarkBisection {
		var list dbbenchv1alpha1.BenchmarkBisectionList
		if err := k8sClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatalf("listing bisections: %v", err)
		}
		return list.Items
	}

	newRun("night-1")
	driveCellsToCompletion(t, ns, "night-1", 1.0)
	newRun("night-2")
	driveCellsToCompletion(t, ns, "night-2", 1.0)
	if c := meta.FindStatusCondition(kubetest.GetRun(t, k8sClient, ns, "night-2").Status.Conditions, dbbenchv1alpha1.ConditionRegressed); c == nil || c.Status != metav1.ConditionFalse {
		t.Fatalf("night-2, as fast as night-1: %+v", c)
	}
	if got := bisections(); len(got) != 0 {
		t.Fatalf("runs that did not regress created %d bisections: %s", len(got), got[0].Name)
	}

	newRun("night-3")
	driveCellsToCompletion(t, ns, "night-3", 0.9)
	run := kubetest.GetRun(t, k8sClient, ns, "night-3")
	if !meta.IsStatusConditionTrue(run.Status.Conditions, dbbenchv1alpha1.ConditionRegressed) {
		t.Fatalf("night-3 did not regress: %+v", run.Status.Conditions)
	}
	check := func(when string) {
		t.Helper()
		got := bisections()
		if len(got) != 1 {
			t.Fatalf("%s: %d bisections, want 1", when, len(got))
		}
		b := got[0]
		if b.Name != "night-3-bisect" || !metav1.IsControlledBy(&b, run) || b.Labels[dbbenchv1alpha1.LabelRegressedRun] != "night-3" {
			t.Fatalf("%s: bisection %s, owners %+v, labels %v", when, b.Name, b.OwnerReferences, b.Labels)
		}
		s := b.Spec
		if s.RunRef == nil || s.RunRef.Name != "night-3" || s.RunRef.Database != "maria" || s.RunRef.Config != "default" ||
			s.Good.Version != "11.8.0" || s.Bad.Image != "mariadb@"+strings.SplitN(imageIDOf("mariadb:11.8"), "@", 2)[1] || len(s.Candidates) != 2 || s.Candidates[1].Image != candidates[1].Image ||
			fmt.Sprint(s.Judge.Steps) != "[point-query]" || fmt.Sprint(s.Judge.Threads) != "[4]" ||
			s.Parallelism != 2 || s.Repeats != 2 || s.MaxCells != 30 {
			t.Fatalf("%s: bisection spec %+v (runRef %+v)", when, s, s.RunRef)
		}
		if st := kubetest.GetRun(t, k8sClient, ns, "night-3").Status.Regression; st == nil || st.Bisection != "night-3-bisect" || st.BisectionMessage != "" {
			t.Fatalf("%s: run's regression status %+v", when, st)
		}
	}
	check("after the verdict")

	// A restarted manager reconciles the finished run again (and the
	// bisection's rounds): still one bisection.
	first.stop()
	startManager(t, nil)
	time.Sleep(2 * time.Second)
	check("after a manager restart")
	// The bisection resolves the run (runRef) and starts its endpoint
	// round: good and bad, as databases p0 and p3.
	eventually(t, "the bisection's endpoint round", func() string {
		var r dbbenchv1alpha1.BenchmarkRun
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "night-3-bisect-r0"}, &r); err != nil {
			return err.Error()
		}
		var got []string
		for _, d := range r.Spec.Databases {
			got = append(got, d.Name+"="+strings.Join(d.Versions, ","))
		}
		if fmt.Sprint(got) != "[p0=11.8.0 p3=image]" {
			return fmt.Sprintf("round 0 databases %v", got)
		}
		return ""
	})
}
