// Package controllers holds the dbbench reconcilers.
package benchmarkrun

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
)

// DefaultAgentImage is the agent image used when neither the manager's flag
// nor the run's spec.client.image says otherwise.
const DefaultAgentImage = "docker.io/dbbench/agent:dev"

// Reconciler runs the cells of BenchmarkRuns: it creates each
// cell's database pod and client Job, follows them to completion, retries
// infrastructure failures within the run's budget and collects results.
//
// State lives in the run's status and in the child objects (whose names are
// deterministic), so a restarted manager continues where the last one
// stopped without duplicating or losing cells.
type Reconciler struct {
	client.Client
	// APIReader reads objects the manager does not cache (user ConfigMaps
	// holding config variants and custom scripts).
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	// AgentImage is the default client image.
	AgentImage string
	// DatabaseImageRegistry, when set, is where database pods pull Docker
	// Hub images from (specs.MirrorImage): a mirror for clusters without
	// Docker Hub access.
	DatabaseImageRegistry string
	// DisableCollector leaves the hardware-metrics sidecar out of database
	// pods (steps then have no per-operation hardware figures).
	DisableCollector bool
	// MaxConcurrentReconciles is the number of runs reconciled in parallel.
	MaxConcurrentReconciles int
	// PodLogs reads database servers' logs for the object store; without
	// it, no server.log is kept.
	PodLogs PodLogReader
	// KubernetesVersion is the cluster's version, recorded in every
	// manifest cell's environment ("" when unknown).
	KubernetesVersion string
}

// The manager patches a run's metadata only to remove the
// dbbench.io/retry-upload annotation after the attempt it asked for.
// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkruns,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkruns/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkbisections,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// The manager patches a cell's results ConfigMap only to drain its outbox
// (remove the agent's binaryData attachments once the object store has
// confirmed them); it never updates ConfigMaps, and holds update also
// because RBAC lets it grant (to each run's agent Role) only what it holds.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=services;secrets;serviceaccounts,verbs=create
// A database pod that waits for its claims is explained by them and their
// storage class (claimFailure), read uncached: get only.
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;create;delete
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=create
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile moves one run forward and writes its status once.
//
// A conflict on the status write means the pass worked from a stale copy of
// the run (the cache lagging the controller's own last write, usually): the
// pass is redone at once on the run as the API server has it, inside
// retry.RetryOnConflict, like CloudNativePG's PatchWithOptimisticLock with
// the whole pass as the transaction. Redoing a pass is safe: children have
// deterministic names and "already exists" counts as created; the events
// and metrics of a pass whose write was refused are dropped with it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return framework.Reconcile(ctx, r, r.APIReader, req.NamespacedName, "run",
		func(run *dbbenchv1alpha1.BenchmarkRun) *runPass {
			return &runPass{r: r, run: run, now: r.Clock.Now(), log: log.FromContext(ctx)}
		}, r.writeStatus)
}

// writeStatus writes the status a pass computed, if it changed, with a merge
// patch under an optimistic lock: a pass computed from a stale copy of the
// run gets a conflict instead of overwriting a newer status.
func (r *Reconciler) writeStatus(ctx context.Context, original, run *dbbenchv1alpha1.BenchmarkRun) error {
	framework.SetHealth(&run.Status.Conditions, run.Generation, r.Clock.Now(), framework.RunHealth(&run.Status))
	if equality.Semantic.DeepEqual(original.Status, run.Status) {
		return nil
	}
	run.Status.ObservedGeneration = run.Generation
	return framework.PatchStatus(ctx, r, original, run, "the run status")
}

// SetupWithManager registers the controller. Children are mapped back to
// their run by the dbbench.io/run label, which the client pods (owned by
// their Job, not by the run) carry too.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	toRun := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		name, ok := o.GetLabels()[dbbenchv1alpha1.LabelRun]
		if !ok {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
	})
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.AgentImage == "" {
		r.AgentImage = DefaultAgentImage
	}
	n := r.MaxConcurrentReconciles
	if n < 1 {
		n = 4
	}
	if err := IndexChildren(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&dbbenchv1alpha1.BenchmarkRun{}).
		Watches(&corev1.Pod{}, toRun).
		Watches(&batchv1.Job{}, toRun).
		Watches(&corev1.ConfigMap{}, toRun).
		WithOptions(controller.Options{MaxConcurrentReconciles: n}).
		Named("benchmarkrun").
		Complete(r)
}

// IndexRun indexes a run's children in the manager's cache by the run
// they belong to (their dbbench.io/run label): a pass reads its own run's
// pods, Jobs and results from the index instead of filtering every child
// in the namespace, so a pass costs the same with one run in the
// namespace as with hundreds.
const IndexRun = "dbbench.io/run"

// childKinds are the kinds a pass lists (listChildren).
func childKinds() []client.Object {
	return []client.Object{&corev1.Pod{}, &batchv1.Job{}, &corev1.ConfigMap{}}
}

// runOf is IndexRun's value: the run an object's label names.
func runOf(o client.Object) []string {
	if name, ok := o.GetLabels()[dbbenchv1alpha1.LabelRun]; ok {
		return []string{name}
	}
	return nil
}

// IndexChildren registers IndexRun for every kind a pass lists.
func IndexChildren(ctx context.Context, indexer client.FieldIndexer) error {
	for _, obj := range childKinds() {
		if err := indexer.IndexField(ctx, obj, IndexRun, runOf); err != nil {
			return fmt.Errorf("indexing %T by run: %w", obj, err)
		}
	}
	return nil
}

// requeueAt keeps the earliest of the deadlines a pass has seen.
type requeueAt struct{ d time.Duration }

func (q *requeueAt) after(d time.Duration) {
	if d <= 0 {
		d = time.Second
	}
	if q.d == 0 || d < q.d {
		q.d = d
	}
}
