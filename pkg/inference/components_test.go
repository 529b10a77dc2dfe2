package inference

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestBatchMeans(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want LongRun
		err  error
	}{
		// b = 3, a = 3: batch means 2, 5, 8 (variance 9), 3·9 = 27.
		{"nine samples", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, LongRun{Variance: 27, DF: 2, Method: MethodBatchMeans}, nil},
		// b = 3, a = 3, the 10th sample is left out.
		{"leftover dropped", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 1000}, LongRun{Variance: 27, DF: 2, Method: MethodBatchMeans}, nil},
		// b = 2, a = 2: means 1 and 3, variance 2, 2·2 = 4.
		{"four samples", []float64{0, 2, 2, 4}, LongRun{Variance: 4, DF: 1, Method: MethodBatchMeans}, nil},
		{"constant", []float64{5, 5, 5, 5, 5}, LongRun{Variance: 0, DF: 1, Method: MethodBatchMeans}, nil},
		{"too short", []float64{1, 2, 3}, LongRun{}, ErrTooFew},
		{"NaN", []float64{1, 2, math.NaN(), 4}, LongRun{}, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BatchMeans(tt.xs)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if got.DF != tt.want.DF || got.Method != tt.want.Method || math.Abs(got.Variance-tt.want.Variance) > 1e-9 {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAR1LongRun(t *testing.T) {
	tests := []struct {
		name string
		s2   float64
		r    float64
		n    int
		want LongRun
		err  error
	}{
		// (1 + 0.5)/(1 − 0.5) = 3; effective samples 30·0.5/1.5 = 10.
		{"positive r", 4, 0.5, 30, LongRun{Variance: 12, DF: 9, Method: MethodAR1}, nil},
		{"negative r counts as 0", 4, -0.3, 30, LongRun{Variance: 4, DF: 29, Method: MethodAR1}, nil},
		{"r near 1", 1, 0.98, 10, LongRun{Variance: 99, DF: 1, Method: MethodAR1}, nil},
		{"r = 1", 1, 1, 10, LongRun{}, ErrInvalid},
		{"negative variance", -1, 0, 10, LongRun{}, ErrInvalid},
		{"one sample", 1, 0, 1, LongRun{}, ErrTooFew},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AR1LongRun(tt.s2, tt.r, tt.n)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if got.DF != tt.want.DF || got.Method != tt.want.Method || math.Abs(got.Variance-tt.want.Variance) > 1e-9 {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestEstimateComponentsByHand(t *testing.T) {
	e := math.Exp
	tests := []struct {
		name string
		runs []RunValue
		want VarianceComponents
		err  error
	}{
		{
			// Logs [0, 0.2] on a and [1, 1.2] on b: MS_run 0.02 (2 df),
			// MS_node 2·2·0.5² = 1 (1 df), n0 = (4 − 8/4)/1 = 2, node
			// (1 − 0.02)/2 = 0.49. No within estimate.
			name: "one set on two nodes",
			runs: []RunValue{{Set: "s", Node: "a", Value: e(0)}, {Set: "s", Node: "a", Value: e(0.2)},
				{Set: "s", Node: "b", Value: e(1)}, {Set: "s", Node: "b", Value: e(1.2)}},
			want: VarianceComponents{
				Run: Component{Variance: 0.02, Estimate: 0.02, DF: 2, Known: true}, RunIncludesWithin: true,
				Node: Component{Variance: 0.49, Estimate: 0.49, DF: 1, Known: true},
				Runs: 4, Sets: 1, Nodes: 2,
			},
		},
		{
			// Nodes closer than the runs: MS_node 2·2·0.05² = 0.01 below
			// MS_run 0.02, (0.01 − 0.02)/2 = −0.005 truncated. Within
			// 0.005 of a 100-s step (10 df each): σ²_w = 0.5 per second,
			// the run level 0.02 − 0.005.
			name: "node truncated, within known",
			runs: []RunValue{
				{Set: "s", Node: "a", Value: e(0), Within: 0.005, WithinDF: 10, Seconds: 100},
				{Set: "s", Node: "a", Value: e(0.2), Within: 0.005, WithinDF: 10, Seconds: 100},
				{Set: "s", Node: "b", Value: e(0.1), Within: 0.005, WithinDF: 10, Seconds: 100},
				{Set: "s", Node: "b", Value: e(0.3), Within: 0.005, WithinDF: 10, Seconds: 100}},
			want: VarianceComponents{
				WithinPerSecond: Component{Variance: 0.5, Estimate: 0.5, DF: 40, Known: true},
				Run:             Component{Variance: 0.015, Estimate: 0.015, DF: 2, Known: true},
				Node:            Component{Variance: 0, Estimate: -0.005, Truncated: true, DF: 1, Known: true},
				Runs:            4, Sets: 1, Nodes: 2, Seconds: 100,
			},
		},
		{
			// Set means are removed: two sets far apart on one node give
			// the runs' spread only (logs [0, 0.2] and [5, 5.2]).
			name: "sets removed, one node",
			runs: []RunValue{{Set: "x", Node: "a", Value: e(0)}, {Set: "x", Node: "a", Value: e(0.2)},
				{Set: "y", Node: "a", Value: e(5)}, {Set: "y", Node: "a", Value: e(5.2)}},
			want: VarianceComponents{
				Run: Component{Variance: 0.02, Estimate: 0.02, DF: 2, Known: true}, RunIncludesWithin: true,
				Runs: 4, Sets: 2, Nodes: 1,
			},
		},
		{
			// Within larger than the runs' spread: the run level is 0.
			name: "run truncated",
			runs: []RunValue{{Set: "s", Node: "a", Value: e(0), Within: 0.05, WithinDF: 5, Seconds: 10},
				{Set: "s", Node: "a", Value: e(0.2), Within: 0.05, WithinDF: 5, Seconds: 10}},
			want: VarianceComponents{
				WithinPerSecond: Component{Variance: 0.5, Estimate: 0.5, DF: 10, Known: true},
				Run:             Component{Variance: 0, Estimate: -0.03, Truncated: true, DF: 1, Known: true},
				Runs:            2, Sets: 1, Nodes: 1, Seconds: 10,
			},
		},
		{
			// One run per (set, node): neither level can be told.
			name: "no repeats on a node",
			runs: []RunValue{{Set: "s", Node: "a", Value: 1}, {Set: "s", Node: "b", Value: 2}},
			want: VarianceComponents{Runs: 2, Sets: 1, Nodes: 2},
		},
		{name: "zero value", runs: []RunValue{{Set: "s", Value: 0}}, err: ErrInvalid},
		{name: "within without seconds", runs: []RunValue{{Set: "s", Value: 1, Within: 0.1, WithinDF: 3}}, err: ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EstimateComponents(tt.runs)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if tt.err != nil {
				return
			}
			if !componentsClose(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func componentsClose(a, b VarianceComponents) bool {
	near := func(x, y Component) bool {
		return math.Abs(x.Variance-y.Variance) < 1e-9 && math.Abs(x.Estimate-y.Estimate) < 1e-9 &&
			x.Truncated == y.Truncated && x.DF == y.DF && x.Known == y.Known
	}
	return near(a.WithinPerSecond, b.WithinPerSecond) && near(a.Run, b.Run) && near(a.Node, b.Node) &&
		a.RunIncludesWithin == b.RunIncludesWithin && a.Runs == b.Runs && a.Sets == b.Sets && a.Nodes == b.Nodes &&
		math.Abs(a.Seconds-b.Seconds) < 1e-9
}

// ar1Series draws n samples of an AR(1) process with coefficient phi whose
// long-run variance is lrv: x_t = φ·x_{t−1} + e_t, σ²_e = lrv·(1 − φ)².
// The first sample comes from the stationary distribution.
func ar1Series(r *rand.Rand, n int, phi, lrv float64) []float64 {
	se := math.Sqrt(lrv) * (1 - phi)
	xs := make([]float64, n)
	x := r.NormFloat64() * se / math.Sqrt(1-phi*phi)
	for i := range xs {
		xs[i] = x
		x = phi*x + se*r.NormFloat64()
	}
	return xs
}

// TestSimLongRunEstimators: on AR(1) series both estimators find the
// long-run variance; on a series with two time scales (fast jitter and a
// slow drift of small variance, as a buffer pool warming or a checkpoint
// cycle adds) the lag-1 autocorrelation sees the fast part only and the
// AR(1) estimate misses most of the slow part's long-run variance, which
// batch means keep more of (the reason components use batch means where
// the series is at hand). Both are biased low by a part the batches are too
// short to hold.
func TestSimLongRunEstimators(t *testing.T) {
	const trials = 400
	r := rand.New(rand.NewPCG(26, 1))
	run := func(slow bool) (bm, ar float64) {
		for range trials {
			xs := ar1Series(r, 300, 0.5, 1)
			if slow {
				// φ 0.97, variance 0.1: long-run variance
				// 0.1·1.97/0.03 = 6.57.
				ys := ar1Series(r, 300, 0.97, 0.1*1.97/0.03)
				for i := range xs {
					xs[i] += ys[i]
				}
			}
			b, err := BatchMeans(xs)
			if err != nil {
				t.Fatal(err)
			}
			m, v := meanVar(xs)
			var lag, ss float64
			for i := range xs {
				ss += (xs[i] - m) * (xs[i] - m)
				if i > 0 {
					lag += (xs[i-1] - m) * (xs[i] - m)
				}
			}
			a, err := AR1LongRun(v, lag/ss, len(xs))
			if err != nil {
				t.Fatal(err)
			}
			bm += b.Variance / trials
			ar += a.Variance / trials
		}
		return bm, ar
	}
	bm, ar := run(false)
	t.Logf("AR(1) φ 0.5, long-run variance 1, 300 samples: batch means %.3f, AR(1) %.3f (%d trials)", bm, ar, trials)
	// Batches of 17 samples hold all but about 2φ(1−φ^b)/(b(1−φ)²) /
	// ((1+φ)/(1−φ)) ≈ 8 % of it for φ = 0.5; the AR(1) estimate is right
	// for AR(1) data.
	if math.Abs(bm-0.92) > 0.08 || math.Abs(ar-1) > 0.08 {
		t.Errorf("AR(1) data: batch means %.3f (want 0.92 ± 0.08), AR(1) %.3f (want 1 ± 0.08)", bm, ar)
	}
	bm, ar = run(true)
	t.Logf("with a slow part (φ 0.97, long-run variance 6.57; 7.57 in all): batch means %.3f, AR(1) %.3f", bm, ar)
	if !(bm > 1.2*ar && bm < 7.57) {
		t.Errorf("two time scales: batch means %.3f should exceed AR(1) %.3f by 20 %% and stay below the truth 7.57", bm, ar)
	}
}

// simComponents draws one data set of the model: sets × nodes × perNode
// runs, each with a per-second series of seconds samples (AR(1), φ 0.5,
// relative long-run variance w), a run effect of variance run and a node
// effect of variance node shared by every set. Within is estimated by
// batch means from each run's series, as the analysis does.
func simComponents(r *rand.Rand, sets, nodes, perNode, seconds int, w, run, node float64) []RunValue {
	nodeEff := make([]float64, nodes)
	for k := range nodeEff {
		nodeEff[k] = math.Sqrt(node) * r.NormFloat64()
	}
	var out []RunValue
	for s := range sets {
		level := 1000 * float64(s+1)
		for k := range nodes {
			for range perNode {
				q := level * math.Exp(nodeEff[k]+math.Sqrt(run)*r.NormFloat64())
				xs := ar1Series(r, seconds, 0.5, w)
				var mean float64
				for i := range xs {
					xs[i] = q * (1 + xs[i])
					mean += xs[i] / float64(seconds)
				}
				lr, err := BatchMeans(xs)
				if err != nil {
					panic(err)
				}
				out = append(out, RunValue{Set: fmt.Sprint(s), Node: fmt.Sprint(k), Value: mean,
					Within: lr.Variance / (mean * mean * float64(seconds)), WithinDF: lr.DF, Seconds: float64(seconds)})
			}
		}
	}
	return out
}

// TestSimComponentsRecoverTheTruth: over many seeded data sets with known
// components, the moment estimates are unbiased (their mean is within
// three standard errors of the truth, the batch means' own small bias
// aside) and their spread is what their degrees of freedom say (the
// standard deviation of the run level's estimate within 25 % of
// √(2/df)·E[MS_run]; the node level's no more than its capped df imply).
func TestSimComponentsRecoverTheTruth(t *testing.T) {
	const trials = 300
	tests := []struct {
		name                       string
		sets, nodes, perNode, secs int
		within, run, node          float64
	}{
		// 7 % run CV, 3 % node CV, a per-second series whose long-run
		// variance is 0.04 per second (0.00013 on a 300-s step's mean).
		{"run dominates", 4, 4, 3, 300, 0.04, 0.005, 0.001},
		// Nodes differ by 10 %, runs by 3 %.
		{"node dominates", 3, 6, 2, 120, 0.02, 0.001, 0.01},
		// No node effect: the estimate is truncated at 0 about half the
		// time.
		{"no node effect", 4, 4, 3, 300, 0.04, 0.005, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(26, uint64(len(tt.name))))
			var w, run, node, run2, node2 float64
			truncated := 0
			var last VarianceComponents
			for range trials {
				c, err := EstimateComponents(simComponents(r, tt.sets, tt.nodes, tt.perNode, tt.secs, tt.within, tt.run, tt.node))
				if err != nil {
					t.Fatal(err)
				}
				w += c.WithinPerSecond.Estimate / trials
				run += c.Run.Estimate / trials
				node += c.Node.Estimate / trials
				run2 += c.Run.Estimate * c.Run.Estimate / trials
				node2 += c.Node.Estimate * c.Node.Estimate / trials
				if c.Node.Truncated {
					truncated++
				}
				last = c
			}
			sdRun := math.Sqrt(run2 - run*run)
			sdNode := math.Sqrt(node2 - node*node)
			t.Logf("truth w %.4g run %.4g node %.4g; mean estimates w %.4g run %.4g (sd %.2g) node %.4g (sd %.2g); node truncated %d/%d; df run %d node %d",
				tt.within, tt.run, tt.node, w, run, sdRun, node, sdNode, truncated, trials, last.Run.DF, last.Node.DF)
			// Batch means of ⌊√T⌋ seconds are biased low for φ = 0.5
			// (by about 8 % at 300 s, 13 % at 120 s; above).
			if math.Abs(w-tt.within) > 0.2*tt.within {
				t.Errorf("within %.4g, want %.4g ± 20 %%", w, tt.within)
			}
			if se := sdRun / math.Sqrt(trials); math.Abs(run-tt.run) > 3*se+0.05*tt.run {
				t.Errorf("run %.4g, want %.4g (3 se %.2g)", run, tt.run, 3*se)
			}
			if se := sdNode / math.Sqrt(trials); math.Abs(node-tt.node) > 3*se {
				t.Errorf("node %.4g, want %.4g (3 se %.2g)", node, tt.node, 3*se)
			}
			// The run mean square's sd is √(2/df)·E[MS] under the model.
			msRun := tt.run + tt.within/float64(tt.secs)
			if want := math.Sqrt(2/float64(last.Run.DF)) * msRun; math.Abs(sdRun-want) > 0.25*want {
				t.Errorf("sd of the run estimate %.3g, want %.3g ± 25 %% (df %d)", sdRun, want, last.Run.DF)
			}
			// The node level's df are capped at nodes − 1, because the
			// sets share the nodes: the spread must not exceed what
			// those df imply.
			n0 := float64(tt.perNode) // balanced: Searle's n0 is the runs per node
			msNode := msRun + n0*tt.node
			bound := math.Sqrt(2/float64(last.Node.DF)*msNode*msNode+2/float64(last.Run.DF)*msRun*msRun) / n0
			if sdNode > 1.1*bound {
				t.Errorf("sd of the node estimate %.3g exceeds what its %d df imply, %.3g", sdNode, last.Node.DF, bound)
			}
		})
	}
}
