package controllers

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/bisectreport"
	"github.com/dbbench/dbbench/pkg/store"
)

// bisectionOutput is the object store a bisection's rounds upload to (its
// template's or its referenced run's output.s3, nil without one) and the
// suite the summary is filed under (that run's suite).
func (p *bisectionPass) bisectionOutput(ctx context.Context) (*dbbenchv1alpha1.S3Output, string, error) {
	spec := &p.bis.Spec
	switch {
	case spec.Template != nil:
		return spec.Template.Output.S3, spec.Template.Suite, nil
	case spec.RunRef != nil:
		var ref dbbenchv1alpha1.BenchmarkRun
		err := p.r.Get(ctx, types.NamespacedName{Namespace: p.bis.Namespace, Name: spec.RunRef.Name}, &ref)
		if apierrors.IsNotFound(err) {
			// The run is gone (deleted with an orphaned bisection): there
			// is no store to upload to.
			return nil, "", nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("reading run %s: %w", spec.RunRef.Name, err)
		}
		return ref.Spec.Output.S3, ref.Spec.Suite, nil
	}
	return nil, "", nil
}

// syncUpload uploads a finished bisection's report.html and bisection.json
// to the object store of its runs, under <prefix>/<suite>/_bisections/<name>/
// (store.UploadBisection), once. It follows the run upload's pattern
// (run_upload.go): the same store client, Secret handling and retry delays,
// the outcome in status.upload and the ResultsUploaded condition, written
// with the pass's single status write. A bisection has no retry
// annotation, so an error that waiting cannot fix (a missing bucket) is
// retried too, at the backoff's longest interval once it gets there.
func (p *bisectionPass) syncUpload(ctx context.Context) (ctrl.Result, error) {
	st := &p.bis.Status
	if st.Upload != nil && st.Upload.Uploaded {
		return ctrl.Result{}, nil
	}
	o, suite, err := p.bisectionOutput(ctx)
	if err != nil || o == nil {
		return ctrl.Result{}, err
	}
	if st.Upload == nil {
		st.Upload = &dbbenchv1alpha1.BisectionUploadStatus{}
	}
	u := st.Upload
	if u.Failures > 0 && u.LastFailureTime != nil {
		if wait := u.LastFailureTime.Add(uploadRetryDelay(p.bis.UID, u.Failures)).Sub(p.now); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, uploadPassTimeout)
	defer cancel()
	s, ue := openS3Store(ctx, p.r.APIReader, p.bis.Namespace, o)
	if ue != nil {
		return p.uploadFailed(ue), nil
	}
	summary, err := bisectreport.NewSummary(p.bis, suite).Marshal()
	if err != nil {
		return p.uploadFailed(&uploadError{err: fmt.Errorf("encoding the summary: %w", err), policy: retryNever}), nil
	}
	objs := store.BisectionObjects{Suite: suite, Name: p.bis.Name, Namespace: p.bis.Namespace, UID: string(p.bis.UID), Summary: summary}
	if html, err := bisectreport.HTML(p.bis); err != nil {
		p.log.Info("Uploading the summary without report.html: the report cannot be built", "error", err.Error())
	} else {
		objs.ReportHTML = html
	}
	if _, err := s.UploadBisection(ctx, objs); err != nil {
		return p.uploadFailed(storeFailure(err)), nil
	}
	u.Uploaded, u.Failures, u.LastFailureTime = true, 0, nil
	u.URL = s.URL(s.Layout().BisectionPrefix(suite, p.bis.Name))
	what := "the summary"
	if len(objs.ReportHTML) > 0 {
		what = "the HTML report and the summary"
	}
	msg := fmt.Sprintf("Uploaded %s to %s", what, u.URL)
	p.setUploaded(metav1.ConditionTrue, ReasonUploaded, msg)
	p.event(false, EventResultsUploaded, "Upload", msg)
	return ctrl.Result{}, nil
}

// uploadFailed records a failed attempt and when the next one is due.
func (p *bisectionPass) uploadFailed(ue *uploadError) ctrl.Result {
	u := p.bis.Status.Upload
	u.Failures++
	u.LastFailureTime = &metav1.Time{Time: p.now}
	wait := uploadRetryDelay(p.bis.UID, u.Failures)
	reason := ReasonUploadPending
	if ue.policy != retryWait {
		reason = ReasonUploadFailed
	}
	msg := fmt.Sprintf("%s (attempt %d failed; retrying in %s; the bisection's status keeps its results)", ue.err, u.Failures, wait.Round(time.Second))
	p.log.Info("Bisection upload failed", "reason", reason, "error", ue.err.Error())
	if prev := meta.FindStatusCondition(p.bis.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded); prev == nil || prev.Reason != reason {
		p.event(true, reason, "Upload", msg)
	}
	p.setUploaded(metav1.ConditionFalse, reason, msg)
	return ctrl.Result{RequeueAfter: wait}
}

func (p *bisectionPass) setUploaded(status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&p.bis.Status.Conditions, metav1.Condition{
		Type: dbbenchv1alpha1.ConditionResultsUploaded, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: p.bis.Generation, LastTransitionTime: metav1.Time{Time: p.now},
	})
}
