package benchmarkbisection

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
)

// bisectionOwnerIndex indexes BenchmarkRuns by the name of the
// BenchmarkBisection that controls them.
const bisectionOwnerIndex = "dbbench.io/bisection-owner"

// Reconciler localizes a regression by creating one
// BenchmarkRun per round, as the schedule controller creates runs: the
// cells of a round are ordinary cells of an ordinary run (same builders,
// placement, retries, uploads). The bisection only reads the rounds that
// finished and decides the next one (pkg/bisect).
//
// Each pass recomputes the search from the rounds' runs (their results
// ConfigMaps and the points each run's annotation records), so the status
// is a summary that a lost write cannot corrupt, and round names are
// deterministic (<bisection>-r<N>), so a redone pass cannot create a
// second run for a round.
type Reconciler struct {
	client.Client
	// APIReader reads a bisection past the cache after a conflict (the
	// manager's API reader when not set).
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
}

// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkbisections,verbs=get;list;watch
// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkbisections/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkbisections/finalizers,verbs=update
// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkruns,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile runs one pass over a bisection and writes its status once; a
// conflict on the write redoes the pass on a fresh copy.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return framework.Reconcile(ctx, r, r.APIReader, req.NamespacedName, "bisection",
		func(bis *dbbenchv1alpha1.BenchmarkBisection) *bisectionPass {
			return &bisectionPass{r: r, bis: bis, now: r.Clock.Now(), log: log.FromContext(ctx)}
		}, r.writeStatus)
}

func (r *Reconciler) writeStatus(ctx context.Context, original, bis *dbbenchv1alpha1.BenchmarkBisection) error {
	framework.SetHealth(&bis.Status.Conditions, bis.Generation, r.Clock.Now(), framework.BisectionHealth(&bis.Status))
	if equality.Semantic.DeepEqual(original.Status, bis.Status) {
		return nil
	}
	bis.Status.ObservedGeneration = bis.Generation
	return framework.PatchStatus(ctx, r, original, bis, "bisection status")
}

// SetupWithManager registers the controller and the index of runs by their
// bisection.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if err := framework.IndexRunsByController(mgr, bisectionOwnerIndex, "BenchmarkBisection"); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&dbbenchv1alpha1.BenchmarkBisection{}).
		Owns(&dbbenchv1alpha1.BenchmarkRun{}).
		Named("benchmarkbisection").
		Complete(r)
}

// bisectionPass is one reconcile pass over one bisection: it changes
// bis.Status in memory and queues events for after the status write.
type bisectionPass struct {
	r   *Reconciler
	bis *dbbenchv1alpha1.BenchmarkBisection
	now time.Time
	log logr.Logger
	framework.Events
}

// finished reports whether the Localized condition reached a verdict.
func bisectionFinished(bis *dbbenchv1alpha1.BenchmarkBisection) bool {
	c := meta.FindStatusCondition(bis.Status.Conditions, dbbenchv1alpha1.BisectionConditionLocalized)
	return c != nil && c.Status != metav1.ConditionUnknown
}

// setLocalized sets the Localized condition and reports whether it changed.
func (p *bisectionPass) setLocalized(status metav1.ConditionStatus, reason, msg string) bool {
	return framework.SetChangedCondition(&p.bis.Status.Conditions, metav1.Condition{
		Type: dbbenchv1alpha1.BisectionConditionLocalized, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: p.bis.Generation, LastTransitionTime: metav1.Time{Time: p.now},
	})
}

// end finishes the bisection with a verdict and its event.
func (p *bisectionPass) end(status metav1.ConditionStatus, reason, msg string) {
	st := &p.bis.Status
	st.Phase = dbbenchv1alpha1.BisectionNotLocalized
	if status == metav1.ConditionTrue {
		st.Phase = dbbenchv1alpha1.BisectionLocalized
	}
	if st.CompletionTime == nil {
		st.CompletionTime = &metav1.Time{Time: p.now}
	}
	if p.setLocalized(status, reason, msg) {
		ev := EventBisectionLocalized
		if status != metav1.ConditionTrue {
			ev = EventBisectionNotLocalized
		}
		p.Event(status != metav1.ConditionTrue, ev, "Bisect", msg)
	}
}

func (p *bisectionPass) EmitEvents(statusWritten bool) {
	p.Events.Emit(p.r.Recorder, p.bis, statusWritten)
}
