package bisect

import (
	"math"
	"slices"
)

// Defaults of Limits.
const (
	// DefaultMaxMeasurements bounds, per epoch, the search rounds that
	// probe one inconclusive point, the endpoint rounds while their
	// difference is unsure, and the confirm rounds of a pinned change.
	DefaultMaxMeasurements = 5
	// DefaultMaxEpochs bounds the epochs: after that many times the
	// regression changed size between rounds, the environment is too
	// unstable to bisect in.
	DefaultMaxEpochs = 3
)

// Limits bound a search.
type Limits struct {
	// Parallelism is how many candidates a search round probes (k ≥ 1).
	Parallelism int
	// Repeats is how many cells measure each point of a round.
	Repeats int
	// MaxCells is the budget of cells over all rounds.
	MaxCells int
	// MaxMeasurements and MaxEpochs: 0 is the default.
	MaxMeasurements int
	MaxEpochs       int
}

func (l Limits) maxMeasurements() int {
	if l.MaxMeasurements <= 0 {
		return DefaultMaxMeasurements
	}
	return l.MaxMeasurements
}

func (l Limits) maxEpochs() int {
	if l.MaxEpochs <= 0 {
		return DefaultMaxEpochs
	}
	return l.MaxEpochs
}

// Action is what a search does next.
type Action string

const (
	// Wait: a round is running.
	Wait Action = "Wait"
	// Measure: start Decision.Round.
	Measure Action = "Measure"
	// Stop: the search is over, Decision.Outcome says how.
	Stop Action = "Stop"
)

// Outcome is how a search ended.
type Outcome string

const (
	// OutcomeLocalized: the first change is pinned to one build at the
	// rule's confidence.
	OutcomeLocalized Outcome = "Localized"
	// OutcomeEndpointsNotReproduced: the bad point is not worse than the
	// good one by the rule (after re-measures while unsure).
	OutcomeEndpointsNotReproduced Outcome = "EndpointsNotReproduced"
	// OutcomeEndpointFailed: the good or the bad point did not run.
	OutcomeEndpointFailed Outcome = "EndpointFailed"
	// OutcomeNarrowed: failed or still inconclusive points remain between
	// the last good and the first bad point.
	OutcomeNarrowed Outcome = "Narrowed"
	// OutcomeBudgetExhausted: the next round would exceed the budget
	// before the change was pinned.
	OutcomeBudgetExhausted Outcome = "BudgetExhausted"
	// OutcomeAmbiguous: the change is pinned between two adjacent builds
	// by the verdicts, but the posterior did not reach the confidence
	// within the budget and the confirm rounds; Decision.Likely names the
	// builds that share it.
	OutcomeAmbiguous Outcome = "Ambiguous"
	// OutcomeEnvironmentUnstable: the regression changed size between
	// rounds more than Limits.MaxEpochs times.
	OutcomeEnvironmentUnstable Outcome = "EnvironmentUnstable"
	// OutcomeNothingJudged: no judged key was measured on both endpoints.
	OutcomeNothingJudged Outcome = "NothingJudged"
	// OutcomeRoundFailed: a round's run failed as a whole.
	OutcomeRoundFailed Outcome = "RoundFailed"
)

// Outcomes are every outcome, in the order Decide checks them.
var Outcomes = []Outcome{OutcomeRoundFailed, OutcomeEndpointFailed, OutcomeEnvironmentUnstable, OutcomeNothingJudged,
	OutcomeEndpointsNotReproduced, OutcomeBudgetExhausted, OutcomeNarrowed, OutcomeLocalized, OutcomeAmbiguous}

// Decision is the next step of a search.
type Decision struct {
	Action Action
	// Round is the round to start (Measure): its kind, points and
	// references, and cells.
	Round Round
	// Outcome is how the search ended (Stop).
	Outcome Outcome
	// Change is the first change when there is one (Stop).
	Change *Change
	// Likely are the builds holding the posterior, most likely first, up
	// to the confidence (Ambiguous; also set for Localized).
	Likely []int
}

