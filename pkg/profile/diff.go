package profile

import (
	"math"
	"sort"
)

// Share is a function's part of a profile's samples.
type Share struct {
	// Self is the fraction of samples with the function on CPU (the leaf).
	Self float64 `json:"self"`
	// Inclusive is the fraction of samples with the function anywhere on
	// the stack (once per sample, however deep it recurses).
	Inclusive float64 `json:"inclusive"`
}

// Shares normalises a profile to each function's share of its samples
// (dropped samples count in the denominator). An empty profile has none.
func (p *Profile) Shares() map[string]Share {
	total := float64(p.Total())
	out := map[string]Share{}
	if total == 0 {
		return out
	}
	for _, s := range p.Stacks {
		w := float64(s.Count) / total
		seen := make(map[string]bool, len(s.Frames))
		for _, f := range s.Frames {
			if seen[f] {
				continue
			}
			seen[f] = true
			sh := out[f]
			sh.Inclusive += w
			out[f] = sh
		}
		leaf := s.Frames[len(s.Frames)-1]
		sh := out[leaf]
		sh.Self += w
		out[leaf] = sh
	}
	return out
}

// RankBy chooses the share a diff is ranked by.
type RankBy string

const (
	// RankSelf ranks by the change of the time spent in the function
	// itself: the place the extra work is done.
	RankSelf RankBy = "self"
	// RankInclusive ranks by the change of the time spent in the function
	// and what it calls: the code path that asked for the work. A leaf's
	// callers all move with it, so this ranking has ties along the path.
	RankInclusive RankBy = "inclusive"
)

// Change is one function's share in A and B.
type Change struct {
	Function string `json:"function"`
	A        Share  `json:"a"`
	B        Share  `json:"b"`
	// SelfDelta and InclusiveDelta are B's share minus A's, in fractions
	// of each profile's samples (0.05 is 5 percentage points).
	SelfDelta      float64 `json:"selfDelta"`
	InclusiveDelta float64 `json:"inclusiveDelta"`
}

// Delta is the change the ranking uses.
func (c Change) Delta(by RankBy) float64 {
	if by == RankInclusive {
		return c.InclusiveDelta
	}
	return c.SelfDelta
}

// Diff lists every function of A or B with its shares in both, the largest
// absolute change (by) first; ties by name. Shares, not sample counts, are
// compared, so profiles of different lengths or rates compare fairly.
func Diff(a, b *Profile, by RankBy) []Change {
	sa, sb := a.Shares(), b.Shares()
	names := map[string]bool{}
	for f := range sa {
		names[f] = true
	}
	for f := range sb {
		names[f] = true
	}
	out := make([]Change, 0, len(names))
	for f := range names {
		c := Change{Function: f, A: sa[f], B: sb[f]}
		c.SelfDelta = c.B.Self - c.A.Self
		c.InclusiveDelta = c.B.Inclusive - c.A.Inclusive
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := math.Abs(out[i].Delta(by)), math.Abs(out[j].Delta(by))
		if di != dj {
			return di > dj
		}
		return out[i].Function < out[j].Function
	})
	return out
}

// Rank is the 1-based place of function in changes (0: absent).
func Rank(changes []Change, function string) int {
	for i, c := range changes {
		if c.Function == function {
			return i + 1
		}
	}
	return 0
}
