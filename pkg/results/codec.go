package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// MaxConfigMapBytes is Kubernetes' limit on a ConfigMap's data.
const MaxConfigMapBytes = 1 << 20

// UnsupportedVersionError is returned for a document whose schemaVersion this
// package does not read. Reading it as v1 anyway could give silently wrong
// numbers, so there is no way around it but a newer reader.
type UnsupportedVersionError struct {
	Got  string // the schemaVersion found ("" when missing)
	Want string // the version this reader understands
}

func (e *UnsupportedVersionError) Error() string {
	switch {
	case e.Got == "":
		return fmt.Sprintf("schemaVersion: missing; not a dbbench results document (want %q)", e.Want)
	case strings.HasPrefix(e.Got, "dbbench.io/"):
		return fmt.Sprintf("schemaVersion: %q is not %q: written by another dbbench version or for another document kind; use a reader that supports it", e.Got, e.Want)
	default:
		return fmt.Sprintf("schemaVersion: %q is not %q: not a dbbench results document", e.Got, e.Want)
	}
}

// peekVersion reads only schemaVersion, so that a document of another
// version is refused before its fields are forced into v1's types.
func peekVersion(data []byte) (string, error) {
	var head struct {
		SchemaVersion *string `json:"schemaVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return "", fmt.Errorf("not a JSON object: %w", err)
	}
	if head.SchemaVersion == nil {
		return "", nil
	}
	return *head.SchemaVersion, nil
}

// Marshal validates d and encodes it as compact JSON.
func Marshal(d *Document) ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(withEmptyArrays(d))
}

// withEmptyArrays returns d, or a shallow copy of it, in which required
// arrays that are nil become empty, so they encode as [] rather than null
// (which the JSON Schema, and readers in other languages, would refuse).
func withEmptyArrays(d *Document) *Document {
	needs := d.Steps == nil
	for _, s := range d.Steps {
		if sr := s.Series; sr != nil && (sr.QPS == nil || sr.TPS == nil || sr.LatencyMs == nil || sr.ErrorsPerSecond == nil || sr.ReconnectsPerSecond == nil) {
			needs = true
		}
	}
	if !needs {
		return d
	}
	cp := *d
	cp.Steps = append([]StepResult{}, d.Steps...)
	for i := range cp.Steps {
		if sr := cp.Steps[i].Series; sr != nil {
			c := *sr
			for _, col := range []*[]float64{&c.QPS, &c.TPS, &c.LatencyMs, &c.ErrorsPerSecond, &c.ReconnectsPerSecond} {
				if *col == nil {
					*col = []float64{}
				}
			}
			cp.Steps[i].Series = &c
		}
	}
	return &cp
}

// Unmarshal decodes a v1 document, full or compact, and validates it.
//
// It refuses any schemaVersion other than SchemaV1 with
// *UnsupportedVersionError. Unknown fields are ignored, on purpose: later v1
// writers may add optional fields (see docs/results-schema.md), and an older
// reader must still read the fields it knows. A field of the wrong JSON type
// is an error that names the field.
func Unmarshal(data []byte) (*Document, error) {
	return decodeVersion[Document](data, SchemaV1)
}

// decodeVersion decodes data as a T of schema version want and validates
// it: the path every reader of a results file takes (documents and run
// manifests). Another version is refused with *UnsupportedVersionError.
func decodeVersion[T any, PT interface {
	*T
	Validate() error
}](data []byte, want string) (*T, error) {
	v, err := peekVersion(data)
	if err != nil {
		return nil, err
	}
	if v != want {
		return nil, &UnsupportedVersionError{Got: v, Want: want}
	}
	var x T
	if err := json.Unmarshal(data, &x); err != nil {
		return nil, describeJSONError(err)
	}
	if err := PT(&x).Validate(); err != nil {
		return nil, err
	}
	return &x, nil
}

func describeJSONError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("%s: JSON %s cannot be %s", te.Field, te.Value, te.Type)
	}
	return fmt.Errorf("decoding results document: %w", err)
}

// CompactOptions tune Compact.
type CompactOptions struct {
	// MaxBytes is the size the compact document must stay under; 0 means
	// DefaultCompactBudget.
	MaxBytes int
	// Resolutions are the encodedQps resolutions to try, finest first, in
	// multiples of the series interval; nil means 1, 5, 10, 30, 60. An empty,
	// non-nil slice leaves the series out.
	Resolutions []int
	// Scale is the encodedQps rounding (1/Scale); 0 means 100, the two
	// decimals sysbench prints.
	Scale int
}

// DefaultCompactBudget leaves room in the 1 MiB ConfigMap for the other keys
// the agent writes beside the document (progress, logs tail).
const DefaultCompactBudget = 900 << 10

// ErrTooLarge is wrapped by Compact and MarshalManifest when even the
// smallest form exceeds the budget.
var ErrTooLarge = errors.New("document exceeds the size budget")

// summarizeSteps gives each step of c, the compact copy of full without
// series, the summary and latency moments of full's series (unless it has
// them), and drops its counters' deltas and any encoding.
func summarizeSteps(c, full *Document) {
	for i := range c.Steps {
		s, series := &c.Steps[i], full.Steps[i].Series
		s.EncodedQPS = nil
		// The per-op values and their divisor give the deltas back.
		if s.Counters != nil {
			s.Counters.Delta = nil
		}
		if series != nil && s.Summary == nil {
			sum := SummarizeSeries(steadySamples(series, s.WarmupSeconds), series.IntervalSeconds)
			s.Summary = &sum
		}
		if series != nil && len(series.LatencyMs) > 0 && s.LatencyMoments == nil {
			m := MomentsOf(SummarizeSeries(steadyLatency(series, s.WarmupSeconds), series.IntervalSeconds))
			s.LatencyMoments = &m
		}
	}
}

// Compact derives the compact form of a full document: every step's series
// is replaced by its summary (computed over the samples after the step's
// warm-up, unless a summary is already there) and, at the finest resolution
// for which the whole document stays within opts.MaxBytes, by the encoded QPS
// series (one resolution for all steps, so they stay comparable). If no
// resolution fits, the series are left out and the summaries remain; if even
// that exceeds the budget, the error wraps ErrTooLarge. It returns the
// compact document and its encoding; full is not modified.
func Compact(full *Document, opts CompactOptions) (*Document, []byte, error) {
	if full.Form != FormFull {
		return nil, nil, fmt.Errorf("form: %q is not %q", full.Form, FormFull)
	}
	if err := full.Validate(); err != nil {
		return nil, nil, err
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultCompactBudget
	}
	if opts.Resolutions == nil {
		opts.Resolutions = []int{1, 5, 10, 30, 60}
	}
	if opts.Scale == 0 {
		opts.Scale = 100
	}
	// Deep-copy everything but the series, which only feed the summaries and
	// encodings below: cloning an hour-long series through JSON is the
	// expensive part otherwise.
	shallow := *full
	shallow.Steps = append([]StepResult(nil), full.Steps...)
	for i := range shallow.Steps {
		shallow.Steps[i].Series = nil
	}
	c, err := clone(&shallow)
	if err != nil {
		return nil, nil, err
	}
	c.Form = FormCompact
	summarizeSteps(c, full)
	base, err := Marshal(c)
	if err != nil {
		return nil, nil, err
	}
	if len(base) > opts.MaxBytes && dropProfileStacks(c) {
		// Profiles are asked for and the biggest part; the full form
		// keeps their stacks.
		if base, err = Marshal(c); err != nil {
			return nil, nil, err
		}
	}
	if len(base) > opts.MaxBytes && dropCounters(c) {
		// The engine counters of a long matrix are what overflows; the
		// full form keeps them.
		if base, err = Marshal(c); err != nil {
			return nil, nil, err
		}
	}
	if len(base) > opts.MaxBytes {
		return nil, nil, fmt.Errorf("compact form without series is %d bytes, budget %d: %w", len(base), opts.MaxBytes, ErrTooLarge)
	}
	// Try the resolutions finest first; give up on one as soon as its
	// encodings alone overflow what the summary-only document leaves.
	const perStepOverhead = 128 // JSON around the data string
	room := opts.MaxBytes - len(base)
	for _, res := range opts.Resolutions {
		if res < 1 {
			return nil, nil, fmt.Errorf("resolution %d: must be at least 1", res)
		}
		enc := make([]*EncodedSeries, len(c.Steps))
		total, fits := 0, true
		for i := range c.Steps {
			series := full.Steps[i].Series
			if series == nil || len(series.QPS) == 0 {
				continue
			}
			// The encoding knows no sample times: a late report's rate
			// stands for each second it covered.
			e, err := EncodeSeries(Downsample(series.Regular(series.QPS), res), series.IntervalSeconds*float64(res), opts.Scale)
			if err != nil {
				return nil, nil, fmt.Errorf("steps[%d].series.qps: %w", i, err)
			}
			enc[i] = e
			if total += len(e.Data) + perStepOverhead; total > room {
				fits = false
				break
			}
		}
		if !fits {
			continue
		}
		for i := range c.Steps {
			c.Steps[i].EncodedQPS = enc[i]
		}
		b, err := Marshal(c)
		if err != nil {
			return nil, nil, err
		}
		if len(b) <= opts.MaxBytes {
			return c, b, nil
		}
		for i := range c.Steps {
			c.Steps[i].EncodedQPS = nil
		}
	}
	return c, base, nil
}

// dropCounters removes every step's counters and reports whether there
// were any.
func dropCounters(d *Document) bool {
	dropped := false
	for i := range d.Steps {
		if d.Steps[i].Counters != nil {
			d.Steps[i].Counters, dropped = nil, true
		}
	}
	return dropped
}

// dropProfileStacks leaves the folded stacks out of every profile and
// marks them omitted; it reports whether there were any.
func dropProfileStacks(d *Document) bool {
	dropped := false
	for i := range d.Steps {
		if p := d.Steps[i].Profile; p != nil && p.Folded != "" {
			p.Folded, p.FoldedOmitted, dropped = "", true, true
		}
	}
	return dropped
}

// steadySamples drops the warm-up samples: those that start before warmup.
func steadySamples(s *Series, warmupSeconds float64) []float64 {
	return s.QPS[s.SteadyFrom(warmupSeconds):]
}

// steadyLatency is steadySamples of the per-second latency column.
func steadyLatency(s *Series, warmupSeconds float64) []float64 {
	return s.LatencyMs[min(s.SteadyFrom(warmupSeconds), len(s.LatencyMs)):]
}

func clone(d *Document) (*Document, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	var c Document
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	return &c, nil
}
