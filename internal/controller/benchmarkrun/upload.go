package benchmarkrun

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/runverdict"
	"github.com/dbbench/dbbench/pkg/specs"
	"github.com/dbbench/dbbench/pkg/store"
	"github.com/dbbench/dbbench/pkg/triage"
	"github.com/dbbench/dbbench/pkg/verdictformat"
)

// preflightTimeout bounds the check of spec.output.s3 at the run's start.
const preflightTimeout = 15 * time.Second

// notRetried tells people, in the UploadFailed message, what
// status.upload.retryRequiresAnnotation says to programs.
const notRetried = "Not retried until the run is annotated " + dbbenchv1alpha1.AnnotationRetryUpload

// StoreDocument is the document the controller uploads for a cell, with the
// run's identity (name, namespace, UID, suite) from the run object, in the
// full form the store keeps, under the matrix's cell name. doc is the
// agent's full document from the cell's outbox, or the compact document its
// result ConfigMap holds: that one has no per-second series, so it carries
// the series summaries and drops the compact form's encoded QPS series,
// which the full form does not allow. doc is modified.
func StoreDocument(run *dbbenchv1alpha1.BenchmarkRun, cell string, doc *results.Document) (*results.Document, error) {
	d := doc
	d.Cell.Name = cell
	d.Run = results.Run{Name: run.Name, Namespace: run.Namespace, UID: string(run.UID), Suite: run.Spec.Suite}
	d.Form = results.FormFull
	for i := range d.Steps {
		d.Steps[i].EncodedQPS = nil
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("cell %s: %w", d.Cell.Name, err)
	}
	return d, nil
}

// layout is the run's key layout, or nil without output.s3.
func (p *runPass) layout() *store.Layout {
	if p.run.Spec.Output.S3 == nil {
		return nil
	}
	return &store.Layout{Prefix: p.run.Spec.Output.S3.Prefix}
}

// cellObjectKey is where a cell's document goes in the store ("" without
// output.s3).
func (p *runPass) cellObjectKey(cell string) string {
	l := p.layout()
	if l == nil {
		return ""
	}
	return l.CellKey(p.run.Spec.Suite, p.run.Name, cell, store.ObjectResult)
}

// uploadPending reports whether a finished run still has uploading to do.
func (p *runPass) uploadPending() bool {
	if p.run.Spec.Output.S3 == nil || p.uploadFailedForGood() {
		return false
	}
	u := p.run.Status.Upload
	return u == nil || !u.ManifestUploaded
}

// outboxMayNeedDraining reports whether a finished run has uploaded cells,
// whose results ConfigMaps may still hold the outbox's attachments.
func (p *runPass) outboxMayNeedDraining() bool {
	if p.run.Spec.Output.S3 == nil {
		return false
	}
	for _, cs := range p.run.Status.Cells {
		if cs.Uploaded {
			return true
		}
	}
	return false
}

// uploadFailedForGood reports whether the last attempt failed with an
// error after which nothing is tried until the retry annotation.
func (p *runPass) uploadFailedForGood() bool {
	u := p.run.Status.Upload
	return u != nil && u.RetryRequiresAnnotation
}

// takeRetryRequest handles dbbenchv1alpha1.AnnotationRetryUpload: on a run whose
// upload failed or waits for its backoff, the backoff is reset and the
// condition set to UploadPending, so that this pass (or, if it ends early,
// the next) makes an attempt. The annotation is removed after the pass's
// status write (see Reconcile), whatever the upload's state.
func (p *runPass) takeRetryRequest() {
	if _, ok := p.run.Annotations[dbbenchv1alpha1.AnnotationRetryUpload]; !ok {
		return
	}
	p.dropRetryAnnotation = true
	if p.run.Spec.Output.S3 == nil {
		return
	}
	u := p.run.Status.Upload
	stopped, waiting := p.uploadFailedForGood(), u != nil && u.Failures > 0
	if !stopped && !waiting {
		p.log.Info("Retry of the upload requested, but it has not failed", "annotation", dbbenchv1alpha1.AnnotationRetryUpload)
		return
	}
	if u != nil {
		u.Failures, u.LastFailureTime, u.RetryRequiresAnnotation = 0, nil, false
	}
	last := ""
	if c := meta.FindStatusCondition(p.run.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded); c != nil {
		last = "; the last attempt: " + c.Message
		if len(last) > 30000 {
			last = last[:30000]
		}
	}
	p.setCondition(dbbenchv1alpha1.ConditionResultsUploaded, metav1.ConditionFalse, dbbenchv1alpha1.ReasonUploadPending,
		fmt.Sprintf("Retrying at once (annotation %s)%s", dbbenchv1alpha1.AnnotationRetryUpload, last))
	p.log.Info("Retrying the upload now", "annotation", dbbenchv1alpha1.AnnotationRetryUpload)
	p.Event(
		false,
		EventUploadRetryRequested,
		"Upload",
		fmt.Sprintf("Retrying the upload to the object store now (annotation %s)", dbbenchv1alpha1.AnnotationRetryUpload),
	)
}

