package benchmarkrun

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/specs"
)

// cellTarget is what a cell benchmarks and how its attempts run there: a
// server pod of ours (serverPodTarget), a database the user runs
// (externalTarget, run_external.go) or an object another operator runs
// (templatedTarget, run_template.go). targetFor chooses it once per cell and
// pass from the cell's spec; the life cycle (adoptAttempts, stepCells,
// attemptFailed, endCell) calls its methods and does not look at the kind.
type cellTarget interface {
	// cell is the cell as its target runs it (a templated cell whose object
	// is ready: an external cell at the object's endpoint).
	cell() matrix.Cell
	// start creates the cell's children and its first attempt, and makes
	// the cell Starting.
	start(ctx context.Context, cs *dbbenchv1alpha1.CellStatus) error
	// progress follows the current attempt and turns what it sees into the
	// cell's phase, retrying or ending the cell (attemptFailed,
	// succeedCell, failCell).
	progress(ctx context.Context, cs *dbbenchv1alpha1.CellStatus) error
	// attempts lists the children that record the cell's attempts, one per
	// attempt, labelled with its number and annotated (retryAnnotations)
	// with why the attempt before it ended: adoptAttempts reads them.
	attempts() []client.Object
	// createAttempt creates attempt n's first child, annotated with why the
	// attempt before it ended (cs.Reason, cs.Message).
	createAttempt(ctx context.Context, attempt int32, cs *dbbenchv1alpha1.CellStatus) error
	// release frees what an ended cell holds; called on every pass after
	// the cell ended, so it must be idempotent.
	release(ctx context.Context, cs *dbbenchv1alpha1.CellStatus) error
}

// targetFor chooses c's target from its spec; cs is c's status entry. A
// templated cell whose object is ready (its endpoint in cs.Target) runs as
// an external cell at that endpoint.
func (p *runPass) targetFor(c matrix.Cell, cs *dbbenchv1alpha1.CellStatus) cellTarget {
	switch {
	case c.Templated():
		ready := targetReady(cs)
		if ready {
			c.Database = specs.TargetDatabase(c.Database, cs.Target)
		}
		return templatedTarget{externalTarget: externalTarget{p: p, c: c}, ready: ready}
	case c.External():
		return externalTarget{p: p, c: c}
	default:
		return serverPodTarget{p: p, c: c}
	}
}

// targetsFor is targetFor of each of cells, statuses[i] being cells[i]'s.
func (p *runPass) targetsFor(cells []matrix.Cell, statuses []dbbenchv1alpha1.CellStatus) []cellTarget {
	out := make([]cellTarget, len(cells))
	for i, c := range cells {
		out[i] = p.targetFor(c, &statuses[i])
	}
	return out
}

// cellChildren is the objects of kids labelled with the cell base and the
// role.
func cellChildren[T client.Object](kids map[string]T, base, role string) []client.Object {
	var out []client.Object
	for _, obj := range kids {
		if l := obj.GetLabels(); l[dbbenchv1alpha1.LabelCell] == base && l[dbbenchv1alpha1.LabelRole] == role {
			out = append(out, obj)
		}
	}
	return out
}

// retryAnnotations records on attempt's first child why the attempt before
// it ended (cs.Message, cs.Reason), for adoptAttempts after a lost status
// write.
func retryAnnotations(obj metav1.Object, attempt int32, cs *dbbenchv1alpha1.CellStatus) {
	if attempt <= 1 || cs.Message == "" {
		return
	}
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[dbbenchv1alpha1.AnnotationRetryOf] = cs.Message
	if cs.Reason != "" {
		a[dbbenchv1alpha1.AnnotationRetryReason] = string(cs.Reason)
	}
	obj.SetAnnotations(a)
}

// serverPodTarget is a cell whose server is a database pod of ours: an
// attempt is its database pod (with claims), then its client Job once the
// pod runs.
type serverPodTarget struct {
	p *runPass
	c matrix.Cell
}

func (t serverPodTarget) cell() matrix.Cell { return t.c }

