//go:build e2e

package e2e

import (
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/store"
)

// s3Endpoint is the suite's S3 server (versitygw, started by
// hack/test-e2e.sh on the cluster's bridge); the test skips without one.
func s3Endpoint(t *testing.T) string {
	t.Helper()
	endpoint := os.Getenv("DBBENCH_E2E_S3_ENDPOINT")
	if endpoint == "" {
		t.Skip("DBBENCH_E2E_S3_ENDPOINT is not set (hack/test-e2e.sh sets it for the local cluster)")
	}
	return endpoint
}

// objectStore creates bucket on the suite's S3 server and a credentials
// Secret in ns, and returns a client of bucket/prefix for the test's checks
// and the output.s3 a run in ns uploads there with.
func objectStore(t *testing.T, endpoint, ns, bucket, prefix string) (*store.Store, *dbbenchv1alpha1.S3Output) {
	t.Helper()
	ak, sk := os.Getenv("DBBENCH_E2E_S3_ACCESS_KEY"), os.Getenv("DBBENCH_E2E_S3_SECRET_KEY")
	st, err := store.New(store.Config{Endpoint: endpoint, Bucket: bucket, Prefix: prefix, AccessKeyID: ak, SecretAccessKey: sk,
		Backoff: store.Backoff{Initial: 100 * time.Millisecond, MaxAttempts: 3}, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateBucket(ctx); err != nil {
		t.Fatalf("creating the bucket: %v", err)
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3-credentials"},
		Data:       map[string][]byte{"accessKeyID": []byte(ak), "secretAccessKey": []byte(sk)},
	}
	if err := k8sClient.Create(ctx, sec); err != nil {
		t.Fatalf("creating the credentials Secret: %v", err)
	}
	return st, &dbbenchv1alpha1.S3Output{Endpoint: endpoint, Bucket: bucket, Prefix: prefix,
		CredentialsSecret: corev1.LocalObjectReference{Name: sec.Name}}
}
