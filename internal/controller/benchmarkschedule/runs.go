package benchmarkschedule

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// scheduleRuns are a schedule's runs by state; runs being deleted are left
// out. succeeded and failed are ordered oldest first. byName has every run,
// those being deleted too.
type scheduleRuns struct {
	active, succeeded, failed []*dbbenchv1alpha1.BenchmarkRun
	byName                    map[string]*dbbenchv1alpha1.BenchmarkRun
	// latest is the newest schedule time a run exists for (from the runs'
	// scheduled-time annotation).
	latest time.Time
}

func (p *schedulePass) listRuns(ctx context.Context) (scheduleRuns, error) {
	var list dbbenchv1alpha1.BenchmarkRunList
	if err := p.r.List(ctx, &list, client.InNamespace(p.sched.Namespace), client.MatchingFields{scheduleOwnerIndex: p.sched.Name}); err != nil {
		return scheduleRuns{}, fmt.Errorf("listing the schedule's runs: %w", err)
	}
	out := scheduleRuns{byName: map[string]*dbbenchv1alpha1.BenchmarkRun{}}
	for i := range list.Items {
		run := &list.Items[i]
		out.byName[run.Name] = run
		if t, err := time.Parse(time.RFC3339, run.Annotations[dbbenchv1alpha1.AnnotationScheduledTime]); err == nil && t.After(out.latest) {
			out.latest = t
		}
		if !run.DeletionTimestamp.IsZero() {
			continue
		}
		switch {
		case meta.IsStatusConditionTrue(run.Status.Conditions, dbbenchv1alpha1.ConditionSucceeded):
			out.succeeded = append(out.succeeded, run)
		case meta.IsStatusConditionTrue(run.Status.Conditions, dbbenchv1alpha1.ConditionFailed):
			out.failed = append(out.failed, run)
		default:
			out.active = append(out.active, run)
		}
	}
	sort.Slice(out.active, func(i, j int) bool { return out.active[i].Name < out.active[j].Name })
	byFinish := func(runs []*dbbenchv1alpha1.BenchmarkRun) {
		sort.SliceStable(runs, func(i, j int) bool {
			a, b := finishTime(runs[i]), finishTime(runs[j])
			if !a.Equal(b) {
				return a.Before(b)
			}
			return runs[i].Name < runs[j].Name
		})
	}
	byFinish(out.succeeded)
	byFinish(out.failed)
	return out, nil
}

// finishTime is when a finished run finished: its completionTime, else when
// its terminal condition became true, else when it was created.
func finishTime(run *dbbenchv1alpha1.BenchmarkRun) time.Time {
	if run.Status.CompletionTime != nil {
		return run.Status.CompletionTime.Time
	}
	for _, t := range []string{dbbenchv1alpha1.ConditionSucceeded, dbbenchv1alpha1.ConditionFailed} {
		if c := meta.FindStatusCondition(run.Status.Conditions, t); c != nil && c.Status == metav1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return run.CreationTimestamp.Time
}

// syncActive makes status.active reference exactly the unfinished runs.
func (p *schedulePass) syncActive(active []*dbbenchv1alpha1.BenchmarkRun) {
	p.sched.Status.Active = nil
	for _, run := range active {
		p.addActive(run)
	}
}

func (p *schedulePass) addActive(run *dbbenchv1alpha1.BenchmarkRun) {
	for _, ref := range p.sched.Status.Active {
		if ref.Name == run.Name {
			return
		}
	}
	p.sched.Status.Active = append(p.sched.Status.Active, corev1.ObjectReference{
		APIVersion: dbbenchv1alpha1.GroupVersion.String(), Kind: "BenchmarkRun",
		Namespace: run.Namespace, Name: run.Name, UID: run.UID,
	})
}

// syncLastSuccessful moves status.lastSuccessfulTime forward to the latest
// succeeded run; it never moves back when old runs are pruned.
func (p *schedulePass) syncLastSuccessful(succeeded []*dbbenchv1alpha1.BenchmarkRun) {
	st := &p.sched.Status
	for _, run := range succeeded {
		if t := finishTime(run); st.LastSuccessfulTime == nil || t.After(st.LastSuccessfulTime.Time) {
			st.LastSuccessfulTime = &metav1.Time{Time: t}
		}
	}
}

// pruneHistory deletes the oldest finished runs beyond the history limits.
func (p *schedulePass) pruneHistory(ctx context.Context, runs scheduleRuns) error {
	spec := &p.sched.Spec
	for _, h := range []struct {
		runs  []*dbbenchv1alpha1.BenchmarkRun
		limit int32
		field string
	}{
		{runs.succeeded, spec.SucceededToKeep(), "successfulRunsHistoryLimit"},
		{runs.failed, spec.FailedToKeep(), "failedRunsHistoryLimit"},
	} {
		limit := h.limit
		if n := len(h.runs); n > int(limit) {
			p.log.V(1).Info("Pruning finished runs", "field", h.field, "limit", limit, "oldestFirst", klog.KObjSlice(h.runs))
		}
		for i := 0; i < len(h.runs)-int(limit); i++ {
			run := h.runs[i]
			if err := p.deleteRun(ctx, run, EventRunDeleted, fmt.Sprintf("Deleted finished run %s (%s %d)", run.Name, h.field, limit)); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteRun deletes a run with its children (they carry its owner reference)
// and queues the event.
func (p *schedulePass) deleteRun(ctx context.Context, run *dbbenchv1alpha1.BenchmarkRun, reason, note string) error {
	err := p.r.Delete(ctx, run, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &run.UID})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting run %s: %w", run.Name, err)
	}
	p.log.Info("Deleted run", "run", klog.KObj(run), "reason", reason)
	p.RunEvent(run, true, reason, "Delete", note)
	return nil
}
