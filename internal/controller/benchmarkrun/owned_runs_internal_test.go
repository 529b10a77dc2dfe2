package benchmarkrun

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
)

// framework.SetChangedCondition reports a change of status, reason or message only:
// the schedule and bisection passes emit an event on it.
func TestSetChangedCondition(t *testing.T) {
	base := metav1.Condition{Type: dbbenchv1alpha1.ScheduleConditionReady, Status: metav1.ConditionTrue, Reason: dbbenchv1alpha1.ScheduleReasonScheduled,
		Message:            "Next run at 02:00",
		LastTransitionTime: metav1.Time{Time: time.Unix(100, 0)}}
	later := func(f func(c *metav1.Condition)) metav1.Condition {
		c := base
		c.LastTransitionTime = metav1.Time{Time: time.Unix(200, 0)}
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name string
		had  []metav1.Condition
		set  metav1.Condition
		want bool
	}{
		{"first time", nil, base, true},
		{"the same again, later", []metav1.Condition{base}, later(func(*metav1.Condition) {}), false},
		{"status changed", []metav1.Condition{base}, later(func(c *metav1.Condition) { c.Status = metav1.ConditionFalse }), true},
		{"reason changed", []metav1.Condition{base}, later(func(c *metav1.Condition) { c.Reason = dbbenchv1alpha1.ScheduleReasonSuspended }), true},
		{"message changed", []metav1.Condition{base}, later(func(c *metav1.Condition) { c.Message = "Next run at 03:00" }), true},
		{"another type present", []metav1.Condition{{Type: "Other", Status: metav1.ConditionTrue, Reason: "X"}}, base, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conds := append([]metav1.Condition(nil), tc.had...)
			if got := framework.SetChangedCondition(&conds, tc.set); got != tc.want {
				t.Errorf("changed = %v, want %v", got, tc.want)
			}
			var found bool
			for _, c := range conds {
				if c.Type == tc.set.Type {
					found = true
					// Stored as set; the transition time is the one rule of
					// meta.SetStatusCondition, not this function's.
					if d := cmp.Diff(tc.set, c, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); d != "" {
						t.Errorf("condition (-set +stored):\n%s", d)
					}
				}
			}
			if !found {
				t.Errorf("condition %s not set: %+v", tc.set.Type, conds)
			}
		})
	}
}
