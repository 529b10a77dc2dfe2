package changepoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// The golden test pins the complete results (change points with all their
// statistics, weak points, drifts, noise and thresholds) of DetectAll over
// a fixed set of series and options, so that a speed change that alters
// any result, in any bit, fails it. The set is the benchmark's 32 series ×
// 1,000 runs, 600 random histories of the property test's generator (and
// each of them without its newest run), and the Otava cross-check series,
// under the default options, OtavaOptions and four variants.
//
// After a change that is meant to alter results, run
//
//	go test -run TestGoldenResults ./pkg/changepoint/ -golden.update
//
// (and -golden.dump DIR to write the results in full, to diff them).

var (
	goldenUpdate = flag.Bool("golden.update", false, "rewrite testdata/golden.sha256")
	goldenDump   = flag.String("golden.dump", "", "write the golden results as JSON files into this directory")
)

const goldenFile = "testdata/golden.sha256"

// goldenSeries returns the series of the golden test.
func goldenSeries() []Series {
	series := benchSeries()
	rng := rand.New(rand.NewPCG(24, 24))
	for i := range 600 {
		xs := genSeries(rng)
		series = append(series,
			Series{Name: fmt.Sprintf("gen%03d", i), Values: xs},
			Series{Name: fmt.Sprintf("gen%03d-1", i), Values: xs[:len(xs)-1]})
	}
	for _, nv := range crossCheckSeries() {
		series = append(series, Series{Name: nv.Name, Values: nv.Values})
	}
	return series
}

// goldenOptions returns the option sets of the golden test, by name.
func goldenOptions() []struct {
	name string
	opts Options
} {
	mod := func(f func(*Options)) Options {
		o := DefaultOptions()
		f(&o)
		return o
	}
	return []struct {
		name string
		opts Options
	}{
		{"defaults", DefaultOptions()},
		{"otava", OtavaOptions()},
		{"segments of 2, no outlier check", mod(func(o *Options) { o.MinSegmentLength, o.MaxOutliers = 2, 0 })},
		{"segments of 4, two outliers", mod(func(o *Options) { o.MinSegmentLength, o.MaxOutliers = 4, 2 })},
		{"window 30", mod(func(o *Options) { o.WindowLen = 30 })},
		{"window 100, otava", func() Options { o := OtavaOptions(); o.WindowLen = 100; return o }()},
	}
}

func TestGoldenResults(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	series := goldenSeries()
	var lines []string
	for _, oc := range goldenOptions() {
		res, err := DetectAll(series, oc.opts)
		if err != nil {
			t.Fatal(err)
		}
		// encoding/json writes each float64 in the shortest form that
		// reads back to the same bits: the hash covers every bit.
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		lines = append(lines, fmt.Sprintf("%s  %s", hex.EncodeToString(sum[:]), oc.name))
		if *goldenDump != "" {
			name := strings.NewReplacer(" ", "-", ",", "").Replace(oc.name) + ".json"
			out, err := json.MarshalIndent(res, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(*goldenDump+"/"+name, out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := strings.Join(lines, "\n") + "\n"
	if *goldenUpdate {
		if err := os.WriteFile(goldenFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("results changed (run with -golden.dump DIR before and after the change to see how):\ngot\n%swant\n%s", got, want)
	}
}
