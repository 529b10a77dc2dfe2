//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/specs"
)

// envCNPG says CloudNativePG is installed on the cluster (hack/test-e2e.sh
// runs hack/operators.sh cnpg on the local cluster and sets it). Without it
// the CloudNativePG tests skip: on another cluster the operator is the
// user's to install.
const envCNPG = "DBBENCH_E2E_CNPG"

// cnpgClusterGVK is CloudNativePG's Cluster.
var cnpgClusterGVK = schema.GroupVersionKind{Group: "postgresql.cnpg.io", Version: "v1", Kind: "Cluster"}

// cnpgImage is the operand image hack/operators.sh loads, one tag per
// PostgreSQL major version (the operator reads the version from the tag).
const cnpgImage = "docker.io/dbbench/cnpg-postgresql:"

func requireCNPG(t *testing.T) {
	t.Helper()
	if os.Getenv(envCNPG) == "" {
		t.Skipf("%s is not set: CloudNativePG is not installed (hack/operators.sh cnpg)", envCNPG)
	}
}

// cnpgSample is the sample users start from: a CloudNativePG Cluster per
// cell (config/samples/benchmarkrun_template.yaml). The tests run it.
const cnpgSample = "../../config/samples/benchmarkrun_template.yaml"

// cnpgRun is the sample run in ns, changed only where this machine or a
// test's time needs it:
//   - versions (the majors whose operand images hack/operators.sh loads) and
//     imageName (those images: ghcr.io cannot be pulled here);
//   - a 1 Gi claim (of the default class, the local-path provisioner);
//   - the catalog's short test settings: the sample's steps at 3 s, one
//     thread, one repeat, small tables, pgbench scale 1;
//   - readyTimeout, when the test sets one.
//
// The template's bootstrap, ready condition and endpoint (the read-write
// Service and the operator's app Secret) are the sample's. edit changes the
// Cluster's spec last.
func cnpgRun(t *testing.T, ns, name string, versions []string, readyTimeout time.Duration,
	edit func(spec map[string]any)) *dbbenchv1alpha1.BenchmarkRun {
	t.Helper()
	text, err := os.ReadFile(cnpgSample)
	if err != nil {
		t.Fatal(err)
	}
	var sample dbbenchv1alpha1.BenchmarkRun
	if err := yaml.UnmarshalStrict(text, &sample); err != nil {
		t.Fatalf("%s: %v", cnpgSample, err)
	}
	db := sample.Spec.Databases[0]
	if db.Template == nil {
		t.Fatalf("%s: databases[0] has no template", cnpgSample)
	}
	var obj map[string]any
	if err := json.Unmarshal(db.Template.Object.Raw, &obj); err != nil {
		t.Fatal(err)
	}
	spec, _ := obj["spec"].(map[string]any)
	if obj["kind"] != cnpgClusterGVK.Kind || spec == nil {
		t.Fatalf("%s: the template is not a Cluster with a spec", cnpgSample)
	}
	spec["imageName"] = cnpgImage + specs.PlaceholderVersion
	spec["storage"] = map[string]any{"size": "1Gi"}
	if edit != nil {
		edit(spec)
	}
	if db.Template.Object.Raw, err = json.Marshal(obj); err != nil {
		t.Fatal(err)
	}
	if readyTimeout > 0 {
		db.Template.ReadyTimeout = &metav1.Duration{Duration: readyTimeout}
	}
	db.Versions = versions

	run := smallRun(ns, name)
	run.Spec.Databases[0] = db
	run.Spec.Workload.Steps = sample.Spec.Workload.Steps
	run.Spec.Workload.Pgbench = &dbbenchv1alpha1.PgbenchSpec{Scale: 1}
	run.Spec.Workload.Threads = []int32{1}
	return run
}

// listCNPGClusters lists the namespace's Clusters.
func listCNPGClusters(ns string) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(cnpgClusterGVK.GroupVersion().WithKind("ClusterList"))
	if err := k8sClient.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// cnpgLeftovers says what of the operator's is left in ns: Clusters and
