package benchmarkschedule

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
)

// scheduleOwnerIndex indexes BenchmarkRuns by the name of the
// BenchmarkSchedule that controls them.
const scheduleOwnerIndex = "dbbench.io/schedule-owner"

// Reconciler creates BenchmarkRuns from BenchmarkSchedules
// at their cron times, like the CronJob controller creates Jobs.
//
// Each pass computes the most recent due time from status.lastScheduleTime
// and the injected clock, creates the run for it under a name derived from
// that time (so a restart that lost a status write finds the run instead of
// creating a second one), prunes the history and returns RequeueAfter until
// the next time.
type Reconciler struct {
	client.Client
	// APIReader reads a schedule past the cache after a conflict (the
	// manager's API reader when not set).
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
}

// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkschedules,verbs=get;list;watch
// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkschedules/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkschedules/finalizers,verbs=update
// +kubebuilder:rbac:groups=dbbench.io,resources=benchmarkruns,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile runs one pass over a schedule and writes its status once. A
// conflict on the status write redoes the pass at once on the schedule as
// the API server has it (see benchmarkrun.Reconciler.Reconcile): the run
// names are deterministic, so a redone pass cannot create a second run.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return framework.Reconcile(ctx, r, r.APIReader, req.NamespacedName, "schedule",
		func(sched *dbbenchv1alpha1.BenchmarkSchedule) *schedulePass {
			return &schedulePass{r: r, sched: sched, now: r.Clock.Now(), log: log.FromContext(ctx)}
		}, r.writeStatus)
}

// writeStatus writes the status a pass computed, if it changed, with a merge
// patch under an optimistic lock.
func (r *Reconciler) writeStatus(ctx context.Context, original, sched *dbbenchv1alpha1.BenchmarkSchedule) error {
	framework.SetHealth(&sched.Status.Conditions, sched.Generation, r.Clock.Now(), framework.ScheduleHealth(&sched.Status))
	if equality.Semantic.DeepEqual(original.Status, sched.Status) {
		return nil
	}
	sched.Status.ObservedGeneration = sched.Generation
	return framework.PatchStatus(ctx, r, original, sched, "schedule status")
}

// SetupWithManager registers the controller and the index of runs by their
// schedule.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if err := framework.IndexRunsByController(mgr, scheduleOwnerIndex, "BenchmarkSchedule"); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&dbbenchv1alpha1.BenchmarkSchedule{}).
		Owns(&dbbenchv1alpha1.BenchmarkRun{}).
		Named("benchmarkschedule").
		Complete(r)
}

// schedulePass is one reconcile pass over one schedule: it changes
// sched.Status in memory and queues events for after the status write.
type schedulePass struct {
	r     *Reconciler
	sched *dbbenchv1alpha1.BenchmarkSchedule
	now   time.Time
	log   logr.Logger
	framework.Events
}

