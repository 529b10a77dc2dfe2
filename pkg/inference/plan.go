package inference

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// The plan: how long to measure each step, how many repeats of each
// combination to run and over how many nodes, so that a run reaches a
// precision goal at the least cost (Kalibera & Jones's optimal repetition
// counts, with the suite's own components, the verdict's own test and the
// cluster's nodes as the parallel level).
//
// Model. One point's log value in one run, at a step length of T seconds,
// has the variance σ²_e(T) = σ²_run + σ²_w/T on one node (the components of
// EstimateComponents). A plan runs n repeats of every compared combination
// ("side"), spread over N nodes in balanced blocks: node k runs m_k cells
// of every side (m_k within one of n/N, Σm_k = n). The node effect is then
// common to the sides' means and cancels from their difference, whose
// variance is 2σ²_e(T)/n. The verdict's between-run test does not know the
// blocks: each side's sample variance also holds the spread of the node
// effects, E[s²] = σ²_e + σ²_node·(n − Σm²_k/n)/(n − 1), so its standard
// error is inflated by that ratio (Design.Inflation): the test keeps its
// level and loses power. One node (N = 1) has no inflation; more nodes
// shorten the wall time at the price of more repeats when σ²_node > 0.
//
// The test is the verdict's between-run test on log values (Design: the
// pooled t-test with 2n − 2 df, Welch's has slightly fewer), at the level
// of the correction's first step, α/K over K tests (Holm's strictest level
// and BH's; later steps are less strict, so the plan errs on the safe
// side). A plan always has 2 repeats per side or more: a noise floor
// measured at other step lengths does not hold for the plan's.

// PlanPoint is one (step, threads) of the planned run with its components
// (variances of the log value).
type PlanPoint struct {
	Key Key `json:"key"`
	// Write says the point runs for the write steps' duration (else the
	// read steps').
	Write bool `json:"write,omitempty"`
	// WithinPerSecond is σ²_w, Run σ²_run and Node σ²_node.
	WithinPerSecond float64 `json:"withinPerSecond"`
	Run             float64 `json:"run"`
	Node            float64 `json:"node"`
	// NodeKnown is false when nothing measured σ²_node: the plan then
	// keeps every cell on one node.
	NodeKnown bool `json:"nodeKnown"`
	// MinSeconds is the shortest step the components hold for (0: any):
	// when the within-run level was not measured, the run level holds it
	// at the history's step length, and a shorter step would add noise
	// the model cannot see.
	MinSeconds float64 `json:"minSeconds,omitempty"`
}

// errVariance is the variance of one run's log value at seconds on one node.
func (p PlanPoint) errVariance(seconds float64) float64 {
	return p.Run + p.WithinPerSecond/seconds
}

// PlanGoal is what a plan must reach at every point: a slowdown found with
// a power (Detect > 0) or an interval half-width (HalfWidth > 0), one of
// them.
type PlanGoal struct {
	// Detect is the true slowdown to find (0.10 = 10 %), Power the
	// probability of finding it (0 means 0.9).
	Detect float64 `json:"detect,omitempty"`
	Power  float64 `json:"power,omitempty"`
	// Magnitude and Estimated are the verdict's rule: under Tested
	// (Estimated false) a point regresses when it is significantly slower
	// than 1 − Magnitude; under Estimated when it is significantly slower
	// and its estimate is Magnitude or more.
	Magnitude float64 `json:"magnitude"`
	Estimated bool    `json:"estimated,omitempty"`
	// Alpha is the verdict's level (0 means 0.05) and Tests the tests of
	// its family (the run's points × metrics; 0 means the plan's points).
	Alpha float64 `json:"alpha,omitempty"`
	Tests int     `json:"tests,omitempty"`
	// HalfWidth is the ratio intervals' target (0.05 = ±5 %) at Level (0
	// means 0.95).
	HalfWidth float64 `json:"halfWidth,omitempty"`
	Level     float64 `json:"level,omitempty"`
}

