package integration_test

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/benchmarkschedule"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
)

// The schedule tests drive the controller with a fake clock: they create a
// schedule, move the clock past a cron boundary and poke the schedule (an
// annotation change) so that the controller runs a pass at the new time
// instead of waiting for its real-time RequeueAfter.

// scheduleClock returns a fake clock at the real time, and the first minute
// boundary after it. The API server stamps creationTimestamp with the real
// time, and the controller counts schedule times from it, so the test keeps
// clear of a real minute boundary.
func scheduleClock(t *testing.T) (*clocktesting.FakePassiveClock, time.Time) {
	t.Helper()
	now := time.Now()
	if next := now.Truncate(time.Minute).Add(time.Minute); next.Sub(now) < 5*time.Second {
		time.Sleep(next.Sub(now) + 100*time.Millisecond)
		now = time.Now()
	}
	return clocktesting.NewFakePassiveClock(now), now.Truncate(time.Minute).Add(time.Minute)
}

// newSchedule is a schedule of the minimal run, every minute, Allow.
func newSchedule(ns, name string) *dbbenchv1alpha1.BenchmarkSchedule {
	return &dbbenchv1alpha1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: dbbenchv1alpha1.BenchmarkScheduleSpec{
			Schedule:          "* * * * *",
			TimeZone:          ptr.To("UTC"),
			ConcurrencyPolicy: dbbenchv1alpha1.ConcurrencyAllow,
			RunTemplate: dbbenchv1alpha1.BenchmarkRunTemplate{
				Metadata: dbbenchv1alpha1.RunTemplateMetadata{Labels: map[string]string{"team": "storage"}},
				Spec:     minimalRun(ns, "").Spec,
			},
		},
	}
}

func createSchedule(t *testing.T, s *dbbenchv1alpha1.BenchmarkSchedule) {
	t.Helper()
	if err := k8sClient.Create(ctx, s); err != nil {
		t.Fatalf("creating schedule: %v", err)
	}
}

func getSchedule(t *testing.T, ns, name string) *dbbenchv1alpha1.BenchmarkSchedule {
	t.Helper()
	s := &dbbenchv1alpha1.BenchmarkSchedule{}
	if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, s); err != nil {
		t.Fatalf("getting schedule: %v", err)
	}
	return s
}

var pokes atomic.Int64

// advance sets the fake clock and pokes the schedule so the controller runs
// a pass at that time.
func advance(t *testing.T, rm *runningManager, ns, name string, to time.Time) {
	t.Helper()
	rm.clock.SetTime(to)
	poke(t, ns, name)
}

func poke(t *testing.T, ns, name string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.dbbench.io/poke":"%d"}}}`, pokes.Add(1))
	s := &dbbenchv1alpha1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := k8sClient.Patch(ctx, s, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("poking schedule: %v", err)
	}
}

