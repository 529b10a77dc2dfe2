package sysbench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func addFixtureSeeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.txt")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
}

// FuzzParse checks that no input panics, that every error is one of the
// documented kinds, and that a successful parse is self-consistent.
func FuzzParse(f *testing.F) {
	addFixtureSeeds(f)
	f.Add("[ 1s ] thds: 1 tps: 1 qps: 1\nSQL statistics:\n    queries: 1 (1 per sec.)\n")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := ParseString(in)
		if out == nil {
			t.Fatal("Parse returned a nil Output")
		}
		if err != nil {
			var pe *ParseError
			var fe *FatalError
			if !errors.As(err, &pe) && !errors.As(err, &fe) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			if fe != nil && len(fe.Lines) == 0 {
				t.Fatal("FatalError without lines")
			}
			_ = err.Error()
			return
		}
		for i := 1; i < len(out.Intervals); i++ {
			if out.Intervals[i].Second <= out.Intervals[i-1].Second {
				t.Fatalf("intervals out of order: %v", out.Intervals)
			}
		}
		if len(out.Intervals) > 0 {
			if _, err := out.SteadyState(0); err != nil {
				t.Fatalf("SteadyState on a parsed series: %v", err)
			}
		}
	})
}

func FuzzParseInterval(f *testing.F) {
	for _, name := range []string{"1.0.20/read_write.txt", "1.0.20/lua_report.txt", "1.0.20/read_only_p99.txt", "1.1/read_write.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "[") {
				f.Add(l)
			}
		}
	}
	f.Add("[ 3s ] thds: 4 eps: 3555.12 lat (ms,95%): 1.12")
	f.Fuzz(func(t *testing.T, line string) {
		iv, err := ParseInterval(line)
		if err != nil {
			return
		}
		for _, v := range []float64{iv.Second, iv.TPS, iv.QPS, iv.ReadQPS, iv.WriteQPS, iv.OtherQPS, iv.LatencyMs, iv.ErrorsPerSec, iv.ReconnectsPerSec} {
			if v < 0 || v != v {
				t.Fatalf("parsed a negative or NaN value from %q: %+v", line, iv)
			}
		}
	})
}

func FuzzParseVersion(f *testing.F) {
	f.Add("sysbench 1.0.20")
	f.Add("sysbench 1.1.0-df89d34 (using bundled LuaJIT 2.1.0-beta3)")
	f.Add("sysbench 1.0:  multi-threaded system evaluation benchmark")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		if err != nil {
			return
		}
		if v.Major < 0 || v.Minor < 0 || v.Patch < 0 || !strings.HasPrefix(v.Raw, "sysbench ") {
			t.Fatalf("ParseVersion(%q) = %+v", s, v)
		}
		_ = v.String()
	})
}
