package regression

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dbbench/dbbench/pkg/inference"
)

func TestPlanPoints(t *testing.T) {
	comp := func(v float64, df int) inference.Component {
		return inference.Component{Variance: v, Estimate: v, DF: df, Known: true}
	}
	rows := []ComponentsRow{
		// Every level measured.
		{Step: "a", Threads: 1, VarianceComponents: inference.VarianceComponents{WithinPerSecond: comp(0.04, 90), Run: comp(0.001, 8), Node: comp(0.002, 2), Seconds: 60}},
		// No within level: its run level holds it at 60 s.
		{Step: "b", Threads: 1, VarianceComponents: inference.VarianceComponents{Run: comp(0.003, 5), RunIncludesWithin: true, Seconds: 60}},
		// Too few df: the defaults.
		{Step: "c", Threads: 1, VarianceComponents: inference.VarianceComponents{Run: comp(0.5, 2), RunIncludesWithin: true}},
		// No step length either.
		{Step: "e", Threads: 1, VarianceComponents: inference.VarianceComponents{Run: comp(0.003, 5), RunIncludesWithin: true}},
	}
	def := PlanDefaults{RunCV: 0.07, Seconds: 5}
	write := func(s string) bool { return s == "b" }
	keys := []inference.Key{{Step: "a", Threads: 1}, {Step: "b", Threads: 1}, {Step: "c", Threads: 1}, {Step: "d", Threads: 1}, {Step: "e", Threads: 1}}
	v7 := math.Log1p(0.07 * 0.07)
	tests := []struct {
		name string
		def  PlanDefaults
		want []PlanPointRow
		err  string
	}{
		{"history and defaults", def, []PlanPointRow{
			{PlanPoint: inference.PlanPoint{Key: keys[0], WithinPerSecond: 0.04, Run: 0.001, Node: 0.002, NodeKnown: true}, Source: PlanSourceHistory, RunDF: 8, NodeDF: 2},
			{PlanPoint: inference.PlanPoint{Key: keys[1], Write: true, Run: 0.003, MinSeconds: 60}, Source: PlanSourceHistory, RunDF: 5,
				Note: "within unknown: steps of 60 s or more"},
			{PlanPoint: inference.PlanPoint{Key: keys[2], Run: v7, MinSeconds: 5}, Source: PlanSourceDefault, Note: "history: 2 df < 4"},
			{PlanPoint: inference.PlanPoint{Key: keys[3], Run: v7, MinSeconds: 5}, Source: PlanSourceDefault},
			{PlanPoint: inference.PlanPoint{Key: keys[4], Run: 0.003, MinSeconds: 5}, Source: PlanSourceHistory, RunDF: 5,
				Note: "within and the history's step length unknown: steps of 5 s or more"},
		}, ""},
		{"default within and node", PlanDefaults{RunCV: 0.07, Seconds: 5, WithinCV: 0.2, NodeCV: 0.03, NodeKnown: true}, []PlanPointRow{
			{PlanPoint: inference.PlanPoint{Key: keys[0], WithinPerSecond: 0.04, Run: 0.001, Node: 0.002, NodeKnown: true}, Source: PlanSourceHistory, RunDF: 8, NodeDF: 2},
			{PlanPoint: inference.PlanPoint{Key: keys[1], Write: true, Run: 0.003, MinSeconds: 60, Node: math.Log1p(0.0009), NodeKnown: true}, Source: PlanSourceHistory, RunDF: 5,
				Note: "within unknown: steps of 60 s or more; node: default"},
			{PlanPoint: inference.PlanPoint{Key: keys[2], Run: v7, WithinPerSecond: math.Log1p(0.04), Node: math.Log1p(0.0009), NodeKnown: true}, Source: PlanSourceDefault, Note: "history: 2 df < 4"},
			{PlanPoint: inference.PlanPoint{Key: keys[3], Run: v7, WithinPerSecond: math.Log1p(0.04), Node: math.Log1p(0.0009), NodeKnown: true}, Source: PlanSourceDefault},
			{PlanPoint: inference.PlanPoint{Key: keys[4], Run: 0.003, MinSeconds: 5, Node: math.Log1p(0.0009), NodeKnown: true}, Source: PlanSourceHistory, RunDF: 5,
				Note: "within and the history's step length unknown: steps of 5 s or more; node: default"},
		}, ""},
		{"no default", PlanDefaults{}, nil, "plan: no noise estimate for c@1, d@1 (no repeats or A/A runs in the suite's history with 4 df or more) and no default run-to-run CV"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PlanPoints(keys, rows, tt.def, write)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, inference.ErrInvalid) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildPlanReport: the chosen plan is never dearer than the fixed
// ones, which reach the goal with the fewest repeats at their lengths; a
// goal out of reach is said, not an error.
func TestBuildPlanReport(t *testing.T) {
	pts, err := PlanPoints([]inference.Key{{Step: "point-query", Threads: 1}, {Step: "insert", Threads: 1}}, nil,
		PlanDefaults{RunCV: 0.05, Seconds: 5, WithinCV: 0.3}, func(s string) bool { return s == "insert" })
	if err != nil {
		t.Fatal(err)
	}
	costs := inference.PlanCosts{OverheadSeconds: 6, LoadSeconds: 60, WarmupSeconds: 10}
	lim := inference.PlanLimits{ReadSeconds: inference.PlanDurations(10, 900), WriteSeconds: inference.PlanDurations(10, 900), MaxRepeats: 40}
	r, err := BuildPlanReport(pts, costs, inference.PlanGoal{Detect: 0.1, Estimated: true, Magnitude: 0.05}, lim, FixedLengths{Name: "spec", ReadSeconds: 60, WriteSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	if r.Unreachable != "" || !r.Chosen.Met || len(r.Fixed) != 2 || r.Fixed[0].Plan.ReadSeconds != 300 || r.Fixed[1].Name != "spec" {
		t.Fatalf("report %+v", r)
	}
	for _, f := range r.Fixed {
		if !f.Plan.Met || f.Plan.CellHours < r.Chosen.CellHours {
			t.Errorf("%s: %+v against the chosen %+v", f.Name, f.Plan, r.Chosen)
		}
	}
	// With a 30 % per-second noise (0.09/s), 10-s steps add 0.009 to the
	// run level's 0.0025: longer steps than the minimum pay.
	if r.Chosen.ReadSeconds <= 10 {
		t.Errorf("chosen %g-s read steps; the within-run noise should make longer ones cheaper", r.Chosen.ReadSeconds)
	}
	r, err = BuildPlanReport(pts, costs, inference.PlanGoal{HalfWidth: 0.005}, lim)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Unreachable, "±0.5 % is out of reach: at 40 repeats per side") || r.Chosen.Met {
		t.Errorf("unreachable %q, chosen %+v", r.Unreachable, r.Chosen)
	}
	if _, err := BuildPlanReport(pts, costs, inference.PlanGoal{}, lim); !errors.Is(err, inference.ErrInvalid) {
		t.Errorf("no goal: %v", err)
	}
}
