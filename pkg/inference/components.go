package inference

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Variance components of one (step, threads, metric): how much each level
// of repetition adds to the variance of a run's log value, after Kalibera
// & Jones, "Rigorous benchmarking in reasonable time" (ISMM 2013).
//
// Model (nested random effects on the log scale): the log value of run r
// of configuration set s on node k is
//
//	y = μ_s + ν_k + ρ + ε
//
// with μ_s a fixed effect of the set (a configuration; the estimators
// remove it), ν_k ~ N(0, σ²_node) the node's effect, shared by every run on
// node k whatever its set and time (additive and persistent), ρ ~ N(0,
// σ²_run) the run's own effect (a fresh server and data load, the machine's
// state at the time), and ε the error of a step's mean over its T measured
// seconds, of variance σ²_w / T, σ²_w being the per-second series'
// long-run variance of log throughput (its variance times 1 + 2Σ of its
// autocorrelations). All independent.

// LongRun is an estimate of a series' long-run variance per sample,
// lim n·Var(mean of n samples), with its degrees of freedom.
type LongRun struct {
	Variance float64 `json:"variance"`
	DF       int     `json:"df"`
	// Method is MethodBatchMeans or MethodAR1.
	Method Method `json:"method"`
}

const (
	// MethodBatchMeans is the long-run variance from non-overlapping batch
	// means.
	MethodBatchMeans Method = "batch-means"
	// MethodAR1 is the long-run variance from the lag-1 autocorrelation
	// under an AR(1) model.
	MethodAR1 Method = "ar1"
)

// BatchMeans estimates the long-run variance of a stationary series xs
// (per sample) from non-overlapping batches: with b = ⌊√n⌋ samples per
// batch and a = ⌊n/b⌋ batches (the samples after the last full batch are
// left out), b·Σ(B̄_j − B̄)²/(a − 1) with a − 1 degrees of freedom.
//
// Batch means make no assumption about the shape of the autocorrelation,
// unlike AR1LongRun: a series with slow waves (checkpoint cycles, write
// stalls) has a long-run variance far above what its lag-1
// autocorrelation implies. Batches of √n samples balance the estimate's
// bias (batches too short to hold a wave) against its variance (too few
// batches); the estimate is consistent for series whose autocorrelations
// decay fast enough (Flegal & Jones 2010). It needs 4 samples (2 batches
// of 2).
func BatchMeans(xs []float64) (LongRun, error) {
	n := len(xs)
	if n < 4 {
		return LongRun{}, fmt.Errorf("batch means: %d samples, need at least 4: %w", n, ErrTooFew)
	}
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return LongRun{}, fmt.Errorf("batch means: sample %d is %v: %w", i, x, ErrInvalid)
		}
	}
	b := int(math.Sqrt(float64(n)))
	a := n / b
	means := make([]float64, a)
	for j := range means {
		var s float64
		for _, x := range xs[j*b : (j+1)*b] {
			s += x
		}
		means[j] = s / float64(b)
	}
	_, v := meanVar(means)
	return LongRun{Variance: float64(b) * v, DF: a - 1, Method: MethodBatchMeans}, nil
}

// AR1LongRun is the long-run variance of a series of n samples with sample
// variance s2 and lag-1 autocorrelation r under an AR(1) model, s2·(1 +
// r)/(1 − r), with the effective samples n·(1 − r)/(1 + r) less one as its
// degrees of freedom. A negative r is taken as 0 (no credit for a series
// that alternates), as results.SeriesSummary.EffectiveSamples does; r ≥ 1
// is an error. It is what a results manifest allows (it keeps a step's
// spread and effective samples, not its series).
func AR1LongRun(s2, r float64, n int) (LongRun, error) {
	switch {
	case !(s2 >= 0) || math.IsInf(s2, 0):
		return LongRun{}, fmt.Errorf("ar1: variance %v must be finite and >= 0: %w", s2, ErrInvalid)
	case !(r < 1) || math.IsNaN(r):
		return LongRun{}, fmt.Errorf("ar1: autocorrelation %v must be below 1: %w", r, ErrInvalid)
	case n < 2:
		return LongRun{}, fmt.Errorf("ar1: %d samples, need at least 2: %w", n, ErrTooFew)
	}
	r = math.Max(r, 0)
	eff := float64(n) * (1 - r) / (1 + r)
	return LongRun{Variance: s2 * (1 + r) / (1 - r), DF: max(1, int(math.Round(eff))-1), Method: MethodAR1}, nil
}

