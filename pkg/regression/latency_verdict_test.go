package regression

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/changepoint"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/results/resultstest"
)

// lcell is a repeat of maria-11.8-default with one step at 4 threads: its
// QPS, p95 and p99 latency (ms) and, when latSD > 0, a per-second p95
// series of 60 samples with that stddev around p95.
func lcell(repeat int, step string, qps, p95, p99, latSD float64) results.ManifestCell {
	c := vcell(repeat, "sha256:img", map[string]float64{step: qps}, 0)
	c.LatencyP95Ms = map[string]map[int]float64{step: {4: p95}}
	c.LatencyP99Ms = map[string]map[int]float64{step: {4: p99}}
	if latSD > 0 {
		c.LatencySpread = map[string]map[int]results.Spread{step: {4: {Samples: 60, Stddev: latSD}}}
		c.LatencyMeanMs = map[string]map[int]float64{step: {4: p95}}
	}
	return c
}

// TestJudgeRunsLatency judges p99 (and p95) latency: lower is better, so a
// rise by more than the magnitude regresses and a fall does not; a pair
// regressed on throughput and p99 is one RegressedPair naming both; a
// fixed-rate step is judged on latency only.
func TestJudgeRunsLatency(t *testing.T) {
	const step = "update-index"
	// Three repeats per side with a few percent of noise in every metric.
	noise := []float64{1.00, 1.03, 0.97}
	side := func(qps, p95, p99 float64) []results.ManifestCell {
		var out []results.ManifestCell
		for i, f := range noise {
			out = append(out, lcell(i+1, step, qps*f, p95*f, p99*(2-f), 0))
		}
		return out
	}
	tp, p95, p99 := analysis.MetricThroughput, analysis.MetricP95Latency, analysis.MetricP99Latency
	tests := []struct {
		name      string
		base, cur []results.ManifestCell
		metrics   []analysis.Metric
		// want is the regressed pairs as "step: metrics".
		want []string
	}{
		{name: "p99 triples, throughput -2 %: p99 alone", base: side(1000, 2, 5), cur: side(980, 2.05, 15),
			metrics: []analysis.Metric{tp, p99}, want: []string{step + ": [P99Latency]"}},
		{name: "the same run judged on throughput alone: nothing", base: side(1000, 2, 5), cur: side(980, 2.05, 15),
			metrics: nil, want: nil},
		{name: "p99 halves: an improvement, not a regression", base: side(1000, 2, 10), cur: side(1000, 2, 5),
			metrics: []analysis.Metric{tp, p95, p99}, want: nil},
		{name: "p99 +3 %: under the 5 % magnitude", base: side(1000, 2, 10), cur: side(1000, 2, 10.3),
			metrics: []analysis.Metric{p99}, want: nil},
		{name: "slower and higher p99: one pair naming both", base: side(1000, 2, 5), cur: side(700, 2, 15),
			metrics: []analysis.Metric{tp, p99}, want: []string{step + ": [Throughput P99Latency]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := JudgeRuns(vmanifest("cur", tc.cur...), vmanifest("base", tc.base...), VerdictOptions{MinMagnitude: 0.05, Metrics: tc.metrics})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, pair := range v.RegressedPairs() {
				got = append(got, fmt.Sprintf("%s: %v", pair.Step, pair.Metrics()))
				t.Logf("%s", pair)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("regressed (-want +got):\n%s", diff)
			}
			if want := len(analysis.MetricsOrDefault(tc.metrics)); len(v.Points) != want || v.Tests != want || v.Pairs() != 1 {
				t.Errorf("%d points, %d tests, %d pairs; want %d points and tests over 1 pair", len(v.Points), v.Tests, v.Pairs(), want)
			}
			for _, p := range v.Points {
				if p.Method != MethodBetweenRuns {
					t.Errorf("%s: method %s, want between runs", p, p.Method)
				}
			}
		})
	}
}

