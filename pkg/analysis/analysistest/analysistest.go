// Package analysistest holds the datasets that the tests of pkg/analysis
// and of the packages above it (pkg/reporthtml) share: latency
// observations of two cells and a month of nightly runs. It is imported by
// tests only and has no Kubernetes imports.
package analysistest

import (
	"fmt"
	"math"
	"time"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/results/resultstest"
)

// NightlyRuns are 30 daily runs from resultstest.T0 of one cell each (MariaDB 11.4,
// base): point-query at point(i) QPS and insert at insert(i) QPS, at 1
// thread; NaN is a step the run did not measure.
func NightlyRuns(point, insert func(i int) float64) []analysis.HistoryRun {
	var runs []analysis.HistoryRun
	for i := 0; i < 30; i++ {
		cell := fmt.Sprintf("c-%d", i)
		ds := analysis.NewDataset(fmt.Sprintf("nightly-%02d", i))
		_ = ds.AddCell(analysis.CellMeta{Name: cell, Database: "maria", Version: "11.4", Config: "base"})
		for _, o := range []analysis.Observation{{Step: "point-query", QPS: point(i)}, {Step: "insert", QPS: insert(i)}} {
			if !math.IsNaN(o.QPS) {
				o.Cell, o.Threads = cell, 1
				_ = ds.Add(o)
			}
		}
		runs = append(runs, analysis.HistoryRun{Name: ds.Name, Time: resultstest.T0.Add(time.Duration(i) * 24 * time.Hour), Data: ds})
	}
	return runs
}

// LatencyDataset is two cells, point-query at 1 and 4 threads with a
// fixed-rate variant at 4, update-index at 4 with a latency series in which
// a write stall (seconds 20-24, two of them idle) comes with a latency
// spike that starts two seconds earlier (18-24).
func LatencyDataset() *analysis.Dataset {
	ds := analysis.NewDataset("latency")
	for ci, c := range []string{"old", "new"} {
		_ = ds.AddCell(analysis.CellMeta{Name: c, Engine: "mariadb", Version: c})
		k := 1 + float64(ci) // new is twice as slow in latency
		add := func(step string, th int, qps float64, p95, p99 float64, rate *results.Rate, series bool) {
			o := analysis.Observation{Cell: c, Step: step, Threads: th, QPS: qps, TPS: qps,
				Latency: &analysis.Latency{AvgMs: p95 / 2 * k, MaxMs: p99 * 3 * k, P95Ms: ptrTo(p95 * k), P99Ms: ptrTo(p99 * k), Rate: rate}}
			if series {
				q := &analysis.TimeSeries{IntervalSeconds: 1, WarmupSeconds: 5}
				l := &analysis.TimeSeries{IntervalSeconds: 1, WarmupSeconds: 5}
				for s := 1; s <= 60; s++ {
					qv, lv := qps, p95*k
					switch {
					case s >= 18 && s < 20:
						lv = 10 * p95 * k // latency first
					case s == 21 || s == 22:
						qv, lv = 0, 0 // idle: sysbench prints 0 latency
					case s >= 20 && s <= 24:
						qv, lv = qps/10, 10*p95*k
					case s <= 5:
						lv = 1000 // the warm-up is left out
					}
					q.Values, l.Values = append(q.Values, qv), append(l.Values, lv)
				}
				o.Series, o.Latency.Series, o.Latency.SeriesPercentile = q, l, 95
			}
			_ = ds.Add(o)
		}
		add("point-query", 1, 5000, 0.5, 0.8, nil, false)
		add("point-query", 4, 15000, 1, 2, nil, false)
		peak := 15000.0
		add("point-query@0.5peak", 4, 7500*(1-0.2*float64(ci)), 0.7, 1.5,
			&results.Rate{Step: "point-query", TargetTPS: 7500, FractionOfPeak: "0.5", PeakTPS: peak, MaxQueueLength: int64(ci) * 900, PollIntervalMs: 0.27}, false)
		add("update-index", 4, 3000, 4, 9, nil, true)
	}
	return ds
}

func ptrTo[T any](v T) *T { return &v }