func (g PlanGoal) power() float64 { return cmp.Or(g.Power, 0.9) }
func (g PlanGoal) alpha() float64 { return cmp.Or(g.Alpha, 0.05) }
func (g PlanGoal) level() float64 { return cmp.Or(g.Level, DefaultLevel) }

// validate checks the goal; points is the plan's point count (Tests'
// default).
func (g PlanGoal) validate() error {
	switch {
	case (g.Detect > 0) == (g.HalfWidth > 0):
		return fmt.Errorf("plan goal: give a slowdown to detect or a half-width, one of them (detect %v, half-width %v): %w", g.Detect, g.HalfWidth, ErrInvalid)
	case g.Detect < 0 || !(g.Detect < 1) || g.HalfWidth < 0 || math.IsInf(g.HalfWidth, 0) || math.IsNaN(g.HalfWidth):
		return fmt.Errorf("plan goal: detect %v must be in (0, 1) and half-width %v finite and > 0: %w", g.Detect, g.HalfWidth, ErrInvalid)
	case !(g.alpha() > 0 && g.alpha() < 1) || g.Tests < 0:
		return fmt.Errorf("plan goal: alpha %v must be in (0, 1) and tests %d >= 0: %w", g.Alpha, g.Tests, ErrInvalid)
	case !(g.Magnitude >= 0 && g.Magnitude < 1):
		return fmt.Errorf("plan goal: magnitude %v must be in [0, 1): %w", g.Magnitude, ErrInvalid)
	case g.Detect > 0 && !(g.power() > g.alpha() && g.power() < 1):
		return fmt.Errorf("plan goal: power %v must be in (alpha %v, 1): %w", g.Power, g.alpha(), ErrInvalid)
	case g.Detect > 0 && !g.Estimated && g.Detect <= g.Magnitude:
		return fmt.Errorf(
			"plan goal: a %.1f %% slowdown is not beyond the %.1f %% magnitude the Tested rule asks for: it is called regressed at most α of the time whatever the repeats; detect a larger slowdown or use the Estimated rule: %w",
			100*g.Detect,
			100*g.Magnitude,
			ErrInvalid,
		)
	case g.Detect > 0 && g.Estimated && g.Detect <= g.Magnitude && g.power() >= 0.5:
		return fmt.Errorf(
			"plan goal: a %.1f %% slowdown is not beyond the %.1f %% magnitude the Estimated rule asks its estimate to reach: it is found at most half the time whatever the repeats; detect a larger slowdown or lower the magnitude: %w",
			100*g.Detect,
			100*g.Magnitude,
			ErrInvalid,
		)
	case g.HalfWidth > 0 && !(g.level() > 0 && g.level() < 1):
		return fmt.Errorf("plan goal: level %v must be in (0, 1): %w", g.Level, ErrInvalid)
	}
	return nil
}

// PlanCosts is what a cell costs beyond its steps' measured time.
type PlanCosts struct {
	// OverheadSeconds is a cell's fixed cost outside the agent: the
	// database and client pods' start (docs/benchmarks.md, "Orchestration
	// overhead": 3.8–6.9 s per cell on the local cluster).
	OverheadSeconds float64 `json:"overheadSeconds"`
	// LoadSeconds is the data load: insert, index, warm-up read and flush
	// wait.
	LoadSeconds float64 `json:"loadSeconds"`
	// WarmupSeconds run before every point's measured time.
	WarmupSeconds float64 `json:"warmupSeconds"`
	// Combinations are the sides a repeat round runs (one cell each): the
	// compared combinations of the run; 0 means 2.
	Combinations int `json:"combinations,omitempty"`
}

func (c PlanCosts) combinations() int { return cmp.Or(c.Combinations, 2) }

// DefaultOverheadSeconds is PlanCosts.OverheadSeconds's default: the
// orchestration overhead per cell measured on this project's local cluster
// (docs/benchmarks.md: 3.8–6.9 s, 4.8–5.8 s on three nodes).
const DefaultOverheadSeconds = 6

// PlanObjective is what a plan minimises.
type PlanObjective string

