package agentapi

import "testing"

func TestValidateFixedRate(t *testing.T) {
	for _, tc := range []struct {
		name string
		fr   *FixedRate
		want []string // substrings of the error; none for a valid plan
	}{
		{"absent", nil, nil},
		{"fractions and rates", &FixedRate{FractionsOfPeak: []string{"0.5", "1"}, Rates: []int{100}, Steps: []string{"point-query"}}, nil},
		{"empty", &FixedRate{}, []string{"workload.fixedRate: one of fractionsOfPeak or rates is required"}},
		{"bad fractions", &FixedRate{FractionsOfPeak: []string{"0", "1.5", "half"}}, []string{
			`workload.fixedRate.fractionsOfPeak[0]: "0" is not a fraction`, `fractionsOfPeak[1]: "1.5"`, `fractionsOfPeak[2]: "half"`}},
		{"bad rate", &FixedRate{Rates: []int{0}}, []string{"workload.fixedRate.rates[0]: 0 must be at least 1"}},
		{"unknown step", &FixedRate{Rates: []int{5}, Steps: []string{"update-index"}}, []string{`workload.fixedRate.steps[0]: "update-index" is not one of workload.steps`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := onePointQueryWorkload()
			w.FixedRate = tc.fr
			checkValidate(t, w, tc.want)
		})
	}
}
