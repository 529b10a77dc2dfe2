package results

import (
	"fmt"
	"math"
	"time"
)

var t0 = time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// testSeries makes a plausible per-second QPS series: a ramp over the first
// seconds, then noise around base with a stall every 300 s.
func testSeries(seconds int, base float64) *Series {
	s := &Series{IntervalSeconds: 1, LatencyPercentile: 95}
	for i := 0; i < seconds; i++ {
		q := base * (1 + 0.03*math.Sin(float64(i)*0.7))
		if i < 3 {
			q = base * float64(i+1) / 4
		}
		if i > 0 && i%300 == 0 {
			q = base / 5
		}
		q = math.Round(q*100) / 100
		s.QPS = append(s.QPS, q)
		s.TPS = append(s.TPS, math.Round(q/20*100)/100)
		s.LatencyMs = append(s.LatencyMs, 1.25)
		s.ErrorsPerSecond = append(s.ErrorsPerSecond, 0)
		s.ReconnectsPerSecond = append(s.ReconnectsPerSecond, 0)
	}
	return s
}

func testStep(name string, threads, seconds int) StepResult {
	base := 10000.0 * float64(threads)
	return StepResult{
		Step: name, Group: "point", Threads: threads,
		StartedAt:       ptr(t0.Add(time.Minute)),
		DurationSeconds: float64(seconds), ElapsedSeconds: ptr(float64(seconds) + 0.0031),
		WarmupSeconds: 3,
		Command: []string{"sysbench", "oltp_point_select", "--mysql-password=" + Redacted, fmt.Sprintf("--threads=%d", threads),
			fmt.Sprintf("--time=%d", seconds), "--report-interval=1", "--rand-type=uniform", "run"},
		SteadyQPS: base, SteadyTPS: base / 20, SteadySamples: seconds - 3,
		FinalQPS: base * 0.98, FinalTPS: base * 0.98 / 20,
		Queries: int64(base * float64(seconds)), Transactions: int64(base * float64(seconds) / 20),
		LatencyAvgMs: 0.8, LatencyMinMs: ptr(0.1), LatencyP95Ms: ptr(1.3), LatencyMaxMs: 12.5,
		Series: testSeries(seconds, base),
		Hardware: &Hardware{OpsPerSecond: base, OpsBasis: "steadyQps", CPUs: 16, Samples: seconds - 3, Device: "nvme0n1",
			CPUPercent: ptr(55.0), ContextSwitchesPerSecond: ptr(120000.0), ReadsPerSecond: ptr(0.0),
			ReadKBPerSecond: ptr(0.0), WriteKBPerSecond: ptr(350.0), ServerCPUSecondsPerSecond: ptr(7.5)},
	}
}

// testDocument builds a valid full document with steps × threads entries of
// the given length.
func testDocument(steps int, threads []int, seconds int) *Document {
	settings := map[string]string{"innodb_buffer_pool_size": "134217728", "max_connections": "151", "character_set_server": "utf8mb4"}
	d := &Document{
		SchemaVersion: SchemaV1, Form: FormFull,
		Run:        Run{Name: "mariadb-regressions", Namespace: "bench", UID: "0b4f0d4e-5a8e-4f57-9d6b-3c1e7f1f2a10", Suite: "standard"},
		Cell:       Cell{Name: "mariadb-10-11-base-r0", Database: "mariadb-10.11", Engine: "mariadb", Version: "10.11", Config: "base", Repeat: 0, Attempt: 1},
		StartedAt:  t0,
		FinishedAt: ptr(t0.Add(2 * time.Hour)),
		Status:     Status{Outcome: OutcomeSucceeded},
		Provenance: Provenance{
			ServerVersion: "10.11.19-MariaDB-0+deb12u1", ServerSettings: settings, ServerSettingsSHA256: SettingsDigest(settings),
			ConfigText: "[mysqld]\ninnodb_buffer_pool_size=128M\n", Image: "docker.io/library/mariadb:10.11",
			ImageDigest:     "sha256:1111111111111111111111111111111111111111111111111111111111111111",
			DatabaseNode:    Host{NodeName: "node-a", CPUModel: "AMD EPYC 7543", CPUs: 16, PodCPUs: 8, Kernel: "6.1.0-28-amd64", MemoryBytes: 64 << 30},
			ClientNode:      &Host{NodeName: "node-b", CPUs: 16},
			SysbenchVersion: "1.0.20",
		},
		Load: &Load{Seconds: 95.5, InsertSeconds: 60, InsertsPerSecond: 166666.67, IndexSeconds: ptr(12.5), FlushSeconds: ptr(0.0),
			Tables: 1, RowsPerTable: 10000000, Rows: 10000000,
			Commands: [][]string{{"sysbench", "oltp_read_write", "--mysql-password=" + Redacted, "prepare"}}},
	}
	for i := 0; i < steps; i++ {
		for _, th := range threads {
			d.Steps = append(d.Steps, testStep(fmt.Sprintf("step-%02d", i), th, seconds))
		}
	}
	return d
}
