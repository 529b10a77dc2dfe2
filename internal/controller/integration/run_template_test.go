package integration_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/specs"
)

// templateRun creates, per cell, a Deployment of the cell's MariaDB version
// (envtest runs no Deployment controller: the tests write its status), ready
// when Available is True, reached at {name}-rw:3307 with Secret {name}-app.
func templateRun(t *testing.T, ns, name string, object map[string]any, readyTimeout time.Duration) *dbbenchv1alpha1.BenchmarkRun {
	t.Helper()
	raw, err := json.Marshal(object)
	if err != nil {
		t.Fatal(err)
	}
	run := minimalRun(ns, name)
	run.Spec.Databases[0] = dbbenchv1alpha1.DatabaseSpec{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"10.11"},
		Template: &dbbenchv1alpha1.DatabaseTemplate{
			Object:         runtime.RawExtension{Raw: raw},
			ReadyCondition: "Available",
			ReadyTimeout:   &metav1.Duration{Duration: readyTimeout},
			Endpoint: dbbenchv1alpha1.TemplateEndpoint{Host: "{name}-rw", Port: 3307,
				CredentialsSecret: dbbenchv1alpha1.CredentialsSecretRef{Name: "{name}-app"}},
		}}
	run.Spec.Workload.Steps = []string{"point-query"}
	return run
}

// mariadbDeployment is a template object: a Deployment of mariadb:{version}.
func mariadbDeployment() map[string]any {
	labels := map[string]any{"app": "templated-db"}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"labels": map[string]any{"team": "db"}},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "mariadb", "image": "mariadb:{version}"}}},
			},
		},
	}
}

// templatedObject waits for the run's one templated object and returns it.
func templatedObject(t *testing.T, ns, run string) appsv1.Deployment {
	t.Helper()
	var dep appsv1.Deployment
	eventually(t, "the templated Deployment", func() string {
		var list appsv1.DeploymentList
		if err := k8sClient.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels(map[string]string{dbbenchv1alpha1.LabelRun: run, dbbenchv1alpha1.LabelRole: specs.RoleTarget})); err != nil {
			return err.Error()
		}
		if len(list.Items) != 1 {
			return fmt.Sprintf("%d Deployments", len(list.Items))
		}
		dep = list.Items[0]
		return ""
	})
	return dep
}

// setAvailable writes the Deployment's Available condition, as its
// controller would.
func setAvailable(t *testing.T, dep *appsv1.Deployment, status corev1.ConditionStatus) {
	t.Helper()
	eventuallyNoConflict(t, func() error {
		var cur appsv1.Deployment
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: dep.Namespace, Name: dep.Name}, &cur); err != nil {
			return err
		}
		cur.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: status,
			LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now(), Reason: "Test"}}
		return k8sClient.Status().Update(ctx, &cur)
	})
}

