package benchmarkrun

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/regression"
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

// The status of a design that falls short says by how much (its power at
// its worst point) and names the cheapest design that does not.
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
	design := dbbenchv1alpha1.PlannedDesign{ReadSeconds: 300, WriteSeconds: 600, Repeats: 2, CellHours: "0.00",
		Worst: "point-query@4", Power: "0.31", MDEPercent: "42.00", HalfWidthPercent: "35.00"}
	cheapest := dbbenchv1alpha1.PlannedDesign{ReadSeconds: 10, WriteSeconds: 10, Repeats: 5, CellHours: "0.25",
		Worst: "point-query@4", Power: "0.93", MDEPercent: "18.00", HalfWidthPercent: "10.00", Met: true}
	if d := cmp.Diff(design, ps.Design); d != "" {
		t.Errorf("design (-want +got):\n%s", d)
	}
	if d := cmp.Diff(&cheapest, ps.Cheapest); d != "" {
		t.Errorf("cheapest (-want +got):\n%s", d)
	}
	if ps.Source != dbbenchv1alpha1.PlanSource(runplan.SourceDefaults) || ps.RequiredHalfWidthPercent != "10.00" || ps.Message == "" {
		t.Errorf("status = %+v", ps)
	}
}

func TestAdaptiveStatusOf(t *testing.T) {
	known := func(v float64, df int) inference.Component {
		return inference.Component{Variance: v, DF: df, Known: true}
	}
	rows := []regression.ComponentsRow{
		{Step: "point-query", Threads: 1, VarianceComponents: inference.VarianceComponents{Run: known(math.Log1p(0.03*0.03), 9)}},
		{Step: "point-query", Threads: 4, VarianceComponents: inference.VarianceComponents{Run: known(0.01, 3)}},
		{Step: "update-index", Threads: 1},
	}
	// The points left out (under 4 df, or unknown) use betweenRunCVPercent;
	// the message says so to people.
	st := adaptiveStatusOf(rows, 5, "")
	if st.RunsRead != 5 || len(st.BetweenRunCV) != 1 || st.BetweenRunCV[0] != (dbbenchv1alpha1.PointCV{Step: "point-query", Threads: 1, CVPercent: "3.00", DF: 9}) ||
		st.Message == "" {
		t.Errorf("status = %+v", st)
	}
	if empty := adaptiveStatusOf(nil, 0, "; the cluster's history was not read: boom"); empty.RunsRead != 0 || len(empty.BetweenRunCV) != 0 || empty.Message == "" {
		t.Errorf("empty status = %+v", empty)
	}
}