func (p *schedulePass) Reconcile(ctx context.Context) (ctrl.Result, error) {
	spec := &p.sched.Spec
	st := &p.sched.Status
	runs, err := p.listRuns(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	p.syncActive(runs.active)
	p.syncLastSuccessful(runs.succeeded)
	if err := p.pruneHistory(ctx, runs); err != nil {
		return ctrl.Result{}, err
	}

	schedule, ok := p.activeSchedule()
	if !ok {
		// A spec change brings the schedule back; nothing to wait for.
		return ctrl.Result{}, nil
	}

	// Count from the last time scheduled; the runs' own record of it wins
	// when the schedule read from the cache predates its last status write.
	earliest := p.sched.CreationTimestamp.Time
	if st.LastScheduleTime != nil {
		earliest = st.LastScheduleTime.Time
	}
	if runs.latest.After(earliest) {
		earliest = runs.latest
		st.LastScheduleTime = &metav1.Time{Time: runs.latest}
	}
	next := schedule.Next(p.now)
	if next.IsZero() {
		// The parser looks five years ahead: "0 0 30 2 *" never comes.
		st.NextScheduleTime = nil
		msg := fmt.Sprintf("schedule %q: no time matches it in the next five years", spec.Schedule)
		if p.setReady(metav1.ConditionFalse, dbbenchv1alpha1.ScheduleReasonInvalidSchedule, msg) {
			p.Event(true, dbbenchv1alpha1.ScheduleReasonInvalidSchedule, "Schedule", msg)
		}
		return ctrl.Result{}, nil
	}
	st.NextScheduleTime = &metav1.Time{Time: next.UTC()}
	result := ctrl.Result{RequeueAfter: max(next.Sub(p.now), time.Second)}
	nextMsg := fmt.Sprintf("Next run at %s", next.UTC().Format(time.RFC3339))
	due, missed, ok := mostRecentTime(schedule, earliest, p.now)
	if !ok {
		p.setReady(metav1.ConditionTrue, dbbenchv1alpha1.ScheduleReasonScheduled, nextMsg)
		return result, nil
	}
	if missed > maxCountedMisses {
		p.Event(true, EventTooManyMissedTimes, "Schedule", fmt.Sprintf(
			"More than %d schedule times passed since %s; only the most recent counts (check the controller's clock, or set startingDeadlineSeconds)",
			maxCountedMisses, earliest.UTC().Format(time.RFC3339)))
	}
	if d := spec.StartingDeadlineSeconds; d != nil && due.Add(time.Duration(*d)*time.Second).Before(p.now) {
		p.Event(true, EventMissedSchedule, "Schedule", fmt.Sprintf(
			"Skipped the run for %s: more than startingDeadlineSeconds (%d) late", due.UTC().Format(time.RFC3339), *d))
		p.setReady(metav1.ConditionTrue, dbbenchv1alpha1.ScheduleReasonScheduled, nextMsg)
		return result, nil
	}

	if _, ok := runs.byName[runName(p.sched.Name, due)]; ok {
		// The run for this time exists: a pass whose status write was
		// lost (or read a stale cache) created it. Never replace or wait
		// for the run of the very time being scheduled.
		st.LastScheduleTime = &metav1.Time{Time: due}
		p.setReady(metav1.ConditionTrue, dbbenchv1alpha1.ScheduleReasonScheduled, nextMsg)
		return result, nil
	}
	if wait, err := p.makeRoom(ctx, runs, due); err != nil {
		return ctrl.Result{}, err
	} else if wait {
		return result, nil
	}
	run, err := p.createRun(ctx, due)
	if err != nil {
		return ctrl.Result{}, err
	}
	st.LastScheduleTime = &metav1.Time{Time: due}
	p.addActive(run)
	p.setReady(metav1.ConditionTrue, dbbenchv1alpha1.ScheduleReasonScheduled, nextMsg)
	return result, nil
}

// activeSchedule is the parsed schedule, or false when no run is to be
// created until the spec changes: it does not parse (Ready=False with the
// parser's reason and a Warning event) or it is suspended.
func (p *schedulePass) activeSchedule() (cron.Schedule, bool) {
	spec := &p.sched.Spec
	schedule, reason, err := parseSchedule(spec)
	if err != nil || spec.IsSuspended() {
		p.sched.Status.NextScheduleTime = nil
	}
	if err != nil {
		if p.setReady(metav1.ConditionFalse, reason, err.Error()) {
			p.Event(true, reason, "Schedule", err.Error())
		}
		return nil, false
	}
	if spec.IsSuspended() {
		p.setReady(metav1.ConditionTrue, dbbenchv1alpha1.ScheduleReasonSuspended, "spec.suspend is true: no runs are created")
		return nil, false
	}
	return schedule, true
}

// makeRoom applies spec.concurrencyPolicy before the run for due is
// created while runs are active: Allow creates it beside them, Replace
// deletes them first, Forbid (and the zero value of an object the API
// server did not default) waits, reported as true.
func (p *schedulePass) makeRoom(ctx context.Context, runs scheduleRuns, due time.Time) (wait bool, err error) {
	if len(runs.active) == 0 {
		return false, nil
	}
	switch p.sched.Spec.ConcurrencyPolicy {
	case dbbenchv1alpha1.ConcurrencyAllow:
		return false, nil
	case dbbenchv1alpha1.ConcurrencyReplace:
		for _, run := range runs.active {
			if err := p.deleteRun(ctx, run, EventRunReplaced, fmt.Sprintf(
				"Deleted active run %s to start the run for %s (concurrencyPolicy Replace)", run.Name, due.UTC().Format(time.RFC3339))); err != nil {
				return false, err
			}
		}
		p.sched.Status.Active = nil
		return false, nil
	}
	msg := fmt.Sprintf("The run for %s waits for active run %s (concurrencyPolicy Forbid)", due.UTC().Format(time.RFC3339), runs.active[0].Name)
	if p.setReady(metav1.ConditionTrue, dbbenchv1alpha1.ScheduleReasonScheduled, msg) {
		p.RunEvent(runs.active[0], false, EventRunSkipped, "Schedule", msg)
	}
	// The run that finishes wakes the schedule; the time still starts
	// then if it is within startingDeadlineSeconds.
	return true, nil
}

// createRun creates the run for due; one that exists already was created
// by an earlier pass whose status write was lost.
func (p *schedulePass) createRun(ctx context.Context, due time.Time) (*dbbenchv1alpha1.BenchmarkRun, error) {
	run, err := p.buildRun(due)
	if err != nil {
		return nil, err
	}
	switch err := p.r.Create(ctx, run); {
	case apierrors.IsAlreadyExists(err):
		p.log.V(1).Info("Found the run already created", "run", klog.KObj(run))
	case err != nil:
		return nil, fmt.Errorf("creating run %s: %w", run.Name, err)
	default:
		p.log.Info("Created run", "run", klog.KObj(run), "scheduledTime", due)
		p.RunEvent(run, true, EventRunCreated, "Create", fmt.Sprintf("Created run %s for %s", run.Name, due.UTC().Format(time.RFC3339)))
	}
	return run, nil
}

// buildRun is the run for schedule time due.
func (p *schedulePass) buildRun(due time.Time) (*dbbenchv1alpha1.BenchmarkRun, error) {
	tpl := &p.sched.Spec.RunTemplate
	run := &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   p.sched.Namespace,
			Name:        runName(p.sched.Name, due),
			Labels:      map[string]string{},
			Annotations: map[string]string{},
		},
		Spec: *tpl.Spec.DeepCopy(),
	}
	for k, v := range tpl.Metadata.Labels {
		run.Labels[k] = v
	}
	for k, v := range tpl.Metadata.Annotations {
		run.Annotations[k] = v
	}
	run.Labels[dbbenchv1alpha1.LabelSchedule] = p.sched.Name
	run.Annotations[dbbenchv1alpha1.AnnotationScheduledTime] = due.UTC().Format(time.RFC3339)
	if run.Spec.Suite == "" {
		run.Spec.Suite = p.sched.Name
	}
	if err := ctrl.SetControllerReference(p.sched, run, p.r.Scheme); err != nil {
		return nil, fmt.Errorf("setting the owner of run %s: %w", run.Name, err)
	}
	return run, nil
}

// setReady sets the Ready condition and reports whether it changed.
func (p *schedulePass) setReady(status metav1.ConditionStatus, reason, msg string) bool {
	return framework.SetChangedCondition(&p.sched.Status.Conditions, metav1.Condition{
		Type: dbbenchv1alpha1.ScheduleConditionReady, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: p.sched.Generation, LastTransitionTime: metav1.Time{Time: p.now},
	})
}

func (p *schedulePass) EmitEvents(statusWritten bool) {
	p.Events.Emit(p.r.Recorder, p.sched, statusWritten)
}
