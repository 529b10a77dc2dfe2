package benchmarkrun

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
)

// uploadState is what the controller acts on after an upload attempt, read
// from typed fields only.
type uploadState struct {
	Stopped  bool // uploadFailedForGood
	Pending  bool // uploadPending
	Failures int32
	Reason   string
}

func uploadStateOf(p *runPass) uploadState {
	s := uploadState{Stopped: p.uploadFailedForGood(), Pending: p.uploadPending(), Failures: p.run.Status.Upload.Failures}
	if c := meta.FindStatusCondition(p.run.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded); c != nil {
		s.Reason = c.Reason
	}
	return s
}

func uploadPass(annotations map[string]string) *runPass {
	run := &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", UID: "u-1", Annotations: annotations},
		Spec: dbbenchv1alpha1.BenchmarkRunSpec{Output: dbbenchv1alpha1.OutputSpec{S3: &dbbenchv1alpha1.S3Output{
			Endpoint: "http://s3", Bucket: "b", CredentialsSecret: corev1.LocalObjectReference{Name: "r-s3"},
		}}},
		Status: dbbenchv1alpha1.BenchmarkRunStatus{Upload: &dbbenchv1alpha1.UploadStatus{}},
	}
	return &runPass{run: run, now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), log: logr.Discard()}
}

// Which failed attempts stop the upload until the retry annotation: the
// state is status.upload.retryRequiresAnnotation, whatever the messages say.
func TestUploadStateAfterAFailure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy framework.RetryPolicy
		want   uploadState
	}{
		{"a transient error waits", framework.RetryWait, uploadState{Pending: true, Failures: 1, Reason: dbbenchv1alpha1.ReasonUploadPending}},
		{"refused credentials retry on the backoff", framework.RetryFixSecret, uploadState{Pending: true, Failures: 1, Reason: dbbenchv1alpha1.ReasonUploadFailed}},
		{"a missing bucket stops until annotated", framework.RetryNever, uploadState{Stopped: true, Failures: 1, Reason: dbbenchv1alpha1.ReasonUploadFailed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := uploadPass(nil)
			p.uploadFailed(&framework.UploadError{Err: errors.New("store said no"), Policy: tc.policy})
			if d := cmp.Diff(tc.want, uploadStateOf(p)); d != "" {
				t.Errorf("after the failure (-want +got):\n%s", d)
			}
			if got := p.run.Status.Upload.RetryRequiresAnnotation; got != (tc.policy == framework.RetryNever) {
				t.Errorf("retryRequiresAnnotation = %v", got)
			}

			// The annotation clears the stop and the backoff.
			p = &runPass{run: p.run, now: p.now.Add(time.Minute), log: logr.Discard()}
			p.run.Annotations = map[string]string{dbbenchv1alpha1.AnnotationRetryUpload: "now"}
			p.takeRetryRequest()
			want := uploadState{Pending: true, Reason: dbbenchv1alpha1.ReasonUploadPending}
			if d := cmp.Diff(want, uploadStateOf(p)); d != "" {
				t.Errorf("after the retry annotation (-want +got):\n%s", d)
			}
			if !p.dropRetryAnnotation {
				t.Error("the annotation should be removed after the pass")
			}
		})
	}
}

// A message that merely says "not retried" (the store's own words, or an
// older manager's marker) stops nothing: only the typed field does.
func TestUploadStopIsNotReadFromTheMessage(t *testing.T) {
	p := uploadPass(nil)
	p.run.Status.Upload.Failures = 1
	p.setCondition(dbbenchv1alpha1.ConditionResultsUploaded, metav1.ConditionFalse, dbbenchv1alpha1.ReasonUploadFailed,
		fmt.Sprintf("get s3://b/m.json: failed (not retried). %s", notRetried))
	if p.uploadFailedForGood() || !p.uploadPending() {
		t.Errorf("stopped %v pending %v, want an upload still pending", p.uploadFailedForGood(), p.uploadPending())
	}
	p.run.Status.Upload.RetryRequiresAnnotation = true
	if !p.uploadFailedForGood() || p.uploadPending() {
		t.Errorf("stopped %v pending %v, want stopped by retryRequiresAnnotation", p.uploadFailedForGood(), p.uploadPending())
	}
}
