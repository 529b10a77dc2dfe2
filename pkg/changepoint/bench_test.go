package changepoint

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// The target: change-point detection over 32 metrics × 1,000 runs in under
// 20 ms on a 2-core machine. Run with
//
//	go test -bench . -run '^$' ./pkg/changepoint/
//
// With OTAVA_PYTHON set (see otava_test.go), the benchmarks also time Otava
// on the same data, once, and report how many times faster this package is.

func benchSeries() []Series {
	data := benchSuite(32, 1000)
	series := make([]Series, len(data))
	for i, xs := range data {
		series[i] = Series{Name: fmt.Sprintf("m%02d", i), Values: xs}
	}
	return series
}

var otavaSeconds = sync.OnceValue(func() float64 {
	py := os.Getenv("OTAVA_PYTHON")
	if py == "" {
		return 0
	}
	var nv []namedValues
	for _, s := range benchSeries() {
		nv = append(nv, namedValues{s.Name, s.Values})
	}
	dir, err := os.MkdirTemp("", "otava-bench")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	res, err := otavaJSON(py, dir, nv)
	if err != nil {
		panic(err)
	}
	return res.Seconds
})

func reportVsOtava(b *testing.B) {
	if s := otavaSeconds(); s > 0 {
		perOp := b.Elapsed().Seconds() / float64(b.N)
		b.ReportMetric(s*1000, "otava-ms")
		b.ReportMetric(s/perOp, "x-faster-than-otava")
	}
}

// BenchmarkDetectAll32x1000 is the headline figure: all 32 series, parallel
// over GOMAXPROCS, with dbbench's default options.
func BenchmarkDetectAll32x1000(b *testing.B) {
	series := benchSeries()
	otavaSeconds()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := DetectAll(series, DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
	reportVsOtava(b)
}

// BenchmarkDetectAll32x1000Otava uses Otava's settings (the workload Otava
// itself was timed on).
func BenchmarkDetectAll32x1000Otava(b *testing.B) {
	series := benchSeries()
	otavaSeconds()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := DetectAll(series, OtavaOptions()); err != nil {
			b.Fatal(err)
		}
	}
	reportVsOtava(b)
}

// BenchmarkDetect32x1000Sequential runs the 32 series one after another on
// one goroutine, reusing one Detector: the single-core cost.
func BenchmarkDetect32x1000Sequential(b *testing.B) {
	series := benchSeries()
	d, err := NewDetector(DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range series {
			if _, err := d.Detect(s.Values); err != nil {
				b.Fatal(err)
			}
		}
	}
}
