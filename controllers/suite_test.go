package controllers_test

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
)

// The suite runs against a real kube-apiserver and etcd (built by
// hack/envtest-assets.sh; KUBEBUILDER_ASSETS points at them). There is no
// kubelet, scheduler or Job controller: tests play their part by writing pod
// and Job status, and play the agent by writing its results ConfigMap.
var (
	cfg       *rest.Config
	k8sClient client.Client
	testEnv   *envtest.Environment
)

func TestMain(m *testing.M) {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(zapLevel())))
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run the suite with `make test-envtest`, which builds kube-apiserver and etcd")
		os.Exit(1)
	}
	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	var err error
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