// RunValue is one run's value of a point, for VarianceComponents.
type RunValue struct {
	// Set names the runs that measure one configuration (a combination's
	// repeats in a run, an A/A set over a suite's runs): their mean is the
	// set's and the estimators remove it.
	Set string
	// Node is the node the run ran on. Runs whose node is not recorded
	// ("") count as one node: their node-to-node spread then goes into
	// the run level.
	Node string
	// Value is the run's value (throughput or a latency), > 0.
	Value float64
	// Within is the variance of ln(Value) that the run's finite length
	// leaves, σ²_w/T (the per-second series' long-run variance over the
	// squared mean and the measured seconds), and WithinDF its degrees of
	// freedom; WithinDF 0 when unknown (then Within is ignored).
	Within   float64
	WithinDF int
	// Seconds is the measured time behind Value (T), > 0 when Within is
	// known.
	Seconds float64
}

// Component is the estimate of one level's variance on the log scale.
type Component struct {
	// Variance is the estimate, truncated at 0; Estimate the method-of-
	// moments value before truncation (negative when the level's mean
	// square fell below the one beneath it: then Truncated).
	Variance  float64 `json:"variance"`
	Estimate  float64 `json:"estimate"`
	Truncated bool    `json:"truncated,omitempty"`
	// DF are the degrees of freedom of the level's mean square: Σ(batches
	// − 1) over the runs for the within level, Σ(n − 1) over the (set,
	// node) groups for runs, Σ(nodes − 1) over the sets for nodes (at most
	// the distinct nodes less one: the node effects are shared by the
	// sets). 0 means the data cannot estimate the level (Known false).
	DF    int  `json:"df"`
	Known bool `json:"known"`
}

// CV is the coefficient of variation the component's variance implies on
// its own, √(exp(σ²) − 1).
func (c Component) CV() float64 { return math.Sqrt(math.Expm1(c.Variance)) }

// VarianceComponents are the three levels of one point.
type VarianceComponents struct {
	// WithinPerSecond is σ²_w: the long-run variance of the per-second log
	// series, so that a step of T seconds has a within-run variance of
	// WithinPerSecond.Variance/T. Pooled over the runs (weighted by their
	// df).
	WithinPerSecond Component `json:"withinPerSecond"`
	// Run is σ²_run, the variance between runs on one node beyond the
	// within-run part: the within (set, node) mean square less the runs'
	// mean within-run variance. Without a within-run estimate it includes
	// that part at the runs' own lengths (RunIncludesWithin).
	Run               Component `json:"run"`
	RunIncludesWithin bool      `json:"runIncludesWithin,omitempty"`
	// Node is σ²_node, the variance between nodes: (between-node mean
	// square − within-node mean square) / n0, n0 the unbalanced design's
	// effective runs per node.
	Node Component `json:"node"`
	// Runs, Sets and Nodes count what the estimate rests on; Seconds is the
	// runs' mean measured time (the step length the run level was
	// measured at).
	Runs    int     `json:"runs"`
	Sets    int     `json:"sets"`
	Nodes   int     `json:"nodes"`
	Seconds float64 `json:"seconds,omitempty"`
}

// RunVariance is the variance of one run's log value at a step length of
// seconds on one node, σ²_run + σ²_w/T (the run level alone when the within
// level is unknown).
func (v VarianceComponents) RunVariance(seconds float64) float64 {
	s := v.Run.Variance
	if v.WithinPerSecond.Known && !v.RunIncludesWithin {
		s += v.WithinPerSecond.Variance / seconds
	}
	return s
}

