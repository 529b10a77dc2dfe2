package integration_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/specs"
)

// externalRun benchmarks a database dbbench does not start, with the
// pre-flight on (the default): it has nothing to check there.
func externalRun(ns, name string) *dbbenchv1alpha1.BenchmarkRun {
	run := minimalRun(ns, name)
	run.Spec.Preflight = dbbenchv1alpha1.PreflightSpec{}
	run.Spec.Databases[0] = dbbenchv1alpha1.DatabaseSpec{Name: "shop", Engine: dbbenchv1alpha1.EnginePostgres,
		External: &dbbenchv1alpha1.ExternalDatabase{Host: "pg.shop", Port: 6432, Database: "orders",
			CredentialsSecret: dbbenchv1alpha1.CredentialsSecretRef{Name: "shop-db", UserKey: "user", PasswordKey: "pass"}}}
	run.Spec.Workload.Steps = []string{"point-query"}
	return run
}

// envByName indexes a container's environment.
func envByName(c corev1.Container) map[string]corev1.EnvVar {
	out := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		out[e.Name] = e
	}
	return out
}

// TestExternalCellHasAClientJobOnly: an external target's cell creates no
// database pod, Service, cell Secret or claim and no pre-flight pair; its
// client Job connects to the target's host with the user's Secret, and its
// plan names the endpoint and the agent's own database but no credential.
func TestExternalCellHasAClientJobOnly(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, nil)
	run := externalRun(ns, "ext")
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	eventually(t, "the cell's client Job", func() string {
		jobs := kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRun: run.Name})
		if len(jobs) != 1 {
			return fmt.Sprintf("%d Jobs", len(jobs))
		}
		job = jobs[0]
		return ""
	})
	run = kubetest.GetRun(t, k8sClient, ns, run.Name)
	cells := matrix.Expand(run)
	if len(cells) != 1 || cells[0].Name != "shop-external-default" {
		t.Fatalf("cells %+v, want one named shop-external-default", cells)
	}
	c := cells[0]
	if job.Name != specs.ClientJobName(c, 1) {
		t.Errorf("Job %s, want the cell's first attempt %s", job.Name, specs.ClientJobName(c, 1))
	}
	if pods := dbPods(t, ns, run.Name); len(pods) != 0 {
		t.Errorf("%d database pods; an external cell has none", len(pods))
	}
	for name, obj := range map[string]client.Object{specs.ServiceName(c): &corev1.Service{}, specs.SecretName(c): &corev1.Secret{}} {
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s: got %v, want not found", obj, name, err)
		}
	}

	if aff := job.Spec.Template.Spec.Affinity; aff != nil && aff.PodAffinity != nil {
		// The default clientNode (SameNode) would require a pod that never
		// exists: the Job would stay unschedulable.
		t.Errorf("client Job has pod affinity %+v; an external cell has no database pod to follow", aff.PodAffinity)
	}
	env := envByName(job.Spec.Template.Spec.Containers[0])
	if got := env[agentapi.EnvHost].Value; got != "pg.shop" {
		t.Errorf("%s = %q, want the target's host", agentapi.EnvHost, got)
	}
	for name, key := range map[string]string{agentapi.EnvUser: "user", agentapi.EnvPassword: "pass"} {
		ref := env[name].ValueFrom
		if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != "shop-db" || ref.SecretKeyRef.Key != key {
			t.Errorf("%s from %+v, want Secret shop-db key %s", name, ref, key)
		}
	}
	for _, name := range []string{agentapi.EnvAdminUser, agentapi.EnvAdminPassword} {
		if _, ok := env[name]; ok {
			t.Errorf("%s is set: an external target has no admin account of dbbench's", name)
		}
	}
	if got := env[agentapi.EnvCollectorURL].Value; got != "" {
		t.Errorf("%s = %q, want none beside a server dbbench did not start", agentapi.EnvCollectorURL, got)
	}

	var cm corev1.ConfigMap
	if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: specs.ConfigMapName(c)}, &cm); err != nil {
		t.Fatal(err)
	}
	raw := cm.Data[agentapi.ConfigKeyTask]
	var p agentapi.Task
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("plan invalid: %v", err)
	}
	ext := p.Server.External
	if ext == nil || ext.Endpoint != "pg.shop" || ext.ConnectDatabase != "orders" || p.Server.Port != 6432 {
		t.Errorf("plan server %+v (external %+v), want endpoint pg.shop:6432 via database orders", p.Server, ext)
	}
	if want := specs.OwnDatabaseName(run, c); p.Server.Database != want || !strings.HasPrefix(want, "dbbench_") {
		t.Errorf("plan server.database %q, want the agent's own %q", p.Server.Database, want)
	}
	if strings.Contains(raw, "shop-db") || strings.Contains(strings.ToLower(raw), "password") {
		t.Errorf("the plan mentions the credentials: %s", raw)
	}

	agentCompletes(t, ns, &job, 1)
	waitRun(t, ns, run.Name, "the run to succeed", func(r *dbbenchv1alpha1.BenchmarkRun) string {
		if r.Status.Phase != dbbenchv1alpha1.RunSucceeded {
			return fmt.Sprintf("phase %s, cells %s", r.Status.Phase, cellPhases(r))
		}
		return ""
	})
	if pods := dbPods(t, ns, run.Name); len(pods) != 0 {
		t.Errorf("%d database pods (pre-flight pairs included); want none", len(pods))
	}
}
