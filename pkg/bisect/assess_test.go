package bisect

import (
	"math"
	"testing"

	"github.com/dbbench/dbbench/pkg/regression"
)

func all(Key) bool { return true }

func TestAssessVerdicts(t *testing.T) {
	rule := Rule{Magnitude: 0.1, MaxPValue: 0.05}
	r0 := round(RoundEndpoints, []int{0, 5}, nil, obs(0, 1000, 1020, 980), obs(5, 500, 510, 490))
	for _, tc := range []struct {
		name  string
		probe []Observation
		want  Verdict
		ratio float64
	}{
		{"like good", obs(2, 1005, 995, 1010), Good, 1.003},
		{"like bad", obs(2, 505, 495, 500), Bad, 0.5},
		{"between the levels counts as bad", obs(2, 750, 760, 740), Bad, 0.75},
		{"within noise of both", obs(2, 1400, 300, 900), Inconclusive, 0.72},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r1 := round(RoundSearch, []int{0, 2, 5}, []int{0, 5}, obs(0, 1010, 990), obs(5, 505, 495), tc.probe)
			s := Assess([]Round{r0, r1}, 6, rule, all)
			if s.Endpoints.Check != Reproduced || s.Points[0].Verdict != Good || s.Points[5].Verdict != Bad {
				t.Fatalf("endpoints %s, verdicts %s %s", s.Endpoints.Check, s.Points[0].Verdict, s.Points[5].Verdict)
			}
			p := s.Points[2]
			if p.Verdict != tc.want {
				t.Fatalf("verdict %s, want %s (%+v)", p.Verdict, tc.want, p.Judgement)
			}
			j := p.Judgement
			if j == nil || j.Key != keyWrite || math.Abs(j.Ratio-tc.ratio) > 0.01 || !j.Tested || !(j.Low <= j.Ratio && j.Ratio <= j.High) {
				t.Fatalf("judgement %+v, want ratio %.3f at %s with its interval", j, tc.ratio, keyWrite)
			}
			if s.Points[2].Measured != 1 || s.Points[0].Measured != 0 {
				t.Fatalf("measured %d (probe) and %d (reference), want 1 and 0", s.Points[2].Measured, s.Points[0].Measured)
			}
		})
	}
}

// The endpoints are judged with the verdict's own rule: a 12 % slowdown
// at 5 % noise over 3 + 3 runs is significantly "slower" (Estimated) but
// not significantly "slower by more than 10 %" (Tested).
func TestAssessEndpointsFollowTheMagnitudeRule(t *testing.T) {
	r0 := round(RoundEndpoints, []int{0, 3}, nil, obs(0, 1000, 1050, 960), obs(3, 880, 910, 850))
	for _, tc := range []struct {
		rule regression.MagnitudeRule
		want EndpointCheck
	}{
		{regression.MagnitudeTested, Unsure},
		{regression.MagnitudeEstimated, Reproduced},
	} {
		s := Assess([]Round{r0}, 4, Rule{Magnitude: 0.1, MaxPValue: 0.05, MagnitudeRule: tc.rule}, all)
		if s.Endpoints.Check != tc.want {
			t.Errorf("%s: endpoints %s, want %s (worst %+v)", tc.rule, s.Endpoints.Check, tc.want, s.Endpoints.Worst)
		}
	}
	// Within the magnitude on average: not reproduced under either rule.
	r0 = round(RoundEndpoints, []int{0, 3}, nil, obs(0, 1000, 1010, 990), obs(3, 960, 965, 955))
	if s := Assess([]Round{r0}, 4, Rule{Magnitude: 0.1, MaxPValue: 0.05, MagnitudeRule: regression.MagnitudeEstimated}, all); s.Endpoints.Check != NotReproduced {
		t.Errorf("a 4 %% slowdown: endpoints %s, want NotReproduced", s.Endpoints.Check)
	}
}

