package results

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSummarizeSeries(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want SeriesSummary
	}{
		{"empty", nil, SeriesSummary{}},
		{"one", []float64{7}, SeriesSummary{Samples: 1, Min: 7, P5: 7, Median: 7, P95: 7, Max: 7, Mean: 7}},
		// sorted 1..5: p5 at rank 0.2 → 1.2, median 3, p95 at rank 3.8 → 4.8
		{"interpolates", []float64{5, 1, 4, 2, 3}, SeriesSummary{Samples: 5, Min: 1, P5: 1.2, Median: 3, P95: 4.8, Max: 5, Mean: 3, CV: math.Sqrt(2) / 3, StallSeconds: 1}}, // 1 < 3/2; too short for an autocorrelation
		// median 100; 40 and 10 are below 50.
		{"stalls", []float64{100, 100, 40, 100, 10, 100}, SeriesSummary{Samples: 6, Min: 10, P5: 17.5, Median: 100, P95: 100, Max: 100, Mean: 75,
			CV: math.Sqrt((4*625+35*35+65*65)/6.0) / 75, StallSeconds: 2}},
		// a trend over 10 s: deviations ±0.5 … ±4.5; lag products 57.75
		// over squares 82.5
		{"trend", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, SeriesSummary{Samples: 10, Min: 1, P5: 1.45, Median: 5.5, P95: 9.55, Max: 10, Mean: 5.5,
			CV: math.Sqrt(82.5/10) / 5.5, StallSeconds: 2, Lag1Autocorrelation: 0.7}}, // 1, 2 < 5.5/2
		{"all zero", []float64{0, 0}, SeriesSummary{Samples: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SummarizeSeries(tt.in, 1)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestEffectiveSamples(t *testing.T) {
	tests := []struct {
		n    int
		r    float64
		want int
	}{
		{60, 0, 60},    // not computed, or uncorrelated
		{60, -0.3, 60}, // negative correlation never adds samples
		{60, 0.5, 20},  // 60 × 0.5 / 1.5
		{60, 0.9, 3},   // 60 × 0.1 / 1.9 = 3.2
		{10, 0.99, 2},  // never below 2
		{1, 0.5, 1},    // too few to say
	}
	for _, tt := range tests {
		if got := (SeriesSummary{Samples: tt.n, Lag1Autocorrelation: tt.r}).EffectiveSamples(); got != tt.want {
			t.Errorf("n %d, r %v: %d effective samples, want %d", tt.n, tt.r, got, tt.want)
		}
	}
}

func TestDownsample(t *testing.T) {
	got := Downsample([]float64{1, 2, 3, 4, 5}, 2)
	if diff := cmp.Diff([]float64{1.5, 3.5, 5}, got); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff([]float64{1, 2}, Downsample([]float64{1, 2}, 1)); diff != "" {
		t.Error(diff)
	}
}

func TestEncodeSeriesRoundTrip(t *testing.T) {
	in := testSeries(3600, 23456.78).QPS
	e, err := EncodeSeries(in, 1, 100)
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out, cmpopts.EquateApprox(0, 0.005)); diff != "" {
		t.Errorf("round trip (-in +out):\n%s", diff)
	}
	// An hour of 1 s samples should take a few KB, not the ~30 KB of JSON.
	if len(e.Data) > 12000 {
		t.Errorf("encoded hour is %d bytes", len(e.Data))
	}
	for _, bad := range [][]float64{{1, -1}, {math.NaN()}, {math.Inf(1)}, {1e300}} {
		if _, err := EncodeSeries(bad, 1, 100); err == nil {
			t.Errorf("EncodeSeries(%v) succeeded", bad)
		}
	}
}

func TestDecodeSeriesErrors(t *testing.T) {
	good, _ := EncodeSeries([]float64{1, 2, 3}, 1, 100)
	tests := []struct {
		name   string
		mutate func(e *EncodedSeries)
	}{
		{"encoding", func(e *EncodedSeries) { e.Encoding = "zstd" }},
		{"too few samples declared", func(e *EncodedSeries) { e.Samples = 2 }},
		{"too many samples declared", func(e *EncodedSeries) { e.Samples = 4 }},
		{"base64", func(e *EncodedSeries) { e.Data = "!!" }},
		{"not gzip", func(e *EncodedSeries) { e.Data = "aGVsbG8=" }},
		{"scale", func(e *EncodedSeries) { e.Scale = 0 }},
	}
	for _, tt := range tests {
		e := *good
		tt.mutate(&e)
		if _, err := e.Decode(); err == nil {
			t.Errorf("%s: Decode succeeded", tt.name)
		}
	}
}

func TestCompact(t *testing.T) {
	full := testDocument(2, []int{1, 8}, 60)
	before, _ := Marshal(full)
	c, b, err := Compact(full, CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := Marshal(full); string(after) != string(before) {
		t.Error("Compact modified its input")
	}
	if c.Form != FormCompact {
		t.Errorf("form %q", c.Form)
	}
	back, err := Unmarshal(b)
	if err != nil {
		t.Fatalf("compact bytes do not decode: %v", err)
	}
	if diff := cmp.Diff(c, back); diff != "" {
		t.Errorf("compact round trip (-want +got):\n%s", diff)
	}
	for i, s := range c.Steps {
		if s.Series != nil || s.Summary == nil || s.EncodedQPS == nil {
			t.Fatalf("steps[%d]: series %v summary %v encoded %v", i, s.Series != nil, s.Summary, s.EncodedQPS)
		}
		// The summary covers the samples after the 3 s warm-up.
		want := SummarizeSeries(full.Steps[i].Series.QPS[3:], 1)
		if diff := cmp.Diff(&want, s.Summary); diff != "" {
			t.Errorf("steps[%d].summary (-want +got):\n%s", i, diff)
		}
		if s.EncodedQPS.ResolutionSeconds != 1 {
			t.Errorf("small document encoded at %gs, want 1s", s.EncodedQPS.ResolutionSeconds)
		}
		q, err := s.EncodedQPS.Decode()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(full.Steps[i].Series.QPS, q, cmpopts.EquateApprox(0, 0.005)); diff != "" {
			t.Errorf("steps[%d] encoded series (-full +decoded):\n%s", i, diff)
		}
		// The latency moments cover the same samples.
		wantLat := MomentsOf(SummarizeSeries(full.Steps[i].Series.LatencyMs[3:], 1))
		if diff := cmp.Diff(&wantLat, s.LatencyMoments); diff != "" || wantLat.Samples == 0 {
			t.Errorf("steps[%d].latencyMoments (-want +got):\n%s", i, diff)
		}
		// Everything else is kept.
		s.Summary, s.EncodedQPS, s.LatencyMoments = nil, nil, nil
		f := full.Steps[i]
		f.Series = nil
		if diff := cmp.Diff(f, s); diff != "" {
			t.Errorf("steps[%d] (-full +compact):\n%s", i, diff)
		}
	}
	if _, _, err := Compact(c, CompactOptions{}); err == nil {
		t.Error("Compact accepted a compact document")
	}
}

// TestCompactFitsConfigMap is the sizing requirement: the standard extended
// suite (42 steps) at 11 thread counts with 1-hour steps must fit 1 MiB.
func TestCompactFitsConfigMap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 1.6 M-sample document")
	}
	full := testDocument(42, []int{1, 2, 4, 8, 12, 16, 20, 24, 32, 40, 48}, 3600)
	c, b, err := Compact(full, CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxConfigMapBytes || len(b) > DefaultCompactBudget {
		t.Fatalf("compact form is %d bytes", len(b))
	}
	res := c.Steps[0].EncodedQPS.ResolutionSeconds
	t.Logf("462 one-hour steps: %d bytes, QPS series kept at %gs resolution", len(b), res)
	if res <= 1 {
		t.Errorf("resolution %g: a 1 s series of this size cannot fit; the budget check is not working", res)
	}
	// Without any series the summaries alone must fit with room to spare.
	_, b0, err := Compact(full, CompactOptions{Resolutions: []int{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(b0) > MaxConfigMapBytes/2 {
		t.Errorf("summary-only compact form is %d bytes", len(b0))
	}
	// A budget nothing fits in is an error, not a silent truncation.
	if _, _, err := Compact(full, CompactOptions{MaxBytes: 1000}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("tiny budget: %v", err)
	}
}