// claims (a Cluster's claims go with it); "" when nothing.
func cnpgLeftovers(ns string) string {
	clusters, err := listCNPGClusters(ns)
	if err != nil {
		return err.Error()
	}
	var pvcs corev1.PersistentVolumeClaimList
	if err := k8sClient.List(ctx, &pvcs, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	if len(clusters)+len(pvcs.Items) > 0 {
		return fmt.Sprintf("%d Clusters, %d claims", len(clusters), len(pvcs.Items))
	}
	return ""
}

// TestCloudNativePG benchmarks two PostgreSQL versions run by a real
// CloudNativePG operator (hack/operators.sh cnpg): per cell, a Cluster
// created from the template, ready on the operator's Ready condition with
// its data on a dynamically provisioned claim, benchmarked through the
// operator's read-write Service with the operator's generated app Secret,
// then deleted with its claim. No database pod of dbbench's runs.
func TestCloudNativePG(t *testing.T) {
	tier.Long(t)
	requireCNPG(t)
	t.Parallel()
	ns := newNamespace(t, "cnpg")
	run := cnpgRun(t, ns, "cnpg", []string{"15", "17"}, 0, nil)
	createRun(t, run)

	// While the first cell runs: its Cluster's instance keeps PGDATA on a
	// bound claim of the default class.
	eventually(t, 8*time.Minute, "a Cluster's PGDATA on a bound local-path claim", func() string {
		var pvcs corev1.PersistentVolumeClaimList
		if err := k8sClient.List(ctx, &pvcs, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		for _, c := range pvcs.Items {
			if c.Status.Phase == corev1.ClaimBound && c.Spec.StorageClassName != nil && *c.Spec.StorageClassName == "local-path" &&
				c.Labels["cnpg.io/pvcRole"] == "PG_DATA" {
				return ""
			}
		}
		return fmt.Sprintf("%d claims, none a bound PG_DATA claim of local-path", len(pvcs.Items))
	})

	run = waitForRunFinished(t, ns, run.Name, 15*time.Minute)
	requireSucceeded(t, run)
	// The first terminal status records every cell's Cluster deleted
	// (docs/design.md, "A finished run's status is final").
	if len(run.Status.Cells) != 2 {
		t.Fatalf("cells %s, want two (15, 17)", runSummary(run))
	}
	for _, cs := range run.Status.Cells {
		major := cs.Version
		tg := cs.Target
		if tg == nil || tg.Kind != cnpgClusterGVK.Kind || tg.ReadyTime == nil || !tg.Deleted || tg.Host != tg.Name+"-rw" ||
			tg.CredentialsSecret != tg.Name+"-app" {
			t.Errorf("cell %s: target %+v, want a Cluster, ready, reached at <name>-rw with <name>-app, deleted", cs.Name, tg)
			continue
		}
		requireExternalResults(t, ns, cs, tg.Host, func(v string) bool { return strings.HasPrefix(v, major+".") })
		doc := resultDocument(t, ns, cs)
		var steps []string
		for _, s := range doc.Steps {
			steps = append(steps, s.Step)
		}
		if !strings.Contains(strings.Join(steps, " "), "pgbench-tpcb") {
			t.Errorf("cell %s: steps %v, want the sample's pgbench-tpcb among them", cs.Name, steps)
		}
	}
	if pods := kubetest.ListPods(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRole: specs.RoleDatabase}); len(pods) != 0 {
		t.Errorf("%d database pods of dbbench's; the operator runs the servers", len(pods))
	}
	eventually(t, 2*time.Minute, "the Clusters and their claims deleted", func() string { return cnpgLeftovers(ns) })
}

// TestCloudNativePGBadTemplates: what the operator refuses and what never
// becomes ready end the cell with a reason naming the object and field, not
// retried, and leave nothing behind.
//   - The operator's webhook refuses a Cluster whose image tag does not give
//     a PostgreSQL version ("latest"): TemplateRejected, the webhook's own
//     message naming spec.imageName.
//   - A Cluster whose claim names a StorageClass that does not exist never
//     becomes ready: TemplateNotReady after readyTimeout, naming the
//     condition and the field.
func TestCloudNativePGBadTemplates(t *testing.T) {
	tier.Long(t)
	requireCNPG(t)
	cases := []struct {
		name        string
		edit        func(spec map[string]any)
		timeout     time.Duration
		reason      dbbenchv1alpha1.FailureReason
		wantMessage []string
	}{
		{
			name:        "refused by the webhook",
			edit:        func(spec map[string]any) { spec["imageName"] = cnpgImage + "latest" },
			timeout:     time.Minute,
			reason:      dbbenchv1alpha1.ReasonTemplateRejected,
			wantMessage: []string{"databases[cnpg].template.object", "spec.imageName", "latest"},
		},
		{
			name: "never ready",
			edit: func(spec map[string]any) {
				spec["storage"] = map[string]any{"size": "1Gi", "storageClass": "no-such-class"}
			},
			timeout:     40 * time.Second,
			reason:      dbbenchv1alpha1.ReasonTemplateNotReady,
			wantMessage: []string{"Ready", "databases[cnpg].template.readyTimeout", "it says:"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t, "cnpg-bad")
			run := cnpgRun(t, ns, "bad", []string{"17"}, tc.timeout, tc.edit)
			createRun(t, run)
			run = waitForRunFinished(t, ns, run.Name, tc.timeout+3*time.Minute)
			cs := run.Status.Cells[0]
			t.Logf("cell %s: %s: %s", cs.Name, cs.Reason, cs.Message)
			if run.Status.Phase != dbbenchv1alpha1.RunFailed || cs.Reason != tc.reason || cs.Attempts > 1 {
				t.Fatalf("run %s, cell %s after %d attempt(s): %s; want Failed, %s, not retried", run.Status.Phase, cs.Reason, cs.Attempts, cs.Message, tc.reason)
			}
			for _, w := range tc.wantMessage {
				if !strings.Contains(cs.Message, w) {
					t.Errorf("message %q does not name %q", cs.Message, w)
				}
			}
			eventually(t, 2*time.Minute, "no Cluster or claim left", func() string { return cnpgLeftovers(ns) })
		})
	}
}
