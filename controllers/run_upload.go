package controllers

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/plan"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
	"github.com/dbbench/dbbench/pkg/store"
)

// The manager reads the object store's credentials from the Secret a run
// names in spec.output.s3.credentialsSecret, with the uncached API reader
// (one GET per upload attempt; Secrets are never cached or listed).
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// Reasons of the ResultsUploaded condition.
const (
	ReasonUploading     = "Uploading"
	ReasonUploadPending = "UploadPending"
	ReasonUploadFailed  = "UploadFailed"
	ReasonUploaded      = "Uploaded"
)

// Keys of the credentials Secret.
const (
	SecretKeyAccessKeyID     = "accessKeyID"
	SecretKeySecretAccessKey = "secretAccessKey"
)

var (
	// passBackoff bounds the store's own retries within one reconcile pass:
	// a pass stays short, and requeues (uploadRetry) do the long retrying.
	passBackoff = store.Backoff{Initial: 200 * time.Millisecond, Max: time.Second, Multiplier: 2, Jitter: 0.5, MaxAttempts: 2}
	// uploadRetry is the wait between failed passes: 2 s doubling to 5 min,
	// shortened by up to a fifth (per run, so runs do not retry in step).
	uploadRetry = store.Backoff{Initial: 2 * time.Second, Max: 5 * time.Minute, Multiplier: 2, Jitter: 0.2}
)

const (
	// uploadRequestTimeout bounds one request to the store.
	uploadRequestTimeout = 10 * time.Second
	// uploadPassTimeout bounds the uploads of one pass.
	uploadPassTimeout = 30 * time.Second
)

// uploadError is an upload attempt's failure; retry says whether waiting
// can fix it.
type uploadError struct {
	err   error
	retry bool
}

