package inference

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// logVar is the variance of a log value whose CV is cv.
func logVar(cv float64) float64 { return math.Log1p(cv * cv) }

// readPoints are n read points with the same components.
func readPoints(n int, within, run, node float64, nodeKnown bool) []PlanPoint {
	out := make([]PlanPoint, n)
	for i := range out {
		out[i] = PlanPoint{Key: Key{Step: fmt.Sprintf("r%d", i), Threads: 1}, WithinPerSecond: within, Run: run, Node: node, NodeKnown: nodeKnown}
	}
	return out
}

// TestChoosePlanMatchesTheDesignTable: with run-to-run noise only (no
// within-run part, one node), the repeats a plan picks are the ones
// docs/noise.md's table gives for 90 % power against a 10 % slowdown
// under each rule (α 0.05, Holm over 2 steps), and the shortest step wins.
func TestChoosePlanMatchesTheDesignTable(t *testing.T) {
	tests := []struct {
		cv        float64
		estimated bool
		want      int
	}{
		{0.05, false, 19}, {0.07, false, 37}, {0.09, false, 59},
		{0.05, true, 6}, {0.07, true, 11}, {0.09, true, 17},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("cv %v estimated %v", tt.cv, tt.estimated), func(t *testing.T) {
			goal := PlanGoal{Detect: 0.10, Power: 0.9, Magnitude: 0.05, Estimated: tt.estimated, Alpha: 0.05}
			lim := PlanLimits{ReadSeconds: PlanDurations(5, 600), MaxRepeats: 100}
			p, err := ChoosePlan(readPoints(2, 0, logVar(tt.cv), 0, true), PlanCosts{OverheadSeconds: 6, LoadSeconds: 60, WarmupSeconds: 1}, goal, lim)
			if err != nil {
				t.Fatal(err)
			}
			if p.Repeats != tt.want || p.ReadSeconds != 5 || p.Nodes != 1 || !p.Met || !(p.Power >= 0.9) {
				t.Errorf("plan %+v, want %d repeats of 5-s steps on one node", p, tt.want)
			}
			// 2 combinations × n cells of 6 + 60 + 2 × (1 + 5) s.
			if want := 2 * float64(tt.want) * 78 / 3600; math.Abs(p.CellHours-want) > 1e-9 || p.CellSeconds != 78 {
				t.Errorf("cell-hours %v (cell %v s), want %v", p.CellHours, p.CellSeconds, want)
			}
		})
	}
}

