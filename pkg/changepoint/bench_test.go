package changepoint

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The target: change-point detection over 32 metrics × 1,000 runs in under
// 20 ms on a 2-core machine. Run with
//
//	go test -bench . -run '^$' ./pkg/changepoint/
//
// With OTAVA_PYTHON set (see otava_test.go), the benchmarks also time Otava
// on the same data, once, and report how many times less CPU this package
// uses (CPU time, because on a shared machine wall time mostly measures the
// other jobs).

func benchSeries() []Series {
	data := benchSuite(32, 1000)
	series := make([]Series, len(data))
	for i, xs := range data {
		series[i] = Series{Name: fmt.Sprintf("m%02d", i), Values: xs}
	}
	return series
}

// otavaSeconds returns Otava's wall and CPU seconds on the benchmark data.
var otavaSeconds = sync.OnceValues(func() (float64, float64) {
	py := os.Getenv("OTAVA_PYTHON")
	if py == "" {
		return 0, 0
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
	return res.Seconds, res.CPUSeconds
})

// cpuTime returns the CPU time (user + system) this process has used so far.
// On a shared machine the wall-clock ns/op grows with other jobs' load; the
// CPU time per op much less so, hence the extra "cpu-ms/op" metric.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op and, when Otava was timed, Otava's
// wall and CPU time on the same data and the ratio of the CPU times.
func reportCPU(b *testing.B, start time.Duration) {
	cpuPerOp := float64(cpuTime()-start) / float64(b.N) / 1e9
	b.ReportMetric(cpuPerOp*1000, "cpu-ms/op")
	if wall, cpu := otavaSeconds(); wall > 0 {
		b.ReportMetric(wall*1000, "otava-ms")
		b.ReportMetric(cpu*1000, "otava-cpu-ms")
		b.ReportMetric(cpu/cpuPerOp, "x-less-cpu-than-otava")
	}
}

// BenchmarkDetectAll32x1000 is the headline figure: all 32 series, parallel
// over GOMAXPROCS, with dbbench's default options.
func BenchmarkDetectAll32x1000(b *testing.B) {
	benchmarkDetectAll(b, DefaultOptions)
}

// BenchmarkDetectAll32x1000Otava uses Otava's settings (the workload Otava
// itself was timed on).
func BenchmarkDetectAll32x1000Otava(b *testing.B) {
	benchmarkDetectAll(b, OtavaOptions)
}

// benchmarkDetectAll times DetectAll over the 32 series with the options
// opts makes (made inside the loop, as a caller would for each call).
func benchmarkDetectAll(b *testing.B, opts func() Options) {
	series := benchSeries()
	otavaSeconds()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for b.Loop() {
		if _, err := DetectAll(series, opts()); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
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
	cpu := cpuTime()
	for b.Loop() {
		for _, s := range series {
			if _, err := d.Detect(s.Values); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportCPU(b, cpu)
}