// scheduledRuns lists a schedule's runs (by its label), sorted by name.
func scheduledRuns(t *testing.T, ns, schedule string) []dbbenchv1alpha1.BenchmarkRun {
	t.Helper()
	var list dbbenchv1alpha1.BenchmarkRunList
	if err := k8sClient.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{dbbenchv1alpha1.LabelSchedule: schedule}); err != nil {
		t.Fatalf("listing runs: %v", err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items
}

func runNames(runs []dbbenchv1alpha1.BenchmarkRun) []string {
	names := []string{}
	for _, r := range runs {
		names = append(names, r.Name)
	}
	return names
}

// nameFor is the run name the controller must use for schedule time tm.
func nameFor(schedule string, tm time.Time) string {
	return fmt.Sprintf("%s-%d", schedule, tm.Unix()/60)
}

// waitRuns waits until the schedule's runs are exactly names.
func waitRuns(t *testing.T, ns, schedule string, names ...string) []dbbenchv1alpha1.BenchmarkRun {
	t.Helper()
	want := strings.Join(names, ",")
	var runs []dbbenchv1alpha1.BenchmarkRun
	eventually(t, "runs "+want, func() string {
		runs = scheduledRuns(t, ns, schedule)
		if got := strings.Join(runNames(runs), ","); got != want {
			return "runs are [" + got + "]"
		}
		return ""
	})
	return runs
}

// waitReady waits until the Ready condition has status and reason.
func waitReady(t *testing.T, ns, name string, status metav1.ConditionStatus, reason string) *dbbenchv1alpha1.BenchmarkSchedule {
	t.Helper()
	return waitSchedule(t, ns, name, fmt.Sprintf("Ready=%s %s", status, reason), func(s *dbbenchv1alpha1.BenchmarkSchedule) bool {
		c := meta.FindStatusCondition(s.Status.Conditions, dbbenchv1alpha1.ScheduleConditionReady)
		return c != nil && c.Status == status && c.Reason == reason
	})
}

// waitNextRun waits until the schedule is Ready=True Scheduled with its
// next run at next.
func waitNextRun(t *testing.T, ns, name string, next time.Time) *dbbenchv1alpha1.BenchmarkSchedule {
	t.Helper()
	return waitSchedule(t, ns, name, "the next run at "+next.UTC().Format(time.RFC3339), func(s *dbbenchv1alpha1.BenchmarkSchedule) bool {
		c := meta.FindStatusCondition(s.Status.Conditions, dbbenchv1alpha1.ScheduleConditionReady)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == dbbenchv1alpha1.ScheduleReasonScheduled &&
			s.Status.NextScheduleTime != nil && s.Status.NextScheduleTime.Time.Equal(next)
	})
}

func waitSchedule(t *testing.T, ns, name, what string, done func(*dbbenchv1alpha1.BenchmarkSchedule) bool) *dbbenchv1alpha1.BenchmarkSchedule {
	t.Helper()
	var s *dbbenchv1alpha1.BenchmarkSchedule
	eventually(t, what, func() string {
		s = getSchedule(t, ns, name)
		if !done(s) {
			return fmt.Sprintf("status %+v", s.Status)
		}
		return ""
	})
	return s
}

// finishRun plays the run controller finishing a run: it writes the
// terminal conditions (and completionTime) through the status subresource.
func finishRun(t *testing.T, ns, name string, succeeded bool, at time.Time) {
	t.Helper()
	playStatus(t, types.NamespacedName{Namespace: ns, Name: name}, func(run *dbbenchv1alpha1.BenchmarkRun) {
		yes, no := dbbenchv1alpha1.ConditionSucceeded, dbbenchv1alpha1.ConditionFailed
		run.Status.Phase = dbbenchv1alpha1.RunSucceeded
		if !succeeded {
			yes, no = no, yes
			run.Status.Phase = dbbenchv1alpha1.RunFailed
		}
		meta.SetStatusCondition(&run.Status.Conditions, metav1.Condition{Type: yes, Status: metav1.ConditionTrue, Reason: "Test", Message: "finished by the test"})
		meta.SetStatusCondition(&run.Status.Conditions, metav1.Condition{Type: no, Status: metav1.ConditionFalse, Reason: "Test", Message: "finished by the test"})
		run.Status.CompletionTime = &metav1.Time{Time: at}
	})
}

// requireNoNextRun checks that a schedule that creates no runs (suspended,
// invalid) shows no next run.
func requireNoNextRun(t *testing.T, s *dbbenchv1alpha1.BenchmarkSchedule) {
	t.Helper()
	if s.Status.NextScheduleTime != nil {
		t.Errorf("nextScheduleTime = %v, want none: %+v", s.Status.NextScheduleTime, s.Status.Conditions)
	}
}

// waitEvent waits for an event of the schedule with reason about run
// related (the event's related object; "" for an event about no run).
func waitEvent(t *testing.T, ns, schedule, reason, related string) {
	t.Helper()
	eventually(t, "event "+reason, func() string {
		var list eventsv1.EventList
		if err := k8sClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind == "BenchmarkSchedule" && e.Regarding.Name == schedule {
				if e.Reason == reason && (related == "" || e.Related != nil && e.Related.Name == related) {
					return ""
				}
				seen = append(seen, e.Reason+": "+e.Note)
			}
		}
		return fmt.Sprintf("events %q", seen)
	})
}

