package integration_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/dbbench/dbbench/internal/manager"
	"github.com/dbbench/dbbench/internal/testutil/envtestassets"
)

// The suite runs against a real kube-apiserver and etcd (built by
// hack/envtest-assets.sh; KUBEBUILDER_ASSETS points at them, or they are
// found in the cache directory it builds into; without them the tests that
// need them skip and the plain ones run). There is no
// kubelet, scheduler or Job controller: tests play their part by writing pod
// and Job status, and play the agent by writing its results ConfigMap.
var (
	cfg       *rest.Config
	k8sClient client.Client
	testEnv   *envtest.Environment
	// noEnvtest says why there is no API server (the assets are not built);
	// tests that need one skip with it.
	noEnvtest string
)

// requireEnvtest skips a test that needs the API server when there is none.
func requireEnvtest(t *testing.T) {
	t.Helper()
	if noEnvtest != "" {
		t.Skipf("needs kube-apiserver and etcd: %s", noEnvtest)
	}
}

func TestMain(m *testing.M) {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(zapLevel())))
	assets, err := envtestassets.Dir()
	if err != nil {
		if os.Getenv(envtestassets.EnvVar) != "" {
			// Asked for explicitly (make test-envtest): a broken directory
			// is an error, not a reason to skip.
			fmt.Fprintf(os.Stderr, "envtest: %v\n", err)
			os.Exit(1)
		}
		// A plain `go test ./...` on a machine where the assets were never
		// built: the package's plain tests run, the envtest ones skip.
		noEnvtest = err.Error()
		os.Exit(m.Run())
	}
	// The kubectl explain tests find kubectl beside the API server.
	os.Setenv(envtestassets.EnvVar, assets)
	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	cfg, err = testEnv.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting envtest: %v\n", err)
		os.Exit(1)
	}
	k8sClient, err = client.New(cfg, client.Options{Scheme: manager.Scheme()})
	if err != nil {
		fmt.Fprintf(os.Stderr, "creating client: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := testEnv.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping envtest: %v\n", err)
	}
	os.Exit(code)
}

func zapLevel() zapcore.Level {
	if os.Getenv("DBBENCH_TEST_VERBOSE") != "" {
		return -2
	}
	return 1
}

// runningManager is a manager started for one test; stop() waits for it.
type runningManager struct {
	clock  *clocktesting.FakePassiveClock
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// startManager starts the same manager cmd/manager runs, with a fake clock.
func startManager(t *testing.T, clock *clocktesting.FakePassiveClock) *runningManager {
	t.Helper()
	return startManagerWith(t, clock, nil)
}

// startManagerWith starts a manager with options changed by with.
func startManagerWith(t *testing.T, clock *clocktesting.FakePassiveClock, with func(*manager.Options)) *runningManager {
	t.Helper()
	if clock == nil {
		clock = clocktesting.NewFakePassiveClock(time.Now())
	}
	opts := manager.Options{
		MetricsAddr: "0", ProbeAddr: "0", AgentImage: "example.test/dbbench/agent:test", Clock: clock,
		MaxConcurrentReconciles: 2, SkipNameValidation: true,
	}
	if with != nil {
		with(&opts)
	}
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		t.Fatalf("creating manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rm := &runningManager{clock: clock, cancel: cancel}
	rm.done.Add(1)
	go func() {
		defer rm.done.Done()
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager stopped: %v", err)
		}
	}()
	t.Cleanup(rm.stop)
	return rm
}

func (m *runningManager) stop() {
	m.cancel()
	m.done.Wait()
}
