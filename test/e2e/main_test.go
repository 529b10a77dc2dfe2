//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/manager"
)

var (
	ctx = context.Background()

	restConfig *rest.Config
	k8sClient  client.Client
	clientset  *kubernetes.Clientset

	// Where hack/test-e2e.sh (and hack/demo.sh) install the operator.
	systemNamespace   = envOr("DBBENCH_SYSTEM_NAMESPACE", "dbbench-system")
	managerDeployment = envOr("DBBENCH_MANAGER_DEPLOYMENT", "dbbench-manager")
)

// e2eLabel marks everything this suite creates at cluster scope or as a
// namespace, so hack/test-e2e.sh can remove leftovers of an interrupted run.
const e2eLabel = "dbbench.io/e2e"

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// TestMain connects to the cluster KUBECONFIG names and checks that the
// operator is installed and available before any test creates a run: a
// missing operator is one clear failure, not a timeout in every test.
func TestMain(m *testing.M) {
	if err := setup(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func setup() error {
	cfg, err := config.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig (set KUBECONFIG): %w", err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	restConfig = cfg
	if k8sClient, err = client.New(cfg, client.Options{Scheme: manager.Scheme()}); err != nil {
		return fmt.Errorf("creating the client: %w", err)
	}
	if clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return fmt.Errorf("creating the clientset: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var runs dbbenchv1alpha1.BenchmarkRunList
	if err := k8sClient.List(pctx, &runs, client.Limit(1)); err != nil {
		return fmt.Errorf("listing BenchmarkRuns (is the CRD installed?): %w", err)
	}
	var dep appsv1.Deployment
	if err := k8sClient.Get(pctx, types.NamespacedName{Namespace: systemNamespace, Name: managerDeployment}, &dep); err != nil {
		return fmt.Errorf("getting the manager Deployment %s/%s (is the chart installed?): %w", systemNamespace, managerDeployment, err)
	}
	if dep.Status.AvailableReplicas < 1 {
		return fmt.Errorf("the manager Deployment %s/%s has no available replica", systemNamespace, managerDeployment)
	}
	return nil
}
