package benchmarkrun

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/runverdict"
	"github.com/dbbench/dbbench/pkg/specs"
	"github.com/dbbench/dbbench/pkg/triage"
)

// runPass is one reconcile pass over one run: it reads the children once,
// changes run.Status in memory, and queues events for after the status write.
type runPass struct {
	r    *Reconciler
	run  *dbbenchv1alpha1.BenchmarkRun
	now  time.Time
	log  logr.Logger
	kids children
	// steps are the step names every cell runs.
	steps   []string
	requeue requeueAt
	framework.Events
	// metrics are recorded, like events, only once the status write that
	// describes them succeeded, so a pass that conflicts counts nothing.
	metrics []func()
	// dropRetryAnnotation: remove dbbenchv1alpha1.AnnotationRetryUpload once the
	// pass's status is written.
	dropRetryAnnotation bool
	// acks are the suite's acknowledgements the verdict honours
	// (verdictHistory reads them).
	acks []triage.Ack
	// pins are the nodes a blocked run's database pods are pinned to, by
	// cell name (blockSchedule), for the pass.
	pins map[string]string
	// deferred, while set, collects the cells' objects that startCell
	// would create, to send them with the other starting cells'
	// (startCells).
	deferred *createBatch
}

// children indexes a run's child objects by name.
type children struct {
	pods    map[string]*corev1.Pod
	jobs    map[string]*batchv1.Job
	results map[string]*corev1.ConfigMap
}

// reconcile is one pass over a run: a finished run's loose ends, else the
// start (first pass), the pre-flight, the cells, and the end once every
// cell has ended.
func (p *runPass) Reconcile(ctx context.Context) (ctrl.Result, error) {
	st := &p.run.Status
	p.takeRetryRequest()
	cells := matrix.Expand(p.run)
	steps, err := matrix.Steps(p.run.Spec.Workload)
	if err != nil {
		// The schema rejects such specs; this guards against a CRD older
		// than the controller.
		p.finish(fmt.Sprintf("invalid workload: %v", err))
		return ctrl.Result{}, nil
	}
	p.steps = steps
	p.syncCellEntries(cells)
	if err := p.listChildren(ctx); err != nil {
		return ctrl.Result{}, err
	}
	if st.Finished() {
		return p.settleFinished(ctx, cells)
	}
	if st.StartTime == nil {
		history, note := p.startHistory(ctx)
		if p.recordPlan(history, note) {
			return ctrl.Result{}, nil // failed before its first cell
		}
		p.recordAdaptiveNoise(history, note)
		if err := p.start(ctx, cells); err != nil {
			return ctrl.Result{}, err
		}
	}
	if wait, err := p.stepPreflight(ctx); err != nil {
		return ctrl.Result{}, err
	} else if wait {
		return ctrl.Result{RequeueAfter: p.requeue.d}, nil
	}
	endedBefore := endedCells(st.Cells)
	if err := p.advance(ctx, cells); err != nil {
		return ctrl.Result{}, err
	}
	p.summarize()
	if allDone(st) && p.nextRound(cells) {
		// The rounds so far fell short of the precision target: the next
		// round's cells join the status and start in this pass.
		cells = matrix.Expand(p.run)
		p.syncCellEntries(cells)
		if err := p.advance(ctx, cells); err != nil {
			return ctrl.Result{}, err
		}
		p.summarize()
	}
	if allDone(st) && !endedIn(st.Cells, endedBefore) {
		return p.end(ctx, cells)
	}
	if allDone(st) {
		// A cell ended in this pass. Its release (its database pod and
		// claims deleted, a templated object's deletion recorded in
		// status.cells[].target) comes in the next pass, once this
		// status is written: a release before the write would make a
		// pass redone from the older status take the missing pod for a
		// failure. The run ends in that next pass, so its first terminal
		// status already records everything the release does, and a
		// finished run's status does not change after it is final.
		p.requeue.after(time.Second)
	}
	p.syncUploads(ctx, cells, nil)
	return ctrl.Result{RequeueAfter: p.requeue.d}, nil
}