// TestTemplateTargetLifecycle: a templated cell creates its object from the
// template with {version} and {name} replaced, owned by the run, and nothing
// else until the object is ready; then it runs as an external cell at the
// endpoint read from the template (client Job only, host, port and Secret
// with {name} replaced), and when it ends the object is deleted.
func TestTemplateTargetLifecycle(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	run := templateRun(t, ns, "tpl", mariadbDeployment(), 10*time.Minute)
	statuses := watchRunStatuses(t, ns, run.Name)
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	dep := templatedObject(t, ns, run.Name)
	run = kubetest.GetRun(t, k8sClient, ns, run.Name)
	c := matrix.Expand(run)[0]
	if dep.Name != specs.TemplateObjectName(c) {
		t.Errorf("object %s, want %s", dep.Name, specs.TemplateObjectName(c))
	}
	if img := dep.Spec.Template.Spec.Containers[0].Image; img != "mariadb:10.11" {
		t.Errorf("image %q, want {version} replaced: mariadb:10.11", img)
	}
	if dep.Labels["team"] != "db" || dep.Labels[dbbenchv1alpha1.LabelCell] != c.ObjectBase {
		t.Errorf("labels %v, want the template's and the cell's", dep.Labels)
	}
	if !metav1.IsControlledBy(&dep, run) {
		t.Errorf("owner references %+v, want the run as controller", dep.OwnerReferences)
	}
	waitRun(t, ns, run.Name, "the cell Starting with its target", func(r *dbbenchv1alpha1.BenchmarkRun) string {
		cs := onlyCell(r)
		if cs == nil || cs.Phase != dbbenchv1alpha1.CellStarting || cs.Target == nil || cs.Target.Name != dep.Name || cs.Target.Kind != "Deployment" {
			return fmt.Sprintf("cells %s", cellPhases(r))
		}
		return ""
	})
	// Not ready: no attempt, no Job, however many passes.
	setAvailable(t, &dep, corev1.ConditionFalse)
	time.Sleep(2 * time.Second)
	if jobs := kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name}); len(jobs) != 0 {
		t.Fatalf("%d Jobs before the object is ready", len(jobs))
	}

	setAvailable(t, &dep, corev1.ConditionTrue)
	var job batchv1.Job
	eventually(t, "the cell's client Job", func() string {
		jobs := kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name})
		if len(jobs) != 1 {
			return fmt.Sprintf("%d Jobs", len(jobs))
		}
		job = jobs[0]
		return ""
	})
	if job.Name != specs.ClientJobName(c, 1) {
		t.Errorf("Job %s, want %s", job.Name, specs.ClientJobName(c, 1))
	}
	env := envByName(job.Spec.Template.Spec.Containers[0])
	if got, want := env[agentapi.EnvHost].Value, dep.Name+"-rw"; got != want {
		t.Errorf("%s = %q, want %q", agentapi.EnvHost, got, want)
	}
	if ref := env[agentapi.EnvUser].ValueFrom; ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != dep.Name+"-app" {
		t.Errorf("%s from %+v, want Secret %s-app", agentapi.EnvUser, ref, dep.Name)
	}
	if pods := dbPods(t, ns, run.Name); len(pods) != 0 {
		t.Errorf("%d database pods; a templated cell's server is its object's", len(pods))
	}
	var cm corev1.ConfigMap
	if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: specs.ConfigMapName(c)}, &cm); err != nil {
		t.Fatal(err)
	}
	var p agentapi.Task
	if err := json.Unmarshal([]byte(cm.Data[agentapi.ConfigKeyTask]), &p); err != nil {
		t.Fatal(err)
	}
	if p.Server.External == nil || p.Server.External.Endpoint != dep.Name+"-rw" || p.Server.Port != 3307 || p.Cell.Version != "10.11" {
		t.Errorf("plan server %+v (external %+v), want %s-rw:3307, version 10.11", p.Server, p.Server.External, dep.Name)
	}

	agentCompletes(t, ns, &job, 1)
	// The first terminal status already records the object's deletion,
	// and nothing changes after it (the e2e suite once read a Succeeded
	// run whose target was deleted a pass later).
	final := statuses.finalStaysFinal(t, 2*time.Second)
	if final.Phase != dbbenchv1alpha1.RunSucceeded || len(final.Cells) != 1 {
		t.Fatalf("first terminal status: phase %s, %d cells, want Succeeded, 1", final.Phase, len(final.Cells))
	}
	if tg := final.Cells[0].Target; tg == nil || tg.ReadyTime == nil || tg.Host != dep.Name+"-rw" || tg.Port != 3307 || !tg.Deleted {
		t.Errorf("status target %+v in the first terminal status, want ready at %s-rw:3307 and deleted", tg, dep.Name)
	}
	err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: dep.Name}, &appsv1.Deployment{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("templated Deployment after the cell: %v, want deleted", err)
	}
}

// TestTemplateTargetFailures: a cell whose object is never ready fails with
// TemplateNotReady once readyTimeout has passed (and its object goes); one
// whose object the API server refuses fails with TemplateRejected; neither
// is retried.
func TestTemplateTargetFailures(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Now())
	startManager(t, clock)
	cases := []struct {
		name       string
		object     map[string]any
		neverReady bool
		want       dbbenchv1alpha1.FailureReason
	}{
		{"never ready", mariadbDeployment(), true, dbbenchv1alpha1.ReasonTemplateNotReady},
		{"unknown kind", map[string]any{"apiVersion": "example.test/v1", "kind": "NoSuchDatabase", "spec": map[string]any{}},
			false, dbbenchv1alpha1.ReasonTemplateRejected},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			run := templateRun(t, ns, "tpl", tc.object, time.Minute)
			statuses := watchRunStatuses(t, ns, run.Name)
			if err := k8sClient.Create(ctx, run); err != nil {
				t.Fatal(err)
			}
			var dep appsv1.Deployment
			if tc.neverReady {
				dep = templatedObject(t, ns, run.Name)
				setAvailable(t, &dep, corev1.ConditionFalse)
				clock.SetTime(clock.Now().Add(2 * time.Minute))
			}
			final := waitRun(t, ns, run.Name, "the cell to fail", func(r *dbbenchv1alpha1.BenchmarkRun) string {
				cs := onlyCell(r)
				if cs == nil || cs.Phase != dbbenchv1alpha1.CellFailed {
					return fmt.Sprintf("cells %s", cellPhases(r))
				}
				return ""
			})
			cs := onlyCell(final)
			if cs.Reason != tc.want || cs.Attempts > 0 {
				t.Errorf("reason %q after %d attempts (%s), want %q and no attempt", cs.Reason, cs.Attempts, cs.Message, tc.want)
			}
			if jobs := kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name}); len(jobs) != 0 {
				t.Errorf("%d Jobs; a cell whose target never came has none", len(jobs))
			}
			first := statuses.finalStaysFinal(t, 2*time.Second)
			if tg := first.Cells[0].Target; tc.neverReady && (tg == nil || !tg.Deleted) {
				t.Errorf("status target %+v in the first terminal status, want deleted", tg)
			}
			if tc.neverReady {
				eventually(t, "the object deleted", func() string {
					err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: dep.Name}, &appsv1.Deployment{})
					if !apierrors.IsNotFound(err) {
						return fmt.Sprintf("get: %v", err)
					}
					return ""
				})
			}
		})
	}
}
