package plan

import (
	"strings"
	"testing"
)

func TestValidateProfile(t *testing.T) {
	for _, tc := range []struct {
		name string
		pr   *Profile
		want []string // substrings of the error; none for a valid plan
	}{
		{"absent", nil, nil},
		{"valid", &Profile{Steps: []string{"point-query"}, Threads: 2, Seconds: 10, FrequencyHz: 99}, nil},
		{"no steps", &Profile{Seconds: 10, FrequencyHz: 99}, []string{"workload.profile.steps: at least one step is required"}},
		{"unknown step", &Profile{Steps: []string{"insert"}, Seconds: 10, FrequencyHz: 99}, []string{`workload.profile.steps[0]: "insert" is not one of workload.steps`}},
		{"bad numbers", &Profile{Steps: []string{"point-query"}, Threads: -1, Seconds: 0, FrequencyHz: 5000}, []string{
			"workload.profile.threads: -1 must not be negative", "workload.profile.seconds: 0 must be at least 1", "workload.profile.frequencyHz: 5000 must be in [1, 1000]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Plan{APIVersion: APIVersion, Server: Server{Engine: MariaDB, Port: 3306, Database: "sbtest"},
				Workload: Workload{Steps: []string{"point-query"}, Tables: 1, TableSize: 10, ReadSeconds: 1, WriteSeconds: 1, Threads: []int{1}, Profile: tc.pr},
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