// endedCells is the names of the cells that have ended (Succeeded or
// Failed).
func endedCells(cells []dbbenchv1alpha1.CellStatus) map[string]bool {
	out := make(map[string]bool, len(cells))
	for _, cs := range cells {
		if cs.Phase == dbbenchv1alpha1.CellSucceeded || cs.Phase == dbbenchv1alpha1.CellFailed {
			out[cs.Name] = true
		}
	}
	return out
}

// endedIn reports whether a cell of cells has ended that had not in before
// (endedCells of an earlier state).
func endedIn(cells []dbbenchv1alpha1.CellStatus, before map[string]bool) bool {
	for name := range endedCells(cells) {
		if !before[name] {
			return true
		}
	}
	return false
}

// settleFinished handles a finished run: its cells are settled, but their
// database pods may still have to go (a failed cell's stays until the
// status records the failure), so may the pre-flight's, an upload to the
// object store may be pending (retried with backoff), or the outbox of
// uploaded cells still to be drained.
func (p *runPass) settleFinished(ctx context.Context, cells []matrix.Cell) (ctrl.Result, error) {
	if err := p.releaseFinished(ctx, cells); err != nil {
		return ctrl.Result{}, err
	}
	if pairs := p.preflightPairs(); p.hasPreflightChildren(pairs) {
		if err := p.removePreflight(ctx, pairs); err != nil {
			return ctrl.Result{}, err
		}
	}
	pending := p.uploadPending()
	if !pending && !p.outboxMayNeedDraining() {
		return ctrl.Result{}, nil
	}
	var m *results.Manifest
	if pending {
		m = p.manifest(cells)
	}
	p.syncUploads(ctx, cells, m)
	return ctrl.Result{RequeueAfter: p.requeue.d}, nil
}

// start is the run's first pass: the object store's pre-flight check, the
// agents' RBAC, whether the run makes a pre-flight, the precision rounds.
func (p *runPass) start(ctx context.Context, cells []matrix.Cell) error {
	p.preflight(ctx)
	pairs := matrix.PreflightCells(p.run)
	// The agents may write the results of every cell the run can have
	// (with workload.precision, of maxRepeats rounds) and the pre-flight
	// pairs' results ConfigMaps of their own.
	if err := p.createAgentRBAC(ctx, append(matrix.ExpandRounds(p.run, matrix.MaxRounds(p.run)), pairs...)); err != nil {
		return err
	}
	p.decidePreflight(pairs, cells)
	p.run.Status.StartTime = &metav1.Time{Time: p.now}
	p.startPrecision()
	p.Event(false, EventRunStarted, "Start", fmt.Sprintf("Started a run of %d cells", len(cells)))
	return nil
}

// stepPreflight moves a running pre-flight and reports whether the cells
// must wait (the pre-flight goes on, or it failed the run); once it has
// ended it removes the pairs' pods. A pre-flight that passes in this pass
// lets the cells start in it.
func (p *runPass) stepPreflight(ctx context.Context) (wait bool, err error) {
	st := &p.run.Status
	pairs := p.preflightPairs()
	if !preflightRunning(st) {
		if p.hasPreflightChildren(pairs) {
			return false, p.removePreflight(ctx, pairs)
		}
		return false, nil
	}
	err = p.progressPreflight(ctx, pairs)
	p.summarize()
	return st.Finished() || preflightRunning(st), err
}

