package agentapi

import "testing"

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
			w := onePointQueryWorkload()
			w.Profile = tc.pr
			checkValidate(t, w, tc.want)
		})
	}
}
