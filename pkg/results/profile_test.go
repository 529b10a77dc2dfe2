package results

import (
	"strings"
	"testing"
)

func TestValidateProfile(t *testing.T) {
	tests := []struct {
		name    string
		p       Profile
		wantErr string
	}{
		{name: "valid", p: Profile{Tool: ProfileToolPerf, Event: "cpu-clock", FrequencyHz: 99, Seconds: 10, Samples: 5, Dropped: 1, Folded: "a;b 3\na 1\n"}},
		{name: "error only", p: Profile{Tool: ProfileToolPerf, Event: "cpu-clock", FrequencyHz: 99, Error: "perf: not permitted"}},
		{name: "omitted", p: Profile{Tool: ProfileToolPerf, Event: "cpu-clock", FrequencyHz: 99, Seconds: 10, Samples: 5, FoldedOmitted: true}},
		{name: "counts disagree", p: Profile{Tool: ProfileToolPerf, Event: "cpu-clock", Samples: 5, Folded: "a 3\n"},
			wantErr: "steps[0].profile.folded: holds 3 samples, samples - dropped is 5"},
		{name: "bad folded", p: Profile{Tool: ProfileToolPerf, Event: "cpu-clock", Samples: 5, Folded: "a;;b 5\n"},
			wantErr: "steps[0].profile.folded: folded line 1"},
		{name: "more dropped than samples", p: Profile{Tool: ProfileToolPerf, Event: "cpu-clock", Samples: 1, Dropped: 2},
			wantErr: "steps[0].profile.dropped: 2 is more than samples 1"},
		{name: "omitted and present", p: Profile{Tool: ProfileToolPerf, Event: "cpu-clock", Samples: 1, Folded: "a 1\n", FoldedOmitted: true},
			wantErr: "steps[0].profile.foldedOmitted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := testDocument(1, []int{1}, 30)
			p := tt.p
			d.Steps[0].Profile = &p
			err := d.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				// The schema takes it too, through the encoder.
				b, err := Marshal(d)
				if err != nil {
					t.Fatal(err)
				}
				back, err := Unmarshal(b)
				if err != nil {
					t.Fatal(err)
				}
				if got := back.Steps[0].Profile; got == nil || *got != p {
					t.Errorf("round trip: %+v, want %+v", got, p)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// A compact document that does not fit leaves the profiles' stacks out
// (marked omitted) before it gives up the counters.
func TestCompactOmitsProfileStacks(t *testing.T) {
	full := testDocument(2, []int{1}, 60)
	big := strings.Repeat("frame;", 200) + "leaf "
	var folded strings.Builder
	for i := 0; i < 200; i++ {
		folded.WriteString(big[:len(big)-6] + string(rune('a'+i%26)) + strings.Repeat("x", i) + " 1\n")
	}
	for i := range full.Steps {
		full.Steps[i].Profile = &Profile{Tool: ProfileToolPerf, Event: "cpu-clock", FrequencyHz: 99, Seconds: 10, Samples: 200, Folded: folded.String()}
	}
	if err := full.Validate(); err != nil {
		t.Fatal(err)
	}
	roomy, _, err := Compact(full, CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := roomy.Steps[0].Profile; p.Folded == "" || p.FoldedOmitted {
		t.Errorf("with room the compact form keeps the stacks; got omitted=%v", p.FoldedOmitted)
	}
	tight, b, err := Compact(full, CompactOptions{MaxBytes: 60 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 60<<10 {
		t.Fatalf("compact form is %d bytes", len(b))
	}
	for i, s := range tight.Steps {
		if s.Profile == nil || s.Profile.Folded != "" || !s.Profile.FoldedOmitted || s.Profile.Samples != 200 {
			t.Errorf("steps[%d].profile = %+v, want the stacks omitted and the rest kept", i, s.Profile)
		}
	}
	if full.Steps[0].Profile.Folded == "" {
		t.Error("Compact modified the full document's profile")
	}
}