func TestScheduleCreatesRunOnTime(t *testing.T) {
	ns := newNamespace(t)
	clock, b := scheduleClock(t)
	rm := startManager(t, clock)
	createSchedule(t, newSchedule(ns, "nightly"))

	waitNextRun(t, ns, "nightly", b)
	if runs := scheduledRuns(t, ns, "nightly"); len(runs) != 0 {
		t.Fatalf("runs before the first schedule time: %v", runNames(runs))
	}

	advance(t, rm, ns, "nightly", b.Add(time.Second))
	runs := waitRuns(t, ns, "nightly", nameFor("nightly", b))
	run := runs[0]
	if run.Spec.Suite != "nightly" {
		t.Errorf("suite = %q, want the schedule's name", run.Spec.Suite)
	}
	if run.Labels["team"] != "storage" || run.Labels[dbbenchv1alpha1.LabelSchedule] != "nightly" {
		t.Errorf("labels = %v", run.Labels)
	}
	if got := run.Annotations[dbbenchv1alpha1.AnnotationScheduledTime]; got != b.UTC().Format(time.RFC3339) {
		t.Errorf("scheduled-time annotation = %q", got)
	}
	owner := metav1.GetControllerOf(&run)
	if owner == nil || owner.Kind != "BenchmarkSchedule" || owner.Name != "nightly" {
		t.Errorf("controller reference = %+v", owner)
	}
	s := waitNextRun(t, ns, "nightly", b.Add(time.Minute))
	if s.Status.LastScheduleTime == nil || !s.Status.LastScheduleTime.Time.Equal(b) {
		t.Errorf("lastScheduleTime = %v, want %v", s.Status.LastScheduleTime, b)
	}
	if len(s.Status.Active) != 1 || s.Status.Active[0].Name != run.Name || s.Status.Active[0].UID != run.UID {
		t.Errorf("active = %+v", s.Status.Active)
	}
	if s.Status.ObservedGeneration != s.Generation {
		t.Errorf("observedGeneration = %d, generation %d", s.Status.ObservedGeneration, s.Generation)
	}
	waitEvent(t, ns, "nightly", benchmarkschedule.EventRunCreated, run.Name)

	// More passes at the same time create nothing more.
	poke(t, ns, "nightly")
	poke(t, ns, "nightly")
	time.Sleep(time.Second)
	if runs := scheduledRuns(t, ns, "nightly"); len(runs) != 1 {
		t.Fatalf("runs after more passes at the same time: %v", runNames(runs))
	}

	// The template's suite, when set, is kept; each later time gets its run.
	s = getSchedule(t, ns, "nightly")
	s.Spec.RunTemplate.Spec.Suite = "mariadb-lts"
	if err := k8sClient.Update(ctx, s); err != nil {
		t.Fatalf("updating schedule: %v", err)
	}
	advance(t, rm, ns, "nightly", b.Add(time.Minute+time.Second))
	runs = waitRuns(t, ns, "nightly", nameFor("nightly", b), nameFor("nightly", b.Add(time.Minute)))
	if runs[1].Spec.Suite != "mariadb-lts" {
		t.Errorf("suite = %q, want the template's", runs[1].Spec.Suite)
	}
}

