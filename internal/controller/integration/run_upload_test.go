package integration_test

// Uploads to a real S3-compatible server (versitygw, started through
// hack/s3server.sh on 127.0.0.1). These tests run only with
// DBBENCH_REAL_S3=1:
//
//	DBBENCH_REAL_S3=1 KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh) go test ./controllers/ -run Upload -v

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/benchmarkrun"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/internal/testutil/versitygw"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/store"
)

const (
	s3AccessKey = "dbbench-ctl-test"
	s3SecretKey = "dbbench-ctl-test-secret"
	s3Bucket    = "dbbench-ctl-results"
	s3Prefix    = "team/bench"
	s3Suite     = "nightly"
)

// s3Server is a real versitygw with the test bucket created.
type s3Server struct{ *versitygw.Server }

func startS3(t *testing.T) *s3Server {
	t.Helper()
	srv := &s3Server{versitygw.Start(t, s3AccessKey, s3SecretKey)}
	s := srv.store(t, s3SecretKey)
	if err := s.CreateBucket(ctx); err != nil {
		t.Fatalf("creating the bucket: %v", err)
	}
	return srv
}

// store is the test's own view of the bucket.
func (s *s3Server) store(t *testing.T, secret string) *store.Store {
	t.Helper()
	st, err := store.New(store.Config{Endpoint: s.Endpoint(), Bucket: s3Bucket, Prefix: s3Prefix, AccessKeyID: s3AccessKey, SecretAccessKey: secret,
		Backoff: store.Backoff{Initial: 50 * time.Millisecond, MaxAttempts: 3}, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// s3Run is a 2-cell run (one at a time) uploading to srv with the given
// secret key in its credentials Secret.
func s3Run(t *testing.T, srv *s3Server, ns, name, secret string) *dbbenchv1alpha1.BenchmarkRun {
	t.Helper()
	return s3RunWith(t, srv, ns, name, secret, nil)
}

// s3RunWith is s3Run with the spec changed by mutate before the run is
// created.
func s3RunWith(t *testing.T, srv *s3Server, ns, name, secret string, mutate func(*dbbenchv1alpha1.BenchmarkRun)) *dbbenchv1alpha1.BenchmarkRun {
	t.Helper()
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-s3"},
		Data:       map[string][]byte{"accessKeyID": []byte(s3AccessKey), "secretAccessKey": []byte(secret)},
	}
	if err := k8sClient.Create(ctx, sec); err != nil {
		t.Fatalf("creating the credentials Secret: %v", err)
	}
	run := minimalRun(ns, name)
	run.Spec.Suite = s3Suite
	run.Spec.Databases[0].Versions = []string{"10.11", "11.8"}
	run.Spec.Workload.Threads = []int32{1, 4}
	run.Spec.Workload.Steps = []string{"point-query"}
	run.Spec.Placement.MaxParallelCells = 1
	run.Spec.Output.S3 = &dbbenchv1alpha1.S3Output{
		Endpoint: srv.Endpoint(), Bucket: s3Bucket, Prefix: s3Prefix,
		CredentialsSecret: corev1.LocalObjectReference{Name: sec.Name},
	}
	if mutate != nil {
		mutate(run)
	}
	if err := k8sClient.Create(ctx, run); err != nil {
		t.Fatalf("creating run: %v", err)
	}
	return run
}

func uploadCondition(run *dbbenchv1alpha1.BenchmarkRun) *metav1.Condition {
	return meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded)
}

func condString(c *metav1.Condition) string {
	if c == nil {
		return "no ResultsUploaded condition"
	}
	return fmt.Sprintf("ResultsUploaded=%s %s: %s", c.Status, c.Reason, c.Message)
}

// waitUpload waits (up to 60 s) for the ResultsUploaded condition to have
// status and reason.
func waitUpload(t *testing.T, ns, name string, status metav1.ConditionStatus, reason string) *dbbenchv1alpha1.BenchmarkRun {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		run := kubetest.GetRun(t, k8sClient, ns, name)
		c := uploadCondition(run)
		if c != nil && c.Status == status && c.Reason == reason {
			return run
		}
		last = condString(c)
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for ResultsUploaded=%s %s: %s", status, reason, last)
	return nil
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// checkUploaded checks that every cell's result.json and the manifest are in
// the bucket under the documented layout, the manifest points at the cells,
// and each object equals (SHA-256) the document derived from the cell's
// ConfigMap, which is still there.
func checkUploaded(t *testing.T, srv *s3Server, run *dbbenchv1alpha1.BenchmarkRun) {
	t.Helper()
	st := srv.store(t, s3SecretKey)
	layout := store.Layout{Prefix: s3Prefix}
	runPrefix := fmt.Sprintf("%s/%s/%s/", s3Prefix, s3Suite, run.Name)
	if layout.RunPrefix(s3Suite, run.Name) != runPrefix {
		t.Fatalf("layout: run prefix %q, documented %q", layout.RunPrefix(s3Suite, run.Name), runPrefix)
	}
	if run.Status.Results == nil || run.Status.Results.URL != "s3://"+s3Bucket+"/"+runPrefix {
		t.Errorf("status.results = %+v, want url s3://%s/%s", run.Status.Results, s3Bucket, runPrefix)
	}
	if run.Status.Upload == nil || !run.Status.Upload.ManifestUploaded || run.Status.Upload.CellsUploaded != int32(len(run.Status.Cells)) {
		t.Errorf("status.upload = %+v, want the manifest and %d cells", run.Status.Upload, len(run.Status.Cells))
	}
	m, err := st.GetManifest(ctx, s3Suite, run.Name)
	if err != nil {
		t.Fatalf("reading the manifest: %v", err)
	}
	if m.Run.UID != string(run.UID) || len(m.Cells) != len(run.Status.Cells) {
		t.Fatalf("manifest: run %+v with %d cells, want uid %s and %d cells", m.Run, len(m.Cells), run.UID, len(run.Status.Cells))
	}
	for i, cs := range run.Status.Cells {
		if !cs.Uploaded {
			t.Errorf("cell %s: uploaded is false", cs.Name)
		}
		key := runPrefix + cs.Name + "/result.json"
		if m.Cells[i].Name != cs.Name || m.Cells[i].ObjectKey != key {
			t.Errorf("manifest cell %d: name %q objectKey %q, want %q %q", i, m.Cells[i].Name, m.Cells[i].ObjectKey, cs.Name, key)
		}
		got, err := st.Get(ctx, key)
		if err != nil {
			t.Errorf("cell %s: %v", cs.Name, err)
			continue
		}
		var cm corev1.ConfigMap
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: cs.ResultConfigMap}, &cm); err != nil {
			t.Fatalf("cell %s: the result ConfigMap is gone: %v", cs.Name, err)
		}
		compact, err := results.Unmarshal([]byte(cm.Data[agentapi.ResultKeyDocument]))
		if err != nil {
			t.Fatalf("cell %s: ConfigMap document: %v", cs.Name, err)
		}
		steps := len(compact.Steps)
		want, err := benchmarkrun.StoreDocument(run, cs.Name, compact)
		if err != nil {
			t.Fatalf("cell %s: %v", cs.Name, err)
		}
		wantBytes, err := results.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		if sha(got) != sha(wantBytes) {
			t.Errorf("cell %s: stored result.json (sha256 %s) differs from the ConfigMap's document (sha256 %s)", cs.Name, sha(got), sha(wantBytes))
		}
		doc, err := results.Unmarshal(got)
		if err != nil {
			t.Fatalf("cell %s: stored document: %v", cs.Name, err)
		}
		if doc.Form != results.FormFull || doc.Run.Name != run.Name || doc.Cell.Name != cs.Name || len(doc.Steps) != steps || doc.Steps[1].SteadyQPS != 4000 {
			t.Errorf("cell %s: stored document form %q run %q cell %q with %d steps", cs.Name, doc.Form, doc.Run.Name, doc.Cell.Name, len(doc.Steps))
		}
	}
}