const (
	// ObjectiveCellHours minimises the cells' total time, then the wall
	// time.
	ObjectiveCellHours PlanObjective = "cell-hours"
	// ObjectiveWallTime minimises the wall time on the nodes available,
	// then the cell-hours.
	ObjectiveWallTime PlanObjective = "wall-time"
)

// PlanLimits bound the search.
type PlanLimits struct {
	// ReadSeconds and WriteSeconds are the step durations to choose from
	// (PlanDurations makes a grid).
	ReadSeconds  []float64 `json:"readSeconds"`
	WriteSeconds []float64 `json:"writeSeconds"`
	// MaxRepeats bounds the repeats per side (at least 2).
	MaxRepeats int `json:"maxRepeats"`
	// Nodes are the nodes available (0 means 1); a plan uses at most its
	// repeats' worth.
	Nodes int `json:"nodes,omitempty"`
	// Objective is what to minimise; "" is ObjectiveCellHours.
	Objective PlanObjective `json:"objective,omitempty"`
}

// niceSeconds are the step lengths PlanDurations offers between its bounds.
var niceSeconds = []float64{
	1,
	2,
	3,
	5,
	10,
	15,
	20,
	30,
	45,
	60,
	90,
	120,
	180,
	240,
	300,
	450,
	600,
	900,
	1200,
	1800,
	2700,
	3600,
	5400,
	7200,
	10800,
	14400,
	21600,
	43200,
	86400,
}

// PlanDurations is a grid of step lengths from lo to hi seconds: lo, hi
// and the round values between them.
func PlanDurations(lo, hi float64) []float64 {
	out := []float64{lo}
	for _, s := range niceSeconds {
		if s > lo && s < hi {
			out = append(out, s)
		}
	}
	if hi > lo {
		out = append(out, hi)
	}
	return out
}

// Plan is a choice of step lengths, repeats and nodes, with its cost and
// what it is predicted to reach.
type Plan struct {
	ReadSeconds  float64 `json:"readSeconds"`
	WriteSeconds float64 `json:"writeSeconds"`
	// Repeats are the cells of every combination (per side).
	Repeats int `json:"repeats"`
	// Nodes are the nodes used and CellsPerNode each one's cells of every
	// combination (balanced blocks).
	Nodes        int   `json:"nodes"`
	CellsPerNode []int `json:"cellsPerNode"`
	// CellSeconds is one cell's time (overhead, load, warm-ups and
	// steps); CellHours all cells' (Combinations × Repeats); WallSeconds
	// the time on Nodes nodes running one cell each at a time.
	CellSeconds float64 `json:"cellSeconds"`
	CellHours   float64 `json:"cellHours"`
	WallSeconds float64 `json:"wallSeconds"`
	// Worst is the least favourable point: the lowest power (a detection
	// goal) or the widest interval (a half-width goal).
	Worst Key `json:"worst"`
	// Power is the probability of finding the goal's slowdown at Worst
	// (0 for a half-width goal); MDE the smallest slowdown found there
	// with the goal's power (0.8 for a half-width goal); HalfWidth the
	// expected interval half-width at Worst (the goal's level, or 95 %).
	Power     float64 `json:"power,omitempty"`
	MDE       float64 `json:"mde"`
	HalfWidth float64 `json:"halfWidth"`
	// Met says the plan reaches the goal at every point.
	Met bool `json:"met"`
}

// ErrUnreachable is wrapped by ChoosePlan when no plan within the limits
// reaches the goal.
var ErrUnreachable = errors.New("goal out of reach")

// blocks spreads n cells of a side over at most nodes nodes, as evenly as
// possible.
func blocks(n, nodes int) []int {
	k := max(1, min(n, nodes))
	out := make([]int, k)
	for i := range out {
		out[i] = n / k
		if i < n%k {
			out[i]++
		}
	}
	return out
}