func TestScheduleSkipsTimesBeyondStartingDeadline(t *testing.T) {
	ns := newNamespace(t)
	clock, b := scheduleClock(t)
	rm := startManager(t, clock)
	s := newSchedule(ns, "late")
	s.Spec.StartingDeadlineSeconds = ptr.To[int64](30)
	createSchedule(t, s)
	waitReady(t, ns, "late", metav1.ConditionTrue, dbbenchv1alpha1.ScheduleReasonScheduled)

	// The controller was "down" over b and b+1m: the most recent time is
	// 45 s late, beyond the 30 s deadline.
	advance(t, rm, ns, "late", b.Add(time.Minute+45*time.Second))
	// The missed time is b+1m: the next run is the one after it.
	waitEvent(t, ns, "late", benchmarkschedule.EventMissedSchedule, "")
	waitNextRun(t, ns, "late", b.Add(2*time.Minute))
	if runs := scheduledRuns(t, ns, "late"); len(runs) != 0 {
		t.Fatalf("runs for times beyond the deadline: %v", runNames(runs))
	}
	if got := getSchedule(t, ns, "late").Status.LastScheduleTime; got != nil {
		t.Errorf("lastScheduleTime = %v after a missed time", got)
	}

	// The next time is on time again.
	advance(t, rm, ns, "late", b.Add(2*time.Minute+10*time.Second))
	waitRuns(t, ns, "late", nameFor("late", b.Add(2*time.Minute)))
}

// TestScheduleConcurrencyPolicy starts a schedule's first run, lets the
// next time come while it is still active, and checks what each policy does
// then.
func TestScheduleConcurrencyPolicy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy dbbenchv1alpha1.ConcurrencyPolicy
		// check runs after the second time came; first is the active run.
		check func(t *testing.T, ns, name, first string, b time.Time)
	}{{
		name:   "forbid",
		policy: dbbenchv1alpha1.ConcurrencyForbid,
		check: func(t *testing.T, ns, name, first string, b time.Time) {
			// The due time waits for the active run: RunSkipped about it.
			waitEvent(t, ns, name, benchmarkschedule.EventRunSkipped, first)
			waitReady(t, ns, name, metav1.ConditionTrue, dbbenchv1alpha1.ScheduleReasonScheduled)
			if runs := scheduledRuns(t, ns, name); len(runs) != 1 {
				t.Fatalf("Forbid started a second run while %s is active: %v", first, runNames(runs))
			}

			// The active run finishes: the waiting time starts (no deadline).
			finishRun(t, ns, first, true, b.Add(time.Minute+2*time.Second))
			waitRuns(t, ns, name, first, nameFor(name, b.Add(time.Minute)))
			// The status write follows the run's creation.
			eventually(t, "status after the waiting run started", func() string {
				st := getSchedule(t, ns, name).Status
				if st.LastSuccessfulTime == nil || !st.LastSuccessfulTime.Time.Equal(b.Add(time.Minute+2*time.Second)) ||
					len(st.Active) != 1 || st.Active[0].Name != nameFor(name, b.Add(time.Minute)) {
					return fmt.Sprintf("lastSuccessfulTime %v, active %+v", st.LastSuccessfulTime, st.Active)
				}
				return ""
			})
		},
	}, {
		name:   "replace",
		policy: dbbenchv1alpha1.ConcurrencyReplace,
		check: func(t *testing.T, ns, name, first string, b time.Time) {
			second := nameFor(name, b.Add(time.Minute))
			waitRuns(t, ns, name, second)
			waitEvent(t, ns, name, benchmarkschedule.EventRunReplaced, first)
			eventually(t, "the new run active", func() string {
				if a := getSchedule(t, ns, name).Status.Active; len(a) != 1 || a[0].Name != second {
					return fmt.Sprintf("active = %+v", a)
				}
				return ""
			})
		},
	}, {
		name:   "allow",
		policy: dbbenchv1alpha1.ConcurrencyAllow,
		check: func(t *testing.T, ns, name, first string, b time.Time) {
			waitRuns(t, ns, name, first, nameFor(name, b.Add(time.Minute)))
			eventually(t, "two active runs", func() string {
				if a := getSchedule(t, ns, name).Status.Active; len(a) != 2 {
					return fmt.Sprintf("active = %+v", a)
				}
				return ""
			})
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			clock, b := scheduleClock(t)
			rm := startManager(t, clock)
			s := newSchedule(ns, tc.name)
			s.Spec.ConcurrencyPolicy = tc.policy
			createSchedule(t, s)

			advance(t, rm, ns, tc.name, b.Add(time.Second))
			first := nameFor(tc.name, b)
			waitRuns(t, ns, tc.name, first)

			advance(t, rm, ns, tc.name, b.Add(time.Minute+time.Second))
			tc.check(t, ns, tc.name, first, b)
		})
	}
}