// start creates the Service (not for a pre-flight pair, which lives
// seconds), the Secret, the first attempt's claims and database pod, with
// the plan and results ConfigMaps.
func (t serverPodTarget) start(ctx context.Context, cs *dbbenchv1alpha1.CellStatus) error {
	p, c := t.p, t.c
	var own []client.Object
	if !c.Preflight {
		// A stable name for people debugging the cell.
		own = append(own, specs.Service(p.run, c))
	}
	own = append(own, specs.Secret(p.run, c, specs.Credentials{Password: randomPassword(), RootPassword: randomPassword()}))
	for _, pvc := range specs.Claims(p.run, c, 1) {
		own = append(own, pvc)
	}
	own = append(own, p.databasePod(c, 1))
	return p.startCell(ctx, c, cs, own)
}

// attempts are the cell's database pods.
func (t serverPodTarget) attempts() []client.Object {
	return cellChildren(t.p.kids.pods, t.c.ObjectBase, specs.RoleDatabase)
}

// createAttempt creates the attempt's claims and database pod; its client
// Job follows once the pod runs (progress).
func (t serverPodTarget) createAttempt(ctx context.Context, attempt int32, cs *dbbenchv1alpha1.CellStatus) error {
	p, c := t.p, t.c
	for _, pvc := range specs.Claims(p.run, c, attempt) {
		if err := p.create(ctx, pvc); err != nil {
			return err
		}
	}
	pod := p.databasePod(c, attempt)
	retryAnnotations(pod, attempt, cs)
	return p.create(ctx, pod)
}

// progress follows an attempt: database pod → running → client Job →
// finished. The client Job decides first (progressClient); then the
// database pod: its failure, its absence (created again), its start-up
// bounded by timeouts.databaseReady, and the attempt's timeout.
func (t serverPodTarget) progress(ctx context.Context, cs *dbbenchv1alpha1.CellStatus) error {
	p, c := t.p, t.c
	attempt := cs.Attempts
	pod := p.kids.pods[specs.DatabasePodName(c, attempt)]
	if pod != nil && pod.Spec.NodeName != "" {
		// Recorded whenever the pod is seen bound, by the pass that ends
		// the cell too: a pass whose write conflicted is redone on the
		// fresh status, and if the client ended meanwhile the redo ends
		// the cell without reaching the lines below. A blocked run's next
		// cell is pinned to this node (blockSchedule).
		cs.Node = pod.Spec.NodeName
	}
	a, ended, err := p.progressClient(ctx, t, cs)
	if ended || err != nil {
		return err
	}
	if f := databaseFailure(specs.DatabasePodName(c, attempt), pod, cs.Phase == dbbenchv1alpha1.CellRunning, serverAnswered(a.prog)); f != nil {
		p.startFailureFromLog(ctx, pod, f)
		return p.attemptFailed(ctx, t, cs, f)
	}
	if pod == nil {
		// Not in the cache yet, or deleted before it ran anything:
		// creating it again is harmless either way.
		return t.createAttempt(ctx, attempt, cs)
	}
	if d := imageDigestOf(pod, specs.DatabaseContainer); d != "" {
		cs.ImageDigest = d
	}
	if waiting, err := t.startClient(ctx, cs, pod, a); waiting || err != nil {
		return err
	}
	return p.attemptDeadline(ctx, t, cs, a.started)
}

