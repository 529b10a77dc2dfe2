package benchmarkack

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/specs"
	"github.com/dbbench/dbbench/pkg/store"
	"github.com/dbbench/dbbench/pkg/triage"
)

// ackRecheck is how soon an ack that names a run not found (yet) is
// checked again: the run may still be uploading.
const ackRecheck = 2 * time.Minute

// Reconciler checks each BenchmarkAck against its suite's runs
// (Accepted), mirrors it to the suite's object store as
// <suite>/_acks/<name>.json, regenerates the suite's site with it
// (Published), and on deletion removes it from both.
//
// The object store is the one the suite's runs upload to: the newest run
// of the suite in the namespace with output.s3, else a BenchmarkSchedule
// of the suite whose run template has one.
type Reconciler struct {
	client.Client
	// APIReader reads the credentials Secret (never cached).
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
}

// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkacks,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkacks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkacks/finalizers,verbs=update
// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkruns,verbs=get;list;watch
// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkschedules,verbs=get;list;watch

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	return ctrl.NewControllerManagedBy(mgr).For(&dbbenchv1alpha1.BenchmarkAck{}).Named("benchmarkack").Complete(r)
}

// ackPass is one pass over one ack.
type ackPass struct {
	r   *Reconciler
	ack *dbbenchv1alpha1.BenchmarkAck
	now time.Time
	framework.Events
}

// Reconcile checks and publishes one ack and writes its status once, or
// withdraws a deleted one (framework.Reconcile's shell, as every kind).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return framework.Reconcile(ctx, r, r.APIReader, req.NamespacedName, "ack",
		func(ack *dbbenchv1alpha1.BenchmarkAck) *ackPass { return &ackPass{r: r, ack: ack, now: r.Clock.Now()} },
		r.writeStatus)
}

// writeStatus writes the status a pass computed, if it changed, with a merge
// patch under an optimistic lock.
func (r *Reconciler) writeStatus(ctx context.Context, original, ack *dbbenchv1alpha1.BenchmarkAck) error {
	framework.SetHealth(&ack.Status.Conditions, ack.Generation, r.Clock.Now(), framework.AckHealth(&ack.Status))
	if equality.Semantic.DeepEqual(original.Status, ack.Status) {
		return nil
	}
	ack.Status.ObservedGeneration = ack.Generation
	return framework.PatchStatus(ctx, r, original, ack, "ack status")
}

// EmitEvents records the pass's events once its status is written.
func (p *ackPass) EmitEvents(statusWritten bool) { p.Emit(p.r.Recorder, p.ack, statusWritten) }

func (p *ackPass) setCondition(t string, status metav1.ConditionStatus, reason, msg string) bool {
	return framework.SetChangedCondition(&p.ack.Status.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: p.ack.Generation, LastTransitionTime: metav1.NewTime(p.now)})
}

func (p *ackPass) Reconcile(ctx context.Context) (ctrl.Result, error) {
	a := p.ack
	out, err := suiteOutput(ctx, p.r.Client, a.Namespace, a.Spec.Suite)
	if err != nil {
		return ctrl.Result{}, err
	}
	var s *store.Store
	var storeErr error
	if out != nil {
		var uerr *framework.UploadError
		if s, uerr = framework.OpenS3Store(ctx, p.r.APIReader, a.Namespace, out); uerr != nil {
			storeErr = uerr.Err
		}
	}
	runs, histErr := p.suiteManifests(ctx, s)
	if histErr != nil && len(runs) == 0 {
		p.setCondition(dbbenchv1alpha1.AckConditionAccepted, metav1.ConditionUnknown, dbbenchv1alpha1.AckReasonHistoryUnreadable,
			fmt.Sprintf("The runs of suite %s could not be read: %v", a.Spec.Suite, histErr))
		return ctrl.Result{RequeueAfter: ackRecheck}, nil
	}
	if err := triage.Check(framework.AckOf(a), runs); err != nil {
		reason := dbbenchv1alpha1.AckReasonRunNotFound
		var nf *triage.NotFoundError
		if errors.As(err, &nf) {
			reason = map[string]string{triage.WhatSuite: dbbenchv1alpha1.AckReasonSuiteNotFound, triage.WhatRun: dbbenchv1alpha1.AckReasonRunNotFound,
				triage.WhatCell: dbbenchv1alpha1.AckReasonCellNotFound, triage.WhatStep: dbbenchv1alpha1.AckReasonStepNotFound,
				triage.WhatThreads: dbbenchv1alpha1.AckReasonThreadsNotFound}[nf.What]
		}
		msg := fmt.Sprintf("Nothing acknowledged: %v", err)
		if p.setCondition(dbbenchv1alpha1.AckConditionAccepted, metav1.ConditionFalse, reason, msg) {
			p.Event(true, reason, "Check", msg)
		}
		p.setCondition(dbbenchv1alpha1.AckConditionPublished, metav1.ConditionFalse, reason, "Not published: the ack is not accepted")
		return ctrl.Result{RequeueAfter: ackRecheck}, nil
	}
	p.setCondition(dbbenchv1alpha1.AckConditionAccepted, metav1.ConditionTrue, dbbenchv1alpha1.AckReasonAccepted,
		fmt.Sprintf("Acknowledges %s of suite %s (%s): %s", framework.AckOf(a).Scope(), a.Spec.Suite, a.Spec.ResolutionOrDefault(), a.Spec.Reason))
	switch {
	case out == nil:
		p.setCondition(dbbenchv1alpha1.AckConditionPublished, metav1.ConditionFalse, dbbenchv1alpha1.AckReasonNoObjectStore,
			fmt.Sprintf("No run or schedule of suite %s in namespace %s uploads to an object store (output.s3): the ack counts for this namespace's verdicts only", a.Spec.Suite, a.Namespace))
		return ctrl.Result{}, nil
	case storeErr != nil:
		return p.publishFailed(storeErr)
	}
	return p.publish(ctx, s)
}

