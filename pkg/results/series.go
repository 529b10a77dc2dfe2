package results

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/dbbench/dbbench/pkg/stats"
)

// SeriesEncoding names the only EncodedSeries encoding of v1.
const SeriesEncoding = "delta-zigzag-varint+gzip+base64"

// minAutocorrelationSamples is the shortest series whose lag-1
// autocorrelation SummarizeSeries records.
const minAutocorrelationSamples = 10

// SummarizeSeries summarises values (samples of intervalSeconds each).
// Percentiles interpolate linearly between the closest ranks (the "type 7"
// definition that numpy and R use by default), so other tools can reproduce
// them exactly. An empty series gives a zero summary.
func SummarizeSeries(values []float64, intervalSeconds float64) SeriesSummary {
	n := len(values)
	if n == 0 {
		return SeriesSummary{}
	}
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	var sum float64
	for _, v := range values {
		sum += v
	}
	mean := sum / float64(n)
	var ss float64
	for _, v := range values {
		ss += (v - mean) * (v - mean)
	}
	s := SeriesSummary{
		Samples: n,
		Min:     sorted[0],
		P5:      stats.Quantile(sorted, 0.05),
		Median:  stats.Quantile(sorted, 0.5),
		P95:     stats.Quantile(sorted, 0.95),
		Max:     sorted[n-1],
		Mean:    mean,
	}
	if mean != 0 {
		s.CV = math.Sqrt(ss/float64(n)) / mean
	}
	// Below minAutocorrelationSamples the estimate is mostly noise (its
	// bias alone is about −(1+4r)/n), so short series record none.
	if n >= minAutocorrelationSamples && ss > 0 {
		var lag float64
		for i := 1; i < n; i++ {
			lag += (values[i-1] - mean) * (values[i] - mean)
		}
		s.Lag1Autocorrelation = lag / ss
	}
	half := s.Median / 2
	for _, v := range values {
		if v < half {
			s.StallSeconds += intervalSeconds
		}
	}
	return s
}

// Downsample averages consecutive groups of factor samples (the last group
// may be shorter), turning a 1 s series into a factor-second one.
func Downsample(values []float64, factor int) []float64 {
	if factor <= 1 {
		return append([]float64(nil), values...)
	}
	out := make([]float64, 0, (len(values)+factor-1)/factor)
	for i := 0; i < len(values); i += factor {
		end := min(i+factor, len(values))
		var s float64
		for _, v := range values[i:end] {
			s += v
		}
		out = append(out, s/float64(end-i))
	}
	return out
}

// maxScaled bounds |value × scale| so that the integer is exact in a float64.
const maxScaled = 1 << 53

// EncodeSeries packs values at the given resolution: rounded to 1/scale,
// each stored as the difference from the previous one (zigzag varint), then
// gzip and base64. Per-second QPS changes little from one second to the next,
// so the deltas are small and compress well: an hour of 1 s samples takes a
// few kilobytes. Values must be finite, non-negative and below 2^53/scale.
func EncodeSeries(values []float64, resolutionSeconds float64, scale int) (*EncodedSeries, error) {
	if scale < 1 {
		return nil, fmt.Errorf("scale %d: must be at least 1", scale)
	}
	if !(resolutionSeconds > 0) || math.IsInf(resolutionSeconds, 0) {
		return nil, fmt.Errorf("resolution %g s: must be positive", resolutionSeconds)
	}
	raw := make([]byte, 0, len(values)*3)
	var prev int64
	for i, v := range values {
		x := v * float64(scale)
		if math.IsNaN(x) || x < 0 || x >= maxScaled {
			return nil, fmt.Errorf("value %d (%g) cannot be encoded at scale %d", i, v, scale)
		}
		n := int64(math.Round(x))
		raw = binary.AppendVarint(raw, n-prev)
		prev = n
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return &EncodedSeries{
		Encoding:          SeriesEncoding,
		ResolutionSeconds: resolutionSeconds,
		Scale:             scale,
		Samples:           len(values),
		Data:              base64.StdEncoding.EncodeToString(buf.Bytes()),
	}, nil
}

// Decode unpacks the series. It refuses unknown encodings and data that
// does not hold exactly Samples values, and never inflates more than the
// declared samples could need.
func (e *EncodedSeries) Decode() ([]float64, error) {
	if e.Encoding != SeriesEncoding {
		return nil, fmt.Errorf("encoding %q: only %q is defined in v1", e.Encoding, SeriesEncoding)
	}
	if e.Scale < 1 || e.Samples < 0 {
		return nil, fmt.Errorf("scale %d, samples %d: invalid", e.Scale, e.Samples)
	}
	zipped, err := base64.StdEncoding.DecodeString(e.Data)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	limit := int64(e.Samples)*binary.MaxVarintLen64 + 1
	raw, err := io.ReadAll(io.LimitReader(zr, limit))
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	if int64(len(raw)) >= limit {
		return nil, errors.New("data: longer than the declared samples")
	}
	out := make([]float64, 0, e.Samples)
	var cur int64
	for len(raw) > 0 {
		d, n := binary.Varint(raw)
		if n <= 0 {
			return nil, fmt.Errorf("data: bad varint at value %d", len(out))
		}
		raw = raw[n:]
		cur += d
		if cur < 0 || cur >= maxScaled {
			return nil, fmt.Errorf("data: value %d out of range", len(out))
		}
		out = append(out, float64(cur)/float64(e.Scale))
	}
	if len(out) != e.Samples {
		return nil, fmt.Errorf("data holds %d values, samples says %d", len(out), e.Samples)
	}
	return out, nil
}
