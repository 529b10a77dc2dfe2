package analysis

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/dbbench/dbbench/pkg/workload"
)

// synthDataset makes cells × the 32 catalog steps at the given thread
// counts, with hardware figures and a per-second series of seconds samples
// per observation (none when seconds is 0).
func synthDataset(cells int, threads []int, seconds int) *Dataset {
	rng := rand.New(rand.NewPCG(1, 2))
	ds := NewDataset(fmt.Sprintf("synth-%d", cells))
	steps := workload.Standard()
	for c := 0; c < cells; c++ {
		name := fmt.Sprintf("mariadb-%d.%d-base", 10+c/100, c%100)
		_ = ds.AddCell(CellMeta{Name: name, Database: "mariadb", Engine: "mariadb", Version: fmt.Sprintf("%d.%d", 10+c/100, c%100), Config: "base"})
		for si, s := range steps {
			for _, th := range threads {
				q := 1000 * float64(si+1) * math.Sqrt(float64(th)) * (0.9 + 0.2*rng.Float64())
				cpu, cs, r, wkb := 0.005*(1+rng.Float64()), 30*(1+rng.Float64()), 0.0, 50*rng.Float64()
				o := Observation{Cell: name, Step: s.Name, Threads: th, QPS: q,
					HW: &Hardware{CPUPerOp: &cpu, CSPerOp: &cs, ReadsPerOp: &r, ReadKBPerOp: &r, WriteKBPerOp: &wkb, OpsPerSecond: q}}
				if seconds > 0 {
					ts := &TimeSeries{IntervalSeconds: 1, WarmupSeconds: 10, Values: make([]float64, seconds)}
					for i := range ts.Values {
						ts.Values[i] = q * (0.95 + 0.1*rng.Float64())
					}
					o.Series = ts
				}
				_ = ds.Add(o)
			}
		}
	}
	return ds
}

// BenchmarkFullReport1000Cells: every report of a 1,000-cell run (32 steps,
// one thread count, hardware figures, 300 s series) built and rendered as
// text. The target is under 1 s per report.
func BenchmarkFullReport1000Cells(b *testing.B) {
	ds := synthDataset(1000, []int{16}, 300)
	b.ResetTimer()
	cpu0 := cpuTime()
	buildAndWriteReports(b, ds)
	// CPU time says more than wall time on a shared, loaded machine.
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
}

// buildAndWriteReports builds every report of ds and renders it as text,
// as often as the benchmark asks.
func buildAndWriteReports(b *testing.B, ds *Dataset) {
	b.Helper()
	for b.Loop() {
		r, err := BuildReport(ds, ReportOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := WriteTables(io.Discard, FormatTable, r.Tables()); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFullReport1000CellsManifestOnly is the same from QPS alone (what
// a run manifest holds): relative and group tables only.
func BenchmarkFullReport1000CellsManifestOnly(b *testing.B) {
	ds := synthDataset(1000, []int{16}, 0)
	for _, o := range ds.obs {
		o.HW = nil
	}
	b.ResetTimer()
	buildAndWriteReports(b, ds)
}

// TestFullReportLarge guards the benchmark's code path in ordinary test runs
// with a smaller input.
func TestFullReportLarge(t *testing.T) {
	ds := synthDataset(20, []int{1, 4}, 30)
	r, err := BuildReport(ds, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Relative) != 2 || len(r.Groups) != 2 || len(r.Hardware) != 64 || len(r.ScaleUp) != 20 || len(r.Series) != 20*32*2 {
		t.Fatalf("sections: %d relative, %d groups, %d hw, %d scale-up, %d series", len(r.Relative), len(r.Groups), len(r.Hardware), len(r.ScaleUp), len(r.Series))
	}
	if got := len(r.Relative[0].Cells); got != 19 {
		t.Errorf("relative columns %d", got)
	}
}