// The latency tests are exact mirrors of throughput's: a latency ratio b/a
// has the p-value the throughput test gives the ratio a/b, with the
// magnitude m/(1+m) that makes "rose by more than m" the same hypothesis.
func TestJudgeRunsLatencyMirrorsThroughput(t *testing.T) {
	const step = "insert"
	baseLat, curLat := []float64{4, 4.2, 3.9}, []float64{5.1, 4.8, 5.3}
	var lb, lc, qb, qc []results.ManifestCell
	for i := range baseLat {
		lb = append(lb, lcell(i+1, step, 1000, 1, baseLat[i], 0))
		lc = append(lc, lcell(i+1, step, 1000, 1, curLat[i], 0))
		// Throughput that is the reciprocal of the latency (× 1000).
		qb = append(qb, lcell(i+1, step, 1000/baseLat[i], 1, 1, 0))
		qc = append(qc, lcell(i+1, step, 1000/curLat[i], 1, 1, 0))
	}
	const m = 0.10
	lat, err := JudgeRuns(vmanifest("c", lc...), vmanifest("b", lb...), VerdictOptions{MinMagnitude: m, Metrics: []analysis.Metric{analysis.MetricP99Latency}})
	if err != nil {
		t.Fatal(err)
	}
	thr, err := JudgeRuns(vmanifest("c", qc...), vmanifest("b", qb...), VerdictOptions{MinMagnitude: m / (1 + m)})
	if err != nil {
		t.Fatal(err)
	}
	if pl, pt := lat.Points[0].P, thr.Points[0].P; math.Abs(pl-pt) > 1e-12 || !(pl > 0 && pl < 0.05) {
		t.Errorf("latency p %v, mirrored throughput p %v: want equal and significant", pl, pt)
	}
}

// With one run per side the latency falls back like throughput: the
// suite's p99 noise floor when it has one, else p95's per-second series;
// p99 has no per-second series and is judged on its magnitude.
func TestJudgeRunsLatencyFallbacks(t *testing.T) {
	const step = "point-query"
	base := vmanifest("b", lcell(0, step, 1000, 2, 5, 0.2))
	cur := vmanifest("c", lcell(0, step, 1000, 2.6, 7, 0.2))
	floor := &results.NoiseFloors{Points: []results.NoisePoint{
		{Metric: string(analysis.MetricP99Latency), Step: step, Threads: 4, SigmaLog: 0.05, CV: 0.05, DF: 8, Runs: 10, Sets: 2},
	}}
	tests := []struct {
		name  string
		floor *results.NoiseFloors
		want  map[analysis.Metric]VerdictMethod
	}{
		{"no floor", nil, map[analysis.Metric]VerdictMethod{analysis.MetricP95Latency: MethodPerSecond, analysis.MetricP99Latency: MethodMagnitudeOnly}},
		{"p99 floor", floor, map[analysis.Metric]VerdictMethod{analysis.MetricP95Latency: MethodPerSecond, analysis.MetricP99Latency: MethodNoiseFloor}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := JudgeRuns(cur, base, VerdictOptions{MinMagnitude: 0.05, Floor: tc.floor, Metrics: []analysis.Metric{analysis.MetricP95Latency, analysis.MetricP99Latency}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[analysis.Metric]VerdictMethod{}
			for _, p := range v.Points {
				got[p.Metric] = p.Method
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("methods (-want +got):\n%s", diff)
			}
			// +30 % p95 (per-second means 2 → 2.6, sd 0.2 over 60) and +40 % p99
			// regress whichever way they were tested.
			if len(v.RegressedPairs()) != 1 || !slices.Equal(v.RegressedPairs()[0].Metrics(), []analysis.Metric{analysis.MetricP95Latency, analysis.MetricP99Latency}) {
				t.Errorf("regressed %v, want point-query on p95 and p99", v.Regressed)
			}
		})
	}
}

// A fixed-rate step's throughput is the rate it was asked for: only its
// latency is judged.
func TestJudgeRunsFixedRateLatencyOnly(t *testing.T) {
	step := results.RateStepName("point-query", "0.5", 0)
	v, err := JudgeRuns(vmanifest("c", lcell(0, step, 500, 2, 9, 0)), vmanifest("b", lcell(0, step, 1000, 2, 3, 0)),
		VerdictOptions{MinMagnitude: 0.05, Metrics: []analysis.Metric{analysis.MetricThroughput, analysis.MetricP99Latency}})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Points) != 1 || v.Points[0].Metric != analysis.MetricP99Latency || !v.Points[0].Regressed {
		t.Errorf("points %v, want p99 alone, regressed", v.Points)
	}
}

