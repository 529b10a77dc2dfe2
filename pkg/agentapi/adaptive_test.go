package agentapi

import "testing"

func TestValidateAdaptive(t *testing.T) {
	for _, tc := range []struct {
		name string
		ad   *Adaptive
		want []string // substrings of the error; none for a valid plan
	}{
		{"absent", nil, nil},
		{"noise", &Adaptive{MinSeconds: 30, BetweenRunCVPercent: 1.5}, nil},
		{"target", &Adaptive{MinSeconds: 5, TargetHalfWidthPercent: 0.5}, nil},
		{"neither", &Adaptive{MinSeconds: 5}, []string{"workload.adaptive: one of betweenRunCVPercent and targetHalfWidthPercent is required"}},
		{"bad min", &Adaptive{TargetHalfWidthPercent: 1}, []string{"workload.adaptive.minSeconds: 0 must be at least 1"}},
		{"bad percent", &Adaptive{MinSeconds: 5, BetweenRunCVPercent: 101, TargetHalfWidthPercent: -1}, []string{
			"workload.adaptive.betweenRunCVPercent: 101 must be in [0, 100]", "workload.adaptive.targetHalfWidthPercent: -1 must be in [0, 100]"}},
		{"suite noise", &Adaptive{MinSeconds: 5, BetweenRunCVPercent: 5, BetweenRunCVPercentAt: map[string]float64{"point-query@1": 2.5}}, nil},
		{"bad suite noise", &Adaptive{MinSeconds: 5, BetweenRunCVPercent: 5, BetweenRunCVPercentAt: map[string]float64{"point-query@1": 0}}, []string{
			"workload.adaptive.betweenRunCVPercentAt[point-query@1]: 0 must be in (0, 100]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := onePointQueryWorkload()
			w.Adaptive = tc.ad
			checkValidate(t, w, tc.want)
		})
	}
}

func TestBetweenRunCVPercentFor(t *testing.T) {
	a := &Adaptive{BetweenRunCVPercent: 5, BetweenRunCVPercentAt: map[string]float64{PointKey("point-query", 4): 2.5}}
	for _, tc := range []struct {
		step    string
		threads int
		want    float64
	}{
		{"point-query", 4, 2.5},
		{"point-query", 1, 5},
		{"update-index", 4, 5},
	} {
		if got := a.BetweenRunCVPercentFor(tc.step, tc.threads); got != tc.want {
			t.Errorf("%s@%d: %v, want %v", tc.step, tc.threads, got, tc.want)
		}
	}
}
