package bisect

import (
	"fmt"
	"math"
	"sort"

	"github.com/dbbench/dbbench/pkg/inference"
)

// Verdict is what a point is, relative to the endpoints.
type Verdict string

const (
	// Untested: not measured yet.
	Untested Verdict = ""
	// Good: not slower than the good point by more than the magnitude, and
	// faster than the bad point by more than it, on every judged key.
	Good Verdict = "Good"
	// Bad: slower than the good point by more than the magnitude on some
	// judged key (a build between the endpoints' levels counts as bad: it
	// carries at least part of the change).
	Bad Verdict = "Bad"
	// Inconclusive: within noise of both rules; more runs may decide it.
	Inconclusive Verdict = "Inconclusive"
	// Failed: the build did not run (it did not start, its image could not
	// be pulled); the search goes around it.
	Failed Verdict = "Failed"
)

// Key is one judged measurement: a step at a thread count.
type Key struct {
	Step    string
	Threads int
}

func (k Key) String() string { return fmt.Sprintf("%s@%d", k.Step, k.Threads) }

// Samples are a point's throughputs per key, one value per run of a cell.
type Samples map[Key][]float64

// Add appends the values of o.
func (s Samples) Add(o Samples) {
	for k, xs := range o {
		s[k] = append(s[k], xs...)
	}
}

// Runs is the smallest number of runs the point has over keys (0 when it
// has none of them).
func (s Samples) Runs(keys []Key) int {
	n := -1
	for _, k := range keys {
		if l := len(s[k]); n < 0 || l < n {
			n = l
		}
	}
	return max(n, 0)
}

// Keys are the keys of s, sorted.
func (s Samples) Keys() []Key {
	out := make([]Key, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	SortKeys(out)
	return out
}

// SortKeys sorts keys by step, then thread count.
func SortKeys(keys []Key) {
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Step != keys[j].Step {
			return keys[i].Step < keys[j].Step
		}
		return keys[i].Threads < keys[j].Threads
	})
}

// Rule is the decision rule: the BenchmarkRun regression verdict's
// magnitude and significance.
type Rule struct {
	// Magnitude is the smallest slowdown that counts (0.05 = 5 %).
	Magnitude float64
	// MaxPValue is the significance level of each one-sided test, after
	// Holm's correction over the judged keys.
	MaxPValue float64
}

// Validate checks the rule's ranges.
func (r Rule) Validate() error {
	if !(r.Magnitude >= 0 && r.Magnitude < 1) {
		return fmt.Errorf("magnitude %v: must be in [0, 1)", r.Magnitude)
	}
	if !(r.MaxPValue > 0 && r.MaxPValue < 1) {
		return fmt.Errorf("maxPValue %v: must be in (0, 1)", r.MaxPValue)
	}
	return nil
}

// Judgement is the verdict of one point with the figures behind it, taken
// at its worst key (the lowest ratio to the good point).
type Judgement struct {
	Verdict Verdict
	// Key is the key the figures are of.
	Key Key
	// Ratio is mean(point)/mean(good) at Key: < 1 is slower.
	Ratio float64
	// Low and High bound Ratio at 95 % (Fieller's interval); NaN with
	// fewer than two runs on a side, and when Fieller's set is unbounded
	// (the good point's runs too noisy for their count: the delta
	// method's fallback would understate the uncertainty, even below 0).
	Low, High float64
	// Tested says the verdict rests on Welch's tests on log throughput;
	// false means one side had a single run and only the magnitude was
	// compared.
	Tested bool
}

// sideRuns is the fewest runs a side needs for a test between runs.
const sideRuns = 2

