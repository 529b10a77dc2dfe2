package main

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dbbench/dbbench/pkg/bisect"
)

// replayCheck compares replayed outcomes with the logged ones when the
// replay's rule and limits are the log's.
type replayCheck struct {
	// sameRule says the replay ran the log's rule and limits.
	sameRule bool
	// compared and matched count the bisections whose outcome, named
	// build, cells and rounds were compared, and those that agreed.
	compared, matched int
	// incomplete counts the logged bisections without a result (a run
	// stopped midway), which are not replayed.
	incomplete int
	// mismatches describe the first few disagreements.
	mismatches []string
}

// replaySource serves a bisection's rounds from its logged cells: round
// ri from the log's round ri, each point's own cells when the log has
// them, else cells of the same quota (a build is only its quota here, and
// the server cannot tell builds apart), each cell once.
type replaySource struct {
	cells map[int][]cellRec // round → cells
	used  map[int][]bool
	cur   int
}

func (r *replaySource) round(_ context.Context, _ *bisection, ri int, _ bisect.Round) error {
	if len(r.cells[ri]) == 0 {
		return fmt.Errorf("round %d: %w", ri, errExhausted)
	}
	r.cur = ri
	return nil
}

func (r *replaySource) cell(_ context.Context, b *bisection, ri int, ref cellRef) (map[bisect.Key]float64, string, error) {
	cs, used := r.cells[ri], r.used[ri]
	pick := -1
	for pass := 0; pass < 3 && pick < 0; pass++ {
		for i, c := range cs {
			if used[i] {
				continue
			}
			if (pass == 0 && c.Point == ref.point && c.Repeat == ref.repeat) || (pass == 1 && c.Point == ref.point) ||
				(pass == 2 && c.Scale == b.scale(ref.point)) {
				pick = i
				break
			}
		}
	}
	if pick < 0 {
		return nil, "", fmt.Errorf("round %d, point %d (quota %d %%): %w", ri, ref.point, b.scale(ref.point), errExhausted)
	}
	used[pick] = true
	c := cs[pick]
	if c.Error != "" {
		return nil, c.Error, nil
	}
	v, err := c.values()
	return v, "", err
}

// replayAll re-runs every complete logged bisection's decisions under rc.
func replayAll(ctx context.Context, l *runLog, rc config) ([]*bisection, replayCheck, error) {
	check := replayCheck{sameRule: rc.decisionsOf() == l.config.decisionsOf()}
	var out []*bisection
	for _, lb := range l.bisections {
		res, ok := l.results[lb.Bisection]
		if !ok {
			check.incomplete++
			continue
		}
		rounds := l.rounds[lb.Bisection]
		b := &bisection{index: lb.Bisection, slowdown: lb.Slowdown, culprit: lb.Culprit, named: -1, confidence: math.NaN()}
		b.busy = func(r int) bool { return r < len(rounds) && rounds[r].Busy }
		src := &replaySource{cells: map[int][]cellRec{}, used: map[int][]bool{}}
		for _, c := range l.cells[lb.Bisection] {
			src.cells[c.Round] = append(src.cells[c.Round], c)
			src.used[c.Round] = append(src.used[c.Round], false)
		}
		err := search(ctx, rc, b, src)
		switch {
		case errors.Is(err, errExhausted):
			b.exhausted = true
		case err != nil:
			return nil, check, fmt.Errorf("bisection %d: %w", b.index, err)
		}
		b.seconds = res.Seconds
		if check.sameRule {
			check.compared++
			if !b.exhausted && string(b.outcome) == res.Outcome && b.named == res.Named && b.cells == res.Cells && b.rounds == res.Rounds {
				check.matched++
			} else if len(check.mismatches) < 5 {
				check.mismatches = append(check.mismatches, fmt.Sprintf("bisection %d: logged %s named %d, %d cells, %d rounds; replayed %s named %d, %d cells, %d rounds (exhausted %v)",
					b.index, res.Outcome, res.Named, res.Cells, res.Rounds, b.outcome, b.named, b.cells, b.rounds, b.exhausted))
			}
		}
		out = append(out, b)
	}
	return out, check, nil
}