func TestScheduleHistoryLimitsDeleteTheOldestFinishedRuns(t *testing.T) {
	ns := newNamespace(t)
	clock, b := scheduleClock(t)
	rm := startManager(t, clock)
	s := newSchedule(ns, "hist")
	s.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](2)
	s.Spec.FailedRunsHistoryLimit = ptr.To[int32](1)
	createSchedule(t, s)

	// Six nights: four succeed, then two fail; each finishes before the next.
	var names []string
	for i := 0; i < 6; i++ {
		at := b.Add(time.Duration(i) * time.Minute)
		advance(t, rm, ns, "hist", at.Add(time.Second))
		name := nameFor("hist", at)
		eventually(t, "run "+name, func() string {
			run := &dbbenchv1alpha1.BenchmarkRun{}
			if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, run); err != nil {
				return err.Error()
			}
			return ""
		})
		finishRun(t, ns, name, i < 4, at.Add(30*time.Second))
		names = append(names, name)
	}
	// Kept: the two newest succeeded (nights 3, 4) and the newest failed (6).
	waitRuns(t, ns, "hist", names[2], names[3], names[5])
	// The oldest succeeded and the oldest failed, each past its own limit.
	waitEvent(t, ns, "hist", benchmarkschedule.EventRunDeleted, names[0])
	waitEvent(t, ns, "hist", benchmarkschedule.EventRunDeleted, names[4])
	eventually(t, "status after the last run finished", func() string {
		st := getSchedule(t, ns, "hist").Status
		if len(st.Active) != 0 || st.LastSuccessfulTime == nil || !st.LastSuccessfulTime.Time.Equal(b.Add(3*time.Minute+30*time.Second)) {
			return fmt.Sprintf("active %+v, lastSuccessfulTime %v", st.Active, st.LastSuccessfulTime)
		}
		return ""
	})
}

func TestScheduleSuspendStopsCreation(t *testing.T) {
	ns := newNamespace(t)
	clock, b := scheduleClock(t)
	rm := startManager(t, clock)
	s := newSchedule(ns, "paused")
	s.Spec.Suspend = ptr.To(true)
	createSchedule(t, s)

	advance(t, rm, ns, "paused", b.Add(time.Second))
	requireNoNextRun(t, waitReady(t, ns, "paused", metav1.ConditionTrue, dbbenchv1alpha1.ScheduleReasonSuspended))
	advance(t, rm, ns, "paused", b.Add(2*time.Minute+time.Second))
	requireNoNextRun(t, waitReady(t, ns, "paused", metav1.ConditionTrue, dbbenchv1alpha1.ScheduleReasonSuspended))
	time.Sleep(time.Second)
	if runs := scheduledRuns(t, ns, "paused"); len(runs) != 0 {
		t.Fatalf("a suspended schedule created runs: %v", runNames(runs))
	}

	// Resumed without a deadline: the most recent missed time starts, once.
	s = getSchedule(t, ns, "paused")
	s.Spec.Suspend = ptr.To(false)
	if err := k8sClient.Update(ctx, s); err != nil {
		t.Fatalf("resuming: %v", err)
	}
	waitRuns(t, ns, "paused", nameFor("paused", b.Add(2*time.Minute)))
	waitReady(t, ns, "paused", metav1.ConditionTrue, dbbenchv1alpha1.ScheduleReasonScheduled)
}