func TestUploadRunResultsToRealS3(t *testing.T) {
	srv := startS3(t)
	ns := newNamespace(t)
	startManager(t, nil)
	run := s3Run(t, srv, ns, "upload", s3SecretKey)
	driveCellsToCompletion(t, ns, run.Name)
	got := waitUpload(t, ns, run.Name, metav1.ConditionTrue, dbbenchv1alpha1.ReasonUploaded)
	if !meta.IsStatusConditionTrue(got.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) {
		t.Fatalf("run did not succeed: %s", cellPhases(got))
	}
	checkUploaded(t, srv, got)
	if got.Status.Results.ConfigMap == "" {
		t.Errorf("the run-level results ConfigMap is not recorded: %+v", got.Status.Results)
	}
}

func TestUploadSurvivesAnOutage(t *testing.T) {
	srv := startS3(t)
	ns := newNamespace(t)
	rm := startManager(t, nil)
	run := s3Run(t, srv, ns, "outage", s3SecretKey)

	driveUntil(t, ns, run.Name, "the first cell uploaded", func(r *dbbenchv1alpha1.BenchmarkRun) bool {
		return len(r.Status.Cells) == 2 && r.Status.Cells[0].Uploaded
	})
	srv.Stop(t)
	driveCellsToCompletion(t, ns, run.Name)
	got := waitUpload(t, ns, run.Name, metav1.ConditionFalse, dbbenchv1alpha1.ReasonUploadPending)
	if !meta.IsStatusConditionTrue(got.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded) {
		t.Fatalf("run did not succeed during the outage: %s", cellPhases(got))
	}
	// The bucket it cannot reach is spec.output.s3's; UploadPending says a
	// retry will come, which status.upload counts.
	if got.Status.Upload == nil || got.Status.Upload.Failures == 0 || got.Status.Upload.RetryRequiresAnnotation {
		t.Errorf("status.upload = %+v, want failures retried with the backoff", got.Status.Upload)
	}
	if got.Status.Cells[1].Uploaded || got.Status.Upload.ManifestUploaded || got.Status.Results.URL != "" {
		t.Errorf("nothing should be confirmed during the outage: cells %+v upload %+v results %+v", got.Status.Cells, got.Status.Upload, got.Status.Results)
	}
	for _, cs := range got.Status.Cells {
		var cm corev1.ConfigMap
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: cs.ResultConfigMap}, &cm); err != nil {
			t.Fatalf("cell %s: the result ConfigMap is gone during the outage: %v", cs.Name, err)
		}
	}

	t.Logf("during the outage: %s; failures %d", condString(uploadCondition(got)), got.Status.Upload.Failures)
	srv.Start(t)
	// The manager's clock is fake: move it past any backoff; the requeue
	// (real time, at most the first backoff step here) does the rest.
	rm.clock.SetTime(rm.clock.Now().Add(10 * time.Minute))
	got = waitUpload(t, ns, run.Name, metav1.ConditionTrue, dbbenchv1alpha1.ReasonUploaded)
	checkUploaded(t, srv, got)
}