// A regression of the p99 latency with the throughput unchanged is
// bisected on the latency: only that key reproduces, and the points are
// judged on it.
func TestAssessJudgesLatency(t *testing.T) {
	lat := func(point int, ms ...float64) []Observation {
		out := make([]Observation, len(ms))
		for i, v := range ms {
			out[i] = Observation{Point: point, Values: map[Key]float64{keyWrite: 1000 + float64(i), keyP99: v}}
		}
		return out
	}
	rounds := []Round{
		round(RoundEndpoints, []int{0, 5}, nil, lat(0, 10, 10.2, 9.8), lat(5, 14, 14.3, 13.8)),
		round(RoundSearch, []int{0, 2, 5}, []int{0, 5}, lat(0, 10.1, 9.9), lat(5, 14.1, 13.9), lat(2, 14, 14.2)),
	}
	s := Assess(rounds, 6, Rule{Magnitude: 0.1, MaxPValue: 0.05}, all)
	if s.Endpoints.Check != Reproduced || len(s.Endpoints.Regressed) != 1 || s.Endpoints.Regressed[0] != keyP99 {
		t.Fatalf("endpoints %s on %v, want Reproduced on %s alone", s.Endpoints.Check, s.Endpoints.Regressed, keyP99)
	}
	if s.PosteriorKey != keyP99 || s.Points[2].Verdict != Bad || s.Points[2].Judgement.Key != keyP99 || math.Abs(s.Points[2].Judgement.Ratio-1.4) > 0.02 {
		t.Fatalf("point 2 %+v (judgement %+v), posterior on %s: want Bad at p99 ratio 1.4", s.Points[2], s.Points[2].Judgement, s.PosteriorKey)
	}
	if got := s.Endpoints.Worst.Key.String(); got != "update-index@1 p99 latency" {
		t.Fatalf("worst key %q", got)
	}
}

func TestAssessFailures(t *testing.T) {
	rule := Rule{Magnitude: 0.1, MaxPValue: 0.05}
	r0 := round(RoundEndpoints, []int{0, 5}, nil, obs(0, 1000, 1020, 980), obs(5, 500, 510, 490))
	r1 := round(RoundSearch, []int{0, 2, 5}, []int{0, 5}, obs(0, 1010, 990), obs(5, 505, 495))
	r1.Failures = map[int]Failure{2: {Reason: "ImagePullFailed", Message: "not found"}}
	s := Assess([]Round{r0, r1}, 6, rule, all)
	if p := s.Points[2]; p.Verdict != Failed || p.Failure == nil || p.Failure.Reason != "ImagePullFailed" {
		t.Fatalf("point 2 %+v, want Failed with its reason", p)
	}
	bad := round(RoundEndpoints, []int{0, 5}, nil, obs(0, 1000, 1020))
	bad.Failures = map[int]Failure{5: {Reason: "DatabaseNotReady"}}
	if s := Assess([]Round{bad}, 6, rule, all); s.EndpointFailed != 5 || Decide(s, Limits{MaxCells: 40}).Outcome != OutcomeEndpointFailed {
		t.Fatalf("endpoint failed %d, want 5 and EndpointFailed", s.EndpointFailed)
	}
}

// A change of the environment between rounds moves every build alike:
// within-round comparisons keep the verdicts, and the shift is reported as
// one the regression held through.
func TestAssessEnvironmentShiftThatHeld(t *testing.T) {
	rule := Rule{Magnitude: 0.1, MaxPValue: 0.05}
	rounds := []Round{
		round(RoundEndpoints, []int{0, 5}, nil, obs(0, 1000, 1020, 980), obs(5, 500, 510, 490)),
		// Everything 5× faster: the load fell.
		round(RoundSearch, []int{0, 2, 5}, []int{0, 5}, obs(0, 5050, 4950), obs(5, 2525, 2475), obs(2, 5000, 5040)),
	}
	s := Assess(rounds, 6, rule, all)
	if s.Points[2].Verdict != Good || math.Abs(s.Points[2].Judgement.Ratio-1) > 0.02 {
		t.Fatalf("point 2 %s ratio %.3f, want Good at 1.0 within its round", s.Points[2].Verdict, s.Points[2].Judgement.Ratio)
	}
	if s.Epoch != 0 || len(s.Shifts) != 1 || !s.Shifts[0].Held || s.Shifts[0].Round != 1 || math.Abs(s.Shifts[0].Percent-400) > 10 {
		t.Fatalf("epoch %d shifts %+v, want one held shift of +400 %% in round 1", s.Epoch, s.Shifts)
	}
}

