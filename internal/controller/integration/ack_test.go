package integration_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
)

const validAckYAML = `
apiVersion: dbbench.io/v1alpha1
kind: BenchmarkAck
metadata:
  name: slow-commits
spec:
  suite: nightly
  run: night-5
  step: update-index
  threads: 1
  reason: durable commits are the new default
`

// The schema refuses a bad ack naming the field, and the scope (which
// change it acknowledges) cannot change; the reason and link can.
func TestAckValidation(t *testing.T) {
	ns := newNamespace(t)
	ok := parseRun(t, validAckYAML)
	ok.SetNamespace(ns)
	if err := k8sClient.Create(ctx, ok, client.DryRunAll); err != nil {
		t.Fatalf("valid ack refused: %v", err)
	}
	if dryRunSamples(t, ns, "benchmarkack_*.yaml") == 0 {
		t.Fatal("no BenchmarkAck samples")
	}
	for _, tt := range []struct {
		name   string
		mutate func(map[string]any)
		want   string
	}{
		{"no reason", func(s map[string]any) { delete(s, "reason") }, "spec.reason: Required value"},
		{"an empty reason", func(s map[string]any) { s["reason"] = "" }, "spec.reason"},
		{"no run", func(s map[string]any) { delete(s, "run") }, "spec.run: Required value"},
		{"a suite that is no suite name", func(s map[string]any) { s["suite"] = "Nightly Suite" }, "spec.suite"},
		{"zero threads", func(s map[string]any) { s["threads"] = 0 }, "spec.threads"},
		{"an unknown metric", func(s map[string]any) { s["metric"] = "Speed" }, "spec.metric"},
		{"an unknown resolution", func(s map[string]any) { s["resolution"] = "Ignored" }, "spec.resolution"},
		{"a link that is no URL", func(s map[string]any) { s["link"] = "jira/MDEV-1" }, "link: must be an http:// or https:// URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := parseRun(t, validAckYAML)
			a.SetNamespace(ns)
			tt.mutate(a.Object["spec"].(map[string]any))
			err := k8sClient.Create(ctx, a, client.DryRunAll)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	if err := k8sClient.Create(ctx, ok); err != nil {
		t.Fatal(err)
	}
	var a dbbenchv1alpha1.BenchmarkAck
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "slow-commits"}, &a); err != nil {
		t.Fatal(err)
	}
	if a.Spec.Resolution != dbbenchv1alpha1.AckAcknowledged {
		t.Errorf("resolution defaulted to %q", a.Spec.Resolution)
	}
	edit := a.DeepCopy()
	edit.Spec.Reason, edit.Spec.Link = "still expected", "https://jira.example/MDEV-1"
	if err := k8sClient.Update(ctx, edit, client.DryRunAll); err != nil {
		t.Errorf("editing the reason and link refused: %v", err)
	}
	for name, f := range map[string]func(*dbbenchv1alpha1.BenchmarkAck){
		"run":     func(a *dbbenchv1alpha1.BenchmarkAck) { a.Spec.Run = "night-6" },
		"step":    func(a *dbbenchv1alpha1.BenchmarkAck) { a.Spec.Step = "" },
		"threads": func(a *dbbenchv1alpha1.BenchmarkAck) { a.Spec.Threads = 4 },
		"cell":    func(a *dbbenchv1alpha1.BenchmarkAck) { a.Spec.Cell = "mariadb-11.8-default" },
	} {
		c := a.DeepCopy()
		f(c)
		if err := k8sClient.Update(ctx, c, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "immutable") {
			t.Errorf("changing %s: %v, want refused as immutable", name, err)
		}
	}
}

// ackFor is an ack of suite's change at run, at point-query@4 (the step
// the played agents report).
func ackFor(ns, name, suite, run string) *dbbenchv1alpha1.BenchmarkAck {
	return &dbbenchv1alpha1.BenchmarkAck{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: dbbenchv1alpha1.BenchmarkAckSpec{Suite: suite, Run: run, Step: "point-query", Threads: 4, Reason: "expected: the new default"}}
}

func waitAccepted(t *testing.T, ns, name string, want metav1.ConditionStatus) *metav1.Condition {
	t.Helper()
	var c *metav1.Condition
	eventually(t, "the ack's Accepted condition", func() string {
		var a dbbenchv1alpha1.BenchmarkAck
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &a); err != nil {
			return err.Error()
		}
		if c = meta.FindStatusCondition(a.Status.Conditions, dbbenchv1alpha1.AckConditionAccepted); c == nil || c.Status != want {
			return fmt.Sprintf("conditions %+v", a.Status.Conditions)
		}
		return ""
	})
	return c
}

