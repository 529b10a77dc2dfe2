//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/tier"
	"github.com/dbbench/dbbench/pkg/profile"
)

// TestProfileOnTheCluster: a MariaDB cell with workload.profile, in a
// namespace that allows privileged pods, gets a collector sidecar that
// runs perf with CAP_PERFMON and CAP_SYS_PTRACE, and its point-query result
// carries a profile of the server (samples in mariadbd) from the
// unmeasured pass.
func TestProfileOnTheCluster(t *testing.T) {
	tier.Core(t)
	t.Parallel()
	ns := newNamespace(t, "profile")
	// The sidecar's capabilities are outside the baseline Pod Security
	// Standard (docs/explain.md).
	patch := []byte(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"privileged"}}}`)
	if err := k8sClient.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("labelling namespace %s: %v", ns, err)
	}
	run := smallRun(ns, "profile", "10.11")
	run.Spec.Workload.Steps = []string{"point-query"}
	run.Spec.Workload.Threads = []int32{2}
	run.Spec.Workload.Profile = &dbbenchv1alpha1.ProfileSpec{Steps: []string{"point-query"}, Seconds: 5, FrequencyHz: 99}
	createRun(t, run)
	start := time.Now()
	run = waitForRunFinished(t, ns, run.Name, runTimeout)
	t.Logf("run finished in %s: %s", time.Since(start).Round(time.Second), runSummary(run))
	requireSucceeded(t, run)
	doc := resultDocument(t, ns, run.Status.Cells[0])
	if len(doc.Steps) != 1 {
		t.Fatalf("steps %d, want 1", len(doc.Steps))
	}
	s := doc.Steps[0]
	pr := s.Profile
	if pr == nil {
		t.Fatalf("%s@%d: no profile", s.Step, s.Threads)
	}
	if pr.Error != "" {
		t.Fatalf("%s@%d: the profiled pass recorded no profile: %s", s.Step, s.Threads, pr.Error)
	}
	p, err := profile.ParseFoldedString(pr.Folded)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d samples in %.1f s (measured %.0f QPS, pass %.0f QPS); top self shares:", pr.Samples, pr.Seconds, s.SteadyQPS, pr.PassQPS)
	changes := profile.Diff(&profile.Profile{}, p, profile.RankSelf)
	for i, c := range changes[:min(8, len(changes))] {
		t.Logf("  %d. %5.2f%%  %s", i+1, 100*c.B.Self, c.Function)
	}
	if pr.Samples < 20 {
		t.Errorf("%d samples, want at least 20", pr.Samples)
	}
	// The server's own frames are named from its binary, read through
	// /proc/<pid>/root (docs/explain.md, "Symbols on Kubernetes"): the SQL
	// layer's exported functions, which every query passes through.
	if !strings.Contains(pr.Folded, "do_command(THD*, bool)") {
		t.Errorf("no named frame of the server (do_command) in the profile")
	}
	if strings.Contains(pr.Folded, "dbbench-agent") {
		t.Errorf("the sidecar sampled itself")
	}
}
