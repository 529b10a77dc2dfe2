package bisect

import (
	"fmt"
	"sort"
)

// Point is what the search knows of one point.
type Point struct {
	Verdict Verdict
	// Measured counts the rounds the point was measured in.
	Measured int
}

// Options bound a search.
type Options struct {
	// Parallelism is how many points a round measures (k ≥ 1): each
	// interval that still holds a change is split into k+1 parts.
	Parallelism int
	// MaxMeasurements is how many rounds an inconclusive point is measured
	// in before the search gives up on it and treats it like a failed one
	// (0: DefaultMaxMeasurements).
	MaxMeasurements int
}

// Change is an interval that holds a change from good to bad: LastGood is
// good, FirstBad is bad, and no point between them is known good or bad.
type Change struct {
	LastGood, FirstBad int
	// Between are the points between them that are not decided: failed,
	// untested or inconclusive. A change is localized when Between is
	// empty: FirstBad then introduced it.
	Between []int
}

// Localized reports whether the change is pinned to FirstBad.
func (c Change) Localized() bool { return len(c.Between) == 0 }

// Split is how the intervals that hold a change are split next: the probes
// of the next round and the changes so far (Next; Assess and Decide use it).
type Split struct {
	// Probes are the points to measure next, in order; empty when the
	// search is over.
	Probes []int
	// Changes are the intervals from a good to a bad point, in order: the
	// first is the regression sought, later ones are further changes
	// (results that are not monotonic: a bad point followed by a good
	// one).
	Changes []Change
}

// Done reports whether the search is over.
func (p Split) Done() bool { return len(p.Probes) == 0 }

// Next plans the next round over points (0 the good endpoint, len-1 the
// bad one, both already judged so). A point can be probed when it is
// untested, or inconclusive and measured fewer than MaxMeasurements
// times; failed points are never probed again. The probes are shared out
// between the intervals that hold a change, each to the interval with the
// most probeable points per probe it already has, and placed to split each
// interval's probeable points into equal parts.
func Next(points []Point, opt Options) (Split, error) {
	n := len(points)
	if n < 2 {
		return Split{}, fmt.Errorf("points: need the two endpoints, have %d", n)
	}
	if points[0].Verdict != Good || points[n-1].Verdict != Bad {
		return Split{}, fmt.Errorf("points: the endpoints must be judged Good and Bad, are %q and %q", points[0].Verdict, points[n-1].Verdict)
	}
	if opt.Parallelism < 1 {
		return Split{}, fmt.Errorf("parallelism %d: must be at least 1", opt.Parallelism)
	}
	maxMeas := opt.MaxMeasurements
	if maxMeas <= 0 {
		maxMeas = DefaultMaxMeasurements
	}
	probeable := func(p Point) bool {
		return p.Verdict == Untested || (p.Verdict == Inconclusive && p.Measured < maxMeas)
	}

	var known []int
	for i, p := range points {
		if p.Verdict == Good || p.Verdict == Bad {
			known = append(known, i)
		}
	}
	type interval struct {
		change    Change
		probeable []int
		probes    int
	}
	var ivs []*interval
	for i := 0; i+1 < len(known); i++ {
		a, b := known[i], known[i+1]
		if points[a].Verdict != Good || points[b].Verdict != Bad {
			continue
		}
		iv := &interval{change: Change{LastGood: a, FirstBad: b}}
		for j := a + 1; j < b; j++ {
			iv.change.Between = append(iv.change.Between, j)
			if probeable(points[j]) {
				iv.probeable = append(iv.probeable, j)
			}
		}
		ivs = append(ivs, iv)
	}

	var plan Split
	for k := 0; k < opt.Parallelism; k++ {
		var best *interval
		for _, iv := range ivs {
			if iv.probes >= len(iv.probeable) {
				continue
			}
			// More probeable points per probe first; the earlier
			// interval on a tie (the first change is the one sought).
			if best == nil || len(iv.probeable)*(best.probes+1) > len(best.probeable)*(iv.probes+1) {
				best = iv
			}
		}
		if best == nil {
			break
		}
		best.probes++
	}
	for _, iv := range ivs {
		plan.Changes = append(plan.Changes, iv.change)
		m, j := len(iv.probeable), iv.probes
		for t := 1; t <= j; t++ {
			// Position t·(m+1)/(j+1), 1-based, splits the m points and
			// the interval's bad end into j+1 parts of equal size.
			plan.Probes = append(plan.Probes, iv.probeable[t*(m+1)/(j+1)-1])
		}
	}
	sort.Ints(plan.Probes)
	return plan, nil
}
