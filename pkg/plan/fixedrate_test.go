package plan

import (
	"strings"
	"testing"
)

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
			p := Plan{APIVersion: APIVersion, Server: Server{Engine: MariaDB, Port: 3306, Database: "sbtest"},
				Workload: Workload{Steps: []string{"point-query"}, Tables: 1, TableSize: 10, ReadSeconds: 1, WriteSeconds: 1, Threads: []int{1}, FixedRate: tc.fr},
				Results:  Results{Dir: "/tmp"}}
			err := p.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("valid; want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
