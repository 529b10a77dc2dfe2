package plugin

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/dbbench/dbbench/internal/testutil/envtestassets"
)

// TestReportAgainstAPIServer runs `report` against a real kube-apiserver with
// the BenchmarkRun CRD installed: the run and its status go through the
// CRD's schema (so a status field the plugin reads but the schema prunes
// would show up here), the cell documents through real ConfigMaps. It needs
// kube-apiserver and etcd (KUBEBUILDER_ASSETS, or the cache directory
// hack/envtest-assets.sh builds them into) and is skipped otherwise.
func TestReportAgainstAPIServer(t *testing.T) {
	assets, err := envtestassets.Dir()
	if err != nil {
		if os.Getenv(envtestassets.EnvVar) != "" {
			t.Fatal(err)
		}
		t.Skipf("needs kube-apiserver and etcd: %v", err)
	}
	crds := filepath.Join("..", "..", "config", "crd", "bases")
	if _, err := os.Stat(crds); err != nil {
		t.Skipf("skipped: no CRDs at %s", crds)
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true, BinaryAssetsDirectory: assets}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	defer func() { _ = env.Stop() }()
	ctx := context.Background()
	dyn := dynamic.NewForConfigOrDie(cfg)
	core := kubernetes.NewForConfigOrDie(cfg)
	if _, err := core.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cells, cms := cellCMs(t, "nightly-1", twoCells("nightly-1", "nightly", t0, 1))
	for _, cm := range cms {
		if _, err := core.CoreV1().ConfigMaps("bench").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	run := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "dbbench.io/v1alpha1", "kind": "BenchmarkRun",
		"metadata": map[string]any{"name": "nightly-1", "namespace": "bench"},
		"spec": map[string]any{"suite": "nightly", "databases": []any{map[string]any{
			"name": "mariadb", "engine": "mariadb", "versions": []any{"10.11", "11.4"}}}},
	}}
	created, err := dyn.Resource(RunGVR).Namespace("bench").Create(ctx, run, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the run (does the CRD accept it?): %v", err)
	}
	st := runObj("nightly-1", "nightly", t0, "Succeeded", cells).Object["status"].(map[string]any)
	// The CRD requires the cells' identity fields, which the plugin does not
	// read.
	for i, c := range st["cells"].([]any) {
		m := c.(map[string]any)
		m["database"], m["engine"], m["config"], m["repeat"] = "mariadb", "mariadb", "base", int64(0)
		m["version"] = []string{"10.11", "11.4"}[i]
	}
	created.Object["status"] = st
	if _, err := dyn.Resource(RunGVR).Namespace("bench").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("status update: %v", err)
	}
	clients := fakeCluster{&Cluster{Dynamic: dyn, Core: core, Namespace: "bench"}}
	out, _, err := runCmd(t, clients, "report", "nightly-1")
	if err != nil {
		t.Fatal(err)
	}
	if out != wantReport {
		t.Errorf("report against the API server:\n%s\nwant:\n%s", out, wantReport)
	}
	out, _, err = runCmd(t, clients, "watch", "nightly-1", "--once")
	if err != nil || out == "" {
		t.Errorf("watch: %v %q", err, out)
	}
	t.Log(out)
}
