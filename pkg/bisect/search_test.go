package bisect

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// oracle is the truth a simulated search measures: the verdict of point i
// the m-th time (from 1) it is measured.
type oracle func(i, m int) Verdict

// stepAt is a single regression introduced by point c.
func stepAt(c int) oracle {
	return func(i, _ int) Verdict {
		if i >= c {
			return Bad
		}
		return Good
	}
}

// simulate runs a search over n candidates at parallelism k to its end and
// returns the search rounds (the endpoint round not counted), the points
// measured and the final plan.
func simulate(t *testing.T, n, k int, truth oracle) (rounds, cells int, plan Split) {
	t.Helper()
	points := make([]Point, n+2)
	points[0], points[n+1] = Point{Verdict: Good, Measured: 1}, Point{Verdict: Bad, Measured: 1}
	for {
		var err error
		plan, err = Next(points, Options{Parallelism: k})
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if plan.Done() {
			return rounds, cells, plan
		}
		if len(plan.Probes) > k {
			t.Fatalf("round %d probes %v: more than parallelism %d", rounds+1, plan.Probes, k)
		}
		rounds++
		if rounds > 3*n+5 {
			t.Fatalf("no end after %d rounds: %+v", rounds, points)
		}
		for _, p := range plan.Probes {
			if p <= 0 || p > n {
				t.Fatalf("probe %d is not a candidate (1..%d)", p, n)
			}
			points[p].Measured++
			points[p].Verdict = truth(p, points[p].Measured)
			cells++
		}
	}
}

func ceilLog(n int, base float64) int {
	return int(math.Ceil(math.Log(float64(n))/math.Log(base) - 1e-9))
}

// TestRoundsBound: every culprit of every size is found, at k=1 within
// ⌈log2 n⌉+2 rounds counting the endpoint round, and at k=2 never in more
// rounds than at k=1, in fewer at the worst case from 3 candidates on.
func TestRoundsBound(t *testing.T) {
	for n := 1; n <= 40; n++ {
		worst := map[int]int{}
		for c := 1; c <= n+1; c++ {
			byK := map[int]int{}
			for _, k := range []int{1, 2, 3} {
				rounds, _, plan := simulate(t, n, k, stepAt(c))
				want := []Change{{LastGood: c - 1, FirstBad: c}}
				if diff := cmp.Diff(want, plan.Changes); diff != "" {
					t.Fatalf("n=%d culprit %d k=%d: changes (-want +got):\n%s", n, c, k, diff)
				}
				byK[k] = rounds + 1
				worst[k] = max(worst[k], rounds+1)
			}
			if bound := ceilLog(n, 2) + 2; byK[1] > bound {
				t.Errorf("n=%d culprit %d: %d rounds at k=1, bound ⌈log2 n⌉+2 = %d", n, c, byK[1], bound)
			}
			if byK[2] > byK[1] || byK[3] > byK[2] {
				t.Errorf("n=%d culprit %d: rounds by k %v: more parallelism took more rounds", n, c, byK)
			}
		}
		// From 4 candidates on ⌈log3(n+1)⌉ < ⌈log2(n+1)⌉.
		if n >= 4 && worst[2] >= worst[1] {
			t.Errorf("n=%d: worst case %d rounds at k=2, not fewer than %d at k=1", n, worst[2], worst[1])
		}
		// k-ary search: 1 + ⌈log_{k+1}(n+1)⌉ rounds at worst.
		for k, w := range worst {
			if bound := 1 + ceilLog(n+1, float64(k+1)); w > bound {
				t.Errorf("n=%d k=%d: worst %d rounds, want at most %d", n, k, w, bound)
			}
		}
	}
}

func TestSearchCases(t *testing.T) {
	failedAt := func(base oracle, failed ...int) oracle {
		return func(i, m int) Verdict {
			for _, f := range failed {
				if i == f {
					return Failed
				}
			}
			return base(i, m)
		}
	}
	for _, tc := range []struct {
		name  string
		n, k  int
		truth oracle
		want  []Change
	}{
		{
			name: "failed candidate away from the culprit is skipped", n: 7, k: 1,
			truth: failedAt(stepAt(6), 4),
			want:  []Change{{LastGood: 5, FirstBad: 6}},
		},
		{
			name: "failed candidate just before the culprit leaves a two-point interval", n: 7, k: 1,
			truth: failedAt(stepAt(5), 4),
			want:  []Change{{LastGood: 3, FirstBad: 5, Between: []int{4}}},
		},
		{
			name: "every candidate failed: the interval stays the endpoints", n: 3, k: 2,
			truth: failedAt(stepAt(2), 1, 2, 3),
			want:  []Change{{LastGood: 0, FirstBad: 4, Between: []int{1, 2, 3}}},
		},
		{
			name: "non-monotonic: bad then good again then bad, both changes reported", n: 8, k: 2,
			// G G B B B G G B B B (0..9): the first round probes 3 and
			// 6, bad then good: changes at 2 and 7.
			truth: func(i, _ int) Verdict {
				if (i >= 2 && i <= 4) || i >= 7 {
					return Bad
				}
				return Good
			},
			want: []Change{{LastGood: 1, FirstBad: 2}, {LastGood: 6, FirstBad: 7}},
		},
		{
			name: "inconclusive once, then decided: measured again", n: 7, k: 1,
			truth: func(i, m int) Verdict {
				if i == 4 && m == 1 {
					return Inconclusive
				}
				return stepAt(4)(i, m)
			},
			want: []Change{{LastGood: 3, FirstBad: 4}},
		},
		{
			name: "always inconclusive: given up after MaxMeasurements, narrowed interval reported", n: 7, k: 1,
			truth: func(i, m int) Verdict {
				if i == 4 {
					return Inconclusive
				}
				return stepAt(4)(i, m)
			},
			want: []Change{{LastGood: 3, FirstBad: 5, Between: []int{4}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, plan := simulate(t, tc.n, tc.k, tc.truth)
			if diff := cmp.Diff(tc.want, plan.Changes); diff != "" {
				t.Fatalf("changes (-want +got):\n%s", diff)
			}
			if first := plan.Changes[0]; first.Localized() != (len(tc.want[0].Between) == 0) {
				t.Fatalf("Localized() = %v for %+v", first.Localized(), first)
			}
		})
	}
}

func TestInconclusiveRemeasureCount(t *testing.T) {
	measured := 0
	truth := func(i, m int) Verdict {
		if i == 2 {
			measured = m
			return Inconclusive
		}
		return stepAt(2)(i, m)
	}
	simulate(t, 3, 1, truth)
	if measured != DefaultMaxMeasurements {
		t.Fatalf("the always-inconclusive point was measured %d times, want %d", measured, DefaultMaxMeasurements)
	}
}

func TestNextRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		points []Point
		k      int
	}{
		{"one point", []Point{{Verdict: Good}}, 1},
		{"endpoints not judged", []Point{{Verdict: Good}, {}, {Verdict: Inconclusive}}, 1},
		{"parallelism 0", []Point{{Verdict: Good}, {}, {Verdict: Bad}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Next(tc.points, Options{Parallelism: tc.k}); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}
