// Package kubetest holds the reads the envtest suite (controllers) and the
// end-to-end suite (test/e2e) share: controller-runtime client calls that
// fail the test, naming what they read, instead of returning an error.
package kubetest

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// The reads use a context of their own, not t.Context(): the suites also
// read from t.Cleanup (the e2e suite's dump of a failed test's namespace),
// when t.Context() is already cancelled.

// GetRun reads the BenchmarkRun ns/name.
func GetRun(t testing.TB, c client.Client, ns, name string) *dbbenchv1alpha1.BenchmarkRun {
	t.Helper()
	run := &dbbenchv1alpha1.BenchmarkRun{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, run); err != nil {
		t.Fatalf("getting run %s/%s: %v", ns, name, err)
	}
	return run
}

// ListPods lists the pods in ns that carry every label of l.
func ListPods(t testing.TB, c client.Client, ns string, l map[string]string) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	list(t, c, &pods, ns, l)
	return pods.Items
}

// ListJobs lists the jobs in ns that carry every label of l.
func ListJobs(t testing.TB, c client.Client, ns string, l map[string]string) []batchv1.Job {
	t.Helper()
	var jobs batchv1.JobList
	list(t, c, &jobs, ns, l)
	return jobs.Items
}

func list(t testing.TB, c client.Client, into client.ObjectList, ns string, l map[string]string) {
	t.Helper()
	if err := c.List(context.Background(), into, client.InNamespace(ns), client.MatchingLabels(l)); err != nil {
		t.Fatalf("listing %T in %s with labels %v: %v", into, ns, l, err)
	}
}