// preflight checks spec.output.s3 once, when the run starts (before its
// first cell): the credentials Secret, the endpoint and the bucket
// (store.CheckBucket). A failure does not stop the benchmark, whose results
// stay in the cluster; it sets the ResultsUploaded condition with reason
// PreflightFailed and a Warning event, so it is seen before hours of
// benchmarking. The condition records that the check was made.
func (p *runPass) preflight(ctx context.Context) {
	o := p.run.Spec.Output.S3
	if o == nil || meta.FindStatusCondition(p.run.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded) != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	var err error
	s, uerr := p.openStore(ctx)
	if uerr != nil {
		err = uerr.Err
	} else {
		err = s.CheckBucket(ctx)
	}
	where := fmt.Sprintf("bucket %q at endpoint %s with the credentials of Secret %q", o.Bucket, o.Endpoint, o.CredentialsSecret.Name)
	if err == nil {
		p.log.Info("Checked spec.output.s3", "bucket", o.Bucket, "endpoint", o.Endpoint)
		p.setCondition(dbbenchv1alpha1.ConditionResultsUploaded, metav1.ConditionFalse, dbbenchv1alpha1.ReasonUploading,
			fmt.Sprintf("spec.output.s3 checked: %s is reachable; cell documents are uploaded as cells finish", where))
		return
	}
	msg := fmt.Sprintf(
		"Pre-flight check of spec.output.s3 (%s) failed: %v. The benchmark runs anyway and its results stay in the cluster; uploads are attempted as cells finish (fix spec.output.s3, the Secret or the bucket)",
		where,
		err,
	)
	p.log.Info("Pre-flight check of spec.output.s3 failed", "error", err.Error())
	p.Event(true, dbbenchv1alpha1.ReasonPreflightFailed, "Preflight", msg)
	p.setCondition(dbbenchv1alpha1.ConditionResultsUploaded, metav1.ConditionFalse, dbbenchv1alpha1.ReasonPreflightFailed, msg)
}

// cellDocument is a finished cell's readable document from its result
// ConfigMap, or nil.
func (p *runPass) cellDocument(c matrix.Cell, cs *dbbenchv1alpha1.CellStatus) *results.Document {
	if cs.Phase != dbbenchv1alpha1.CellSucceeded && cs.Phase != dbbenchv1alpha1.CellFailed {
		return nil
	}
	raw, ok := p.resultData(c, agentapi.ResultKeyDocument)
	if !ok {
		return nil
	}
	doc, err := results.Unmarshal([]byte(raw))
	if err != nil {
		return nil // manifest() logs it; the cell has nothing to upload
	}
	return doc
}

// syncUploads uploads what the store does not have yet: the documents of
// finished cells (with the agent's full document and log from the cell's
// outbox when they are there), then, once m is given (the run has
// finished), the HTML report and the manifest. The results ConfigMaps stay;
// only the outbox's attachments are removed, once the status records the
// cell as uploaded (drainOutboxes). It records the outcome in the status
// (written with the pass's single status write) and requeues the run while
// a failure waits for its retry.
func (p *runPass) syncUploads(ctx context.Context, cells []matrix.Cell, m *results.Manifest) {
	if p.run.Spec.Output.S3 == nil {
		return
	}
	// Before any uploaded flag changes: see drainOutboxes.
	p.drainOutboxes(ctx, cells)
	if p.uploadFailedForGood() {
		return
	}
	st := &p.run.Status
	if st.Upload == nil {
		st.Upload = &dbbenchv1alpha1.UploadStatus{}
	}
	todo, docs := p.pendingCellDocuments(cells)
	needManifest := m != nil && !st.Upload.ManifestUploaded
	if len(todo) == 0 && !needManifest {
		p.uploadProgress()
		return
	}
	if p.uploadWaiting() {
		return
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, framework.UploadPassTimeout)
	defer cancel()
	s, uerr := p.openStore(ctx)
	if uerr != nil {
		p.uploadFailed(uerr)
		return
	}
	if !p.uploadCells(ctx, s, cells, todo, docs) {
		return
	}
	if needManifest && !p.uploadManifest(ctx, parent, s, cells, m) {
		return
	}
	p.uploadProgress()
}