// StoreDocument is the document the controller uploads for a cell: the
// compact document its result ConfigMap holds, with the run's identity
// (name, namespace, UID, suite) from the run object, in the full form the
// store keeps, under the matrix's cell name. The cluster has no per-second series (the agent keeps them
// out of the ConfigMap), so the document carries the series summaries and
// drops the compact form's encoded QPS series, which the full form does not
// allow. compact is modified.
func StoreDocument(run *dbbenchv1alpha1.BenchmarkRun, cell string, compact *results.Document) (*results.Document, error) {
	d := compact
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

func (p *runPass) uploadFailedForGood() bool {
	c := meta.FindStatusCondition(p.run.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded)
	return c != nil && c.Reason == ReasonUploadFailed
}

// cellDocument is a finished cell's readable document from its result
// ConfigMap, or nil.
func (p *runPass) cellDocument(c matrix.Cell, cs *dbbenchv1alpha1.CellStatus) *results.Document {
	if cs.Phase != dbbenchv1alpha1.CellSucceeded && cs.Phase != dbbenchv1alpha1.CellFailed {
		return nil
	}
	cm := p.kids.results[specs.ResultConfigMapName(c)]
	if cm == nil {
		return nil
	}
	raw, ok := cm.Data[plan.ResultKeyDocument]
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
// finished cells, then, once m is given (the run has finished), the
// manifest. It never deletes anything: the ConfigMaps stay whatever happens.
// It records the outcome in the status (written with the pass's single
// status write) and requeues the run while a retryable failure waits.
func (p *runPass) syncUploads(ctx context.Context, cells []matrix.Cell, m *results.Manifest) {
	if p.run.Spec.Output.S3 == nil || p.uploadFailedForGood() {
		return
	}
	st := &p.run.Status
	if st.Upload == nil {
		st.Upload = &dbbenchv1alpha1.UploadStatus{}
	}
	u := st.Upload
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
	needManifest := m != nil && !u.ManifestUploaded
	if len(todo) == 0 && !needManifest {
		p.uploadProgress()
		return
	}
	if p.uploadWaiting() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, uploadPassTimeout)
	defer cancel()
	s, uerr := p.openStore(ctx)
	if uerr != nil {
		p.uploadFailed(uerr)
		return
	}
	for _, i := range todo {
		doc, err := StoreDocument(p.run, cells[i].Name, docs[i])
		if err == nil {
			_, err = s.UploadCell(ctx, doc, store.CellExtras{})
			p.recordUpload(UploadKindCell, err)
		}
		if err != nil {
			p.uploadFailed(&uploadError{err: fmt.Errorf("cell %s: %w", cells[i].Name, err), retry: store.Retryable(err)})
			return
		}
		st.Cells[i].Uploaded = true
		u.CellsUploaded++
		u.Failures, u.LastFailureTime = 0, nil
	}
	if needManifest {
		_, err := s.UploadRun(ctx, m, store.RunExtras{})
		p.recordUpload(UploadKindRun, err)
		if err != nil {
			p.uploadFailed(&uploadError{err: fmt.Errorf("manifest: %w", err), retry: store.Retryable(err)})
			return
		}
		u.ManifestUploaded = true
		u.Failures, u.LastFailureTime = 0, nil
		if st.Results == nil {
			st.Results = &dbbenchv1alpha1.ResultsReference{}
		}
		st.Results.URL = s.URL(s.Layout().RunPrefix(m.Run.Suite, m.Run.Name))
		p.event(false, "ResultsUploaded", "Upload", fmt.Sprintf("Uploaded %d cell documents and the manifest to %s", u.CellsUploaded, st.Results.URL))
	}
	p.uploadProgress()
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
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", p.run.UID, n)
	return uploadRetry.Delay(int(n), float64(h.Sum64()%1000)/1000)
}

// openStore reads the credentials Secret (uncached) and makes the store.
func (p *runPass) openStore(ctx context.Context) (*store.Store, *uploadError) {
	o := p.run.Spec.Output.S3
	name := o.CredentialsSecret.Name
	if p.r.APIReader == nil {
		return nil, &uploadError{err: errors.New("the manager has no API reader to read the credentials Secret")}
	}
	var sec corev1.Secret
	if err := p.r.APIReader.Get(ctx, types.NamespacedName{Namespace: p.run.Namespace, Name: name}, &sec); err != nil {
		// A missing Secret may yet be created; both are worth waiting for.
		return nil, &uploadError{err: fmt.Errorf("reading the credentials Secret %s: %w", name, err), retry: !apierrors.IsForbidden(err)}
	}
	ak, sk := string(sec.Data[SecretKeyAccessKeyID]), string(sec.Data[SecretKeySecretAccessKey])
	if ak == "" || sk == "" {
		return nil, &uploadError{err: fmt.Errorf("the credentials Secret %s needs the keys %s and %s", name, SecretKeyAccessKeyID, SecretKeySecretAccessKey)}
	}
	s, err := store.New(store.Config{
		Endpoint: o.Endpoint, Bucket: o.Bucket, Prefix: o.Prefix, Region: o.Region,
		AccessKeyID: ak, SecretAccessKey: sk, Backoff: passBackoff, RequestTimeout: uploadRequestTimeout,
	})
	if err != nil {
		return nil, &uploadError{err: fmt.Errorf("output.s3: %w", err)}
	}
	return s, nil
}

// uploadFailed records a failed attempt: the condition, the backoff, an
// event when the condition's reason changes.
func (p *runPass) uploadFailed(ue *uploadError) {
	u := p.run.Status.Upload
	u.Failures++
	u.LastFailureTime = &metav1.Time{Time: p.now}
	reason, msg := ReasonUploadFailed, ue.err.Error()+" (not retried)"
	if ue.retry {
		wait := p.retryDelay(u.Failures)
		reason = ReasonUploadPending
		msg = fmt.Sprintf("%s (attempt %d failed; retrying in %s; the results stay in the cluster)", ue.err.Error(), u.Failures, wait.Round(time.Second))
		p.requeue.after(wait)
	}
	if len(msg) > 32000 {
		msg = msg[:32000]
	}
	p.log.Info("Upload failed", "reason", reason, "error", ue.err.Error())
	if prev := meta.FindStatusCondition(p.run.Status.Conditions, dbbenchv1alpha1.ConditionResultsUploaded); prev == nil || prev.Reason != reason {
		p.event(true, reason, "Upload", msg)
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
	if u.ManifestUploaded {
		p.setCondition(dbbenchv1alpha1.ConditionResultsUploaded, metav1.ConditionTrue, ReasonUploaded,
			fmt.Sprintf("%d cell documents and the run manifest are in the object store", u.CellsUploaded))
		return
	}
	p.setCondition(dbbenchv1alpha1.ConditionResultsUploaded, metav1.ConditionFalse, ReasonUploading,
		fmt.Sprintf("%d cell documents uploaded; the run manifest follows the last cell", u.CellsUploaded))
}