// TestChoosePlanIsTheCheapest: the search (bisection over the repeats,
// the dominated points left out, the read and write groups sized apart)
// finds the same cost as trying every pair of step lengths, node count and
// repeat count, every point scored.
func TestChoosePlanIsTheCheapest(t *testing.T) {
	points := []PlanPoint{
		{Key: Key{Step: "point-query", Threads: 1}, WithinPerSecond: 0.02, Run: logVar(0.02), NodeKnown: true, Node: logVar(0.03)},
		{Key: Key{Step: "read-only-sum", Threads: 1}, WithinPerSecond: 0.5, Run: logVar(0.01), NodeKnown: true, Node: logVar(0.01)},
		{Key: Key{Step: "range-covered-pk", Threads: 1}, WithinPerSecond: 0.01, Run: logVar(0.01), NodeKnown: true},
		{Key: Key{Step: "update-one", Threads: 1}, Write: true, WithinPerSecond: 1, Run: logVar(0.02), NodeKnown: true, Node: logVar(0.02)},
		{Key: Key{Step: "insert", Threads: 1}, Write: true, WithinPerSecond: 0.2, Run: logVar(0.05), NodeKnown: true, Node: logVar(0.05)},
	}
	costs := PlanCosts{OverheadSeconds: 6, LoadSeconds: 120, WarmupSeconds: 10, Combinations: 3}
	grid := []float64{10, 30, 60, 120, 240, 600}
	tests := []struct {
		name string
		goal PlanGoal
		lim  PlanLimits
	}{
		{"detect, estimated, cell-hours", PlanGoal{Detect: 0.08, Power: 0.8, Magnitude: 0.03, Estimated: true}, PlanLimits{MaxRepeats: 30, Nodes: 3}},
		{"detect, tested, wall time", PlanGoal{Detect: 0.12, Power: 0.9, Magnitude: 0.05}, PlanLimits{MaxRepeats: 30, Nodes: 3, Objective: ObjectiveWallTime}},
		{"half-width, wall time", PlanGoal{HalfWidth: 0.04}, PlanLimits{MaxRepeats: 30, Nodes: 3, Objective: ObjectiveWallTime}},
		{"half-width, cell-hours", PlanGoal{HalfWidth: 0.04}, PlanLimits{MaxRepeats: 30, Nodes: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.lim.ReadSeconds, tt.lim.WriteSeconds = grid, grid
			got, err := ChoosePlan(points, costs, tt.goal, tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			// The fewest repeats at which every point meets the goal, by
			// a scan from 2 (0: none up to MaxRepeats).
			pl := newPlanner(tt.goal, len(points))
			fewest := func(r, w float64, nodes int) int {
				for n := 2; n <= tt.lim.MaxRepeats; n++ {
					ok := true
					for _, p := range points {
						if !pl.meets(pl.score(p, pick(p, r, w), n, blocks(n, nodes))) {
							ok = false
							break
						}
					}
					if ok {
						return n
					}
				}
				return 0
			}
			var best *Plan
			for _, r := range grid {
				for _, w := range grid {
					for nodes := 1; nodes <= tt.lim.Nodes; nodes++ {
						n := fewest(r, w, nodes)
						if n == 0 {
							continue
						}
						p := costOf(points, costs, r, w, n, nodes)
						key, bestKey := p.CellHours, 0.0
						if best != nil {
							bestKey = best.CellHours
						}
						if tt.lim.Objective == ObjectiveWallTime {
							key = p.WallSeconds
							if best != nil {
								bestKey = best.WallSeconds
							}
						}
						if best == nil || key < bestKey-1e-9 {
							best = &p
						}
					}
				}
			}
			if best == nil {
				t.Fatal("brute force found no plan")
			}
			gk, bk := got.CellHours, best.CellHours
			if tt.lim.Objective == ObjectiveWallTime {
				gk, bk = got.WallSeconds, best.WallSeconds
			}
			if math.Abs(gk-bk) > 1e-9*bk {
				t.Errorf("chosen %+v\ncheapest %+v", got, *best)
			}
			t.Logf("%s: %g s read, %g s write, %d repeats on %d nodes, %.2f cell-hours, %.0f s wall; worst %s", tt.name,
				got.ReadSeconds, got.WriteSeconds, got.Repeats, got.Nodes, got.CellHours, got.WallSeconds, got.Worst.Step)
		})
	}
}

// TestChoosePlanTradeOffs: what each level of the model does to the plan.
func TestChoosePlanTradeOffs(t *testing.T) {
	costs := PlanCosts{OverheadSeconds: 6, LoadSeconds: 60, WarmupSeconds: 10}
	grid := PlanDurations(10, 3600)
	goal := PlanGoal{Detect: 0.1, Power: 0.9, Magnitude: 0.05, Estimated: true}
	tests := []struct {
		name  string
		pts   []PlanPoint
		lim   PlanLimits
		check func(Plan) string
	}{
		{"run noise only: the shortest steps", readPoints(4, 0, logVar(0.07), 0, true), PlanLimits{MaxRepeats: 50, Nodes: 1},
			func(p Plan) string {
				if p.ReadSeconds != 10 {
					return "want 10-s steps"
				}
				return ""
			}},
		{"within-run noise only: long steps, few repeats", readPoints(4, 1, 1e-6, 0, true), PlanLimits{MaxRepeats: 50, Nodes: 1},
			func(p Plan) string {
				// σ²_w/T must fall to about the 7 % case's: long steps,
				// and more than the minimum of 2 repeats only if the
				// overhead is worth less than the steps.
				if p.ReadSeconds < 60 {
					return "want steps of a minute or more"
				}
				return ""
			}},
		{"node noise, cell-hours: one node", readPoints(4, 0, logVar(0.05), logVar(0.1), true), PlanLimits{MaxRepeats: 50, Nodes: 8},
			func(p Plan) string {
				if p.Nodes != 1 {
					return "want one node (the node effect would inflate the test's variance)"
				}
				return ""
			}},
		{"node noise, wall time: more nodes, more repeats", readPoints(4, 0, logVar(0.05), logVar(0.1), true), PlanLimits{MaxRepeats: 50, Nodes: 8, Objective: ObjectiveWallTime},
			func(p Plan) string {
				one, err := ChoosePlan(readPoints(4, 0, logVar(0.05), logVar(0.1), true), costs, goal, PlanLimits{ReadSeconds: grid, MaxRepeats: 50, Nodes: 1})
				if err != nil {
					return err.Error()
				}
				if p.Nodes < 2 || p.Repeats <= one.Repeats || p.WallSeconds >= one.WallSeconds {
					return fmt.Sprintf("want several nodes, more repeats than one node needs (%d) and a shorter wall time than its %.0f s", one.Repeats, one.WallSeconds)
				}
				return ""
			}},
		{"no node estimate: one node even for wall time", readPoints(4, 0, logVar(0.05), 0, false), PlanLimits{MaxRepeats: 50, Nodes: 8, Objective: ObjectiveWallTime},
			func(p Plan) string {
				if p.Nodes != 1 {
					return "want one node"
				}
				return ""
			}},
		{"no node effect: every node for the same cell-hours", readPoints(4, 0, logVar(0.05), 0, true), PlanLimits{MaxRepeats: 50, Nodes: 4},
			func(p Plan) string {
				one, err := ChoosePlan(readPoints(4, 0, logVar(0.05), 0, true), costs, goal, PlanLimits{ReadSeconds: grid, MaxRepeats: 50, Nodes: 1})
				if err != nil {
					return err.Error()
				}
				if p.Nodes != 4 || p.Repeats != one.Repeats {
					return fmt.Sprintf("want one node's %d repeats on 4 nodes (no inflation, so the wall time decides)", one.Repeats)
				}
				return ""
			}},
		{"within unknown: no step below the history's", []PlanPoint{{Key: Key{Step: "x", Threads: 1}, Run: logVar(0.05), NodeKnown: true, MinSeconds: 60}}, PlanLimits{MaxRepeats: 50},
			func(p Plan) string {
				if p.ReadSeconds != 60 {
					return "want 60-s steps"
				}
				return ""
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.lim.ReadSeconds = grid
			p, err := ChoosePlan(tt.pts, costs, goal, tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			if msg := tt.check(p); msg != "" {
				t.Errorf("%s: got %g-s steps, %d repeats on %d nodes (%v per node), %.3f cell-hours, %.0f s wall", msg,
					p.ReadSeconds, p.Repeats, p.Nodes, p.CellsPerNode, p.CellHours, p.WallSeconds)
			}
		})
	}
}

// TestChoosePlanRefusesBadGoals: bad goals and goals out of reach are
// errors that say why and what the limits reach.
func TestChoosePlanRefusesBadGoals(t *testing.T) {
	pts := readPoints(2, 0, logVar(0.07), 0, true)
	costs := PlanCosts{OverheadSeconds: 6, LoadSeconds: 60}
	lim := PlanLimits{ReadSeconds: []float64{10, 300}, MaxRepeats: 10}
	tests := []struct {
		name string
		pts  []PlanPoint
		goal PlanGoal
		lim  PlanLimits
		is   error
		want string
	}{
		{"tested at the magnitude", pts, PlanGoal{Detect: 0.05, Magnitude: 0.05}, lim, ErrInvalid,
			"plan goal: a 5.0 % slowdown is not beyond the 5.0 % magnitude the Tested rule asks for"},
		{"estimated at the magnitude", pts, PlanGoal{Detect: 0.05, Magnitude: 0.05, Estimated: true}, lim, ErrInvalid,
			"plan goal: a 5.0 % slowdown is not beyond the 5.0 % magnitude the Estimated rule asks its estimate to reach"},
		{"two goals", pts, PlanGoal{Detect: 0.1, HalfWidth: 0.05}, lim, ErrInvalid, "give a slowdown to detect or a half-width, one of them"},
		{"no goal", pts, PlanGoal{}, lim, ErrInvalid, "give a slowdown to detect or a half-width, one of them"},
		{"power at alpha", pts, PlanGoal{Detect: 0.1, Power: 0.04, Estimated: true}, lim, ErrInvalid, "power 0.04 must be in (alpha 0.05, 1)"},
		{"no noise", readPoints(1, 0, 0, 0, true), PlanGoal{Detect: 0.1}, lim, ErrInvalid, "r0@1 has no noise estimate"},
		{"no read lengths", pts, PlanGoal{Detect: 0.1}, PlanLimits{MaxRepeats: 10}, ErrInvalid, "read points need read step lengths"},
		// docs/noise.md: 10+10 at a 7 % CV have power 0.89 under Estimated.
		{"detect out of reach", pts, PlanGoal{Detect: 0.1, Power: 0.9, Magnitude: 0.05, Estimated: true}, lim, ErrUnreachable,
			"plan: a 10.0 % slowdown with power 0.90 is out of reach: at 10 repeats per side, 300-s read and 0-s write steps, one node the least sensitive point (r0@1) has power 0.89 and finds 10.2 % with power 0.90"},
		{"half-width out of reach", pts, PlanGoal{HalfWidth: 0.02}, lim, ErrUnreachable,
			"plan: ±2.0 % is out of reach: at 10 repeats per side, 300-s read and 0-s write steps, one node the least precise point (r0@1) reaches ±6.8 %"},
		{"too short", []PlanPoint{{Key: Key{Step: "x", Threads: 1}, Run: 0.01, MinSeconds: 600}}, PlanGoal{HalfWidth: 0.5}, lim, ErrUnreachable,
			"plan: x@1 needs steps of 600 s or more (its components were measured at that length) and the limits allow 300 s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ChoosePlan(tt.pts, costs, tt.goal, tt.lim)
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q (%v)", err, tt.want, tt.is)
			}
			if errors.Is(err, ErrUnreachable) && (p.Met || p.Repeats != tt.lim.MaxRepeats) {
				t.Errorf("unreachable: the limits' plan %+v should be returned, not met", p)
			}
		})
	}
}