// nodeShare is (n − Σm²/n)/(n − 1): the share of σ²_node in a side's
// expected sample variance with the cells spread as m.
func nodeShare(m []int) float64 {
	n := 0
	sq := 0
	for _, x := range m {
		n += x
		sq += x * x
	}
	if n < 2 {
		return 0
	}
	return (float64(n) - float64(sq)/float64(n)) / float64(n-1)
}

// planner evaluates points at a design; it caches the power evaluations.
type planner struct {
	goal  PlanGoal
	level float64 // the test's level, α/K
	cache map[[4]float64]float64
}

func newPlanner(goal PlanGoal, points int) *planner {
	k := goal.Tests
	if k == 0 {
		k = points
	}
	return &planner{goal: goal, level: goal.alpha() / float64(max(k, 1)), cache: map[[4]float64]float64{}}
}

// design is the Design of point p at seconds with the cells spread as m.
func (pl *planner) design(p PlanPoint, seconds float64, m []int) (Design, float64) {
	v := math.Max(p.errVariance(seconds), 1e-12)
	infl := 1 + p.Node*nodeShare(m)/v
	d := Design{CV: math.Sqrt(math.Expm1(v)), Alpha: pl.level, Inflation: infl}
	if pl.goal.Estimated {
		d.MinEstimate = pl.goal.Magnitude
	}
	return d, v * infl
}

// beyond is the effect beyond the test's null boundary that a true
// slowdown s is: under Tested the ratio (1 − s) is (1 − m)(1 − e).
func (pl *planner) beyond(s float64) float64 {
	if pl.goal.Estimated {
		return s
	}
	return 1 - (1-s)/(1-pl.goal.Magnitude)
}

// trueSlowdown turns an effect beyond the boundary back into a slowdown.
func (pl *planner) trueSlowdown(e float64) float64 {
	if pl.goal.Estimated {
		return e
	}
	return 1 - (1-pl.goal.Magnitude)*(1-e)
}

// score is p's power at the goal's slowdown (higher is better) or minus
// its expected half-width (log scale), at seconds with n repeats as m.
func (pl *planner) score(p PlanPoint, seconds float64, n int, m []int) float64 {
	d, vTest := pl.design(p, seconds, m)
	if pl.goal.HalfWidth > 0 {
		return -tQuantile(1-(1-pl.goal.level())/2, float64(2*n-2)) * math.Sqrt(2*vTest/float64(n))
	}
	key := [4]float64{d.CV, d.Inflation, float64(n), 0}
	if pw, ok := pl.cache[key]; ok {
		return pw
	}
	pw, err := d.Power(n, pl.beyond(pl.goal.Detect))
	if err != nil {
		panic(fmt.Sprintf("plan: %v", err)) // valid by construction
	}
	pl.cache[key] = pw
	return pw
}

// meets says whether a score reaches the goal.
func (pl *planner) meets(score float64) bool {
	if pl.goal.HalfWidth > 0 {
		return -score <= math.Log1p(pl.goal.HalfWidth)
	}
	return score >= pl.goal.power()
}

// worst is the point of ps with the lowest score, and its score.
func (pl *planner) worst(ps []PlanPoint, seconds func(PlanPoint) float64, n int, m []int) (PlanPoint, float64) {
	var w PlanPoint
	best := math.Inf(1)
	for _, p := range ps {
		if s := pl.score(p, seconds(p), n, m); s < best {
			w, best = p, s
		}
	}
	return w, best
}

// frontier keeps the points no other point dominates (as large or larger
// in every component and minimum length, in the same duration group): a
// dominated point's score is never the worst for a goal of power 0.5 or
// more, or a half-width. Below power 0.5 every point is kept.
func frontier(ps []PlanPoint, goal PlanGoal) []PlanPoint {
	if goal.Detect > 0 && goal.power() < 0.5 {
		return ps
	}
	var out []PlanPoint
	for i, p := range ps {
		dominated := false
		for j, q := range ps {
			if i == j || p.Write != q.Write {
				continue
			}
			ge := q.Run >= p.Run && q.WithinPerSecond >= p.WithinPerSecond && q.Node >= p.Node
			gt := q.Run > p.Run || q.WithinPerSecond > p.WithinPerSecond || q.Node > p.Node
			if ge && (gt || j < i) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, p)
		}
	}
	return out
}

