package results

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzUnmarshal: no input panics; whatever decodes is valid and survives a
// Marshal/Unmarshal round trip unchanged.
func FuzzUnmarshal(f *testing.F) {
	full := testDocument(1, []int{1, 2}, 6)
	b, _ := Marshal(full)
	f.Add(b)
	_, cb, _ := Compact(full, CompactOptions{})
	f.Add(cb)
	f.Add([]byte(`{"schemaVersion":"dbbench.io/results/v2"}`))
	f.Add([]byte(`{"schemaVersion":"dbbench.io/results/v1","steps":[{"threads":"x"}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Unmarshal(data)
		if err != nil {
			var ue *UnsupportedVersionError
			var ve *ValidationError
			_ = errors.As(err, &ue) || errors.As(err, &ve)
			_ = err.Error()
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("Unmarshal returned an invalid document: %v", err)
		}
		out, err := Marshal(d)
		if err != nil {
			t.Fatalf("re-Marshal: %v", err)
		}
		d2, err := Unmarshal(out)
		if err != nil {
			t.Fatalf("re-Unmarshal: %v", err)
		}
		a, _ := json.Marshal(d)
		c, _ := json.Marshal(d2)
		if string(a) != string(c) {
			t.Fatalf("round trip changed the document:\n%s\n%s", a, c)
		}
		for _, s := range d.Steps {
			if s.EncodedQPS != nil {
				_, _ = s.EncodedQPS.Decode()
			}
		}
	})
}

func FuzzUnmarshalManifest(f *testing.F) {
	b, _ := MarshalManifest(testManifest(2, 2, []int{1, 4}))
	f.Add(b)
	f.Add([]byte(`{"schemaVersion":"dbbench.io/results-manifest/v1","run":{"name":"r"},"cells":[{"name":"a","qps":{"s":{"x":1}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := UnmarshalManifest(data)
		if err != nil {
			return
		}
		if _, err := MarshalManifest(m); err != nil && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("a decoded manifest does not re-encode: %v", err)
		}
	})
}

// FuzzDecodeSeries: arbitrary data never panics or inflates without bound,
// and EncodeSeries output always decodes.
func FuzzDecodeSeries(f *testing.F) {
	e, _ := EncodeSeries([]float64{1, 2.5, 1000000}, 1, 100)
	f.Add(e.Data, e.Samples, e.Scale)
	f.Add("H4sIAAAAAAAC/wEAAP//AAAAAAAAAAA=", 0, 100)
	f.Fuzz(func(t *testing.T, data string, samples, scale int) {
		if samples > 1<<16 {
			samples = 1 << 16
		}
		in := EncodedSeries{Encoding: SeriesEncoding, ResolutionSeconds: 1, Scale: scale, Samples: samples, Data: data}
		vals, err := in.Decode()
		if err != nil {
			return
		}
		if len(vals) != samples {
			t.Fatalf("%d values, %d declared", len(vals), samples)
		}
		if scale < 1 {
			t.Fatalf("decoded with scale %d", scale)
		}
		re, err := EncodeSeries(vals, 1, scale)
		if err != nil {
			t.Fatalf("decoded values do not re-encode: %v", err)
		}
		back, err := re.Decode()
		if err != nil || len(back) != len(vals) {
			t.Fatalf("re-encoded series does not decode: %v", err)
		}
	})
}