// The finding of issue 24: round 0 measured under load, where the bad
// build looked half as fast; round 1, after the load fell, measured every
// build alike, the references included. The regression did not hold its
// size: round 1 starts a new epoch, its endpoints are measured again, and
// nothing is localized from round 0.
func TestAssessRegressionThatDidNotHold(t *testing.T) {
	rule := Rule{Magnitude: 0.1, MaxPValue: 0.05}
	rounds := []Round{
		round(RoundEndpoints, []int{0, 9}, nil, obs(0, 284, 457, 390), obs(9, 171, 179, 175)),
		round(RoundSearch, []int{0, 4, 9}, []int{0, 9}, obs(0, 1700, 1650, 1720), obs(9, 1690, 1710, 1680), obs(4, 1705, 1695, 1700)),
	}
	s := Assess(rounds, 10, rule, all)
	if s.Epoch != 1 || s.Epochs != 2 || len(s.Shifts) == 0 || s.Shifts[0].Held || s.Shifts[0].Round != 1 {
		t.Fatalf("epoch %d of %d, shifts %+v: want round 1 to start epoch 2", s.Epoch, s.Epochs, s.Shifts)
	}
	// Round 1's references are the endpoints: measured in the same quiet
	// slot, they show no regression.
	if d := Decide(s, Limits{Parallelism: 1, Repeats: 3, MaxCells: 100}); d.Outcome != OutcomeEndpointsNotReproduced || s.Endpoints.Check != NotReproduced {
		t.Fatalf("decision %+v (endpoints %s), want EndpointsNotReproduced", d, s.Endpoints.Check)
	}
	// With references other than the endpoints, the new epoch measures
	// the endpoints first.
	rounds[1] = round(RoundSearch, []int{2, 4, 6}, []int{2, 6}, obs(2, 1700, 1650, 1720), obs(6, 1690, 1710, 1680), obs(4, 1705, 1695, 1700))
	rounds[0].Observations = append(rounds[0].Observations, append(obs(2, 400, 380, 420), obs(6, 170, 180, 175)...)...)
	rounds[0].Points = []int{0, 2, 6, 9}
	s = Assess(rounds, 10, rule, all)
	if s.Epoch != 1 {
		t.Fatalf("epoch %d, shifts %+v: want round 1 to start a new epoch", s.Epoch, s.Shifts)
	}
	if d := Decide(s, Limits{Parallelism: 1, Repeats: 3, MaxCells: 100}); d.Action != Measure || d.Round.Kind != RoundEndpoints {
		t.Fatalf("decision %+v, want the endpoints measured again", d)
	}
}

// A good build measured 6 % low once is judged Bad by its own test, which
// puts the verdicts' first change before the culprit; the posterior, over
// every cell, still names the culprit, and that is the build localized
// (make bench-bisect found searches that ended Ambiguous here).
func TestAssessNamesThePosteriorsBuild(t *testing.T) {
	rule := Rule{Magnitude: 0.05, MaxPValue: 0.05, MagnitudeRule: regression.MagnitudeEstimated}
	rounds := []Round{
		round(RoundEndpoints, []int{0, 5}, nil, obs(0, 1000, 1004, 996), obs(5, 500, 502, 498)),
		round(RoundSearch, []int{0, 2, 5}, []int{0, 5}, obs(0, 1001, 999, 1000), obs(5, 501, 499, 500), obs(2, 940, 942, 938)),
		round(RoundSearch, []int{0, 3, 4, 5}, []int{0, 5}, obs(0, 1000, 1002, 998), obs(5, 500, 501, 499), obs(3, 999, 1001, 1000), obs(4, 502, 498, 500)),
	}
	s := Assess(rounds, 6, rule, all)
	if s.Points[2].Verdict != Bad || s.Points[3].Verdict != Good || s.Points[4].Verdict != Bad {
		t.Fatalf("verdicts %s %s %s, want the low good build judged Bad beside Good and Bad", s.Points[2].Verdict, s.Points[3].Verdict, s.Points[4].Verdict)
	}
	if len(s.Changes) < 2 || s.Changes[0].FirstBad != 2 {
		t.Fatalf("changes %+v, want the verdicts' first change at 2", s.Changes)
	}
	d := Decide(s, Limits{Parallelism: 1, Repeats: 3, MaxCells: 100})
	if s.Named != 4 || d.Outcome != OutcomeLocalized || d.Change.FirstBad != 4 || d.Change.LastGood != 3 {
		t.Fatalf("named %d (confidence %.3f), decision %+v: want 4 localized after 3", s.Named, s.Confidence, d)
	}
}