func validatePlanInput(points []PlanPoint, costs PlanCosts, lim PlanLimits) error {
	if len(points) == 0 {
		return fmt.Errorf("plan: no points to plan for: %w", ErrTooFew)
	}
	for _, p := range points {
		for _, v := range []float64{p.WithinPerSecond, p.Run, p.Node, p.MinSeconds} {
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("plan: %s@%d: components must be finite and >= 0: %w", p.Key.Step, p.Key.Threads, ErrInvalid)
			}
		}
		if p.WithinPerSecond+p.Run == 0 {
			return fmt.Errorf("plan: %s@%d has no noise estimate (every component 0): give it one or a default: %w", p.Key.Step, p.Key.Threads, ErrInvalid)
		}
	}
	for _, v := range []float64{costs.OverheadSeconds, costs.LoadSeconds, costs.WarmupSeconds} {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("plan: costs must be finite and >= 0: %w", ErrInvalid)
		}
	}
	if costs.Combinations < 0 || lim.MaxRepeats < 2 || lim.Nodes < 0 {
		return fmt.Errorf(
			"plan: combinations %d must be >= 1, max repeats %d >= 2 and nodes %d >= 1: %w",
			costs.Combinations,
			lim.MaxRepeats,
			lim.Nodes,
			ErrInvalid,
		)
	}
	switch lim.Objective {
	case "", ObjectiveCellHours, ObjectiveWallTime:
	default:
		return fmt.Errorf("plan: objective %q: want %s or %s: %w", lim.Objective, ObjectiveCellHours, ObjectiveWallTime, ErrInvalid)
	}
	reads, writes := false, false
	for _, p := range points {
		reads, writes = reads || !p.Write, writes || p.Write
	}
	for _, g := range []struct {
		used bool
		ss   []float64
	}{{reads, lim.ReadSeconds}, {writes, lim.WriteSeconds}} {
		if g.used && len(g.ss) == 0 {
			return fmt.Errorf("plan: read points need read step lengths and write points write ones: %w", ErrInvalid)
		}
		for _, s := range g.ss {
			if g.used && (!(s > 0) || math.IsInf(s, 0)) {
				return fmt.Errorf("plan: step seconds %v must be finite and > 0: %w", s, ErrInvalid)
			}
		}
	}
	return nil
}

// EvaluatePlan predicts what n repeats per side over up to nodes nodes at
// the given step lengths reach, and what they cost.
func EvaluatePlan(points []PlanPoint, costs PlanCosts, goal PlanGoal, readSeconds, writeSeconds float64, n, nodes int) (Plan, error) {
	if err := goal.validate(); err != nil {
		return Plan{}, err
	}
	lim := PlanLimits{ReadSeconds: []float64{readSeconds}, WriteSeconds: []float64{writeSeconds}, MaxRepeats: max(n, 2), Nodes: nodes}
	if err := validatePlanInput(points, costs, lim); err != nil {
		return Plan{}, err
	}
	if n < 2 {
		return Plan{}, fmt.Errorf("plan: %d repeats per side: the between-run test needs 2: %w", n, ErrTooFew)
	}
	pl := newPlanner(goal, len(points))
	return pl.evaluate(points, costs, readSeconds, writeSeconds, n, nodes), nil
}

func (pl *planner) evaluate(points []PlanPoint, costs PlanCosts, read, write float64, n, nodes int) Plan {
	plan := costOf(points, costs, read, write, n, nodes)
	pl.predict(&plan, points)
	return plan
}

// costOf is a plan's layout and cost, without predictions.
func costOf(points []PlanPoint, costs PlanCosts, read, write float64, n, nodes int) Plan {
	if !nodesKnown(points) {
		nodes = 1
	}
	m := blocks(n, max(nodes, 1))
	cell := costs.OverheadSeconds + costs.LoadSeconds
	for _, p := range points {
		cell += costs.WarmupSeconds + pick(p, read, write)
	}
	c := float64(costs.combinations())
	return Plan{ReadSeconds: read, WriteSeconds: write, Repeats: n, Nodes: len(m), CellsPerNode: m,
		CellSeconds: cell, CellHours: c * float64(n) * cell / 3600, WallSeconds: c * float64(m[0]) * cell}
}