// Judge decides point p against the good and bad endpoints on keys. Per
// key: p is slower than good by more than the magnitude (Welch's one-sided
// test on log throughput, inference.Slowdown, Holm-adjusted over the keys,
// below MaxPValue) → bad there; bad is slower than p by more than the
// magnitude and p is not bad there → good there. The point is Bad when any
// key is bad, Good when every key is good, else Inconclusive. With a single
// run on a side the tests give way to the magnitude alone.
func Judge(good, bad, p Samples, keys []Key, rule Rule) Judgement {
	j := Judgement{Verdict: Inconclusive, Ratio: math.NaN(), Low: math.NaN(), High: math.NaN()}
	if len(keys) == 0 {
		return j
	}
	type keyTest struct {
		key          Key
		pBad, pGood  float64
		ratio        float64
		tested, have bool
	}
	tests := make([]keyTest, len(keys))
	pBad := make([]float64, len(keys))
	for i, k := range keys {
		t := keyTest{key: k, pBad: 1, pGood: 1, ratio: math.NaN()}
		g, b, x := good[k], bad[k], p[k]
		if len(g) > 0 && len(x) > 0 {
			t.have = true
			t.ratio = mean(x) / mean(g)
		}
		if len(g) >= sideRuns && len(x) >= sideRuns {
			if s, err := inference.Slowdown(g, x, rule.Magnitude); err == nil {
				t.tested, t.pBad = true, s.P
			}
			if len(b) >= sideRuns {
				if s, err := inference.Slowdown(x, b, rule.Magnitude); err == nil {
					t.pGood = s.P
				}
			}
		} else if t.have && len(b) > 0 {
			// One run on a side: the magnitude alone decides.
			if t.ratio < 1-rule.Magnitude {
				t.pBad = 0
			} else if mean(b)/mean(x) < 1-rule.Magnitude {
				t.pGood = 0
			}
		}
		tests[i], pBad[i] = t, t.pBad
	}
	adj, err := inference.Adjust(inference.CorrectionHolm, pBad)
	if err != nil {
		adj = pBad
	}
	anyBad, allGood := false, true
	worst := -1
	for i, t := range tests {
		if !t.have {
			allGood = false
			continue
		}
		if worst < 0 || t.ratio < tests[worst].ratio {
			worst = i
		}
		switch {
		case adj[i] < rule.MaxPValue:
			anyBad = true
			allGood = false
		case t.pGood < rule.MaxPValue:
		default:
			allGood = false
		}
	}
	if worst >= 0 {
		w := tests[worst]
		j.Key, j.Ratio, j.Tested = w.key, w.ratio, w.tested
		if iv, err := inference.RatioOfMeans(good[w.key], p[w.key], inference.DefaultLevel); err == nil && !iv.FiellerUnbounded {
			// Throughputs are not negative: neither is their ratio.
			j.Low, j.High = math.Max(iv.Low, 0), iv.High
		}
	}
	switch {
	case anyBad:
		j.Verdict = Bad
	case allGood:
		j.Verdict = Good
	}
	return j
}

// EndpointCheck is the outcome of measuring the endpoints.
type EndpointCheck string

const (
	// Reproduced: the bad point is slower than the good one by more than
	// the magnitude on at least one key.
	Reproduced EndpointCheck = "Reproduced"
	// NotReproduced: the bad point is not slower by the magnitude on any
	// key (its point estimate is within the magnitude everywhere).
	NotReproduced EndpointCheck = "NotReproduced"
	// Unsure: some key is slower by the magnitude on average but not
	// significantly; more runs may decide.
	Unsure EndpointCheck = "Unsure"
)

// Endpoints is the endpoint check with its figures.
type Endpoints struct {
	Check EndpointCheck
	// Regressed are the keys where bad is significantly slower: the keys
	// the search judges candidates on.
	Regressed []Key
	// Worst is the judgement of the bad point at its lowest ratio.
	Worst Judgement
}

// CheckEndpoints confirms that bad is slower than good by more than the
// rule's magnitude on some of keys (Holm-adjusted one-sided tests; with a
// single run on a side, the magnitude alone).
func CheckEndpoints(good, bad Samples, keys []Key, rule Rule) Endpoints {
	out := Endpoints{Check: NotReproduced, Worst: Judge(good, bad, bad, keys, rule)}
	p := make([]float64, len(keys))
	ratios := make([]float64, len(keys))
	for i, k := range keys {
		p[i], ratios[i] = 1, math.NaN()
		g, b := good[k], bad[k]
		if len(g) == 0 || len(b) == 0 {
			continue
		}
		ratios[i] = mean(b) / mean(g)
		if len(g) >= sideRuns && len(b) >= sideRuns {
			if s, err := inference.Slowdown(g, b, rule.Magnitude); err == nil {
				p[i] = s.P
			}
		} else if ratios[i] < 1-rule.Magnitude {
			p[i] = 0
		}
	}
	adj, err := inference.Adjust(inference.CorrectionHolm, p)
	if err != nil {
		adj = p
	}
	for i, k := range keys {
		switch {
		case adj[i] < rule.MaxPValue:
			out.Regressed = append(out.Regressed, k)
			out.Check = Reproduced
		case ratios[i] < 1-rule.Magnitude && out.Check == NotReproduced:
			out.Check = Unsure
		}
	}
	return out
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