// EstimateComponents estimates the variance components of one point from
// its runs by the method of moments of the nested analysis of variance
// (sets → nodes → runs; unbalanced, Searle's n0), with the within-run
// level from the runs' own series:
//
//   - within: σ̂²_w = Σ df_i·Within_i·Seconds_i / Σ df_i over the runs whose
//     Within is known;
//   - runs: MS_run = Σ(y − ȳ_set,node)² / Σ(n_set,node − 1), whose
//     expectation is σ²_run + mean σ²_w/T; σ̂²_run = MS_run − the runs' mean
//     Within (or MS_run itself when no run has one: RunIncludesWithin);
//   - nodes: MS_node = Σ n_set,node·(ȳ_set,node − ȳ_set)² / Σ(nodes_set −
//     1), whose expectation is E[MS_run] + n0·σ²_node with n0 = Σ(N_set −
//     Σn²_set,node/N_set) / Σ(nodes_set − 1); σ̂²_node = (MS_node −
//     MS_run)/n0.
//
// A negative moment estimate is truncated at 0 (Component.Truncated): the
// level is then not distinguishable from 0 with these data. Runs with a
// value that is not finite and > 0 are an error. A level with no degrees
// of freedom (every set on one node; every (set, node) with one run) is
// Known false.
func EstimateComponents(runs []RunValue) (VarianceComponents, error) {
	type group struct {
		ys []float64
	}
	var out VarianceComponents
	sets := map[string]map[string]*group{}
	var setOrder []string
	nodes := map[string]bool{}
	var wSum, wDF, withinMean float64
	withinRuns, timed := 0, 0
	for i, r := range runs {
		if !(r.Value > 0) || math.IsInf(r.Value, 0) {
			return out, fmt.Errorf("components: run %d value %v: need a finite value > 0: %w", i, r.Value, ErrInvalid)
		}
		if r.WithinDF > 0 {
			if !(r.Within >= 0) || math.IsInf(r.Within, 0) || !(r.Seconds > 0) || math.IsInf(r.Seconds, 0) {
				return out, fmt.Errorf("components: run %d within %v over %v s: need finite values >= 0 and > 0: %w", i, r.Within, r.Seconds, ErrInvalid)
			}
			wSum += float64(r.WithinDF) * r.Within * r.Seconds
			wDF += float64(r.WithinDF)
			withinMean += r.Within
			withinRuns++
		}
		if sets[r.Set] == nil {
			sets[r.Set] = map[string]*group{}
			setOrder = append(setOrder, r.Set)
		}
		g := sets[r.Set][r.Node]
		if g == nil {
			g = &group{}
			sets[r.Set][r.Node] = g
		}
		g.ys = append(g.ys, math.Log(r.Value))
		nodes[r.Node] = true
		if r.Seconds > 0 {
			out.Seconds += r.Seconds
			timed++
		}
	}
	if timed > 0 {
		out.Seconds /= float64(timed)
	}
	out.Runs, out.Sets, out.Nodes = len(runs), len(sets), len(nodes)
	if withinRuns > 0 {
		v := wSum / wDF
		out.WithinPerSecond = Component{Variance: v, Estimate: v, DF: int(wDF), Known: true}
		withinMean /= float64(withinRuns)
	}

	var ssRun, ssNode, n0num float64
	dfRun, dfNode := 0, 0
	for _, s := range setOrder {
		var all []float64
		keys := make([]string, 0, len(sets[s]))
		for k := range sets[s] {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, cmp.Compare)
		for _, k := range keys {
			all = append(all, sets[s][k].ys...)
		}
		grand, _ := meanVar(all)
		var sumSq float64
		for _, k := range keys {
			ys := sets[s][k].ys
			m, v := meanVar(ys)
			if len(ys) > 1 {
				ssRun += v * float64(len(ys)-1)
				dfRun += len(ys) - 1
			}
			ssNode += float64(len(ys)) * (m - grand) * (m - grand)
			sumSq += float64(len(ys) * len(ys))
		}
		dfNode += len(keys) - 1
		n0num += float64(len(all)) - sumSq/float64(len(all))
	}
	if dfRun > 0 {
		ms := ssRun / float64(dfRun)
		est := ms
		if withinRuns > 0 {
			est = ms - withinMean
		} else {
			out.RunIncludesWithin = true
		}
		out.Run = Component{Variance: math.Max(0, est), Estimate: est, Truncated: est < 0, DF: dfRun, Known: true}
		if dfNode > 0 {
			n0 := n0num / float64(dfNode)
			est := (ssNode/float64(dfNode) - ms) / n0
			out.Node = Component{Variance: math.Max(0, est), Estimate: est, Truncated: est < 0,
				DF: min(dfNode, len(nodes)-1), Known: true}
		}
	}
	return out, nil
}
