package store

import (
	"fmt"
	"math"
	"time"

	"github.com/dbbench/dbbench/pkg/results"
)

var t0 = time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// testDoc builds a valid full document for a cell of run in suite, with two
// steps of seconds per-second samples each.
func testDoc(suite, run, cell string, seconds int) *results.Document {
	settings := map[string]string{"innodb_buffer_pool_size": "134217728", "max_connections": "151"}
	d := &results.Document{
		SchemaVersion: results.SchemaV1, Form: results.FormFull,
		Run:        results.Run{Name: run, Namespace: "bench", UID: "uid-" + run, Suite: suite},
		Cell:       results.Cell{Name: cell, Database: "mariadb-10.11", Engine: "mariadb", Version: "10.11", Config: "base", Repeat: 1, Attempt: 1},
		StartedAt:  t0,
		FinishedAt: ptr(t0.Add(time.Hour)),
		Status:     results.Status{Outcome: results.OutcomeSucceeded},
		Provenance: results.Provenance{
			ServerVersion: "10.11.19-MariaDB-0+deb12u1", ServerSettings: settings, ServerSettingsSHA256: results.SettingsDigest(settings),
			ConfigText:   "[mysqld]\ninnodb_buffer_pool_size=128M\n",
			Image:        "docker.io/library/mariadb:10.11",
			DatabaseNode: results.Host{NodeName: "node-a", CPUs: 2, Kernel: "6.1.0"},
		},
		Load: &results.Load{Seconds: 10, InsertsPerSecond: 1000, Tables: 1, RowsPerTable: 10000, Rows: 10000,
			Commands: [][]string{{"sysbench", "oltp_read_write", "--mysql-password=" + results.Redacted, "prepare"}}},
	}
	for i, step := range []string{"point-query", "read-write,range=100"} {
		s := &results.Series{IntervalSeconds: 1, LatencyPercentile: 95}
		for j := 0; j < seconds; j++ {
			q := math.Round((1000*float64(i+1)+float64(j%7)*1.37)*100) / 100
			s.QPS = append(s.QPS, q)
			s.TPS = append(s.TPS, q/20)
			s.LatencyMs = append(s.LatencyMs, 1.25)
			s.ErrorsPerSecond = append(s.ErrorsPerSecond, 0)
			s.ReconnectsPerSecond = append(s.ReconnectsPerSecond, 0)
		}
		d.Steps = append(d.Steps, results.StepResult{
			Step: step, Threads: 4, DurationSeconds: float64(seconds), WarmupSeconds: 1,
			Command:   []string{"sysbench", "oltp_point_select", "--mysql-password=" + results.Redacted, fmt.Sprintf("--time=%d", seconds), "run"},
			SteadyQPS: 1000 * float64(i+1), SteadyTPS: 50, SteadySamples: seconds - 1, FinalQPS: 990, FinalTPS: 49,
			LatencyAvgMs: 1, LatencyMaxMs: 5, Series: s,
		})
	}
	return d
}

// testManifest indexes docs, updated at.
func testManifest(at time.Time, docs ...*results.Document) *results.Manifest {
	m := &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: docs[0].Run, UpdatedAt: at}
	for _, d := range docs {
		m.Upsert(results.NewManifestCell(d, "Succeeded", "", ""))
	}
	return m
}