// pendingCellDocuments are the indexes of the finished cells the store
// does not have yet, in the run's order, and their documents.
func (p *runPass) pendingCellDocuments(cells []matrix.Cell) ([]int, map[int]*results.Document) {
	st := &p.run.Status
	var todo []int
	docs := map[int]*results.Document{}
	for i, c := range cells {
		if st.Cells[i].Uploaded {
			continue
		}
		if d := p.cellDocument(c, &st.Cells[i]); d != nil {
			todo = append(todo, i)
			docs[i] = d
		}
	}
	return todo, docs
}

// uploadCells uploads the documents of the cells todo in order, marking
// each uploaded as it lands, so that a failure part way keeps what was
// uploaded before it. It reports false on the first failure, recorded
// with uploadFailed.
func (p *runPass) uploadCells(ctx context.Context, s *store.Store, cells []matrix.Cell, todo []int, docs map[int]*results.Document) bool {
	st := &p.run.Status
	u := st.Upload
	for _, i := range todo {
		doc, extras, err := p.cellUpload(cells[i], docs[i])
		if err == nil {
			_, err = s.UploadCell(ctx, doc, extras)
			p.recordUpload(UploadKindCell, err)
		}
		if err != nil {
			ue := framework.StoreFailure(err)
			ue.Err = fmt.Errorf("cell %s: %w", cells[i].Name, err)
			p.uploadFailed(ue)
			return false
		}
		st.Cells[i].Uploaded = true
		u.CellsUploaded++
		u.Failures, u.LastFailureTime = 0, nil
	}
	return true
}

// uploadManifest uploads the finished run's manifest, with the HTML report
// and the verdict when they can be made (the manifest matters more than
// either), records the results' URL and publishes the suite's site. The
// site is published under parent, not ctx: framework.PublishSite has a timeout of its
// own, not what the uploads left of theirs. It reports false on a failure,
// recorded with uploadFailed.
func (p *runPass) uploadManifest(ctx, parent context.Context, s *store.Store, cells []matrix.Cell, m *results.Manifest) bool {
	st := &p.run.Status
	u := st.Upload
	var extras store.RunExtras
	if html, err := p.reportHTML(cells, m); err != nil {
		p.log.Info("Uploading the manifest without report.html: the report cannot be built", "error", err.Error())
	} else {
		extras.ReportHTML = html
	}
	if v := p.verdictDocument(ctx); v != nil {
		if data, err := triage.MarshalVerdict(*v); err == nil {
			extras.Verdict = data
		}
		if data, err := verdictformat.JUnit(*v); err == nil {
			extras.VerdictJUnit = data
		}
	}
	_, err := s.UploadRun(ctx, m, extras)
	p.recordUpload(UploadKindRun, err)
	if err != nil {
		ue := framework.StoreFailure(err)
		ue.Err = fmt.Errorf("manifest: %w", err)
		p.uploadFailed(ue)
		return false
	}
	u.ManifestUploaded = true
	u.Failures, u.LastFailureTime = 0, nil
	if st.Results == nil {
		st.Results = &dbbenchv1alpha1.ResultsReference{}
	}
	st.Results.URL = s.URL(s.Layout().RunPrefix(m.Run.Suite, m.Run.Name))
	what := "the manifest"
	if len(extras.ReportHTML) > 0 {
		what = "the HTML report and the manifest"
	}
	p.Event(false, framework.EventResultsUploaded, "Upload", fmt.Sprintf("Uploaded %d cell documents, %s to %s", u.CellsUploaded, what, st.Results.URL))
	p.publishSite(parent, s, m.Run.Suite)
	return true
}

func (p *runPass) recordUpload(kind string, err error) {
	p.metrics = append(p.metrics, func() { RecordUpload(kind, err) })
}

// uploadWaiting reports whether the backoff after a failed attempt still
// runs, and requeues the run for its end.
func (p *runPass) uploadWaiting() bool {
	u := p.run.Status.Upload
	if u == nil || u.Failures == 0 || u.LastFailureTime == nil {
		return false
	}
	wait := u.LastFailureTime.Add(p.retryDelay(u.Failures)).Sub(p.now)
	if wait <= 0 {
		return false
	}
	p.requeue.after(wait)
	return true
}

// retryDelay is the wait after the n-th failed attempt, with a jitter fixed
// per run and attempt (a pass recomputes it and must get the same answer).
func (p *runPass) retryDelay(n int32) time.Duration {
	return framework.UploadRetryDelay(p.run.UID, n)
}

// openStore reads the credentials Secret (uncached) and makes the store.
func (p *runPass) openStore(ctx context.Context) (*store.Store, *framework.UploadError) {
	return framework.OpenS3Store(ctx, p.r.APIReader, p.run.Namespace, p.run.Spec.Output.S3)
}