// end is the pass in which the last cell ended: the manifest, the noise
// record, the run's results, the verdict and its bisection, then the
// uploads (cell documents first, then the manifest).
func (p *runPass) end(ctx context.Context, cells []matrix.Cell) (ctrl.Result, error) {
	m := p.manifest(cells)
	history, storeNote, err := p.verdictHistory(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	p.recordNoise(m, history)
	p.recordAchieved(cells, m)
	verdict := runverdict.Judge(runverdict.Input{Spec: p.run.Spec.Regression, Suite: p.run.Spec.Suite, Run: p.run.Name,
		Current: m, History: history, Acks: p.acks, StoreNote: p.precisionNote() + storeNote})
	// The verdict's cases go beside the manifest, in the same write: the
	// status has no room for them.
	if err := p.writeRunResults(ctx, m, runverdict.DocumentOf(p.run, verdict, p.now)); err != nil {
		return ctrl.Result{}, err
	}
	p.setVerdict(verdict)
	if err := p.startBisection(ctx, m, history); err != nil {
		return ctrl.Result{}, err
	}
	p.finish("")
	p.requeue = requeueAt{}
	p.syncUploads(ctx, cells, m)
	return ctrl.Result{RequeueAfter: p.requeue.d}, nil
}

// advance moves every cell one step: it starts pending cells while
// maxParallelCells allows, follows the running ones and releases the
// finished ones' nodes. On an error it keeps what it changed (summarized)
// and returns the error, which requeues the run.
func (p *runPass) advance(ctx context.Context, cells []matrix.Cell) error {
	st := &p.run.Status
	// Each cell's target, chosen once for the pass: a templated cell whose
	// object is ready runs as an external cell.
	targets := p.targetsFor(cells, st.Cells)
	// Adopt children first: a pass that works from a stale status must
	// count the cells that already have pods as active, or it would start
	// more cells than maxParallelCells allows.
	for i, t := range targets {
		p.adoptAttempts(t, &st.Cells[i])
	}
	wait, pins := blockSchedule(cells, st.Cells)
	p.pins = make(map[string]string, len(pins))
	for i, n := range pins {
		if n != "" {
			p.pins[cells[i].Name] = n
		}
	}
	if name, err := p.stepCells(ctx, targets, st.Cells, wait); err != nil {
		// Keep what this pass changed; the error requeues the run.
		p.summarize()
		return fmt.Errorf("cell %s: %w", name, err)
	}
	return nil
}

// stepCells moves each of targets' cells (statuses[i] is targets[i]'s) one
// step: pending ones start while fewer than placement.maxParallelCells are
// starting or running, running ones are followed and ended ones release
// their nodes. The measured cells and the pre-flight pairs go through it
// alike. A pending cell whose wait is true (a blocked run's cell whose turn
// in its block has not come: blockSchedule) does not start; wait may be nil.
// It stops at the first cell whose step fails and returns its name.
func (p *runPass) stepCells(ctx context.Context, targets []cellTarget, statuses []dbbenchv1alpha1.CellStatus, wait []bool) (string, error) {
	running := 0
	for i := range statuses {
		if active(statuses[i].Phase) {
			running++
		}
	}
	maxParallel := int(p.run.Spec.Placement.ParallelCells())
	var starting []int
	for i, t := range targets {
		cs := &statuses[i]
		var err error
		switch cs.Phase {
		case dbbenchv1alpha1.CellPending:
			if running >= maxParallel || (wait != nil && wait[i]) {
				continue
			}
			running++
			starting = append(starting, i)
		case dbbenchv1alpha1.CellStarting, dbbenchv1alpha1.CellRunning:
			err = t.progress(ctx, cs)
		default:
			err = t.release(ctx, cs)
		}
		if err != nil {
			return t.cell().Name, err
		}
	}
	return p.startCells(ctx, targets, statuses, starting)
}

// startCells starts targets[i] for every i of starting. Each start runs in
// turn on a copy of its status, with the cell's objects collected
// (startCell); then every object of every starting cell is sent at once, so that a run's database
// pods exist after one round trip rather than one per cell. A cell whose
// creates all succeeded takes its copy's status; the others stay Pending,
// and the next pass starts them again (what exists already is no error).
// It returns the first failed cell's name and error.
func (p *runPass) startCells(ctx context.Context, targets []cellTarget, statuses []dbbenchv1alpha1.CellStatus, starting []int) (string, error) {
	if len(starting) == 0 {
		return "", nil
	}
	started := make([]*dbbenchv1alpha1.CellStatus, len(starting))
	owners := map[client.Object]int{}
	batch := &createBatch{}
	p.deferred = batch
	for j, i := range starting {
		started[j] = statuses[i].DeepCopy()
		before := len(batch.objs)
		err := targets[i].start(ctx, started[j])
		for _, obj := range batch.objs[before:] {
			owners[obj] = j
		}
		if err != nil {
			p.deferred = nil
			return targets[i].cell().Name, err
		}
	}
	p.deferred = nil
	failed := make([]error, len(starting))
	var mu sync.Mutex
	g := errgroup.Group{}
	g.SetLimit(maxConcurrentCreates)
	for _, obj := range batch.objs {
		g.Go(func() error {
			if err := p.send(ctx, obj); err != nil {
				mu.Lock()
				defer mu.Unlock()
				if j := owners[obj]; failed[j] == nil {
					failed[j] = err
				}
			}
			return nil
		})
	}
	_ = g.Wait()
	name, first := "", error(nil)
	for j, i := range starting {
		if failed[j] != nil {
			if first == nil {
				name, first = targets[i].cell().Name, failed[j]
			}
			continue
		}
		statuses[i] = *started[j]
	}
	return name, first
}

// maxConcurrentCreates bounds the creates one pass sends at once.
const maxConcurrentCreates = 32

// createBatch collects objects to create together (runPass.deferred).
type createBatch struct{ objs []client.Object }

// createTogether creates objs, which do not depend on each other at the API
// level (the kubelet waits for a pod's Secret and ConfigMap): into the
// pass's batch when it collects one, else at once, concurrently.
func (p *runPass) createTogether(ctx context.Context, objs []client.Object) error {
	for _, obj := range objs {
		if err := controllerutil.SetControllerReference(p.run, obj, p.r.Scheme); err != nil {
			return fmt.Errorf("setting owner of %T %s: %w", obj, obj.GetName(), err)
		}
	}
	if p.deferred != nil {
		p.deferred.objs = append(p.deferred.objs, objs...)
		return nil
	}
	var g errgroup.Group
	for _, obj := range objs {
		g.Go(func() error { return p.send(ctx, obj) })
	}
	return g.Wait()
}

// releaseFinished frees the nodes of a finished run's cells.
func (p *runPass) releaseFinished(ctx context.Context, cells []matrix.Cell) error {
	for i, c := range cells {
		cs := &p.run.Status.Cells[i]
		if err := p.targetFor(c, cs).release(ctx, cs); err != nil {
			return fmt.Errorf("cell %s: %w", c.Name, err)
		}
	}
	return nil
}

// syncCellEntries makes status.cells hold one entry per cell in matrix order,
// keeping the state of entries that exist.
func (p *runPass) syncCellEntries(cells []matrix.Cell) {
	p.run.Status.Cells = cellEntries(p.run.Status.Cells, cells, int32(p.stepsTotal()))
}

// cellEntries is one status entry per cell (or pre-flight pair) in matrix
// order: the entry of entries with the cell's name, a Pending one with
// stepsTotal steps for a new cell. entries itself when it already is that.
func cellEntries(entries []dbbenchv1alpha1.CellStatus, cells []matrix.Cell, stepsTotal int32) []dbbenchv1alpha1.CellStatus {
	if len(entries) == len(cells) {
		same := true
		for i := range cells {
			if entries[i].Name != cells[i].Name {
				same = false
				break
			}
		}
		if same {
			return entries
		}
	}
	old := make(map[string]dbbenchv1alpha1.CellStatus, len(entries))
	for _, cs := range entries {
		old[cs.Name] = cs
	}
	out := make([]dbbenchv1alpha1.CellStatus, len(cells))
	for i, c := range cells {
		if cs, ok := old[c.Name]; ok {
			out[i] = cs
			continue
		}
		out[i] = dbbenchv1alpha1.CellStatus{
			Name: c.Name, Database: c.Database.Name, Engine: c.Database.Engine,
			Version: c.Version, Config: c.Config.Name, Repeat: c.Repeat,
			Phase: dbbenchv1alpha1.CellPending, StepsTotal: stepsTotal,
		}
	}
	return out
}

func (p *runPass) stepsTotal() int {
	w := p.run.Spec.Workload
	n := 0
	for _, s := range p.steps {
		if s == "tpcc" && w.TPCC != nil && len(w.TPCC.Threads) > 0 {
			n += len(w.TPCC.Threads)
			continue
		}
		n += max(len(w.Threads), 1)
	}
	return n
}

// listChildren reads the run's pods, Jobs and result ConfigMaps from the
// cache (by IndexRun), keeping only those this run controls (a deleted and re-created run
// of the same name may briefly share the label with its predecessor's).
func (p *runPass) listChildren(ctx context.Context) error {
	sel := client.MatchingFields{IndexRun: p.run.Name}
	ns := client.InNamespace(p.run.Namespace)
	p.kids = children{pods: map[string]*corev1.Pod{}, jobs: map[string]*batchv1.Job{}, results: map[string]*corev1.ConfigMap{}}

	var pods corev1.PodList
	if err := p.r.List(ctx, &pods, ns, sel); err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		// Client pods are owned by their Job; database pods by the run.
		if pod.Labels[dbbenchv1alpha1.LabelRole] == specs.RoleDatabase && !metav1.IsControlledBy(pod, p.run) {
			continue
		}
		p.kids.pods[pod.Name] = pod
	}
	var jobs batchv1.JobList
	if err := p.r.List(ctx, &jobs, ns, sel); err != nil {
		return fmt.Errorf("listing jobs: %w", err)
	}
	for i := range jobs.Items {
		if metav1.IsControlledBy(&jobs.Items[i], p.run) {
			p.kids.jobs[jobs.Items[i].Name] = &jobs.Items[i]
		}
	}
	var cms corev1.ConfigMapList
	if err := p.r.List(ctx, &cms, ns, sel, client.MatchingLabels{dbbenchv1alpha1.LabelRole: specs.RoleResult}); err != nil {
		return fmt.Errorf("listing result configmaps: %w", err)
	}
	for i := range cms.Items {
		if metav1.IsControlledBy(&cms.Items[i], p.run) {
			p.kids.results[cms.Items[i].Name] = &cms.Items[i]
		}
	}
	return nil
}

