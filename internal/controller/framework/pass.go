package framework

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// Every controller (run, schedule, bisection, ack) reconciles the same way: one
// pass computes the status in memory and queues its events, the status is
// written once (the whole pass redone on a fresh copy on a conflict), and the
// events follow. This file holds that shell; what a pass decides stays in
// each controller.

// Pass is one reconcile pass over one object.
type Pass interface {
	Reconcile(ctx context.Context) (ctrl.Result, error)
	// EmitEvents records the pass's events: all of them once its status
	// was written, else only those about actions that happened anyway
	// (Event.done).
	EmitEvents(statusWritten bool)
}

// AfterWriter is a pass with something to do once its status is written
// (the run's: drop an annotation whose request the status records).
type AfterWriter interface {
	AfterWrite(ctx context.Context) error
}

// Finalizer is a pass over an object that holds a finalizer (the ack's:
// its copy in the object store). Finalize runs instead of the pass once the
// object is being deleted, and writes no status.
type Finalizer interface {
	Finalize(ctx context.Context) (ctrl.Result, error)
}

// Reconcile reads the object at key, runs the pass newPass builds on it
// and writes the status with write, redoing the pass on a fresh copy when the
// write conflicts (redoOnConflict). An object being deleted gets no pass:
// its children carry owner references and garbage collection removes them;
// a pass that is a Finalizer finalizes it instead.
// The pass's events are emitted after the write; when a write fails, that
// pass's events about actions that happened anyway (Event.done) are
// emitted, so a redo that finds the object already created loses nothing.
func Reconcile[T any, PT interface {
	*T
	client.Object
}, P Pass](ctx context.Context, c client.Reader, apiReader client.Reader, key client.ObjectKey, kind string,
	newPass func(PT) P, write func(ctx context.Context, original, obj PT) error) (ctrl.Result, error) {
	obj := PT(new(T))
	if err := c.Get(ctx, key, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		if f, ok := any(newPass(obj)).(Finalizer); ok {
			return f.Finalize(ctx)
		}
		return ctrl.Result{}, nil
	}
	var (
		p       P
		started bool
		result  ctrl.Result
		err     error
	)
	werr := redoOnConflict(ctx, apiReader, key, obj, kind, func(fresh PT) error {
		started = false
		if !fresh.GetDeletionTimestamp().IsZero() {
			return nil
		}
		original := fresh.DeepCopyObject().(PT)
		p, started = newPass(fresh), true
		result, err = p.Reconcile(ctx)
		if werr := write(ctx, original, fresh); werr != nil {
			// Runs created or deleted are announced even so: that happened.
			p.EmitEvents(false)
			return werr
		}
		return nil
	})
	if werr != nil {
		return ctrl.Result{}, passOutcome(err, werr)
	}
	if !started {
		return ctrl.Result{}, nil
	}
	p.EmitEvents(true)
	if aw, ok := any(p).(AfterWriter); ok {
		if aerr := aw.AfterWrite(ctx); aerr != nil {
			return ctrl.Result{}, errors.Join(err, aerr)
		}
	}
	return result, err
}

// IndexRunsByController registers index over BenchmarkRuns: the name of the
// object of kind (BenchmarkSchedule, BenchmarkBisection) that controls each.
func IndexRunsByController(mgr ctrl.Manager, index, kind string) error {
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &dbbenchv1alpha1.BenchmarkRun{}, index,
		func(o client.Object) []string {
			ref := metav1.GetControllerOf(o)
			if ref == nil || ref.APIVersion != dbbenchv1alpha1.GroupVersion.String() || ref.Kind != kind {
				return nil
			}
			return []string{ref.Name}
		})
	if err != nil {
		return fmt.Errorf("indexing runs by %s: %w", kind, err)
	}
	return nil
}

// SetChangedCondition sets c in conds and reports whether its status,
// reason or message changed: the passes announce a condition's change with
// an event, and only its change.
func SetChangedCondition(conds *[]metav1.Condition, c metav1.Condition) bool {
	old := meta.FindStatusCondition(*conds, c.Type)
	changed := old == nil || old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message
	meta.SetStatusCondition(conds, c)
	return changed
}

// Event is an event a pass queues for after its status write.
type Event struct {
	warning bool
	reason  string
	action  string
	note    string
	// related is the run the event is about. The events API folds events
	// with the same reason and objects into one series and keeps only the
	// first note, so without it the second run's event would be lost.
	related *dbbenchv1alpha1.BenchmarkRun
	// done marks an event about a run created or deleted: it is emitted
	// even when the status write fails, because the action happened.
	done bool
}

// Events is a pass's queue of events.
type Events []Event

func (q *Events) Event(warning bool, reason, action, note string) {
	*q = append(*q, Event{warning: warning, reason: reason, action: action, note: note})
}

// DoneEvent queues an event about an action that happened whatever becomes
// of the pass's status write (an object created): a redo of the pass after
// a conflict finds the object there and announces nothing.
func (q *Events) DoneEvent(warning bool, reason, action, note string) {
	*q = append(*q, Event{warning: warning, reason: reason, action: action, note: note, done: true})
}

// RunEvent queues a normal event about run, the object it names.
func (q *Events) RunEvent(run *dbbenchv1alpha1.BenchmarkRun, done bool, reason, action, note string) {
	*q = append(*q, Event{reason: reason, action: action, note: note, related: run, done: done})
}

// Emit records the queued events on obj; without a status write only those
// marked done.
func (q Events) Emit(rec events.EventRecorder, obj runtime.Object, statusWritten bool) {
	if rec == nil {
		return
	}
	for _, e := range q {
		if !statusWritten && !e.done {
			continue
		}
		t := corev1.EventTypeNormal
		if e.warning {
			t = corev1.EventTypeWarning
		}
		var related runtime.Object
		if e.related != nil {
			related = e.related
		}
		rec.Eventf(obj, related, t, e.reason, e.action, "%s", e.note)
	}
}
