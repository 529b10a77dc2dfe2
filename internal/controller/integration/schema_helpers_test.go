package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// dryRunSamples creates every config/samples file matching pattern in ns
// with a dry run, failing the test for each the API server refuses, and
// returns how many files there were (each caller says how many it expects).
func dryRunSamples(t *testing.T, ns, pattern string) int {
	t.Helper()
	samples, _ := filepath.Glob(filepath.Join("..", "..", "..", "config", "samples", pattern))
	for _, f := range samples {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		obj := parseRun(t, string(text))
		obj.SetNamespace(ns)
		if err := k8sClient.Create(ctx, obj, client.DryRunAll); err != nil {
			t.Errorf("sample %s refused: %v", filepath.Base(f), err)
		}
	}
	return len(samples)
}

// requireRefused dry-runs the object of text in ns, changed by mutate, and
// fails the test unless the API server refuses it as invalid with an error
// containing want.
func requireRefused(t *testing.T, ns, text string, mutate func(obj map[string]any), want string) {
	t.Helper()
	obj := parseRun(t, text)
	obj.SetNamespace(ns)
	mutate(obj.Object)
	err := k8sClient.Create(ctx, obj, client.DryRunAll)
	if err == nil {
		t.Fatalf("accepted, want an error containing %q", want)
	}
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v\nwant one containing %q", err, want)
	}
}

// envtestKubectl returns a runner of the envtest kubectl (built by
// hack/build-k8s.sh kubectl; make test-envtest does it) as an admin of the
// test's API server: it returns the combined output and fails the test when
// kubectl fails. It skips the test when there is no such kubectl.
func envtestKubectl(t *testing.T) func(args ...string) string {
	t.Helper()
	requireEnvtest(t)
	kubectl := filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Skipf("no kubectl in KUBEBUILDER_ASSETS (%v)", err)
	}
	user, err := testEnv.ControlPlane.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) ([]byte, error) {
		return exec.Command(kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	}
	// The API server publishes a new CRD's discovery and OpenAPI a moment
	// after the CRD is established; until then explain says "couldn't find
	// resource". Wait for it once, so that a test run alone is not a race.
	deadline := time.Now().Add(time.Minute)
	for {
		out, err := run("explain", "benchmarkrun")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl explain benchmarkrun did not answer within a minute: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
}