// TestChoosePlanHalfWidthMatchesRequiredRepeats: with run noise only a
// half-width goal needs RequiredRepeats's n.
func TestChoosePlanHalfWidthMatchesRequiredRepeats(t *testing.T) {
	for _, cv := range []float64{0.03, 0.07, 0.12} {
		want, err := RequiredRepeats(cv, 0.05, 0.95, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ChoosePlan(readPoints(3, 0, logVar(cv), 0, true), PlanCosts{}, PlanGoal{HalfWidth: 0.05},
			PlanLimits{ReadSeconds: []float64{60}, MaxRepeats: 100})
		if err != nil {
			t.Fatal(err)
		}
		if p.Repeats != want || !(p.HalfWidth <= 0.05) {
			t.Errorf("cv %v: %d repeats (±%.3f), want %d", cv, p.Repeats, p.HalfWidth, want)
		}
	}
}

// TestSimPlanDeliversItsPower runs the verdict's own test (Welch on log
// values, at the correction's first level α/K, the rule's magnitude) on
// data drawn from the model, in the plan's blocks over its nodes, and
// compares the rate of findings with the plan's predicted power; and the
// same plan on A/A data with the rate of false findings, which must stay
// at or below α/K (the node inflation makes the test conservative).
func TestSimPlanDeliversItsPower(t *testing.T) {
	const trials = 2000
	costs := PlanCosts{OverheadSeconds: 6, LoadSeconds: 60, WarmupSeconds: 10}
	tests := []struct {
		name string
		pt   PlanPoint
		goal PlanGoal
		lim  PlanLimits
	}{
		{"one node, estimated", PlanPoint{Key: Key{Step: "a", Threads: 1}, WithinPerSecond: 0.05, Run: logVar(0.05), NodeKnown: true},
			PlanGoal{Detect: 0.1, Power: 0.9, Magnitude: 0.05, Estimated: true, Tests: 4}, PlanLimits{MaxRepeats: 60, Nodes: 1}},
		{"one node, tested", PlanPoint{Key: Key{Step: "a", Threads: 1}, WithinPerSecond: 0.05, Run: logVar(0.03), NodeKnown: true},
			PlanGoal{Detect: 0.1, Power: 0.8, Magnitude: 0.05, Tests: 4}, PlanLimits{MaxRepeats: 60, Nodes: 1}},
		{"four nodes, wall time", PlanPoint{Key: Key{Step: "a", Threads: 1}, WithinPerSecond: 0.05, Run: logVar(0.04), Node: logVar(0.05), NodeKnown: true},
			PlanGoal{Detect: 0.1, Power: 0.9, Magnitude: 0.05, Estimated: true, Tests: 4}, PlanLimits{MaxRepeats: 60, Nodes: 4, Objective: ObjectiveWallTime}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.lim.ReadSeconds = PlanDurations(10, 600)
			p, err := ChoosePlan([]PlanPoint{tt.pt}, costs, tt.goal, tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(26, uint64(i)))
			level := tt.goal.alpha() / float64(tt.goal.Tests)
			magnitude := tt.goal.Magnitude
			if tt.goal.Estimated {
				magnitude = 0
			}
			found := func(slowdown float64) float64 {
				hits := 0
				for range trials {
					var a, b []float64
					for _, m := range p.CellsPerNode {
						node := math.Sqrt(tt.pt.Node) * r.NormFloat64()
						for range m {
							for _, side := range []*[]float64{&a, &b} {
								y := node + math.Sqrt(tt.pt.errVariance(p.ReadSeconds))*r.NormFloat64()
								if side == &b {
									y += math.Log1p(-slowdown)
								}
								*side = append(*side, 1000*math.Exp(y))
							}
						}
					}
					test, err := Slowdown(a, b, magnitude)
					if err != nil {
						t.Fatal(err)
					}
					if test.P < level && (!tt.goal.Estimated || test.Ratio <= 1-tt.goal.Magnitude) {
						hits++
					}
				}
				return float64(hits) / trials
			}
			power := found(tt.goal.Detect)
			aa := found(0)
			t.Logf("%s: %g-s steps, %d repeats on %d nodes %v: predicted power %.3f, simulated %.3f (%d trials); A/A %.4f at level %.4f",
				tt.name, p.ReadSeconds, p.Repeats, p.Nodes, p.CellsPerNode, p.Power, power, trials, aa, level)
			// Welch's test has a few df fewer than the design's pooled
			// test: allow 0.03 below the prediction besides 3 se.
			if margin := binomialMargin(p.Power, trials); power < p.Power-margin-0.03 || power > p.Power+margin+0.03 {
				t.Errorf("simulated power %.3f, predicted %.3f ± %.3f (+0.03)", power, p.Power, margin)
			}
			if aa > level+binomialMargin(level, trials) {
				t.Errorf("A/A rate %.4f above the level %.4f", aa, level)
			}
		})
	}
}