// predict fills in what the plan reaches: its least favourable point, the
// power there, its MDE and half-width, and whether every point meets the
// goal.
func (pl *planner) predict(plan *Plan, points []PlanPoint) {
	n, m := plan.Repeats, plan.CellsPerNode
	seconds := func(p PlanPoint) float64 { return pick(p, plan.ReadSeconds, plan.WriteSeconds) }
	w, score := pl.worst(frontier(points, pl.goal), seconds, n, m)
	plan.Worst = w.Key
	plan.Met = pl.meets(score)
	for _, p := range points {
		if seconds(p) < p.MinSeconds {
			plan.Met = false
		}
	}
	d, vTest := pl.design(w, seconds(w), m)
	plan.HalfWidth = math.Expm1(tQuantile(1-(1-pl.goal.level())/2, float64(2*n-2)) * math.Sqrt(2*vTest/float64(n)))
	power := 0.8
	if pl.goal.Detect > 0 {
		power = pl.goal.power()
		plan.Power = score
	}
	e, err := d.MDE(n, power)
	if err != nil {
		panic(fmt.Sprintf("plan: MDE: %v", err)) // a valid design by construction
	}
	plan.MDE = pl.trueSlowdown(e)
}

func pick(p PlanPoint, read, write float64) float64 {
	if p.Write {
		return write
	}
	return read
}

func nodesKnown(points []PlanPoint) bool {
	for _, p := range points {
		if !p.NodeKnown {
			return false
		}
	}
	return true
}

// ChoosePlan finds the step lengths (one for the read points, one for the
// write points, from the limits' grids), the repeats per side (2 to
// MaxRepeats) and the nodes (1 to Nodes; 1 when a point's σ²_node is
// unknown) that reach the goal at every point at the least cost by the
// objective. A step shorter than a point's MinSeconds is not offered.
//
// The search is exhaustive over the grids and nodes; for each step length
// and node count it finds the fewest repeats by bisection (the score
// rises with the repeats: the standard error falls as 1/√n, the t quantile
// falls and the node inflation falls toward 1 + σ²_node(1 − 1/N)/σ²_e).
// When nothing within the limits reaches the goal the error wraps
// ErrUnreachable and names the least favourable point and what the
// limits reach there; the returned plan is then the limits' best (the
// longest steps, MaxRepeats, one node), with Met false.
func ChoosePlan(points []PlanPoint, costs PlanCosts, goal PlanGoal, lim PlanLimits) (Plan, error) {
	if err := goal.validate(); err != nil {
		return Plan{}, err
	}
	if err := validatePlanInput(points, costs, lim); err != nil {
		return Plan{}, err
	}
	pl := newPlanner(goal, len(points))
	front := frontier(points, goal)
	var reads, writes []PlanPoint
	for _, p := range front {
		if p.Write {
			writes = append(writes, p)
		} else {
			reads = append(reads, p)
		}
	}
	maxNodes := max(lim.Nodes, 1)
	if !nodesKnown(points) {
		maxNodes = 1
	}
	maxNodes = min(maxNodes, lim.MaxRepeats)

	readGrid, writeGrid := lim.ReadSeconds, lim.WriteSeconds
	if len(reads) == 0 && len(readGrid) == 0 {
		readGrid = []float64{0}
	}
	if len(writes) == 0 && len(writeGrid) == 0 {
		writeGrid = []float64{0}
	}
	var best *Plan
	for nodes := 1; nodes <= maxNodes; nodes++ {
		nr := make([]int, len(readGrid))
		for i, s := range readGrid {
			nr[i] = pl.fewestRepeats(reads, s, nodes, lim.MaxRepeats)
		}
		nw := make([]int, len(writeGrid))
		for j, s := range writeGrid {
			nw[j] = pl.fewestRepeats(writes, s, nodes, lim.MaxRepeats)
		}
		for i, r := range readGrid {
			for j, w := range writeGrid {
				if nr[i] == 0 || nw[j] == 0 {
					continue
				}
				p := costOf(points, costs, r, w, max(nr[i], nw[j]), nodes)
				if best == nil || cheaper(p, *best, lim.Objective) {
					best = &p
				}
			}
		}
	}
	if best != nil {
		pl.predict(best, points)
		return *best, nil
	}
	// Out of reach: what the limits can do.
	r, w := slices.Max(append([]float64{0}, lim.ReadSeconds...)), slices.Max(append([]float64{0}, lim.WriteSeconds...))
	at := pl.evaluate(points, costs, r, w, lim.MaxRepeats, 1)
	return at, unreachable(goal, at, points)
}