// A confirmed slowdown of a ChangePoints suite is reported (night 6);
// once acknowledged, the next night's verdict does not report it again
// (Regressed=False, RegressionAcknowledged, the pair under acknowledged
// with the ack's name) though the change is still the latest; deleting
// the ack un-acknowledges it (night 8 reports it again). An ack naming a
// run the suite does not have is not accepted, and says so.
func TestChangePointVerdictSkipsAcknowledgedChanges(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	const suite = "nightly-ack"
	night := func(i int, scale float64) *dbbenchv1alpha1.BenchmarkRun {
		name := fmt.Sprintf("night-%d", i)
		r := minimalRun(ns, name)
		r.Spec.Suite = suite
		r.Spec.Workload.Steps = []string{"point-query"}
		r.Spec.Workload.Threads = []int32{4}
		r.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{Against: dbbenchv1alpha1.RegressAgainstChangePoints}
		if err := k8sClient.Create(ctx, r); err != nil {
			t.Fatalf("creating %s: %v", name, err)
		}
		driveCellsToCompletion(t, ns, name, scale)
		return kubetest.GetRun(t, k8sClient, ns, name)
	}
	verdict := func(r *dbbenchv1alpha1.BenchmarkRun) *metav1.Condition {
		return meta.FindStatusCondition(r.Status.Conditions, dbbenchv1alpha1.ConditionRegressed)
	}
	for i := 1; i <= 4; i++ {
		night(i, 1.0)
	}
	night(5, 0.8)
	r := night(6, 0.8)
	if c := verdict(r); c == nil || c.Status != metav1.ConditionTrue || r.Status.Regression.Regressed[0].Since != "night-5" {
		t.Fatalf("night 6: %+v %+v", c, r.Status.Regression)
	}

	bad := ackFor(ns, "typo", suite, "night-55")
	if err := k8sClient.Create(ctx, bad); err != nil {
		t.Fatal(err)
	}
	// The reason says what is missing; the spec says which.
	if c := waitAccepted(t, ns, "typo", metav1.ConditionFalse); c.Reason != dbbenchv1alpha1.AckReasonRunNotFound {
		t.Errorf("an ack of an unknown run: %+v", c)
	}
	step := ackFor(ns, "wrong-step", suite, "night-6")
	step.Spec.Step = "update-index"
	if err := k8sClient.Create(ctx, step); err != nil {
		t.Fatal(err)
	}
	if c := waitAccepted(t, ns, "wrong-step", metav1.ConditionFalse); c.Reason != dbbenchv1alpha1.AckReasonStepNotFound {
		t.Errorf("an ack of an unknown step: %+v", c)
	}

	if err := k8sClient.Create(ctx, ackFor(ns, "slow-on-purpose", suite, "night-6")); err != nil {
		t.Fatal(err)
	}
	waitAccepted(t, ns, "slow-on-purpose", metav1.ConditionTrue)
	r = night(7, 0.8)
	c := verdict(r)
	st := r.Status.Regression
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != dbbenchv1alpha1.ReasonRegressionAcknowledged ||
		st == nil || len(st.Regressed) != 0 || len(st.Acknowledged) != 1 || st.Acknowledged[0].Ack != "slow-on-purpose" || st.Acknowledged[0].Since != "night-5" ||
		st.Acknowledged[0].Resolution != dbbenchv1alpha1.AckAcknowledged {
		t.Fatalf("night 7 with the ack: %+v %+v", c, st)
	}

	if err := k8sClient.Delete(ctx, ackFor(ns, "slow-on-purpose", suite, "night-6")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the ack to go", func() string {
		var a dbbenchv1alpha1.BenchmarkAck
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "slow-on-purpose"}, &a); err == nil {
			return "still there"
		}
		return ""
	})
	r = night(8, 0.8)
	if c := verdict(r); c == nil || c.Status != metav1.ConditionTrue || len(r.Status.Regression.Acknowledged) != 0 {
		t.Fatalf("night 8 without the ack: %+v %+v", c, r.Status.Regression)
	}
}

// A slowdown that coincides with the image's digest changing behind the
// same reference (a re-pointed tag) and nothing else of the build is
// flagged as the environment's: Regressed=True with reason
// EnvironmentChanged, the pair environmentOnly with what changed, and no
// bisection although regression.bisect asks for one.
func TestChangePointVerdictFlagsAnEnvironmentOnlyChange(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	repointed := false
	podImageID = func(image string) string {
		if repointed {
			return imageIDOf(image + "-repointed")
		}
		return imageIDOf(image)
	}
	t.Cleanup(func() { podImageID = imageIDOf })
	night := func(i int, scale float64) *dbbenchv1alpha1.BenchmarkRun {
		name := fmt.Sprintf("night-%d", i)
		r := minimalRun(ns, name)
		r.Spec.Suite = "nightly-env"
		r.Spec.Databases[0].Versions = []string{"nightly"}
		r.Spec.Databases[0].Image = "reg.example/mariadb:nightly"
		r.Spec.Workload.Steps = []string{"point-query"}
		r.Spec.Workload.Threads = []int32{4}
		r.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{Against: dbbenchv1alpha1.RegressAgainstChangePoints,
			Bisect: &dbbenchv1alpha1.RegressionBisect{Good: &dbbenchv1alpha1.BisectionPoint{Image: "reg.example/mariadb:good"},
				Candidates: []dbbenchv1alpha1.BisectionPoint{{Image: "reg.example/mariadb:c1"}}}}
		if err := k8sClient.Create(ctx, r); err != nil {
			t.Fatalf("creating %s: %v", name, err)
		}
		driveCellsToCompletion(t, ns, name, scale)
		return kubetest.GetRun(t, k8sClient, ns, name)
	}
	for i := 1; i <= 4; i++ {
		night(i, 1.0)
	}
	repointed = true
	night(5, 0.8)
	r := night(6, 0.8)
	c := meta.FindStatusCondition(r.Status.Conditions, dbbenchv1alpha1.ConditionRegressed)
	st := r.Status.Regression
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != dbbenchv1alpha1.ReasonEnvironmentChanged || st == nil || len(st.Regressed) != 1 {
		t.Fatalf("night 6: %+v %+v", c, st)
	}
	rs := st.Regressed[0]
	if !rs.EnvironmentOnly || len(rs.CoincidesWith) != 1 || rs.CoincidesWith[0].Field != "image digest" {
		t.Errorf("night 6's pair %+v", rs)
	}
	// Not bisected because environmentOnly (checked above); the message
	// says so to people.
	if st.Bisection != "" || st.BisectionMessage == "" {
		t.Errorf("an environment-only change was bisected, or no message says why not: %q %q", st.Bisection, st.BisectionMessage)
	}
}
