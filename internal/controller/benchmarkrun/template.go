package benchmarkrun

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/specs"
)

// A templated cell (databases[].template) lives in two stages:
//
//  1. its object: start creates it from the template (owned by the run, so
//     it goes with it) and the cell is Starting with no attempt; progress
//     reads it from the API server (the manager caches no templated kind,
//     so it needs no list or watch right on it) until its readyCondition
//     is True, then records the endpoint in status.cells[].target;
//  2. from then on the cell is an external cell: targetFor gives it an
//     external view of the endpoint, and the attempts, the retries and the
//     results are the external target's (run_external.go).
//
// release deletes the object when the cell ends, whatever its outcome.

// templatedTarget is a templated cell: its object until the object is
// ready, then the external target at the object's endpoint.
type templatedTarget struct {
	// externalTarget's cell is the external view once ready, the spec's
	// cell before.
	externalTarget
	// ready: status.cells[].target had the ready object's endpoint when
	// targetFor chose the target.
	ready bool
}

func (t templatedTarget) start(ctx context.Context, cs *dbbenchv1alpha1.CellStatus) error {
	if !t.ready {
		return t.p.startTarget(ctx, t.c, cs)
	}
	return t.externalTarget.start(ctx, cs)
}

func (t templatedTarget) progress(ctx context.Context, cs *dbbenchv1alpha1.CellStatus) error {
	if !t.ready {
		return t.p.progressTarget(ctx, t.c, cs)
	}
	return t.externalTarget.progress(ctx, cs)
}

// attempts: none before the object is ready (no attempt has started).
func (t templatedTarget) attempts() []client.Object {
	if !t.ready {
		return nil
	}
	return t.externalTarget.attempts()
}

func (t templatedTarget) release(ctx context.Context, cs *dbbenchv1alpha1.CellStatus) error {
	if err := t.p.releaseTarget(ctx, cs); err != nil {
		return err
	}
	return t.externalTarget.release(ctx, cs)
}

// templatePollInterval is how often a pass looks at an object that is not
// ready: the manager does not watch templated kinds.
const templatePollInterval = 5 * time.Second

// targetReady reports whether a templated cell's endpoint is known.
func targetReady(cs *dbbenchv1alpha1.CellStatus) bool {
	return cs.Target != nil && cs.Target.ReadyTime != nil
}

// startTarget creates a templated cell's object and makes the cell Starting;
// its first attempt starts once the object is ready (progressTarget).
func (p *runPass) startTarget(ctx context.Context, c matrix.Cell, cs *dbbenchv1alpha1.CellStatus) error {
	obj, err := specs.TemplateObject(p.run, c)
	if err != nil {
		p.failCell(ctx, c, cs, fail(dbbenchv1alpha1.ReasonTemplateRejected, "%v", err))
		return nil
	}
	if created, err := p.createTarget(ctx, c, cs, obj); !created {
		return err
	}
	cs.Target = &dbbenchv1alpha1.CellTarget{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName()}
	cs.Phase = dbbenchv1alpha1.CellStarting
	cs.StartTime = &metav1.Time{Time: p.now}
	p.requeue.after(templatePollInterval)
	return nil
}

// createTarget creates the object (an existing one counts as created) and
// reports whether it did. A refusal that no retry would change fails the
// cell (templateCreateFailure); anything else is the pass's error.
func (p *runPass) createTarget(ctx context.Context, c matrix.Cell, cs *dbbenchv1alpha1.CellStatus, obj *unstructured.Unstructured) (bool, error) {
	err := p.create(ctx, obj)
	if f := templateCreateFailure(c.Database.Name, err); f != nil {
		p.failCell(ctx, c, cs, f)
		return false, nil
	}
	return err == nil, err
}

// progressTarget follows a templated cell whose object is not ready yet:
// re-creates it if it is gone, fails the cell when template.readyTimeout has
// passed since the cell started, and once the readyCondition is True records
// the endpoint and starts the cell's first attempt as an external cell.
func (p *runPass) progressTarget(ctx context.Context, c matrix.Cell, cs *dbbenchv1alpha1.CellStatus) error {
	tpl := c.Database.Template
	want, err := specs.TemplateObject(p.run, c)
	if err != nil {
		p.failCell(ctx, c, cs, fail(dbbenchv1alpha1.ReasonTemplateRejected, "%v", err))
		return nil
	}
	if cs.Target == nil {
		// A status write after startTarget was lost.
		cs.Target = &dbbenchv1alpha1.CellTarget{APIVersion: want.GetAPIVersion(), Kind: want.GetKind(), Name: want.GetName()}
	}
	if cs.StartTime == nil {
		cs.StartTime = &metav1.Time{Time: p.now}
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(want.GroupVersionKind())
	err = p.r.APIReader.Get(ctx, types.NamespacedName{Namespace: p.run.Namespace, Name: want.GetName()}, obj)
	switch {
	case apierrors.IsNotFound(err):
		// Not created (a lost pass) or deleted by someone: create it; the
		// ready timeout keeps counting from the cell's start.
		if created, err := p.createTarget(ctx, c, cs, want); !created {
			return err
		}
		obj = nil
	case err != nil:
		return fmt.Errorf("reading %s %s: %w", want.GetKind(), want.GetName(), err)
	case !metav1.IsControlledBy(obj, p.run):
		// Not ours to delete at the cell's end (releaseTarget).
		cs.Target = nil
		p.failCell(ctx, c, cs, fail(dbbenchv1alpha1.ReasonTemplateRejected,
			"databases[%s].template.object: %s %s exists and is not this run's", c.Database.Name, want.GetKind(), want.GetName()))
		return nil
	}

	if obj == nil || !specs.ConditionTrue(obj, tpl.ReadyCondition) {
		limit := tpl.ReadyTimeoutOrDefault()
		waited := p.now.Sub(cs.StartTime.Time)
		if f := templateReadyFailure(c.Database.Name, want.GetKind()+" "+want.GetName(), tpl.ReadyCondition,
			specs.NotReadyDetail(obj, tpl.ReadyCondition), waited, limit); f != nil {
			p.failCell(ctx, c, cs, f)
			return nil
		}
		p.requeue.after(min(templatePollInterval, limit-waited))
		return nil
	}

	target, err := specs.TemplateEndpoint(c, obj)
	if err != nil {
		p.failCell(ctx, c, cs, fail(dbbenchv1alpha1.ReasonTemplateRejected, "%v", err))
		return nil
	}
	target.ReadyTime = &metav1.Time{Time: p.now}
	cs.Target = &target
	p.Event(false, EventTargetReady, "Start", fmt.Sprintf("Cell %s: %s %s is ready at %s", c.Name, target.Kind, target.Name, target.Host))
	c.Database = specs.TargetDatabase(c.Database, cs.Target)
	return externalTarget{p: p, c: c}.start(ctx, cs)
}

// releaseTarget deletes a templated cell's object once, when the cell has
// ended; the run's owner reference removes it too if the manager never
// gets there.
func (p *runPass) releaseTarget(ctx context.Context, cs *dbbenchv1alpha1.CellStatus) error {
	t := cs.Target
	if t == nil || t.Deleted {
		return nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.FromAPIVersionAndKind(t.APIVersion, t.Kind))
	obj.SetNamespace(p.run.Namespace)
	obj.SetName(t.Name)
	// The name hashes the run's UID (matrix.ObjectBase): a re-created run
	// of the same name has objects of other names.
	err := p.r.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
		return fmt.Errorf("deleting %s %s: %w", t.Kind, t.Name, err)
	}
	t.Deleted = true
	return nil
}