// History and ChangePointRegressionsOf on a latency series: a p99 rise is
// a regression, a p95 fall an improvement, and throughput stays quiet.
func TestHistoryAndChangePointsOfLatency(t *testing.T) {
	var runs []analysis.HistoryRun
	var manifests []*results.Manifest
	for i := 0; i < 30; i++ {
		q := 1000.0 + float64(i%3)
		p95, p99 := 2.0+0.01*float64(i%3), 5.0+0.05*float64(i%3)
		if i >= 20 {
			p95, p99 = p95*0.7, p99*1.4 // p95 improves by 30 %, p99 worsens by 40 %
		}
		name := fmt.Sprintf("nightly-%02d", i)
		ds := analysis.NewDataset(name)
		_ = ds.AddCell(analysis.CellMeta{Name: "c", Database: "maria", Version: "11.4", Config: "base"})
		_ = ds.Add(analysis.Observation{Cell: "c", Step: "insert", Threads: 4, QPS: q, Latency: &analysis.Latency{P95Ms: &p95, P99Ms: &p99}})
		runs = append(runs, analysis.HistoryRun{Name: name, Time: resultstest.T0.Add(time.Duration(i) * 24 * time.Hour), Data: ds})
		mc := lcell(0, "insert", q, p95, p99, 0)
		m := vmanifest(name, mc)
		manifests = append(manifests, m)
	}
	h, err := analysis.History(runs, analysis.HistoryOptions{Metrics: []analysis.Metric{analysis.MetricThroughput, analysis.MetricP95Latency, analysis.MetricP99Latency}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[analysis.Metric]string{}
	for _, s := range h.Series {
		var cps []string
		for _, c := range s.ChangePoints {
			cps = append(cps, fmt.Sprintf("%s %s", c.Run, map[bool]string{true: "regression", false: "improvement"}[c.Worse]))
		}
		got[s.Metric] = fmt.Sprint(cps)
	}
	want := map[analysis.Metric]string{analysis.MetricThroughput: "[]", analysis.MetricP95Latency: "[nightly-20 improvement]", analysis.MetricP99Latency: "[nightly-20 regression]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("change points (-want +got):\n%s", diff)
	}
	if _, err := analysis.History(runs, analysis.HistoryOptions{Metrics: []analysis.Metric{"P50Latency"}}); err == nil {
		t.Error("an unknown metric was accepted")
	}
	for _, tc := range []struct {
		metric analysis.Metric
		want   int
	}{{analysis.MetricThroughput, 0}, {analysis.MetricP95Latency, 0}, {analysis.MetricP99Latency, 1}} {
		found, err := ChangePointRegressionsOf(manifests, changepoint.DefaultOptions(), tc.metric)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != tc.want || (tc.want == 1 && (found[0].Metric != analysis.MetricP99Latency || !(found[0].ChangePercent > 30))) {
			t.Errorf("%s: regressions %v, want %d", tc.metric, found, tc.want)
		}
	}
}

// SuiteNoiseOf measures a floor of log p99 beside throughput's, from the
// same repeat sets, and inherits only a stored floor of the same metric.
func TestSuiteNoiseOfLatency(t *testing.T) {
	const step = "insert"
	var cells []results.ManifestCell
	for i, f := range []float64{1.0, 1.1, 0.9} {
		// p99 varies three times as much as QPS between the repeats.
		cells = append(cells, lcell(i+1, step, 1000*f, 2, 5*(1+3*(f-1)), 0))
	}
	cur := vmanifest("cur", cells...)
	if f := SuiteNoise(nil, cur, 0.05); f == nil || len(f.Points) != 1 || f.Points[0].Metric != "" {
		t.Fatalf("throughput floor %+v, want one unnamed point", f)
	}
	f := SuiteNoiseOf(nil, cur, 0.05, []analysis.Metric{analysis.MetricThroughput, analysis.MetricP99Latency})
	if f == nil || len(f.Points) != 2 {
		t.Fatalf("floors %+v, want throughput's and p99's", f)
	}
	tp, ok1 := f.Point(step, 4)
	lat, ok2 := f.MetricPoint(string(analysis.MetricP99Latency), step, 4)
	if !ok1 || !ok2 || tp.DF != 2 || lat.DF != 2 || !(lat.SigmaLog > 2.5*tp.SigmaLog) {
		t.Errorf("throughput floor %+v, p99 floor %+v: want 2 df each, p99's about 3 times as wide", tp, lat)
	}
	// A stored p99 floor of more df is inherited by p99 alone.
	prev := vmanifest("prev", lcell(0, step, 1000, 2, 5, 0))
	prev.NoiseFloor = &results.NoiseFloors{Points: []results.NoisePoint{
		{Metric: string(analysis.MetricP99Latency), Step: step, Threads: 4, SigmaLog: 0.2, CV: 0.2, DF: 20, Runs: 22, Sets: 2},
	}}
	f = SuiteNoiseOf([]*results.Manifest{prev}, cur, 0.05, []analysis.Metric{analysis.MetricP99Latency})
	tp, _ = f.Point(step, 4)
	lat, _ = f.MetricPoint(string(analysis.MetricP99Latency), step, 4)
	if tp.InheritedFrom != "" || tp.DF != 2 || lat.InheritedFrom != "prev" || lat.DF != 22 {
		t.Errorf("throughput floor %+v, p99 floor %+v: want p99's inherited from prev (20 + 2 df), throughput's not", tp, lat)
	}
}
