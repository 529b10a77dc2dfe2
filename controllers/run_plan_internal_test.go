package controllers

import (
	"math"
	"strings"
	"testing"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/runplan"
)

func TestAchievedWorst(t *testing.T) {
	pq, ui := inference.Key{Step: "point-query", Threads: 1}, inference.Key{Step: "update-index", Threads: 4}
	for _, tc := range []struct {
		name   string
		hws    []inference.HalfWidth
		single bool
		want   float64
		at     inference.Key
	}{
		{"the widest ratio", []inference.HalfWidth{{Key: pq, Percent: 2}, {Key: ui, Percent: 5}}, false, 5, ui},
		{"one combination: its mean's ×√2", []inference.HalfWidth{{Key: pq, Percent: 3}, {Key: ui, Percent: 1}}, true, 3 * math.Sqrt2, pq},
		{"an unknown interval is the widest", []inference.HalfWidth{{Key: pq, Percent: math.Inf(1)}, {Key: ui, Percent: 9}}, false, math.Inf(1), pq},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, at := achievedWorst(tc.hws, tc.single)
			if !(got == tc.want || math.Abs(got-tc.want) < 1e-12) || at != tc.at {
				t.Errorf("achievedWorst = %v at %v, want %v at %v", got, at, tc.want, tc.at)
			}
		})
	}
}

// The status of a design that falls short says by how much and names the
// cheapest design that does not.
func TestPlanStatusOfAShortDesign(t *testing.T) {
	key := inference.Key{Step: "point-query", Threads: 4}
	pred := &runplan.Prediction{
		Goal:     inference.PlanGoal{Detect: 0.2, Power: 0.9, Magnitude: 0.05, Alpha: 0.05, Tests: 1},
		Source:   runplan.SourceDefaults,
		Design:   inference.Plan{ReadSeconds: 300, WriteSeconds: 600, Repeats: 2, Worst: key, Power: 0.31, MDE: 0.42, HalfWidth: 0.35},
		Cheapest: inference.Plan{ReadSeconds: 10, WriteSeconds: 10, Repeats: 5, Worst: key, Power: 0.93, MDE: 0.18, HalfWidth: 0.1, CellHours: 0.25, Met: true},
		Required: 0.1,
	}
	ps := planStatusOf(pred)
	for _, want := range []string{"the design falls short: 2 repeats of 300-s read and 600-s write steps find a 20.00 % slowdown at point-query@4 with power 0.31",
		"the cheapest design that reaches the goal: 5 repeats of 10-s read and 10-s write steps, 0.25 cell-hours", "noise from the defaults"} {
		if !strings.Contains(ps.Message, want) {
			t.Errorf("message %q lacks %q", ps.Message, want)
		}
	}
	if ps.Cheapest == nil || ps.Cheapest.Power != "0.93" || ps.RequiredHalfWidthPercent != "10.00" || ps.Design.Met {
		t.Errorf("status = %+v", ps)
	}
}

func TestAdaptiveStatusOf(t *testing.T) {
	known := func(v float64, df int) inference.Component {
		return inference.Component{Variance: v, DF: df, Known: true}
	}
	rows := []analysis.ComponentsRow{
		{Step: "point-query", Threads: 1, VarianceComponents: inference.VarianceComponents{Run: known(math.Log1p(0.03*0.03), 9)}},
		{Step: "point-query", Threads: 4, VarianceComponents: inference.VarianceComponents{Run: known(0.01, 3)}},
		{Step: "update-index", Threads: 1},
	}
	st := adaptiveStatusOf(rows, 5, "")
	if st.RunsRead != 5 || len(st.BetweenRunCV) != 1 || st.BetweenRunCV[0] != (dbbenchv1alpha1.PointCV{Step: "point-query", Threads: 1, CVPercent: "3.00", DF: 9}) ||
		!strings.Contains(st.Message, "2 points of the history rest on fewer than 4 df") {
		t.Errorf("status = %+v", st)
	}
	if empty := adaptiveStatusOf(nil, 0, "; the cluster's history was not read: boom"); len(empty.BetweenRunCV) != 0 ||
		!strings.Contains(empty.Message, "every step uses betweenRunCVPercent; the cluster's history was not read: boom") {
		t.Errorf("empty status = %+v", empty)
	}
}