func TestScheduleManagerRestartCreatesNoDuplicates(t *testing.T) {
	ns := newNamespace(t)
	clock, b := scheduleClock(t)
	rm := startManager(t, clock)
	// Replace is the policy where a confused controller does the most
	// harm: it would delete the run of the very time it is scheduling.
	s := newSchedule(ns, "restart")
	s.Spec.ConcurrencyPolicy = dbbenchv1alpha1.ConcurrencyReplace
	createSchedule(t, s)
	advance(t, rm, ns, "restart", b.Add(time.Second))
	want := nameFor("restart", b)
	uid := waitRuns(t, ns, "restart", want)[0].UID
	eventually(t, "lastScheduleTime", func() string {
		if getSchedule(t, ns, "restart").Status.LastScheduleTime == nil {
			return "not set"
		}
		return ""
	})
	rm.stop()

	// The worst case: the manager died after creating the run but before
	// its status write landed. Without its scheduled-time annotation too,
	// only the run's name says which time it was created for.
	eventuallyNoConflict(t, func() error {
		s := getSchedule(t, ns, "restart")
		s.Status.LastScheduleTime = nil
		s.Status.Active = nil
		return k8sClient.Status().Update(ctx, s)
	})
	eventuallyNoConflict(t, func() error {
		run := kubetest.GetRun(t, k8sClient, ns, want)
		delete(run.Annotations, dbbenchv1alpha1.AnnotationScheduledTime)
		return k8sClient.Update(ctx, run)
	})

	rm = startManager(t, clock)
	poke(t, ns, "restart")
	eventually(t, "status rebuilt by the new manager", func() string {
		s := getSchedule(t, ns, "restart")
		if s.Status.LastScheduleTime == nil || !s.Status.LastScheduleTime.Time.Equal(b) || len(s.Status.Active) != 1 {
			return fmt.Sprintf("status %+v", s.Status)
		}
		return ""
	})
	runs := waitRuns(t, ns, "restart", want)
	if runs[0].UID != uid {
		t.Errorf("the run was recreated (uid %s, was %s)", runs[0].UID, uid)
	}

	// And the new manager goes on with the next time.
	advance(t, rm, ns, "restart", b.Add(time.Minute+time.Second))
	waitRuns(t, ns, "restart", nameFor("restart", b.Add(time.Minute)))
}

func TestScheduleInvalidCronOrTimeZoneGivesACondition(t *testing.T) {
	ns := newNamespace(t)
	clock, b := scheduleClock(t)
	rm := startManager(t, clock)

	s := newSchedule(ns, "bad-cron")
	s.Spec.Schedule = "61 * * * *" // five fields, so the schema lets it through
	createSchedule(t, s)
	requireNoNextRun(t, waitReady(t, ns, "bad-cron", metav1.ConditionFalse, dbbenchv1alpha1.ScheduleReasonInvalidSchedule))
	waitEvent(t, ns, "bad-cron", dbbenchv1alpha1.ScheduleReasonInvalidSchedule, "")

	z := newSchedule(ns, "bad-zone")
	z.Spec.TimeZone = ptr.To("Mars/Olympus_Mons")
	createSchedule(t, z)
	requireNoNextRun(t, waitReady(t, ns, "bad-zone", metav1.ConditionFalse, dbbenchv1alpha1.ScheduleReasonInvalidTimeZone))

	never := newSchedule(ns, "never")
	never.Spec.Schedule = "0 0 30 2 *" // valid fields, but February has no 30th
	createSchedule(t, never)
	// It parses, and no time comes: still InvalidSchedule, with no next run.
	requireNoNextRun(t, waitReady(t, ns, "never", metav1.ConditionFalse, dbbenchv1alpha1.ScheduleReasonInvalidSchedule))

	advance(t, rm, ns, "bad-cron", b.Add(time.Second))
	poke(t, ns, "bad-zone")
	time.Sleep(time.Second)
	if runs := append(scheduledRuns(t, ns, "bad-cron"), scheduledRuns(t, ns, "bad-zone")...); len(runs) != 0 {
		t.Fatalf("invalid schedules created runs: %v", runNames(runs))
	}

	// Fixing the spec brings the schedule back.
	s = getSchedule(t, ns, "bad-cron")
	s.Spec.Schedule = "*/1 * * * *"
	if err := k8sClient.Update(ctx, s); err != nil {
		t.Fatalf("fixing the schedule: %v", err)
	}
	waitReady(t, ns, "bad-cron", metav1.ConditionTrue, dbbenchv1alpha1.ScheduleReasonScheduled)
	waitRuns(t, ns, "bad-cron", nameFor("bad-cron", b))
}