// Decide is the next step of the search s under limits: one rule per
// outcome, checked in the order of Outcomes. It is pure.
func Decide(s State, l Limits) Decision {
	n := len(s.Points)
	last := n - 1
	endpoints := func() Decision {
		return measure(RoundEndpoints, []int{0, last}, nil, l)
	}
	stop := func(o Outcome) Decision {
		d := Decision{Action: Stop, Outcome: o}
		if len(s.Changes) > 0 {
			c := s.Changes[0]
			d.Change = &c
		}
		return d
	}
	switch {
	case s.FailedWhole >= 0:
		return stop(OutcomeRoundFailed)
	case s.Running:
		return Decision{Action: Wait}
	case s.Rounds == 0:
		return endpoints()
	case s.EndpointFailed >= 0:
		return stop(OutcomeEndpointFailed)
	case s.Epochs > l.maxEpochs():
		return stop(OutcomeEnvironmentUnstable)
	case !s.EndpointsInEpoch:
		// A new epoch (or an endpoint round whose cells all failed on
		// one side and were retried): the endpoints first.
		if fits(s, 2, l) {
			return endpoints()
		}
		return stop(OutcomeBudgetExhausted)
	case len(s.Keys) == 0:
		return stop(OutcomeNothingJudged)
	}
	switch s.Endpoints.Check {
	case NotReproduced:
		return stop(OutcomeEndpointsNotReproduced)
	case Unsure:
		if s.Endpoints.Rounds < l.maxMeasurements() && fits(s, 2, l) {
			return endpoints()
		}
		return stop(OutcomeEndpointsNotReproduced)
	}

	if s.Named > 0 && s.Confidence >= s.Target {
		// The posterior names the build at the rule's confidence: the
		// points left undecided cannot change it much.
		d := stop(OutcomeLocalized)
		d.Change = &Change{LastGood: s.Named - 1, FirstBad: s.Named}
		d.Likely = LikelyPoints(s)
		return d
	}
	points := make([]Point, n)
	for i, p := range s.Points {
		points[i] = Point{Verdict: p.Verdict, Measured: p.Measured}
	}
	for k := max(l.Parallelism, 1); k >= 1; k-- {
		plan, err := Next(points, Options{Parallelism: k, MaxMeasurements: l.maxMeasurements()})
		if err != nil || plan.Done() {
			break
		}
		refs := refsOf(plan)
		if fits(s, len(union(plan.Probes, refs)), l) {
			return measure(RoundSearch, union(plan.Probes, refs), refs, l)
		}
		if k == 1 {
			return stop(OutcomeBudgetExhausted)
		}
	}
	if len(s.Changes) == 0 {
		// Cannot happen once the endpoints reproduced: good at 0, bad at
		// the end make at least one change.
		return stop(OutcomeNarrowed)
	}
	first := s.Changes[0]
	for _, p := range first.Between {
		if s.Points[p].Verdict == Failed {
			// A build that did not run next to the change: no round can
			// tell which side it is on.
			return stop(OutcomeNarrowed)
		}
	}
	likely := LikelyPoints(s)
	// Short of the confidence: measure the builds around the change and
	// every likely first bad one again, in one slot.
	if s.ConfirmRounds < l.maxMeasurements() {
		pts := append([]int{first.LastGood, first.FirstBad}, first.Between...)
		for _, c := range likely {
			pts = append(pts, c-1, c)
		}
		pts = measurable(s, pts)
		if fits(s, len(pts), l) {
			return measure(RoundConfirm, pts, nil, l)
		}
	}
	d := stop(OutcomeAmbiguous)
	d.Likely = likely
	return d
}

// measure is a Measure decision.
func measure(kind RoundKind, points, refs []int, l Limits) Decision {
	return Decision{Action: Measure, Round: Round{Kind: kind, Points: points, Refs: refs, Cells: len(points) * max(l.Repeats, 1)}}
}

// fits reports whether a round of npoints fits the budget.
func fits(s State, npoints int, l Limits) bool {
	return s.CellsUsed+npoints*max(l.Repeats, 1) <= l.MaxCells
}

// refsOf are the ends of the intervals a plan probes: measured beside the
// probes, in the same slot, they are what the probes are compared with.
func refsOf(plan Split) []int {
	var refs []int
	for _, c := range plan.Changes {
		for _, p := range plan.Probes {
			if p > c.LastGood && p < c.FirstBad {
				refs = append(refs, c.LastGood, c.FirstBad)
				break
			}
		}
	}
	return union(refs, nil)
}

// union is a ∪ b, sorted, without duplicates.
func union(a, b []int) []int {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// measurable are pts without failed points, sorted and unique.
func measurable(s State, pts []int) []int {
	var out []int
	for _, p := range union(pts, nil) {
		if p >= 0 && p < len(s.Points) && s.Points[p].Verdict != Failed {
			out = append(out, p)
		}
	}
	return out
}

// LikelyPoints are the builds with the largest posterior probability of
// being the first bad one, most likely first, until they hold the
// target; nil without a posterior.
func LikelyPoints(s State) []int {
	var idx []int
	for i, p := range s.Points {
		if i > 0 && !math.IsNaN(p.Probability) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		pa, pb := s.Points[a].Probability, s.Points[b].Probability
		switch {
		case pa > pb:
			return -1
		case pa < pb:
			return 1
		}
		return a - b
	})
	var out []int
	held := 0.0
	for _, i := range idx {
		if held >= s.Target || s.Points[i].Probability < 0.01 {
			break
		}
		out = append(out, i)
		held += s.Points[i].Probability
	}
	return out
}