// startClient creates the attempt's client Job once its database pod runs
// and makes the cell Running; true while it waits for the pod (within
// timeouts.databaseReady, failing the attempt after).
func (t serverPodTarget) startClient(ctx context.Context, cs *dbbenchv1alpha1.CellStatus, pod *corev1.Pod, a attemptState) (bool, error) {
	p, c := t.p, t.c
	clientJob := func() *batchv1.Job {
		return specs.ClientJob(p.run, c, cs.Attempts, specs.AgentImage(p.run, p.r.AgentImage), pod.Status.PodIP, p.collectorImage() != "")
	}
	if cs.Phase != dbbenchv1alpha1.CellStarting {
		if a.job == nil && podRunning(pod) {
			// Running without a Job: created by a pass whose status write
			// was lost, or deleted. Never without the database's address.
			return true, p.create(ctx, clientJob())
		}
		return false, nil
	}
	// The client starts as soon as the server's pod runs and has an IP,
	// not when it is ready: the agent waits for the server at the SQL
	// level (bounded by timeouts.databaseReady, and retried as an
	// infrastructure failure when it gives up), so the client pod's
	// start-up overlaps the server's initialisation.
	if !podRunning(pod) {
		limit := p.run.Spec.Timeouts.DatabaseReadyTimeout()
		if pod.Spec.NodeName == "" {
			claims, err := t.claimStates(ctx, cs.Attempts)
			if err != nil {
				return true, err
			}
			if f := claimFailure(claims, p.now.Sub(a.started), limit, waitingReason(pod)); f != nil {
				return true, p.attemptFailed(ctx, t, cs, f)
			}
		}
		if f := notReadyFailure(pod, p.now.Sub(a.started), limit); f != nil {
			return true, p.attemptFailed(ctx, t, cs, f)
		}
		p.requeue.after(a.started.Add(limit).Sub(p.now))
		return true, nil
	}
	if a.job == nil {
		if err := p.create(ctx, clientJob()); err != nil {
			return true, err
		}
	}
	cs.Phase = dbbenchv1alpha1.CellRunning
	return false, nil
}

// release deletes every database pod of the cell, whatever its attempt: a
// pass that worked from a stale copy of the run can create attempt N+1 of
// a cell that had already ended (it saw the pod of attempt N going and took
// it for a failure); its status write is refused, and the pod would
// otherwise keep its node. The Job (with the agent's logs) and the results
// stay until the run is deleted.
func (t serverPodTarget) release(ctx context.Context, cs *dbbenchv1alpha1.CellStatus) error {
	// An attempt's claims go with its database pod, and first: once the
	// pod is going, a later pass no longer sees the attempt, and claims
	// are not listed (they are deleted blind, so only here and never on
	// every pass). Their volumes follow by the class's reclaim policy.
	for a := int32(1); a <= cs.Attempts; a++ {
		pod := t.p.kids.pods[specs.DatabasePodName(t.c, a)]
		if pod == nil || !pod.DeletionTimestamp.IsZero() {
			continue
		}
		for _, pvc := range specs.Claims(t.p.run, t.c, a) {
			if err := t.p.remove(ctx, pvc); err != nil {
				return err
			}
		}
	}
	for _, pod := range t.attempts() {
		if err := t.p.remove(ctx, pod); err != nil {
			return err
		}
	}
	return nil
}

// claimStates reads the attempt's database claims and their storage
// classes for claimFailure, through the API reader (the manager caches
// neither kind; it may only get them). A claim not created yet is left out.
func (t serverPodTarget) claimStates(ctx context.Context, attempt int32) ([]claimState, error) {
	p, c := t.p, t.c
	want := specs.Claims(p.run, c, attempt)
	if len(want) == 0 {
		return nil, nil
	}
	field := "spec.databases[?].storage"
	for i := range p.run.Spec.Databases {
		if p.run.Spec.Databases[i].Name == c.Database.Name {
			field = fmt.Sprintf("spec.databases[%d].storage", i)
		}
	}
	var out []claimState
	for _, w := range want {
		var pvc corev1.PersistentVolumeClaim
		if err := p.r.APIReader.Get(ctx, client.ObjectKeyFromObject(w), &pvc); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		st := claimState{name: pvc.Name, field: field + ".volumeClaim", bound: pvc.Status.Phase == corev1.ClaimBound}
		if pvc.Name == specs.LogClaimName(c, attempt) {
			st.field = field + ".log.volumeClaim"
		}
		if sc := pvc.Spec.StorageClassName; sc == nil {
			st.noClass = true
		} else if st.class = *sc; st.class != "" && !st.bound {
			var class storagev1.StorageClass
			err := p.r.APIReader.Get(ctx, types.NamespacedName{Name: st.class}, &class)
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
			st.classFound = err == nil
		}
		out = append(out, st)
	}
	return out, nil
}

// attemptState is what progressClient saw of the current attempt.
type attemptState struct {
	job     *batchv1.Job
	prog    *agentapi.Progress
	started time.Time
}
