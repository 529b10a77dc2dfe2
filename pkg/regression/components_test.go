package regression

import (
	"math"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/results"
)

// ccell is a cell of point-query@4 at 1000·e^x QPS on node, with a spread
// (given at 1000 QPS, scaled to the cell's).
func ccell(repeat int, image, node string, x float64, sp *results.Spread) results.ManifestCell {
	c := vcell(repeat, image, map[string]float64{"point-query": 1000 * math.Exp(x)}, 0)
	c.Node = node
	if sp != nil {
		s := *sp
		s.Stddev *= math.Exp(x)
		s.LongRunStddev *= math.Exp(x)
		c.QPSSpread = map[string]map[int]results.Spread{"point-query": {4: s}}
	}
	return c
}

func TestSuiteComponents(t *testing.T) {
	// Within spreads of a mean of 1000 QPS over 100 1-s samples.
	bm := &results.Spread{Samples: 100, Stddev: 50, EffectiveSamples: 50, LongRunStddev: 100, LongRunDF: 9} // (100/1000)²/100 = 1e-4
	ar := &results.Spread{Samples: 100, Stddev: 50, EffectiveSamples: 25}                                   // 50²·4/1000²/100 = 1e-4
	white := &results.Spread{Samples: 100, Stddev: 100}                                                     // 1e-4
	tests := []struct {
		name    string
		history []*results.Manifest
		metric  analysis.Metric
		want    inference.VarianceComponents
		methods map[string]int
		none    bool
	}{
		{
			// Logs [0, 0.2] on a and [1, 1.2] on b (inference's by-hand
			// case): run 0.02 over 2 df, node (1 − 0.02)/2 = 0.49 over 1.
			name: "repeats of one run on two nodes",
			history: []*results.Manifest{vmanifest("a", ccell(1, "i", "a", 0, nil), ccell(2, "i", "a", 0.2, nil),
				ccell(3, "i", "b", 1, nil), ccell(4, "i", "b", 1.2, nil))},
			metric: analysis.MetricThroughput,
			want: inference.VarianceComponents{
				Run: inference.Component{Variance: 0.02, Estimate: 0.02, DF: 2, Known: true}, RunIncludesWithin: true,
				Node: inference.Component{Variance: 0.49, Estimate: 0.49, DF: 1, Known: true}, Runs: 4, Sets: 1, Nodes: 2},
		},
		{
			// The same values as an A/A set of four single-cell runs, one
			// of another image left out; each within 1e-4 of a 100-s step
			// (σ²_w 0.01/s) by another estimator; run 0.02 − 1e-4.
			name: "an A/A set with each within estimator",
			history: []*results.Manifest{
				vmanifest("n1", ccell(0, "i", "a", 0, bm)), vmanifest("n2", ccell(0, "i", "a", 0.2, ar)),
				vmanifest("n3", ccell(0, "j", "a", 3, bm)),
				vmanifest("n4", ccell(0, "i", "b", 1, white)), vmanifest("n5", ccell(0, "i", "b", 1.2, bm))},
			metric: analysis.MetricThroughput,
			want: inference.VarianceComponents{
				WithinPerSecond: inference.Component{Variance: 0.01, Estimate: 0.01, DF: 9 + 24 + 99 + 9, Known: true},
				Run:             inference.Component{Variance: 0.0199, Estimate: 0.0199, DF: 2, Known: true},
				Node:            inference.Component{Variance: 0.49, Estimate: 0.49, DF: 1, Known: true}, Runs: 4, Sets: 1, Nodes: 2, Seconds: 100},
			methods: map[string]int{"batch-means": 2, "ar1": 1, "white": 1},
		},
		{
			name:    "latency has no within level",
			history: []*results.Manifest{vmanifest("a", ccell(1, "i", "", 0, bm), ccell(2, "i", "", 0.2, bm))},
			metric:  analysis.MetricP99Latency,
			none:    true, // the cells record no p99
		},
		{
			name:    "single runs of different images: no set",
			history: []*results.Manifest{vmanifest("a", ccell(0, "i", "a", 0, nil)), vmanifest("b", ccell(0, "j", "a", 0, nil))},
			metric:  analysis.MetricThroughput,
			none:    true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := SuiteComponents(tt.history, tt.metric)
			if tt.none {
				if len(rows) != 0 {
					t.Fatalf("rows %+v, want none", rows)
				}
				return
			}
			if len(rows) != 1 || rows[0].Step != "point-query" || rows[0].Threads != 4 {
				t.Fatalf("rows %+v, want point-query@4", rows)
			}
			got := rows[0]
			near := func(a, b inference.Component) bool {
				return math.Abs(a.Variance-b.Variance) < 1e-5 && math.Abs(a.Estimate-b.Estimate) < 1e-5 && a.DF == b.DF &&
					a.Known == b.Known && a.Truncated == b.Truncated
			}
			if !near(got.WithinPerSecond, tt.want.WithinPerSecond) || !near(got.Run, tt.want.Run) || !near(got.Node, tt.want.Node) ||
				got.RunIncludesWithin != tt.want.RunIncludesWithin || got.Runs != tt.want.Runs || got.Sets != tt.want.Sets ||
				got.Nodes != tt.want.Nodes || got.Seconds != tt.want.Seconds {
				t.Errorf("got  %+v\nwant %+v", got.VarianceComponents, tt.want)
			}
			for m, n := range tt.methods {
				if got.WithinMethods[m] != n {
					t.Errorf("within methods %v, want %v", got.WithinMethods, tt.methods)
				}
			}
		})
	}
}

func TestComponentsTable(t *testing.T) {
	rows := []ComponentsRow{
		{Step: "insert", Threads: 1, VarianceComponents: inference.VarianceComponents{
			WithinPerSecond: inference.Component{Variance: 0.04, DF: 80, Known: true},
			Run:             inference.Component{Variance: 0.0049, DF: 12, Known: true},
			Node:            inference.Component{Estimate: -0.001, Truncated: true, DF: 2, Known: true},
			Runs:            16, Sets: 2, Nodes: 3, Seconds: 100}, WithinMethods: map[string]int{"white": 1}},
		{Step: "point-query", Threads: 1, VarianceComponents: inference.VarianceComponents{
			Run: inference.Component{Variance: 0.0004, DF: 4, Known: true}, RunIncludesWithin: true, Runs: 6, Sets: 2, Nodes: 1}},
	}
	var b strings.Builder
	if err := analysis.WriteTables(&b, analysis.FormatTable, []analysis.Table{ComponentsTable("nightly", rows)}); err != nil {
		t.Fatal(err)
	}
	// within: √(e^0.04 − 1) = 20.2 % per second, √(e^0.0004 − 1) = 2.0 %
	// at 100 s; run √(e^0.0049 − 1) = 7.0 %; point-query's run 2.0 %.
	for _, want := range []string{
		"Variance components of suite nightly: within a run, between runs on a node, between nodes",
		"insert       1        100      20.20              80  2.00                7.01      12  0*         2   3      16",
		"point-query  1        -        -                  -   -                   2.00      4   -          -   1      6",
		"0*: the moment estimate was negative and is truncated at 0",
		"within -: the manifests keep no per-second spread of the point",
		"some runs kept neither a batch-means nor an autocorrelation figure",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
}