// fewestRepeats is the fewest repeats per side (at least 2) with which
// group reaches the goal at one step length and node count; 0 when
// maxRepeats do not, or a step that short is not offered to a point.
func (pl *planner) fewestRepeats(group []PlanPoint, seconds float64, nodes, maxRepeats int) int {
	if len(group) == 0 {
		return 2
	}
	for _, p := range group {
		if seconds < p.MinSeconds {
			return 0
		}
	}
	ok := func(n int) bool {
		_, s := pl.worst(group, func(PlanPoint) float64 { return seconds }, n, blocks(n, nodes))
		return pl.meets(s)
	}
	if !ok(maxRepeats) {
		return 0
	}
	lo, hi := 1, maxRepeats // ok(hi), !ok(lo) taken
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return max(hi, 2)
}

// cheaper reports whether plan a costs less than b by the objective (cell
// hours then wall time, or the reverse); at equal costs the one with fewer
// nodes, then more repeats (a steadier variance estimate).
func cheaper(a, b Plan, objective PlanObjective) bool {
	ka := []float64{a.CellHours, a.WallSeconds}
	kb := []float64{b.CellHours, b.WallSeconds}
	if objective == ObjectiveWallTime {
		ka[0], ka[1], kb[0], kb[1] = ka[1], ka[0], kb[1], kb[0]
	}
	const eps = 1e-9
	for i := range ka {
		if math.Abs(ka[i]-kb[i]) > eps*math.Max(1, math.Abs(kb[i])) {
			return ka[i] < kb[i]
		}
	}
	return cmp.Or(cmp.Compare(a.Nodes, b.Nodes), cmp.Compare(b.Repeats, a.Repeats)) < 0
}

func unreachable(goal PlanGoal, at Plan, points []PlanPoint) error {
	for _, p := range points {
		if s := pick(p, at.ReadSeconds, at.WriteSeconds); s < p.MinSeconds {
			return fmt.Errorf("plan: %s@%d needs steps of %g s or more (its components were measured at that length) and the limits allow %g s: %w",
				p.Key.Step, p.Key.Threads, p.MinSeconds, s, ErrUnreachable)
		}
	}
	where := fmt.Sprintf("%d repeats per side, %g-s read and %g-s write steps, one node", at.Repeats, at.ReadSeconds, at.WriteSeconds)
	if goal.HalfWidth > 0 {
		return fmt.Errorf("plan: ±%.1f %% is out of reach: at %s the least precise point (%s@%d) reaches ±%.1f %%: %w",
			100*goal.HalfWidth, where, at.Worst.Step, at.Worst.Threads, 100*at.HalfWidth, ErrUnreachable)
	}
	return fmt.Errorf(
		"plan: a %.1f %% slowdown with power %.2f is out of reach: at %s the least sensitive point (%s@%d) has power %.2f and finds %.1f %% with power %.2f: %w",
		100*goal.Detect,
		goal.power(),
		where,
		at.Worst.Step,
		at.Worst.Threads,
		at.Power,
		100*at.MDE,
		goal.power(),
		ErrUnreachable,
	)
}
