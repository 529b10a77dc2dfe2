package bisect

import (
	"context"
	"fmt"
)

// Measurer measures a round: it runs the round's cells (Round.Points,
// Limits.Repeats cells each, in one slot) and returns the round with
// Finished set and its Observations and Failures filled in.
type Measurer func(ctx context.Context, r Round) (Round, error)

// Search runs a whole search with measure as its benchmark loop: Assess,
// Decide, measure the round, until Decide stops. It returns the final
// state and decision and the rounds measured. The controller does the
// same one pass at a time, with BenchmarkRuns as rounds.
func Search(ctx context.Context, npoints int, rule Rule, judged func(Key) bool, l Limits, measure Measurer) (State, Decision, []Round, error) {
	if npoints < 3 {
		return State{}, Decision{}, nil, fmt.Errorf("points: need good, bad and a candidate, have %d", npoints)
	}
	if err := rule.Validate(); err != nil {
		return State{}, Decision{}, nil, err
	}
	var rounds []Round
	for {
		s := Assess(rounds, npoints, rule, judged)
		d := Decide(s, l)
		switch d.Action {
		case Stop:
			return s, d, rounds, nil
		case Wait:
			return s, d, rounds, fmt.Errorf("round %d did not finish", len(rounds)-1)
		}
		r, err := measure(ctx, d.Round)
		if err != nil {
			return s, d, rounds, fmt.Errorf("measuring round %d: %w", len(rounds), err)
		}
		r.Finished = true
		rounds = append(rounds, r)
	}
}
