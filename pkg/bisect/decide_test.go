package bisect

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// state is a search of 6 points (0 good, 1..4 candidates, 5 bad) after
// its endpoint round, reproduced, with verdicts v for 0..5 ("" untested).
func state(v ...Verdict) State {
	s := State{Points: make([]PointState, len(v)), Rounds: 1, FailedWhole: -1, EndpointFailed: -1, Named: -1, Epochs: 1,
		EndpointsInEpoch: true, Keys: []Key{keyWrite}, Endpoints: Endpoints{Check: Reproduced, Regressed: []Key{keyWrite}, Rounds: 1},
		CellsUsed: 4, Confidence: math.NaN(), Target: 0.9}
	for i := range v {
		s.Points[i] = PointState{Verdict: v[i], Probability: math.NaN()}
	}
	s.Changes = changes(s.Points)
	return s
}

type decideCase struct {
	name string
	s    State
	l    Limits
	want Decision
}

func decideCases() []decideCase {
	limits := Limits{Parallelism: 1, Repeats: 2, MaxCells: 40}
	pinned := func(conf float64, probs ...float64) State {
		s := state(Good, Good, Good, Bad, Bad, Bad)
		for i, p := range probs {
			s.Points[i].Probability = p
		}
		s.Named, s.Confidence = 3, conf
		return s
	}
	return []decideCase{
		{"nothing measured: the endpoints", State{Points: make([]PointState, 6), FailedWhole: -1, EndpointFailed: -1, Epochs: 1}, limits,
			Decision{Action: Measure, Round: Round{Kind: RoundEndpoints, Points: []int{0, 5}, Cells: 4}}},
		{"a round is running", func() State { s := state(Good, "", "", "", "", Bad); s.Running = true; return s }(), limits,
			Decision{Action: Wait}},
		{"a round failed as a whole", func() State { s := state(Good, "", "", "", "", Bad); s.FailedWhole = 0; return s }(), limits,
			Decision{Action: Stop, Outcome: OutcomeRoundFailed, Change: &Change{LastGood: 0, FirstBad: 5, Between: []int{1, 2, 3, 4}}}},
		{"an endpoint did not run", func() State { s := state("", "", "", "", "", ""); s.EndpointFailed = 5; return s }(), limits,
			Decision{Action: Stop, Outcome: OutcomeEndpointFailed}},
		{"the regression changed size too often", func() State { s := state(Good, "", "", "", "", Bad); s.Epochs = 4; return s }(), limits,
			Decision{Action: Stop, Outcome: OutcomeEnvironmentUnstable, Change: &Change{LastGood: 0, FirstBad: 5, Between: []int{1, 2, 3, 4}}}},
		{"a new epoch measures the endpoints again", func() State { s := state(Good, "", "", "", "", Bad); s.EndpointsInEpoch = false; return s }(), limits,
			Decision{Action: Measure, Round: Round{Kind: RoundEndpoints, Points: []int{0, 5}, Cells: 4}}},
		{"a new epoch without the budget for its endpoints", func() State {
			s := state(Good, "", "", "", "", Bad)
			s.EndpointsInEpoch, s.CellsUsed = false, 38
			return s
		}(), limits, Decision{Action: Stop, Outcome: OutcomeBudgetExhausted, Change: &Change{LastGood: 0, FirstBad: 5, Between: []int{1, 2, 3, 4}}}},
		{"no judged key was measured", func() State { s := state("", "", "", "", "", ""); s.Keys = nil; s.Changes = nil; return s }(), limits,
			Decision{Action: Stop, Outcome: OutcomeNothingJudged}},
		{"the endpoints did not reproduce", func() State {
			s := state("", "", "", "", "", "")
			s.Endpoints.Check, s.Changes = NotReproduced, nil
			return s
		}(), limits, Decision{Action: Stop, Outcome: OutcomeEndpointsNotReproduced}},
		{"unsure endpoints are measured again", func() State {
			s := state("", "", "", "", "", "")
			s.Endpoints.Check, s.Changes = Unsure, nil
			return s
		}(), limits, Decision{Action: Measure, Round: Round{Kind: RoundEndpoints, Points: []int{0, 5}, Cells: 4}}},
		{"unsure endpoints after five rounds did not reproduce", func() State {
			s := state("", "", "", "", "", "")
			s.Endpoints.Check, s.Endpoints.Rounds, s.Changes = Unsure, 5, nil
			return s
		}(), limits, Decision{Action: Stop, Outcome: OutcomeEndpointsNotReproduced}},
		{"a search round probes the middle beside the interval's ends", state(Good, "", "", "", "", Bad), limits,
			Decision{Action: Measure, Round: Round{Kind: RoundSearch, Points: []int{0, 2, 5}, Refs: []int{0, 5}, Cells: 6}}},
		{"parallelism 2 splits in three", state(Good, "", "", "", "", Bad), Limits{Parallelism: 2, Repeats: 2, MaxCells: 40},
			Decision{Action: Measure, Round: Round{Kind: RoundSearch, Points: []int{0, 1, 3, 5}, Refs: []int{0, 5}, Cells: 8}}},
		{"the budget lowers the parallelism", state(Good, "", "", "", "", Bad), Limits{Parallelism: 3, Repeats: 2, MaxCells: 12},
			Decision{Action: Measure, Round: Round{Kind: RoundSearch, Points: []int{0, 1, 3, 5}, Refs: []int{0, 5}, Cells: 8}}},
		{"no probe fits the budget", state(Good, "", "", "", "", Bad), Limits{Parallelism: 1, Repeats: 2, MaxCells: 9},
			Decision{Action: Stop, Outcome: OutcomeBudgetExhausted, Change: &Change{LastGood: 0, FirstBad: 5, Between: []int{1, 2, 3, 4}}}},
		{"a failed point between good and bad", state(Good, Good, Failed, Bad, Bad, Bad), limits,
			Decision{Action: Stop, Outcome: OutcomeNarrowed, Change: &Change{LastGood: 1, FirstBad: 3, Between: []int{2}}}},
		{"pinned at the confidence", pinned(0.95, 0, 0.01, 0.04, 0.95, 0, 0), limits,
			Decision{Action: Stop, Outcome: OutcomeLocalized, Change: &Change{LastGood: 2, FirstBad: 3}, Likely: []int{3}}},
		{"the posterior names a build with an inconclusive point left", func() State {
			s := state(Good, Good, Inconclusive, Bad, Bad, Bad)
			for i, p := range []float64{0, 0, 0.02, 0.97, 0.01, 0} {
				s.Points[i].Probability = p
			}
			s.Named, s.Confidence = 3, 0.97
			return s
		}(), limits, Decision{Action: Stop, Outcome: OutcomeLocalized, Change: &Change{LastGood: 2, FirstBad: 3}, Likely: []int{3}}},
		{"an inconclusive point measured five times, short of the confidence: a confirm round", func() State {
			s := state(Good, Good, Inconclusive, Bad, Bad, Bad)
			s.Points[2].Measured = 5
			for i, p := range []float64{0, 0, 0.5, 0.5, 0, 0} {
				s.Points[i].Probability = p
			}
			s.Named, s.Confidence = 2, 0.5
			return s
		}(), limits, Decision{Action: Measure, Round: Round{Kind: RoundConfirm, Points: []int{1, 2, 3}, Cells: 6}}},
		{"pinned below the confidence: a confirm round", pinned(0.6, 0, 0, 0.35, 0.6, 0.05, 0), limits,
			Decision{Action: Measure, Round: Round{Kind: RoundConfirm, Points: []int{1, 2, 3}, Cells: 6}}},
		{"pinned below the confidence after five confirm rounds", func() State {
			s := pinned(0.6, 0, 0, 0.35, 0.6, 0.05, 0)
			s.ConfirmRounds = 5
			return s
		}(), limits, Decision{Action: Stop, Outcome: OutcomeAmbiguous, Change: &Change{LastGood: 2, FirstBad: 3}, Likely: []int{3, 2}}},
		{"pinned below the confidence, no budget left", func() State {
			s := pinned(0.6, 0, 0, 0.35, 0.6, 0.05, 0)
			s.CellsUsed = 36
			return s
		}(), limits, Decision{Action: Stop, Outcome: OutcomeAmbiguous, Change: &Change{LastGood: 2, FirstBad: 3}, Likely: []int{3, 2}}},
	}
}

func TestDecide(t *testing.T) {
	seen := map[Outcome]bool{}
	for _, tc := range decideCases() {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Decide(tc.s, tc.l)); diff != "" {
				t.Fatalf("Decide (-want +got):\n%s", diff)
			}
		})
		seen[tc.want.Outcome] = true
	}
	// The table is the specification: every outcome has a row.
	for _, o := range Outcomes {
		if !seen[o] {
			t.Errorf("no TestDecide row ends with %s", o)
		}
	}
}
