package plugin

import (
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/changepoint"
)

// TestHistoryDetectorFlags: --noise-cv, --min-magnitude and --otava reach
// the detector's options.
func TestHistoryDetectorFlags(t *testing.T) {
	tests := []struct {
		name string
		opts HistoryOptions
		want func(changepoint.Options) bool
	}{
		{"defaults", HistoryOptions{}, func(o changepoint.Options) bool {
			return o.NoiseCV == 0 && o.NewestRuns && o.Drift && o.MinMagnitude == changepoint.DefaultMinMagnitude
		}},
		{"noise", HistoryOptions{NoiseCV: 0.008}, func(o changepoint.Options) bool {
			return o.NoiseCV == 0.008 && o.NoiseMultiple == changepoint.DefaultNoiseMultiple
		}},
		{"floor", HistoryOptions{MinMagnitude: 0.05}, func(o changepoint.Options) bool { return o.MinMagnitude == 0.05 }},
		{"otava", HistoryOptions{Otava: true}, func(o changepoint.Options) bool {
			return !o.NewestRuns && !o.Drift && o.NoiseMultiple == 0
		}},
	}
	for _, tc := range tests {
		o := tc.opts.detectorOptions()
		if err := o.Validate(); err != nil || !tc.want(o) {
			t.Errorf("%s: detector options %+v (valid: %v)", tc.name, o, err)
		}
	}
}

// TestHistoryNoiseCVFlagErrors: bad --noise-cv values are refused, naming
// the flag.
func TestHistoryNoiseCVFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--noise-cv", "-0.01"},
		{"--noise-cv", "1.5"},
		{"--noise-cv", "0.01", "--otava"},
	} {
		_, _, err := runCmd(t, noCluster{}, append([]string{"history", "nightly", "--from-dir", t.TempDir()}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "--noise-cv") {
			t.Errorf("%v: %v, want an error naming --noise-cv", args, err)
		}
	}
}
