package bisect

import (
	"math"
	"testing"
)

func TestJudge(t *testing.T) {
	w := Key{Step: "update-index", Threads: 1}
	r := Key{Step: "point-query", Threads: 1}
	rule := Rule{Magnitude: 0.1, MaxPValue: 0.05}
	good := Samples{w: {1000, 1020, 980}, r: {5000, 5050, 4950}}
	bad := Samples{w: {500, 510, 490}, r: {5000, 5050, 4950}}
	for _, tc := range []struct {
		name      string
		p         Samples
		keys      []Key
		want      Verdict
		wantKey   Key
		wantRatio float64
		tested    bool
		// bounded says Fieller's interval is finite.
		bounded bool
	}{
		{"like good", Samples{w: {1005, 995, 1010}}, []Key{w}, Good, w, 1.0033, true, true},
		{"like bad", Samples{w: {505, 495, 500}}, []Key{w}, Bad, w, 0.5, true, true},
		{"between the levels counts as bad", Samples{w: {750, 760, 740}}, []Key{w}, Bad, w, 0.75, true, true},
		{"within noise of both", Samples{w: {1400, 300, 900}}, []Key{w}, Inconclusive, w, 0.8667, true, true},
		{"a key not measured is inconclusive", Samples{w: {1000, 1000}}, []Key{w, r}, Inconclusive, w, 1, true, true},
		{"bad on one key of two", Samples{w: {500, 505, 495}, r: {5000, 5010, 4990}}, []Key{r, w}, Bad, w, 0.5, true, true},
		{"one run: the magnitude decides bad", Samples{w: {600}}, []Key{w}, Bad, w, 0.6, false, false},
		{"one run: the magnitude decides good", Samples{w: {990}}, []Key{w}, Good, w, 0.99, false, false},
		{"no keys", Samples{w: {990}}, nil, Inconclusive, Key{}, math.NaN(), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := Judge(good, bad, tc.p, tc.keys, rule)
			if j.Verdict != tc.want {
				t.Fatalf("verdict %q, want %q (%+v)", j.Verdict, tc.want, j)
			}
			if j.Key != tc.wantKey || j.Tested != tc.tested {
				t.Fatalf("key %v tested %v, want %v %v", j.Key, j.Tested, tc.wantKey, tc.tested)
			}
			if !(math.IsNaN(tc.wantRatio) && math.IsNaN(j.Ratio)) && math.Abs(j.Ratio-tc.wantRatio) > 1e-3 {
				t.Fatalf("ratio %v, want %v", j.Ratio, tc.wantRatio)
			}
			if bounded := !math.IsNaN(j.Low); bounded != tc.bounded || (bounded && !(0 <= j.Low && j.Low <= j.Ratio && j.Ratio <= j.High)) {
				t.Fatalf("interval [%v, %v] for ratio %v, want bounded %v and holding it", j.Low, j.High, j.Ratio, tc.bounded)
			}
		})
	}
}

// Two good runs far apart: Fieller's set is unbounded, so the point gets
// no interval rather than the delta method's, which would reach below 0.
func TestJudgeGivesNoIntervalWhenUnbounded(t *testing.T) {
	w := Key{Step: "update-index", Threads: 1}
	j := Judge(Samples{w: {1000, 600}}, Samples{w: {50, 52}}, Samples{w: {500, 505}}, []Key{w}, Rule{Magnitude: 0.1, MaxPValue: 0.05})
	if !math.IsNaN(j.Low) || !math.IsNaN(j.High) || math.Abs(j.Ratio-0.6281) > 1e-3 {
		t.Fatalf("ratio %v interval [%v, %v], want 0.628 without an interval", j.Ratio, j.Low, j.High)
	}
}

func TestCheckEndpoints(t *testing.T) {
	w := Key{Step: "update-index", Threads: 1}
	r := Key{Step: "point-query", Threads: 1}
	rule := Rule{Magnitude: 0.1, MaxPValue: 0.05}
	good := Samples{w: {1000, 1020, 980}, r: {5000, 5050, 4950}}
	for _, tc := range []struct {
		name      string
		bad       Samples
		want      EndpointCheck
		regressed []Key
		ratio     float64
	}{
		{"reproduced on the write step only", Samples{w: {500, 510, 490}, r: {5000, 5040, 4960}}, Reproduced, []Key{w}, 0.5},
		{"not reproduced", Samples{w: {990, 1000, 1010}, r: {5010, 5000, 4990}}, NotReproduced, nil, 1.0},
		{"slower on average but within noise", Samples{w: {1300, 200, 900}, r: {5000, 5040, 4960}}, Unsure, nil, 0.8},
		{"faster is not a regression", Samples{w: {2000, 2010, 1990}, r: {5000, 5040, 4960}}, NotReproduced, nil, 1.0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := CheckEndpoints(good, tc.bad, []Key{r, w}, rule)
			if ep.Check != tc.want {
				t.Fatalf("check %q, want %q", ep.Check, tc.want)
			}
			if len(ep.Regressed) != len(tc.regressed) || (len(tc.regressed) > 0 && ep.Regressed[0] != tc.regressed[0]) {
				t.Fatalf("regressed %v, want %v", ep.Regressed, tc.regressed)
			}
			if math.Abs(ep.Worst.Ratio-tc.ratio) > 0.01 {
				t.Fatalf("worst ratio %v, want %v", ep.Worst.Ratio, tc.ratio)
			}
		})
	}
}

func TestRuleValidate(t *testing.T) {
	for _, tc := range []struct {
		rule Rule
		ok   bool
	}{
		{Rule{Magnitude: 0.05, MaxPValue: 0.05}, true},
		{Rule{Magnitude: 1, MaxPValue: 0.05}, false},
		{Rule{Magnitude: 0.05, MaxPValue: 0}, false},
		{Rule{Magnitude: -0.1, MaxPValue: 0.5}, false},
	} {
		if err := tc.rule.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: err %v, want ok %v", tc.rule, err, tc.ok)
		}
	}
}