func TestScheduleTimeZoneMovesTheRunTimes(t *testing.T) {
	ns := newNamespace(t)
	clock, _ := scheduleClock(t)
	rm := startManager(t, clock)
	// 02:30 in Asia/Kolkata (UTC+5:30, no DST) is 21:00 UTC the day before.
	s := newSchedule(ns, "kolkata")
	s.Spec.Schedule = "30 2 * * *"
	s.Spec.TimeZone = ptr.To("Asia/Kolkata")
	createSchedule(t, s)
	now := clock.Now().UTC()
	due := time.Date(now.Year(), now.Month(), now.Day(), 21, 0, 0, 0, time.UTC)
	if !due.After(now) {
		due = due.AddDate(0, 0, 1)
	}
	waitNextRun(t, ns, "kolkata", due)
	advance(t, rm, ns, "kolkata", due.Add(time.Second))
	waitRuns(t, ns, "kolkata", nameFor("kolkata", due))
}

// validScheduleYAML is accepted; every case of the invalid table breaks one
// thing.
const validScheduleYAML = `
apiVersion: dbbench.io/v1alpha1
kind: BenchmarkSchedule
metadata:
  name: valid
spec:
  schedule: "0 2 * * 1-5"
  timeZone: Europe/Berlin
  runTemplate:
    spec:
      databases:
        - name: maria
          engine: mariadb
          versions: ["11.8"]
`