// uploadFailed records a failed attempt: the condition, the backoff, an
// event when the condition's reason changes.
func (p *runPass) uploadFailed(ue *framework.UploadError) {
	u := p.run.Status.Upload
	u.Failures++
	u.LastFailureTime = &metav1.Time{Time: p.now}
	cause := ue.Err.Error()
	if len(cause) > 30000 {
		cause = cause[:30000]
	}
	var reason, msg string
	u.RetryRequiresAnnotation = ue.Policy == framework.RetryNever
	switch wait := p.retryDelay(u.Failures).Round(time.Second); ue.Policy {
	case framework.RetryWait:
		reason = dbbenchv1alpha1.ReasonUploadPending
		msg = fmt.Sprintf("%s (attempt %d failed; retrying in %s; the results stay in the cluster)", cause, u.Failures, wait)
		p.requeue.after(wait)
	case framework.RetryFixSecret:
		reason = dbbenchv1alpha1.ReasonUploadFailed
		msg = fmt.Sprintf("%s (attempt %d failed): fix the Secret %s; retrying in %s, or at once when the run is annotated %s; the results stay in the cluster",
			cause, u.Failures, p.run.Spec.Output.S3.CredentialsSecret.Name, wait, dbbenchv1alpha1.AnnotationRetryUpload)
		p.requeue.after(wait)
	default:
		reason = dbbenchv1alpha1.ReasonUploadFailed
		msg = fmt.Sprintf("%s. %s (fix spec.output.s3 or the store first); the results stay in the cluster", cause, notRetried)
	}
	p.log.Info("Upload failed", "reason", reason, "error", ue.Err.Error())
	if prev := meta.FindStatusCondition(p.run.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded); prev == nil || prev.Reason != reason {
		p.Event(true, reason, "Upload", msg)
	}
	p.setCondition(dbbenchv1alpha1.ConditionResultsUploaded, metav1.ConditionFalse, reason, msg)
}

// uploadProgress sets the condition after a pass with no failure.
func (p *runPass) uploadProgress() {
	st := &p.run.Status
	u := st.Upload
	if u.Failures > 0 {
		return // the last failure's message stands until an attempt succeeds
	}
	if c := meta.FindStatusCondition(st.Conditions, dbbenchv1alpha1.ConditionResultsUploaded); c != nil &&
		c.Reason == dbbenchv1alpha1.ReasonPreflightFailed && u.CellsUploaded == 0 && !u.ManifestUploaded {
		return // the pre-flight's finding stands until an upload is attempted
	}
	if u.ManifestUploaded {
		p.setCondition(dbbenchv1alpha1.ConditionResultsUploaded, metav1.ConditionTrue, dbbenchv1alpha1.ReasonUploaded,
			fmt.Sprintf("%d cell documents and the run manifest are in the object store", u.CellsUploaded))
		return
	}
	p.setCondition(dbbenchv1alpha1.ConditionResultsUploaded, metav1.ConditionFalse, dbbenchv1alpha1.ReasonUploading,
		fmt.Sprintf("%d cell documents uploaded; the run manifest follows the last cell", u.CellsUploaded))
}

// publishSite regenerates the run's suite's site once the run's manifest
// is in the store. A failure leaves the results as uploaded: it is a
// Warning event, and the next run of the suite, an acknowledgement or
// `kubectl dbbench site --publish` regenerates the site.
func (p *runPass) publishSite(ctx context.Context, s *store.Store, suite string) {
	url, err := framework.PublishSite(ctx, s, suite, p.now)
	if err != nil {
		p.log.Info("Regenerating the suite's site failed", "error", err.Error())
		p.Event(true, framework.EventSitePublishFailed, "Publish", fmt.Sprintf("The suite's site was not regenerated: %v", err))
		return
	}
	p.run.Status.Results.Site = url
}

// verdictDocument is the run's verdict for the object store: the status's
// (which has the bisection it started) with the cases the verdict wrote
// beside the manifest. A results ConfigMap that cannot be read leaves the
// document without cases, not the upload without a verdict.
func (p *runPass) verdictDocument(ctx context.Context) *triage.Verdict {
	v := runverdict.Document(p.run)
	if v == nil || !p.run.Spec.Output.ConfigMap.IsEnabled() {
		return v
	}
	// A live read: the pass that wrote the ConfigMap uploads at once,
	// before the cache may have it.
	var cm corev1.ConfigMap
	key := client.ObjectKey{Namespace: p.run.Namespace, Name: specs.RunResultsConfigMapName(p.run)}
	if err := p.r.APIReader.Get(ctx, key, &cm); err != nil {
		return v
	}
	if raw, ok := cm.Data[agentapi.RunResultKeyVerdict]; ok {
		if written, err := triage.UnmarshalVerdict([]byte(raw)); err == nil {
			v.Cases, v.CasesLeftOut = written.Cases, written.CasesLeftOut
		}
	}
	return v
}
