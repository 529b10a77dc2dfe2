package changepoint

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWriteOtavaCSV(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	times := []time.Time{t0, t0.Add(time.Hour), t0.Add(2 * time.Hour)}
	series := []Series{
		{Name: "point-query", Values: []float64{15023.5, 14980, 1e6}, Times: times, Labels: []string{"8.0.36", "8.4.0", "9.1, rc"}},
		{Name: "insert", Values: []float64{0.25, -3, 42}},
	}
	var buf bytes.Buffer
	if err := WriteOtavaCSV(&buf, series); err != nil {
		t.Fatal(err)
	}
	want := `time,label,point-query,insert
2026-03-01T02:00:00Z,8.0.36,15023.5,0.25
2026-03-01T03:00:00Z,8.4.0,14980,-3
2026-03-01T04:00:00Z,"9.1, rc",1e+06,42
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// Round trip through the reader.
	back, err := ReadOtavaCSV(strings.NewReader(buf.String()), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 {
		t.Fatalf("read %d series", len(back))
	}
	for i, s := range back {
		if s.Name != series[i].Name || !cmp.Equal(s.Values, series[i].Values) ||
			!cmp.Equal(s.Labels, series[0].Labels) || !cmp.Equal(s.Times, times) {
			t.Errorf("series %d: got %+v, want %+v", i, s, series[i])
		}
	}
}

func TestWriteOtavaCSVErrors(t *testing.T) {
	ts := []time.Time{time.Unix(0, 0)}
	tests := []struct {
		name    string
		series  []Series
		wantErr string
	}{
		{"none", nil, "no series"},
		{"no times", []Series{{Name: "a", Values: []float64{1}}}, "no series has Times"},
		{"lengths", []Series{{Name: "a", Values: []float64{1}, Times: ts}, {Name: "b", Values: []float64{1, 2}}}, `series "b" has 2 values`},
		{"reserved", []Series{{Name: "time", Values: []float64{1}, Times: ts}}, "reserved"},
		{"NaN", []Series{{Name: "a", Values: []float64{math.NaN()}, Times: ts}}, "index 0 is NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := WriteOtavaCSV(&bytes.Buffer{}, tc.series)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestReadOtavaCSV(t *testing.T) {
	// Otava's own example layout: dotted dates, single-digit hour, a commit
	// attribute, and a gap filled forward as Otava does.
	in := `time,commit,metric1,metric2
2026.01.01 3:00:00 +0100,aaa0,154023,10.43
2026.01.02 3:00:00 +0100,aaa1,,10.23
2026.01.03 3:00:00 +0100,aaa2,143112,
`
	got, err := ReadOtavaCSV(strings.NewReader(in), "time")
	if err != nil {
		t.Fatal(err)
	}
	loc := time.FixedZone("", 3600)
	times := []time.Time{
		time.Date(2026, 1, 1, 3, 0, 0, 0, loc),
		time.Date(2026, 1, 2, 3, 0, 0, 0, loc),
		time.Date(2026, 1, 3, 3, 0, 0, 0, loc),
	}
	labels := []string{"aaa0", "aaa1", "aaa2"}
	want := []Series{
		{Name: "metric1", Values: []float64{154023, 154023, 143112}, Times: times, Labels: labels},
		{Name: "metric2", Values: []float64{10.43, 10.23, 10.23}, Times: times, Labels: labels},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReadOtavaCSVErrors(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"empty", "", "empty input"},
		{"no time column", "when,a\n1,2\n", `time column "time" not found`},
		{"bad time", "time,a\nyesterday,2\n", `row 2 column "time": cannot parse time "yesterday"`},
		{"short row", "time,a\n2026-01-01\n", "wrong number of fields"},
		{"duplicate column", "time,a,a\n2026-01-01,1,2\n", `duplicate column "a"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadOtavaCSV(strings.NewReader(tc.in), "")
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestReadOtavaCSVUnixTimesAndTextColumns(t *testing.T) {
	in := "time,version,qps,note\n1767225600,8.0,100,ok\n1767229200,8.4,NaN,nan is text\n"
	got, err := ReadOtavaCSV(strings.NewReader(in), "")
	if err != nil {
		t.Fatal(err)
	}
	// "qps" holds a NaN, which is not a finite number: it is a text column.
	if len(got) != 0 {
		t.Fatalf("got %+v, want no numeric series", got)
	}
	in = "time,version,qps\n1767225600,8.0,100\n1767229200,8.4,101\n"
	got, err = ReadOtavaCSV(strings.NewReader(in), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Labels[1] != "8.4" || !got[0].Times[1].Equal(time.Unix(1767229200, 0)) {
		t.Errorf("got %+v", got)
	}
}

func TestWriteBMF(t *testing.T) {
	series := []Series{
		{Name: "point-query", Values: []float64{15023.5, 14980}},
		{Name: "insert", Values: []float64{8000, 7990.25}},
	}
	var buf bytes.Buffer
	if err := WriteBMF(&buf, "throughput", series); err != nil {
		t.Fatal(err)
	}
	want := `{"insert":{"throughput":{"value":8000}},"point-query":{"throughput":{"value":15023.5}}}
{"insert":{"throughput":{"value":7990.25}},"point-query":{"throughput":{"value":14980}}}
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := WriteBMF(&buf, "", series); err == nil || !strings.Contains(err.Error(), "measure") {
		t.Errorf("empty measure: err = %v", err)
	}
	series[1].Values = series[1].Values[:1]
	if err := WriteBMF(&buf, "throughput", series); err == nil || !strings.Contains(err.Error(), `"insert" has 1 values`) {
		t.Errorf("length mismatch: err = %v", err)
	}
}

// FuzzReadOtavaCSV checks that the CSV reader never panics, that what it
// returns is well-formed (finite values, matching lengths), and that writing
// it back and reading again gives the same values.
func FuzzReadOtavaCSV(f *testing.F) {
	f.Add("time,commit,metric1,metric2\n2026.01.01 3:00:00 +0100,aaa0,154023,10.43\n2026.01.02 3:00:00 +0100,aaa1,,10.23\n")
	f.Add("time,label,a\n2026-03-01T02:00:00Z,\"x, y\",1e+06\n")
	f.Add("time,a\n1767225600,1\n1767229200,-2.5\n")
	f.Add("time\n")
	f.Add("")
	f.Add("time,a\n2026-01-01,\"unterminated\n")
	f.Fuzz(func(t *testing.T, in string) {
		series, err := ReadOtavaCSV(strings.NewReader(in), "")
		if err != nil {
			return
		}
		for _, s := range series {
			if len(s.Times) != len(s.Values) || (len(s.Labels) != 0 && len(s.Labels) != len(s.Values)) {
				t.Fatalf("lengths: %d values, %d times, %d labels", len(s.Values), len(s.Times), len(s.Labels))
			}
			if err := checkFinite(s.Values); err != nil {
				t.Fatal(err)
			}
		}
		if len(series) == 0 || len(series[0].Values) == 0 {
			return
		}
		for i := range series {
			if series[i].Name == OtavaTimeColumn || series[i].Name == OtavaLabelColumn || series[i].Name == "" {
				return // not writable back under that name
			}
		}
		var buf bytes.Buffer
		if err := WriteOtavaCSV(&buf, series); err != nil {
			t.Fatalf("write back: %v", err)
		}
		again, err := ReadOtavaCSV(&buf, "")
		if err != nil {
			t.Fatalf("read back: %v\n%s", err, buf.String())
		}
		if len(again) != len(series) {
			t.Fatalf("read back %d series, want %d", len(again), len(series))
		}
		for i := range series {
			if !cmp.Equal(again[i].Values, series[i].Values) {
				t.Fatalf("series %q: values %v, want %v", series[i].Name, again[i].Values, series[i].Values)
			}
		}
	})
}
