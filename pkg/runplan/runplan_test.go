package runplan

import (
	"errors"
	"math"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/regression"
)

// twoVersions is a run of two versions at point-query@4 with a goal.
func twoVersions(repeats int32, goal *dbbenchv1alpha1.GoalSpec) *dbbenchv1alpha1.BenchmarkRun {
	return &dbbenchv1alpha1.BenchmarkRun{Spec: dbbenchv1alpha1.BenchmarkRunSpec{
		Databases: []dbbenchv1alpha1.DatabaseSpec{{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"10.11", "11.8"}}},
		Workload:  dbbenchv1alpha1.WorkloadSpec{Steps: []string{"point-query", "update-index"}, Threads: []int32{1, 4}, Repeats: repeats, ReadSeconds: 60, WriteSeconds: 120},
		Goal:      goal,
	}}
}

func percent(v int32) *intstr.IntOrString { return ptr.To(intstr.FromInt32(v)) }

func TestPredict(t *testing.T) {
	for _, tc := range []struct {
		name    string
		run     *dbbenchv1alpha1.BenchmarkRun
		reaches bool
		// cheapest: a design within Limits reaches the goal.
		cheapest bool
		note     string
		required float64
	}{
		{"a wide half-width at 3 repeats", twoVersions(3, &dbbenchv1alpha1.GoalSpec{HalfWidthPercent: percent(25)}), true, true, "", 0.25},
		{"a tight half-width at 3 repeats", twoVersions(3, &dbbenchv1alpha1.GoalSpec{HalfWidthPercent: percent(8)}), false, true, "", 0.08},
		{"one repeat cannot be judged", twoVersions(1, &dbbenchv1alpha1.GoalSpec{HalfWidthPercent: percent(25)}), false, true, "needs 2 runs a side", 0.25},
		{"a large slowdown at 6 repeats", twoVersions(6, &dbbenchv1alpha1.GoalSpec{DetectPercent: percent(30)}), true, true, "", -1},
		{"10 % beyond 20 repeats under the Tested rule", twoVersions(20, &dbbenchv1alpha1.GoalSpec{DetectPercent: percent(10)}), false, false, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Predict(tc.run, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if p.Reaches() != tc.reaches || (p.CheapestUnreachable == "") != tc.cheapest || !strings.Contains(p.DesignNote, tc.note) {
				t.Errorf("reaches %v (want %v), cheapest unreachable %q (want reachable %v), note %q (want %q)",
					p.Reaches(), tc.reaches, p.CheapestUnreachable, tc.cheapest, p.DesignNote, tc.note)
			}
			if p.Source != SourceDefaults || p.Goal.Tests != 4 {
				t.Errorf("source %s, tests %d: want Defaults over 4 points", p.Source, p.Goal.Tests)
			}
			switch {
			case tc.required < 0: // a detection goal: the cheapest design's half-width
				if p.Required != p.Cheapest.HalfWidth || !(p.Required > 0) {
					t.Errorf("required %v, want the cheapest design's %v", p.Required, p.Cheapest.HalfWidth)
				}
			case math.Abs(p.Required-tc.required) > 1e-12:
				t.Errorf("required %v, want %v", p.Required, tc.required)
			}
			if tc.cheapest && (!p.Cheapest.Met || p.Cheapest.CellHours <= 0) {
				t.Errorf("cheapest %+v: want a met design with a cost", p.Cheapest)
			}
			if tc.reaches && p.Cheapest.CellHours > p.Design.CellHours+1e-9 {
				t.Errorf("the cheapest (%g h) costs more than the design (%g h), which reaches the goal", p.Cheapest.CellHours, p.Design.CellHours)
			}
		})
	}
}

func TestPredictWithoutGoal(t *testing.T) {
	if _, err := Predict(twoVersions(3, nil), nil, nil); !errors.Is(err, ErrNoGoal) {
		t.Fatalf("err = %v, want ErrNoGoal", err)
	}
}