// create creates a child owned by the run; an existing object of that name
// counts as success, because names are deterministic and a previous pass (or
// manager) may have created it before its status write was lost.
func (p *runPass) create(ctx context.Context, obj client.Object) error {
	if err := controllerutil.SetControllerReference(p.run, obj, p.r.Scheme); err != nil {
		return fmt.Errorf("setting owner of %T %s: %w", obj, obj.GetName(), err)
	}
	return p.send(ctx, obj)
}

// send creates obj; one that exists already is no error.
func (p *runPass) send(ctx context.Context, obj client.Object) error {
	if err := p.r.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s %s: %w", kind(obj), obj.GetName(), err)
	}
	return nil
}

// remove deletes a child if it exists and is not already going away.
func (p *runPass) remove(ctx context.Context, obj client.Object) error {
	if obj == nil || !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	err := p.r.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s: %w", kind(obj), obj.GetName(), err)
	}
	// The pass's copy says so too: a second look in the same pass (after
	// a round was added) does not delete it again.
	obj.SetDeletionTimestamp(&metav1.Time{Time: p.now})
	return nil
}

func kind(obj runtime.Object) string {
	switch o := obj.(type) {
	case *corev1.Pod:
		return "pod"
	case *batchv1.Job:
		return "job"
	case *corev1.ConfigMap:
		return "configmap"
	case *corev1.Secret:
		return "secret"
	case *corev1.Service:
		return "service"
	case *unstructured.Unstructured:
		// A templated target's object, of any kind.
		return o.GetKind()
	}
	return fmt.Sprintf("%T", obj)
}

// EmitEvents records the pass's metrics and events once its status is
// written; without the write only the events about what happened anyway.
func (p *runPass) EmitEvents(statusWritten bool) {
	if statusWritten {
		for _, m := range p.metrics {
			m()
		}
	}
	p.Events.Emit(p.r.Recorder, p.run, statusWritten)
}

// AfterWrite removes the retry annotation once the status write that
// records the attempt it asked for succeeded: if that write is lost, the
// annotation stays and the next pass tries again.
func (p *runPass) AfterWrite(ctx context.Context) error {
	if !p.dropRetryAnnotation {
		return nil
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, dbbenchv1alpha1.AnnotationRetryUpload)
	if err := p.r.Patch(ctx, p.run, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing the annotation %s: %w", dbbenchv1alpha1.AnnotationRetryUpload, err)
	}
	return nil
}

var _ framework.AfterWriter = (*runPass)(nil)