// publish writes the ack to the store and regenerates the suite's site
// when the object changed (or was never confirmed).
func (p *ackPass) publish(ctx context.Context, s *store.Store) (ctrl.Result, error) {
	a := p.ack
	if !controllerutil.ContainsFinalizer(a, dbbenchv1alpha1.AckFinalizer) {
		patch := client.MergeFrom(a.DeepCopy())
		controllerutil.AddFinalizer(a, dbbenchv1alpha1.AckFinalizer)
		if err := p.r.Patch(ctx, a, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding the finalizer: %w", err)
		}
	}
	sctx, cancel := context.WithTimeout(ctx, framework.UploadPassTimeout)
	defer cancel()
	if have, err := s.GetAck(sctx, a.Spec.Suite, a.Name); err == nil && have.UID != "" && (have.UID != string(a.UID) || have.Namespace != a.Namespace) {
		msg := fmt.Sprintf("%s holds the ack %s of namespace %s (uid %s): ack names must be unique per suite in a bucket",
			s.URL(s.Layout().AckKey(a.Spec.Suite, a.Name)), have.Name, have.Namespace, have.UID)
		if p.setCondition(dbbenchv1alpha1.AckConditionPublished, metav1.ConditionFalse, dbbenchv1alpha1.AckReasonConflict, msg) {
			p.Event(true, dbbenchv1alpha1.AckReasonConflict, "Publish", msg)
		}
		return ctrl.Result{}, nil
	} else if err != nil && !errors.Is(err, store.ErrNotFound) && (errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrAuth)) {
		return p.publishFailed(err)
	}
	obj, err := s.PutAck(sctx, framework.AckOf(a))
	if err != nil {
		return p.publishFailed(err)
	}
	st := &a.Status
	published := meta.IsStatusConditionTrue(st.Conditions, dbbenchv1alpha1.AckConditionPublished)
	if obj.Unchanged && published && st.ObservedGeneration == a.Generation && st.Site != "" {
		return ctrl.Result{}, nil // nothing new for the site
	}
	site, err := framework.PublishSite(ctx, s, a.Spec.Suite, p.now)
	if err != nil {
		return p.publishFailed(err)
	}
	st.URL, st.Site = s.URL(obj.Key), site
	msg := fmt.Sprintf("In the object store at %s; the suite's site %s shows it", st.URL, site)
	if p.setCondition(dbbenchv1alpha1.AckConditionPublished, metav1.ConditionTrue, dbbenchv1alpha1.AckReasonPublished, msg) {
		p.Event(false, EventAckPublished, "Publish", msg)
	}
	return ctrl.Result{}, nil
}

// publishFailed records a failed publication; it is retried.
func (p *ackPass) publishFailed(err error) (ctrl.Result, error) {
	msg := fmt.Sprintf("Publishing to the suite's object store failed (retried): %v", err)
	if p.setCondition(dbbenchv1alpha1.AckConditionPublished, metav1.ConditionFalse, dbbenchv1alpha1.AckReasonPublishFailed, msg) {
		p.Event(true, dbbenchv1alpha1.AckReasonPublishFailed, "Publish", msg)
	}
	return ctrl.Result{RequeueAfter: framework.UploadRetryDelay(p.ack.UID, 1)}, nil
}