func TestSpecGoal(t *testing.T) {
	run := twoVersions(3, &dbbenchv1alpha1.GoalSpec{DetectPercent: ptr.To(intstr.FromString("7.5")), PowerPercent: 80})
	run.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{MinMagnitudePercent: 3, MagnitudeRule: dbbenchv1alpha1.MagnitudeEstimated, MaxPValue: "0.01"}
	g, ok := SpecGoal(run)
	want := inference.PlanGoal{Detect: 0.075, Power: 0.8, Magnitude: 0.03, Estimated: true, Alpha: 0.01}
	if !ok || math.Abs(g.Detect-want.Detect) > 1e-12 || g.Power != want.Power || g.Magnitude != want.Magnitude || g.Estimated != want.Estimated || g.Alpha != want.Alpha {
		t.Errorf("goal = %+v, want %+v", g, want)
	}
	if text := GoalText(g); text != "a 7.5 % slowdown found with power 0.8 (Estimated rule, 3 % magnitude, α 0.01 over 0 tests)" {
		t.Errorf("text = %q", text)
	}
}

func TestCosts(t *testing.T) {
	run := twoVersions(3, nil)
	run.Spec.Workload.TableSize, run.Spec.Workload.Tables = 50_000_000, 4
	for _, tc := range []struct {
		name  string
		loads []float64
		want  float64
	}{
		{"the flush wait for 200 M rows", nil, 260},
		{"the history's median load", []float64{90, 30, 60}, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, note := Costs(run, tc.loads)
			if c.LoadSeconds != tc.want || c.Combinations != 2 || c.WarmupSeconds != 10 || c.OverheadSeconds != inference.DefaultOverheadSeconds || note == "" {
				t.Errorf("costs = %+v (%s), want load %g s, 2 combinations, 10-s warm-up", c, note, tc.want)
			}
		})
	}
}

func TestSourceOf(t *testing.T) {
	h, d := regression.PlanPointRow{Source: regression.PlanSourceHistory}, regression.PlanPointRow{Source: regression.PlanSourceDefault}
	for _, tc := range []struct {
		rows []regression.PlanPointRow
		want Source
	}{
		{[]regression.PlanPointRow{h, h}, SourceHistory},
		{[]regression.PlanPointRow{d}, SourceDefaults},
		{[]regression.PlanPointRow{h, d}, SourceMixed},
	} {
		if got := sourceOf(tc.rows); got != tc.want {
			t.Errorf("sourceOf(%v) = %s, want %s", tc.rows, got, tc.want)
		}
	}
}

// Steps shorter than the defaults' noise estimate holds for fall short
// whatever the predicted half-width.
func TestPredictShortSteps(t *testing.T) {
	run := twoVersions(4, &dbbenchv1alpha1.GoalSpec{HalfWidthPercent: percent(40)})
	run.Spec.Workload.ReadSeconds, run.Spec.Workload.WriteSeconds = 3, 3
	p, err := Predict(run, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Reaches() || !strings.Contains(p.DesignNote, "point-query@1: 3-s steps are shorter than the 5 s its noise estimate holds for") || !p.Cheapest.Met {
		t.Errorf("reaches %v, note %q, cheapest %+v", p.Reaches(), p.DesignNote, p.Cheapest)
	}
}

// The pgbench steps are points like the catalog's: pgbench-tpcb writes
// (writeSeconds), pgbench-select reads; an unknown name is still refused.
func TestPgbenchStepsArePoints(t *testing.T) {
	for step, write := range map[string]bool{"pgbench-tpcb": true, "pgbench-select": false, "point-query": false, "update-index": true} {
		if got := WriteStep(step); got != write {
			t.Errorf("WriteStep(%s) = %v, want %v", step, got, write)
		}
	}
	keys, err := Keys([]string{"pgbench-tpcb", "pgbench-select"}, []int{1, 4}, nil)
	if err != nil || len(keys) != 4 {
		t.Errorf("keys %v, %v: want 4 points", keys, err)
	}
	if _, err := Keys([]string{"pgbench-nope"}, []int{1}, nil); err == nil {
		t.Error("an unknown step was taken for a point")
	}
}
