package benchmarkbisection

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/bisectreport"
	"github.com/dbbench/dbbench/pkg/explain"
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
		if wait := u.LastFailureTime.Add(framework.UploadRetryDelay(p.bis.UID, u.Failures)).Sub(p.now); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, framework.UploadPassTimeout)
	defer cancel()
	s, ue := framework.OpenS3Store(ctx, p.r.APIReader, p.bis.Namespace, o)
	if ue != nil {
		return p.uploadFailed(ue), nil
	}
	summary, err := bisectreport.NewSummary(p.bis, suite).Marshal()
	if err != nil {
		return p.uploadFailed(&framework.UploadError{Err: fmt.Errorf("encoding the summary: %w", err), Policy: framework.RetryNever}), nil
	}
	objs := store.BisectionObjects{Suite: suite, Name: p.bis.Name, Namespace: p.bis.Namespace, UID: string(p.bis.UID), Summary: summary}
	if html, err := bisectreport.HTML(p.bis, p.reportExtra(ctx)); err != nil {
		p.log.Info("Uploading the summary without report.html: the report cannot be built", "error", err.Error())
	} else {
		objs.ReportHTML = html
	}
	if _, err := s.UploadBisection(ctx, objs); err != nil {
		return p.uploadFailed(framework.StoreFailure(err)), nil
	}
	u.Uploaded, u.Failures, u.LastFailureTime = true, 0, nil
	u.URL = s.URL(s.Layout().BisectionPrefix(suite, p.bis.Name))
	what := "the summary"
	if len(objs.ReportHTML) > 0 {
		what = "the HTML report and the summary"
	}
	msg := fmt.Sprintf("Uploaded %s to %s", what, u.URL)
	p.setUploaded(metav1.ConditionTrue, dbbenchv1alpha1.ReasonUploaded, msg)
	p.Event(false, framework.EventResultsUploaded, "Upload", msg)
	// The suite's site lists the bisection and links its page.
	if _, err := framework.PublishSite(parent, s, suite, p.now); err != nil {
		p.log.Info("Regenerating the suite's site failed", "error", err.Error())
		p.Event(true, framework.EventSitePublishFailed, "Publish", fmt.Sprintf("The suite's site was not regenerated: %v", err))
	}
	return ctrl.Result{}, nil
}

// uploadFailed records a failed attempt and when the next one is due.
func (p *bisectionPass) uploadFailed(ue *framework.UploadError) ctrl.Result {
	u := p.bis.Status.Upload
	u.Failures++
	u.LastFailureTime = &metav1.Time{Time: p.now}
	wait := framework.UploadRetryDelay(p.bis.UID, u.Failures)
	reason := dbbenchv1alpha1.ReasonUploadPending
	if ue.Policy != framework.RetryWait {
		reason = dbbenchv1alpha1.ReasonUploadFailed
	}
	msg := fmt.Sprintf("%s (attempt %d failed; retrying in %s; the bisection's status keeps its results)", ue.Err, u.Failures, wait.Round(time.Second))
	p.log.Info("Bisection upload failed", "reason", reason, "error", ue.Err.Error())
	if prev := meta.FindStatusCondition(p.bis.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded); prev == nil || prev.Reason != reason {
		p.Event(true, reason, "Upload", msg)
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

// reportExtra is what the bisection's page shows beyond its status: the
// verdict of the run that started it (spec.regression.bisect), a link to
// that run's report beside it in the store, and the explanation's flame
// graph. What cannot be read is left out: the page never waits for it.
func (p *bisectionPass) reportExtra(ctx context.Context) bisectreport.Extra {
	var x bisectreport.Extra
	if name := p.bis.Labels[dbbenchv1alpha1.LabelRegressedRun]; name != "" {
		x.RegressedRun = name
		// <suite>/_bisections/<name>/report.html → <suite>/<run>/report.html
		x.RunReport = "../../" + name + "/" + store.ObjectReport
		x.SuiteSite = "../../" + store.ObjectSiteIndex
		var run dbbenchv1alpha1.BenchmarkRun
		if err := p.r.Get(ctx, types.NamespacedName{Namespace: p.bis.Namespace, Name: name}, &run); err == nil {
			if c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionRegressed); c != nil {
				x.Verdict = c.Message
			}
			if r := run.Status.Regression; r != nil && len(r.Regressed) > 0 {
				x.Since, x.LastBefore = r.Regressed[0].Since, r.Regressed[0].LastBefore
			}
		}
	}
	if ex := p.bis.Status.Explanation; ex != nil && len(ex.Functions) > 0 {
		x.FlameGraph = p.flameGraph(ctx, ex)
	}
	return x
}

// flameGraph draws the explanation's differential flame graph from the
// builds' profiled documents again (the status keeps only the top
// functions); nil when they cannot be read.
func (p *bisectionPass) flameGraph(ctx context.Context, ex *dbbenchv1alpha1.BisectionExplanation) []byte {
	s, err := p.setup(ctx)
	if err != nil {
		return nil
	}
	rounds, err := p.listRounds(ctx)
	if err != nil {
		return nil
	}
	index := func(name string) int {
		return slices.IndexFunc(s.points, func(pt dbbenchv1alpha1.BisectionPoint) bool { return framework.PointName(pt) == name })
	}
	good, err := p.pointDocuments(ctx, rounds, index(p.bis.Status.LastGood))
	if err != nil {
		return nil
	}
	bad, err := p.pointDocuments(ctx, rounds, index(p.bis.Status.FirstBad))
	if err != nil {
		return nil
	}
	e, err := explain.Explain(good, bad, ex.Step, int(ex.Threads), explainTop)
	if e == nil || err != nil {
		return nil
	}
	svg, err := e.FlameGraph(fmt.Sprintf("%s against %s", p.bis.Status.FirstBad, p.bis.Status.LastGood))
	if err != nil {
		p.log.Info("Left the flame graph out of the report", "error", err.Error())
		return nil
	}
	return svg
}