// Finalize removes a deleted ack from the store (when the object there is
// this ack's) and regenerates the site, then lets the ack go.
func (p *ackPass) Finalize(ctx context.Context) (ctrl.Result, error) {
	a := p.ack
	if !controllerutil.ContainsFinalizer(a, dbbenchv1alpha1.AckFinalizer) {
		return ctrl.Result{}, nil
	}
	out, err := suiteOutput(ctx, p.r.Client, a.Namespace, a.Spec.Suite)
	if err != nil {
		return ctrl.Result{}, err
	}
	if out != nil {
		s, uerr := framework.OpenS3Store(ctx, p.r.APIReader, a.Namespace, out)
		if uerr != nil {
			return ctrl.Result{}, fmt.Errorf("removing ack %s from the object store: %w", a.Name, uerr.Err)
		}
		sctx, cancel := context.WithTimeout(ctx, framework.UploadPassTimeout)
		defer cancel()
		have, err := s.GetAck(sctx, a.Spec.Suite, a.Name)
		switch {
		case err == nil && (have.UID == "" || have.UID == string(a.UID)):
			if err := s.Delete(sctx, s.Layout().AckKey(a.Spec.Suite, a.Name)); err != nil {
				return ctrl.Result{}, fmt.Errorf("removing ack %s from the object store: %w", a.Name, err)
			}
			if _, err := framework.PublishSite(ctx, s, a.Spec.Suite, p.now); err != nil {
				return ctrl.Result{}, err
			}
			p.r.Recorder.Eventf(a, nil, corev1.EventTypeNormal, EventAckUnpublished, "Withdraw",
				"Removed from %s; the suite's site no longer shows the change as acknowledged", s.URL(s.Layout().AckKey(a.Spec.Suite, a.Name)))
		case err != nil && !errors.Is(err, store.ErrNotFound) && (errors.Is(err, store.ErrTransient) || errors.Is(err, store.ErrAuth)):
			return ctrl.Result{}, fmt.Errorf("reading ack %s in the object store: %w", a.Name, err)
		}
	}
	patch := client.MergeFrom(a.DeepCopy())
	controllerutil.RemoveFinalizer(a, dbbenchv1alpha1.AckFinalizer)
	return ctrl.Result{}, client.IgnoreNotFound(p.r.Patch(ctx, a, patch))
}

// suiteOutput is the object store the suite's runs upload to: that of the
// newest run of the suite in the namespace with output.s3, else that of a
// schedule of the suite (its run template's suite, else its name); nil
// when none has one.
func suiteOutput(ctx context.Context, c client.Client, ns, suite string) (*dbbenchv1alpha1.S3Output, error) {
	var runs dbbenchv1alpha1.BenchmarkRunList
	if err := c.List(ctx, &runs, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing the suite's runs: %w", err)
	}
	var newest *dbbenchv1alpha1.BenchmarkRun
	for i := range runs.Items {
		r := &runs.Items[i]
		if r.Spec.Suite == suite && r.Spec.Output.S3 != nil && (newest == nil || newest.CreationTimestamp.Before(&r.CreationTimestamp)) {
			newest = r
		}
	}
	if newest != nil {
		return newest.Spec.Output.S3, nil
	}
	var scheds dbbenchv1alpha1.BenchmarkScheduleList
	if err := c.List(ctx, &scheds, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing the suite's schedules: %w", err)
	}
	for _, s := range scheds.Items {
		spec := s.Spec.RunTemplate.Spec
		name := spec.Suite
		if name == "" {
			name = s.Name
		}
		if name == suite && spec.Output.S3 != nil {
			return spec.Output.S3, nil
		}
	}
	return nil, nil
}

// suiteManifests are the manifests of the suite's runs: the namespace's
// (their results ConfigMaps) and the object store's (s may be nil). The
// error says what could not be read; the manifests that could are
// returned with it.
func (p *ackPass) suiteManifests(ctx context.Context, s *store.Store) ([]*results.Manifest, error) {
	var runs dbbenchv1alpha1.BenchmarkRunList
	if err := p.r.List(ctx, &runs, client.InNamespace(p.ack.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the suite's runs: %w", err)
	}
	seen := map[string]bool{}
	var out []*results.Manifest
	for i := range runs.Items {
		r := &runs.Items[i]
		if r.Spec.Suite != p.ack.Spec.Suite {
			continue
		}
		var cm corev1.ConfigMap
		if err := p.r.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: specs.RunResultsConfigMapName(r)}, &cm); err != nil {
			continue // not finished yet, or its results are gone
		}
		m, err := results.UnmarshalManifest([]byte(cm.Data[agentapi.RunResultKeyManifest]))
		if err != nil {
			continue
		}
		seen[r.Name] = true
		out = append(out, m)
	}
	if s == nil {
		return out, nil
	}
	sctx, cancel := context.WithTimeout(ctx, framework.UploadPassTimeout)
	defer cancel()
	stored, err := s.ListRuns(sctx, p.ack.Spec.Suite)
	for _, m := range stored {
		if !seen[m.Run.Name] {
			out = append(out, m)
		}
	}
	var le *store.ListError
	if err != nil && !errors.As(err, &le) {
		return out, fmt.Errorf("reading the suite's runs in the object store: %w", err)
	}
	return out, nil
}

var _ framework.Finalizer = (*ackPass)(nil)