func TestScheduleSpecsAreValidatedByTheSchema(t *testing.T) {
	ns := newNamespace(t)
	valid := parseRun(t, validScheduleYAML)
	valid.SetNamespace(ns)
	if err := k8sClient.Create(ctx, valid, client.DryRunAll); err != nil {
		t.Fatalf("valid schedule refused: %v", err)
	}
	// Defaults like CronJob's, except Forbid: benchmarks must not overlap.
	spec := valid.Object["spec"].(map[string]any)
	for k, want := range map[string]any{"concurrencyPolicy": "Forbid", "suspend": false, "successfulRunsHistoryLimit": int64(3), "failedRunsHistoryLimit": int64(1)} {
		if got := spec[k]; got != want {
			t.Errorf("default %s = %v (%T), want %v", k, got, got, want)
		}
	}
	for _, macro := range []string{"@daily", "@hourly", "@weekly", "0 0 1,15 * *", "*/15 2-4 * JAN-MAR MON-FRI", "0 0 ? * 0"} {
		obj := parseRun(t, validScheduleYAML)
		obj.SetNamespace(ns)
		set(obj.Object, "spec.schedule", macro)
		if err := k8sClient.Create(ctx, obj, client.DryRunAll); err != nil {
			t.Errorf("schedule %q refused: %v", macro, err)
		}
	}
	if dryRunSamples(t, ns, "benchmarkschedule_*.yaml") == 0 {
		t.Fatal("no BenchmarkSchedule samples")
	}

	cases := []struct {
		name   string
		mutate func(obj map[string]any)
		want   string
	}{
		{"four fields", func(o map[string]any) { set(o, "spec.schedule", "0 2 * *") }, "schedule: must be five cron fields"},
		{"six fields (seconds)", func(o map[string]any) { set(o, "spec.schedule", "0 0 2 * * *") }, "schedule: must be five cron fields"},
		{"prose", func(o map[string]any) { set(o, "spec.schedule", "every night") }, "schedule: must be five cron fields"},
		{"@every", func(o map[string]any) { set(o, "spec.schedule", "@every 1h") }, "schedule: must be five cron fields"},
		{"empty", func(o map[string]any) { set(o, "spec.schedule", "") }, "spec.schedule"},
		{"time zone in the schedule", func(o map[string]any) { set(o, "spec.schedule", "CRON_TZ=UTC 0 2 * * *") }, "schedule: CRON_TZ and TZ are not supported here; set spec.timeZone"},
		{"time zone with spaces", func(o map[string]any) { set(o, "spec.timeZone", "Europe/Berlin; rm") }, "spec.timeZone"},
		{"unknown policy", func(o map[string]any) { set(o, "spec.concurrencyPolicy", "Sometimes") }, `spec.concurrencyPolicy: Unsupported value: "Sometimes"`},
		{"negative deadline", func(o map[string]any) { set(o, "spec.startingDeadlineSeconds", -5) }, "spec.startingDeadlineSeconds"},
		{"negative history", func(o map[string]any) { set(o, "spec.successfulRunsHistoryLimit", -1) }, "spec.successfulRunsHistoryLimit"},
		{"huge history", func(o map[string]any) { set(o, "spec.failedRunsHistoryLimit", 1000) }, "spec.failedRunsHistoryLimit"},
		{"no template", func(o map[string]any) { delete(o["spec"].(map[string]any), "runTemplate") }, "spec.runTemplate: Required value"},
		{"template without databases", func(o map[string]any) { set(o, "spec.runTemplate.spec.databases", []any{}) }, "spec.runTemplate.spec.databases"},
		{"template breaks a run rule", func(o map[string]any) {
			set(o, "spec.runTemplate.spec.databases.0.versions", []any{"10.11", "11.8"})
			set(o, "spec.runTemplate.spec.databases.0.image", "mariadb:latest")
		}, "image: must contain {version}"},
		{"bad suite", func(o map[string]any) { set(o, "spec.runTemplate.spec.suite", "Nightly_Suite") }, "spec.runTemplate.spec.suite"},
		{"name too long for run names", func(o map[string]any) { set(o, "metadata.name", strings.Repeat("a", 55)) }, "metadata.name: must be a DNS label of at most 54 characters"},
		{"name with a dot", func(o map[string]any) { set(o, "metadata.name", "mariadb.nightly") }, "metadata.name: must be a DNS label"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { requireRefused(t, ns, validScheduleYAML, tc.mutate, tc.want) })
	}
}

func TestScheduleKubectlExplainAndColumns(t *testing.T) {
	run := envtestKubectl(t)

	explain := run("explain", "benchmarkschedule.spec")
	for _, want := range []string{
		"GROUP:      dbbench.io", "standard five-field cron expression", "timeZone\t<string>",
		"concurrencyPolicy\t<string>", "enum: Allow, Forbid, Replace", "startingDeadlineSeconds", "successfulRunsHistoryLimit",
		"runTemplate\t<Object> -required-",
	} {
		if !strings.Contains(explain, want) {
			t.Errorf("kubectl explain output lacks %q:\n%s", want, explain)
		}
	}

	ns := newNamespace(t)
	clock, b := scheduleClock(t)
	rm := startManager(t, clock)
	createSchedule(t, newSchedule(ns, "cols"))
	advance(t, rm, ns, "cols", b.Add(time.Second))
	waitRuns(t, ns, "cols", nameFor("cols", b))
	eventually(t, "the Active column", func() string {
		out := run("get", "benchmarkschedules", "-n", ns)
		if !strings.Contains(out, "SCHEDULE") || !strings.Contains(out, "SUSPEND") || !strings.Contains(out, "LAST SCHEDULE") ||
			!strings.Contains(out, "* * * * *") || !strings.Contains(out, "false") || !strings.Contains(out, nameFor("cols", b)) {
			return out
		}
		return ""
	})
}
