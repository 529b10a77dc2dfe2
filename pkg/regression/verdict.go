package regression

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/stats"
)

// VerdictMethod is how one (combination, step, threads) of a run was
// tested against its baseline run.
type VerdictMethod string

const (
	// MethodPairedBlocks compares two combinations of one blocked run
	// (JudgeBaseline): every cell of both has a block (results cell.block)
	// and two blocks or more measured both, so the point is the one-sided
	// t-test of the mean per-block log ratio with blocks − 1 df
	// (inference.SlowdownOfEstimate). A block's node and time shift both
	// sides alike and cancel.
	MethodPairedBlocks VerdictMethod = "PairedBlocks"
	// MethodBetweenRuns is Welch's test on per-repeat log QPS: both runs
	// have two repeats or more of the combination (inference.Slowdown).
	MethodBetweenRuns VerdictMethod = "BetweenRuns"
	// MethodNoiseFloor tests one run (or a few) per side against the
	// suite's noise floor for the point, which rests on MinFloorDF df or
	// more (inference.SlowdownKnownNoise).
	MethodNoiseFloor VerdictMethod = "NoiseFloor"
	// MethodPerSecond is the fallback when neither is possible: Welch's
	// test on the two runs' per-second samples. It measures the jitter
	// within a run, not the variation between runs, and so calls an A/A
	// pair different far more often than α.
	MethodPerSecond VerdictMethod = "PerSecond"
	// MethodMagnitudeOnly is the last resort when the runs did not record
	// their per-second spread either: a slowdown of at least the magnitude
	// counts, untested.
	MethodMagnitudeOnly VerdictMethod = "MagnitudeOnly"
)

// VerdictMethods are the methods from the best to the last resort.
var VerdictMethods = []VerdictMethod{MethodPairedBlocks, MethodBetweenRuns, MethodNoiseFloor, MethodPerSecond, MethodMagnitudeOnly}

// MagnitudeRule is how VerdictOptions.MinMagnitude enters the between-run
// tests (the fallbacks always ask it of the point estimate).
type MagnitudeRule string

const (
	// MagnitudeTested tests "worse by more than the magnitude": the
	// magnitude is the null hypothesis's boundary, so a regressed point is
	// significantly beyond it. A true change of twice the magnitude is
	// only one magnitude away from the null, which takes many repeats to
	// find at a few per cent of run-to-run noise.
	MagnitudeTested MagnitudeRule = "Tested"
	// MagnitudeEstimated tests "worse at all" and asks the point estimate
	// (ChangePercent) to be at least the magnitude worse, as Apache Otava
	// filters its change points: about a third of the repeats for the same
	// power against twice the magnitude, and still α for an A/A pair, but
	// a true change just under the magnitude is called regressed up to
	// half the time.
	MagnitudeEstimated MagnitudeRule = "Estimated"
)

// Validate accepts the rules and "" (MagnitudeTested).
func (r MagnitudeRule) Validate() error {
	switch r {
	case "", MagnitudeTested, MagnitudeEstimated:
		return nil
	}
	return fmt.Errorf("verdict: magnitude rule %q: want %s or %s: %w", string(r), MagnitudeTested, MagnitudeEstimated, inference.ErrInvalid)
}

// TestMagnitude is the magnitude the between-run test of metric m asks
// for under the rule: for a throughput the slowdown itself, for a latency
// the fall of its reciprocal that a rise of magnitude is (m/(1+m)), and 0
// under MagnitudeEstimated, which tests "worse at all" and asks the point
// estimate for the magnitude instead (Regressed).
func (r MagnitudeRule) TestMagnitude(m analysis.Metric, magnitude float64) float64 {
	if r == MagnitudeEstimated {
		return 0
	}
	if m.LowerIsBetter() {
		return magnitude / (1 + magnitude)
	}
	return magnitude
}

// Regressed is the rule's decision for a tested point: its p-value after
// the correction is below alpha and, under MagnitudeEstimated, its
// measured change (changePercent, 100 × (after/before − 1)) is at least
// the magnitude in the bad direction. Every verdict that calls a build
// worse — a run's, a bisection's — decides with it.
func (r MagnitudeRule) Regressed(m analysis.Metric, adjustedP, alpha, changePercent, magnitude float64) bool {
	if !(adjustedP < alpha) {
		return false
	}
	return r != MagnitudeEstimated || m.Worse(changePercent, magnitude)
}

// VerdictOptions tune JudgeRuns.
type VerdictOptions struct {
	// MinMagnitude is the slowdown (0.05 = 5 %) below which a change is
	// not a regression, as MagnitudeRule says for the between-run tests;
	// the fallbacks require it of the point estimate.
	MinMagnitude float64
	// MagnitudeRule is how MinMagnitude enters the between-run tests; ""
	// is MagnitudeTested.
	MagnitudeRule MagnitudeRule
	// Alpha is the level of the run's family of tests after Correction; 0
	// means 0.05.
	Alpha float64
	// Correction is the multiple-comparison procedure over the run's
	// tests; "" is Holm (family-wise error rate).
	Correction inference.Correction
	// Floor is the suite's noise floor (SuiteNoiseOf); nil when there is
	// none.
	Floor *results.NoiseFloors
	// Metrics are judged at every point; nil means throughput alone. A
	// latency regresses when it rises by more than MinMagnitude.
	Metrics []analysis.Metric
}

// PointVerdict is the test of one metric at one (combination, step,
// threads).
type PointVerdict struct {
	// Cell is the combination's cell name when each run has one cell of
	// it, else the combination (its repeats were pooled).
	Cell    string          `json:"cell"`
	Step    string          `json:"step"`
	Threads int             `json:"threads"`
	Metric  analysis.Metric `json:"metric"`
	// Before and After are the mean of the metric (QPS, or latency in ms)
	// over the baseline's and this run's repeats; ChangePercent is 100 ×
	// (After/Before − 1): a regression is negative for throughput and
	// positive for a latency.
	Before        float64 `json:"before"`
	After         float64 `json:"after"`
	ChangePercent float64 `json:"changePercent"`
	// NBefore and NAfter are the repeats on each side.
	NBefore int `json:"nBefore"`
	NAfter  int `json:"nAfter"`
	// Method is how the point was tested; Detail says it for people
	// ("between runs (3+3 repeats)", "noise floor CV 4.1 % over 12 df").
	Method VerdictMethod `json:"method"`
	Detail string        `json:"detail"`
	// P is the one-sided p-value of "worse" (slower, or a higher latency;
	// by more than the magnitude for the between-run methods); AdjustedP
	// is P after the correction.
	// Both are NaN for MethodMagnitudeOnly.
	P         float64 `json:"p"`
	AdjustedP float64 `json:"adjustedP"`
	Regressed bool    `json:"regressed"`
	// Detectable is the sensitivity of the point's test: the smallest
	// change of the metric (0.12 = 12 % slower, or a 12 % higher latency)
	// that it calls regressed with DetectablePower, at the noise the
	// point measured (the CV of its repeats, or the noise floor's) and its
	// repeats, at the level of the correction's first step (α / tests),
	// under inference.Design's model. NaN where nothing was tested (the
	// per-second and magnitude-only methods), or no noise was measured.
	Detectable float64 `json:"detectable"`
	// CV is the run-to-run noise Detectable rests on (NaN without it).
	CV float64 `json:"cv"`

	// floorDF is the noise floor's df for MethodNoiseFloor.
	floorDF int
}

// DetectablePower is the power of PointVerdict.Detectable: a change of
// that size is called regressed four times in five.
const DetectablePower = 0.8

func (p PointVerdict) String() string {
	return fmt.Sprintf("%s %s@%d %s %+.1f%% (%s)", p.Cell, p.Step, p.Threads, p.Metric.Label(), p.ChangePercent, p.Detail)
}

// badness is how far the point moved the wrong way, on the log scale so
// that a halved throughput and a doubled latency weigh the same.
func (p PointVerdict) badness() float64 {
	r := math.Log(p.After / p.Before)
	if p.Metric.LowerIsBetter() {
		return r
	}
	return -r
}

// RegressedPair is one (cell, step, threads) with every metric it
// regressed on.
type RegressedPair struct {
	Cell    string `json:"cell"`
	Step    string `json:"step"`
	Threads int    `json:"threads"`
	// Points are the regressed metrics' verdicts, in the order of
	// VerdictOptions.Metrics.
	Points []PointVerdict `json:"points"`
}

// Metrics names the pair's regressed metrics.
func (r RegressedPair) Metrics() []analysis.Metric {
	out := make([]analysis.Metric, len(r.Points))
	for i, p := range r.Points {
		out[i] = p.Metric
	}
	return out
}

func (r RegressedPair) String() string {
	parts := make([]string, len(r.Points))
	for i, p := range r.Points {
		parts[i] = fmt.Sprintf("%s %+.1f%%", p.Metric.Label(), p.ChangePercent)
	}
	return fmt.Sprintf("%s %s@%d %s (%s)", r.Cell, r.Step, r.Threads, strings.Join(parts, ", "), r.Points[0].Detail)
}

// Verdict is the judgement of a run against a baseline run.
type Verdict struct {
	// Metrics are the judged metrics.
	Metrics []analysis.Metric `json:"metrics"`
	// Points are every compared point, by cell, step, threads and metric.
	Points []PointVerdict `json:"points"`
	// Regressed are the regressed points, the largest move the wrong way
	// (on the log scale) first.
	Regressed  []PointVerdict       `json:"regressed"`
	Correction inference.Correction `json:"correction"`
	Alpha      float64              `json:"alpha"`
	// MagnitudeRule is the rule the between-run tests used.
	MagnitudeRule MagnitudeRule `json:"magnitudeRule"`
	// Tests is the size of the corrected family (points with a p-value).
	Tests int `json:"tests"`
	// Baseline is the combination JudgeBaseline judged the others against
	// ("" for JudgeRuns).
	Baseline string `json:"baseline,omitempty"`
	// Invalid are the values of either run, at the combinations both
	// measured, that the quality gate marked invalid (results.Quality):
	// left out of every point, so a point rests on the other repeats or
	// is not compared.
	Invalid []InvalidPoint `json:"invalid,omitempty"`
}

// InvalidPoint is one invalid value a verdict left out.
type InvalidPoint struct {
	// Run is "current" or "baseline".
	Run     string                  `json:"run"`
	Cell    string                  `json:"cell"`
	Step    string                  `json:"step"`
	Threads int                     `json:"threads"`
	Reasons []results.QualityReason `json:"reasons"`
}

// Which run an InvalidPoint is of.
const (
	RunCurrent  = "current"
	RunBaseline = "baseline"
)

// invalidOf lists the invalid values of cells, in a fixed order.
func invalidOf(run string, cells []*results.ManifestCell) []InvalidPoint {
	var out []InvalidPoint
	for _, c := range cells {
		for _, step := range analysis.SortedKeys(c.Invalid) {
			for _, th := range analysis.SortedKeys(c.Invalid[step]) {
				out = append(out, InvalidPoint{Run: run, Cell: c.Name, Step: step, Threads: th, Reasons: c.Invalid[step][th]})
			}
		}
	}
	return out
}

// Pairs counts the distinct (cell, step, threads) compared.
func (v *Verdict) Pairs() int {
	seen := map[string]bool{}
	for _, p := range v.Points {
		seen[fmt.Sprintf("%s\x00%s\x00%d", p.Cell, p.Step, p.Threads)] = true
	}
	return len(seen)
}

// RegressedPairs groups Regressed by (cell, step, threads): a pair slower
// and with a higher p99 latency is one entry naming both. Pairs are in the
// order of their worst point.
func (v *Verdict) RegressedPairs() []RegressedPair {
	var out []RegressedPair
	index := map[string]int{}
	for _, p := range v.Regressed {
		k := fmt.Sprintf("%s\x00%s\x00%d", p.Cell, p.Step, p.Threads)
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, RegressedPair{Cell: p.Cell, Step: p.Step, Threads: p.Threads})
		}
		out[i].Points = append(out[i].Points, p)
	}
	for i := range out {
		slices.SortStableFunc(out[i].Points, func(a, b PointVerdict) int {
			return cmp.Compare(slices.Index(v.Metrics, a.Metric), slices.Index(v.Metrics, b.Metric))
		})
	}
	return out
}

// MethodCount is how many points one method tested.
type MethodCount struct {
	Method VerdictMethod `json:"method"`
	Points int           `json:"points"`
	// Detail is the points' common description when they share one
	// ("between runs (3+3 repeats)"), else a summary ("noise floor CV 2.0–7.5 %").
	Detail string `json:"detail"`
}

// Methods counts the points per method, in VerdictMethods order, leaving
// out unused methods.
func (v *Verdict) Methods() []MethodCount {
	var out []MethodCount
	for _, m := range VerdictMethods {
		mc := MethodCount{Method: m}
		details := map[string]bool{}
		for _, p := range v.Points {
			if p.Method == m {
				mc.Points++
				details[p.Detail] = true
			}
		}
		if mc.Points == 0 {
			continue
		}
		if len(details) == 1 {
			for d := range details {
				mc.Detail = d
			}
		} else {
			mc.Detail = methodSummary(m)
		}
		out = append(out, mc)
	}
	return out
}

// methodSummary names a method whose points have different details.
func methodSummary(m VerdictMethod) string {
	switch m {
	case MethodPairedBlocks:
		return "paired by block (blocks vary)"
	case MethodBetweenRuns:
		return "between runs (repeats vary)"
	case MethodNoiseFloor:
		return "noise floor (per step)"
	case MethodPerSecond:
		return perSecondDetail
	}
	return magnitudeOnlyDetail
}

const (
	perSecondDetail     = "per-second fallback"
	magnitudeOnlyDetail = "magnitude only"
)

// Summary says in one line how the points were tested, for a condition
// message: "62 between runs (3+3 repeats), 2 per-second fallback; holm
// over 64 tests at α 0.05".
func (v *Verdict) Summary() string {
	parts := make([]string, 0, len(v.Methods()))
	for _, mc := range v.Methods() {
		parts = append(parts, fmt.Sprintf("%d %s", mc.Points, mc.Detail))
	}
	s := "nothing compared"
	if len(parts) > 0 {
		s = strings.Join(parts, ", ")
	}
	if v.Tests > 0 {
		s += fmt.Sprintf("; %s over %d tests at α %g", v.Correction, v.Tests, v.Alpha)
	}
	if n := len(v.Invalid); n > 0 {
		s += fmt.Sprintf("; %d invalid value(s) left out (%s)", n, v.invalidSummary())
	}
	return s
}

// invalidSummary counts the invalid values per run: "2 current, 1 baseline".
func (v *Verdict) invalidSummary() string {
	var parts []string
	for _, run := range []string{RunCurrent, RunBaseline} {
		n := 0
		for _, p := range v.Invalid {
			if p.Run == run {
				n++
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, run))
		}
	}
	return strings.Join(parts, ", ")
}

// JudgeRuns tests every (combination, step, threads) that cur and base
// both measured for a regression of cur in each of opts.Metrics (a drop of
// throughput, a rise of a latency; a fixed-rate step's throughput is its
// target and is not judged), choosing per point the best test the data
// allow:
//
//  1. both runs have two repeats or more of the combination: Welch's test
//     on per-repeat log QPS, or log latency (between runs);
//  2. else the suite's noise floor for (step, threads), when it rests on
//     MinFloorDF df or more: the one-sample-per-side test with the floor's
//     variance;
//  3. else, with one cell per side that recorded its per-second spread,
//     Welch's test on the per-second samples (effective sample counts),
//     one-sided, and only for points at least MinMagnitude worse — a
//     fallback that over-calls, said so in the point's Detail. The
//     per-second latency series is at the 95th percentile, so only p95
//     has this fallback;
//  4. else the magnitude alone.
//
// The p-values of methods 1–3 over every point and metric form one
// family, corrected with
// opts.Correction (Holm by default: an A/A run ends with no regressed
// point with probability ≥ 1 − α when every point uses method 1 or 2);
// a point regressed when its adjusted p-value is below α. Combinations are
// matched by CellMeta.Combination, so repeats pool and a run with repeats
// can be judged against one without. Points with a zero baseline are not
// comparable and are left out, and so are values the quality gate marked
// invalid (they have no value in the manifest): Verdict.Invalid lists
// them and Summary counts them.
func JudgeRuns(cur, base *results.Manifest, opts VerdictOptions) (*Verdict, error) {
	opts, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	order, curCells := manifestCombinations(cur)
	_, baseCells := manifestCombinations(base)
	var pairs []combinationPair
	for _, comb := range order {
		if before := baseCells[comb]; len(before) > 0 {
			pairs = append(pairs, combinationPair{label: comb, before: before, after: curCells[comb]})
		}
	}
	return judgePairs(pairs, opts)
}

// resolved is opts with its defaults, or the error that names what is out
// of range.
func (opts VerdictOptions) resolved() (VerdictOptions, error) {
	if err := opts.Correction.Validate(); err != nil {
		return opts, err
	}
	if err := opts.MagnitudeRule.Validate(); err != nil {
		return opts, err
	}
	if opts.Correction == "" {
		opts.Correction = inference.DefaultCorrection
	}
	if opts.MagnitudeRule == "" {
		opts.MagnitudeRule = MagnitudeTested
	}
	if opts.Alpha == 0 {
		opts.Alpha = 0.05
	}
	if !(opts.Alpha > 0 && opts.Alpha < 1) || !(opts.MinMagnitude >= 0 && opts.MinMagnitude < 1) {
		return opts, fmt.Errorf("verdict: alpha %v must be in (0, 1) and magnitude %v in [0, 1): %w", opts.Alpha, opts.MinMagnitude, inference.ErrInvalid)
	}
	opts.Metrics = analysis.MetricsOrDefault(opts.Metrics)
	for _, m := range opts.Metrics {
		if err := m.Validate(); err != nil {
			return opts, fmt.Errorf("verdict: %w: %w", err, inference.ErrInvalid)
		}
	}
	return opts, nil
}

// JudgeBaseline tests every other combination of m against the
// combination of m's baseline cell (Manifest.Baseline), as JudgeRuns tests
// a run against an earlier one, with one more method first: when both
// combinations ran in blocks (placement.blocks Repeats: each block's cells
// one after the other on one node) and two blocks or more measured both,
// a point is the paired test of the per-block log ratios
// (MethodPairedBlocks), so what a block's node and time add to both sides
// cancels instead of widening the test. "Before" is the baseline's,
// "after" the other combination's; Verdict.Invalid's "baseline" and
// "current" follow suit.
//
// Model of the paired test: ln value = block + combination + error, the
// block effect shared by a block's cells, the errors independent and
// normal with one variance per (step, threads); the blocks independent.
// Under it the per-block log ratios are independent normals around the
// combinations' log ratio, and the one-sided t-test on them is exact.
func JudgeBaseline(m *results.Manifest, opts VerdictOptions) (*Verdict, error) {
	opts, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	order, cells := manifestCombinations(m)
	baseComb := ""
	for comb, cs := range cells {
		for _, c := range cs {
			if c.Name == m.Baseline {
				baseComb = comb
			}
		}
	}
	if baseComb == "" {
		return nil, fmt.Errorf("verdict: baseline cell %q is not a succeeded cell of run %s: %w", m.Baseline, m.Run.Name, inference.ErrInvalid)
	}
	var pairs []combinationPair
	for _, comb := range order {
		if comb != baseComb {
			pairs = append(pairs, combinationPair{label: comb, before: cells[baseComb], after: cells[comb], paired: true})
		}
	}
	v, err := judgePairs(pairs, opts)
	if v != nil {
		v.Baseline = baseComb
	}
	return v, err
}

// combinationPair is one comparison of a verdict: after's cells judged
// against before's; paired when the two may share blocks (one run).
type combinationPair struct {
	label         string
	before, after []*results.ManifestCell
	paired        bool
}

// judgePairs is the verdict over pairs (JudgeRuns, JudgeBaseline).
func judgePairs(pairs []combinationPair, opts VerdictOptions) (*Verdict, error) {
	v := &Verdict{Metrics: opts.Metrics, Correction: opts.Correction, Alpha: opts.Alpha, MagnitudeRule: opts.MagnitudeRule}
	baselineListed := map[*results.ManifestCell]bool{} // a baseline shared by pairs lists its invalid values once
	for _, cp := range pairs {
		after, before := cp.after, cp.before
		v.Invalid = append(v.Invalid, invalidOf(RunCurrent, after)...)
		for _, c := range before {
			if !baselineListed[c] {
				baselineListed[c] = true
				v.Invalid = append(v.Invalid, invalidOf(RunBaseline, []*results.ManifestCell{c})...)
			}
		}
		label := cp.label
		if len(after) == 1 && len(before) == 1 {
			label = after[0].Name
		}
		for _, k := range pointsOf(after) {
			for _, m := range opts.Metrics {
				if !m.Judged(k.Step) {
					continue
				}
				xa, xb := metricValues(before, m, k), metricValues(after, m, k)
				if len(xa) == 0 || len(xb) == 0 {
					continue
				}
				pv, err := judgePoint(label, m, k, before, after, xa, xb, opts)
				if cp.paired && err == nil {
					pv, err = pairedByBlock(pv, m, k, before, after, opts)
				}
				if err != nil {
					return nil, fmt.Errorf("%s %s@%d %s: %w", label, k.Step, k.Threads, m.Label(), err)
				}
				v.Points = append(v.Points, pv)
			}
		}
	}
	ps := make([]float64, len(v.Points))
	for i, p := range v.Points {
		ps[i] = p.P
		if !math.IsNaN(p.P) {
			v.Tests++
		}
	}
	adj, err := inference.Adjust(opts.Correction, ps)
	if err != nil {
		return nil, err
	}
	for i := range v.Points {
		p := &v.Points[i]
		p.AdjustedP = adj[i]
		p.Detectable = detectable(*p, opts.Alpha/float64(max(v.Tests, 1)), opts.MinMagnitude, opts.MagnitudeRule)
		if p.Method == MethodMagnitudeOnly {
			p.Regressed = p.Metric.Worse(p.ChangePercent, opts.MinMagnitude)
		} else {
			p.Regressed = opts.MagnitudeRule.Regressed(p.Metric, p.AdjustedP, opts.Alpha, p.ChangePercent, opts.MinMagnitude)
		}
		if p.Regressed {
			v.Regressed = append(v.Regressed, *p)
		}
	}
	slices.SortStableFunc(v.Regressed, func(a, b PointVerdict) int {
		return cmp.Or(cmp.Compare(b.badness(), a.badness()), cmp.Compare(a.String(), b.String()))
	})
	return v, nil
}

// judgePoint tests one metric at one point; xa are the baseline's
// values, xb cur's.
//
// A latency is tested as its reciprocal (the rate one client could
// sustain), which turns "rose by more than m" into "fell by more than
// m/(1+m)" exactly: ln(1/b) − ln(1/a) < ln(1/(1+m)) ⇔ b/a > 1+m. The
// variance of the log is the same either way, so the noise floor of log
// latency applies unchanged.
func judgePoint(label string, m analysis.Metric, k inference.Key, before, after []*results.ManifestCell, xa, xb []float64,
	opts VerdictOptions) (PointVerdict, error) {
	pv := PointVerdict{Cell: label, Step: k.Step, Threads: k.Threads, Metric: m, Before: stats.Mean(xa), After: stats.Mean(xb),
		NBefore: len(xa), NAfter: len(xb), P: math.NaN(), AdjustedP: math.NaN(), Detectable: math.NaN(), CV: math.NaN()}
	pv.ChangePercent = 100 * (pv.After/pv.Before - 1)
	ta, tb, mag := xa, xb, opts.MagnitudeRule.TestMagnitude(m, opts.MinMagnitude)
	if m.LowerIsBetter() {
		ta, tb = reciprocals(xa), reciprocals(xb)
	}
	if len(xa) >= 2 && len(xb) >= 2 {
		t, err := inference.Slowdown(ta, tb, mag)
		if err != nil {
			return pv, err
		}
		pv.Method, pv.P, pv.CV = MethodBetweenRuns, t.P, pooledLogCV(xa, xb)
		pv.Detail = fmt.Sprintf("between runs (%d+%d repeats)", len(xa), len(xb))
		return pv, nil
	}
	if fp, ok := opts.Floor.MetricPoint(floorMetric(m), k.Step, k.Threads); ok && fp.DF >= MinFloorDF {
		t, err := inference.SlowdownKnownNoise(ta, tb, mag, FloorOf(fp))
		if err != nil {
			return pv, err
		}
		pv.Method, pv.P, pv.CV, pv.floorDF = MethodNoiseFloor, t.P, fp.CV, fp.DF
		pv.Detail = fmt.Sprintf("noise floor CV %.1f %% over %d df", 100*fp.CV, fp.DF)
		return pv, nil
	}
	if len(before) == 1 && len(after) == 1 {
		if mb, sb, ma, sa, ok := perSecondOf(m, before[0], after[0], k); ok {
			pv.Method, pv.Detail, pv.P = MethodPerSecond, perSecondDetail, 1
			if m.Worse(pv.ChangePercent, opts.MinMagnitude) {
				pv.P = perSecondP(m, inference.WelchFromMoments(mb, sb.Stddev, sb.Independent(), ma, sa.Stddev, sa.Independent()))
			}
			return pv, nil
		}
	}
	pv.Method, pv.Detail = MethodMagnitudeOnly, magnitudeOnlyDetail
	return pv, nil
}

// perSecondP is the one-sided "worse" p-value of the per-second Welch test
// w, as the between-run tests: t < 0 when cur's mean is lower, which is
// worse for throughput and better for a latency.
func perSecondP(m analysis.Metric, w inference.Welch) float64 {
	if math.IsInf(w.T, 0) || w.DF <= 0 {
		return w.P / 2
	}
	tw := w.T
	if m.LowerIsBetter() {
		tw = -tw
	}
	return stats.StudentCDF(tw, w.DF)
}

// pairedByBlock replaces pv's test by the paired test of the per-block
// log ratios (MethodPairedBlocks) when blockValues pairs before and after
// at k; else it returns pv as judgePoint chose it. Before and After stay
// the means; ChangePercent becomes the paired estimate's (the geometric
// mean of the block ratios), which the test is about and the Estimated
// rule asks to reach the magnitude. Detectable is left NaN:
// inference.Design models two independent samples, not pairs.
func pairedByBlock(pv PointVerdict, m analysis.Metric, k inference.Key, before, after []*results.ManifestCell, opts VerdictOptions) (PointVerdict, error) {
	xa, xb, ok := blockValues(before, after, m, k)
	if !ok {
		return pv, nil
	}
	if m.LowerIsBetter() {
		xa, xb = reciprocals(xa), reciprocals(xb) // as judgePoint tests a latency
	}
	t, err := inference.PairedSlowdown(xa, xb, opts.MagnitudeRule.TestMagnitude(m, opts.MinMagnitude))
	if err != nil {
		return pv, err
	}
	pv.Method, pv.P, pv.CV, pv.Detectable = MethodPairedBlocks, t.P, math.NaN(), math.NaN()
	pv.NBefore, pv.NAfter = len(xa), len(xb)
	pv.ChangePercent = 100 * (t.Ratio - 1)
	if m.LowerIsBetter() {
		pv.ChangePercent = 100 * (1/t.Ratio - 1)
	}
	pv.Detail = fmt.Sprintf("paired by block (%d blocks)", len(xa))
	return pv, nil
}

// blockValues pairs the metric's values at k of before's and after's
// cells by block, in block order: false unless every cell of both sides
// with a value there has a block, no side has two values in one block,
// and two blocks or more have both.
func blockValues(before, after []*results.ManifestCell, m analysis.Metric, k inference.Key) (xa, xb []float64, ok bool) {
	byBlock := func(cells []*results.ManifestCell) (map[int]float64, bool) {
		out := map[int]float64{}
		for _, c := range cells {
			v, have := m.Value(c, k.Step, k.Threads)
			if !have || !(v > 0) {
				continue
			}
			if _, dup := out[c.Block]; c.Block <= 0 || dup {
				return nil, false
			}
			out[c.Block] = v
		}
		return out, true
	}
	ma, oka := byBlock(before)
	mb, okb := byBlock(after)
	if !oka || !okb {
		return nil, nil, false
	}
	return analysis.PairBlocks(ma, mb)
}

// detectable is p's Detectable at the given level: inference.Design's
// minimum detectable effect beyond the test's null boundary (1 − magnitude
// for throughput, its reciprocal's for a latency), turned into the true
// change it takes. Under MagnitudeEstimated the boundary is 1 and the
// magnitude is the design's MinEstimate.
func detectable(p PointVerdict, level, magnitude float64, rule MagnitudeRule) float64 {
	if (p.Method != MethodBetweenRuns && p.Method != MethodNoiseFloor) || !(p.CV > 0) {
		return math.NaN()
	}
	d := inference.Design{CV: p.CV, Alpha: level, FloorDF: p.floorDF}
	if rule == MagnitudeEstimated {
		// The rate's magnitude; the change is beyond 1, as magnitude 0.
		d.MinEstimate = magnitude
		if p.Metric.LowerIsBetter() {
			d.MinEstimate = magnitude / (1 + magnitude)
		}
		magnitude = 0
	}
	e, err := d.MDE(min(p.NBefore, p.NAfter), DetectablePower)
	if err != nil {
		return math.NaN()
	}
	// A fall of the (reciprocal) rate beyond the boundary: the rate at
	// (1 − m')(1 − e) of the baseline, m' the rate's magnitude.
	if p.Metric.LowerIsBetter() {
		fall := 1 - (1-magnitude/(1+magnitude))*(1-e)
		return 1/(1-fall) - 1
	}
	return 1 - (1-magnitude)*(1-e)
}

// pooledLogCV is the CV of the pooled variance of ln x over both sides
// (each side about its own mean), under log-normality; NaN with fewer
// than three values in all.
func pooledLogCV(a, b []float64) float64 {
	var ss float64
	n := 0
	for _, xs := range [][]float64{a, b} {
		var m float64
		for _, x := range xs {
			m += math.Log(x) / float64(len(xs))
		}
		for _, x := range xs {
			ss += (math.Log(x) - m) * (math.Log(x) - m)
		}
		n += len(xs) - 1
	}
	if n < 1 {
		return math.NaN()
	}
	return math.Sqrt(math.Expm1(ss / float64(n)))
}

// LeastSensitive is the tested point whose Detectable is the largest: the
// change a run could carry at one of its points without being called
// regressed (with DetectablePower). ok is false when no point has one.
func (v *Verdict) LeastSensitive() (p PointVerdict, ok bool) {
	for _, q := range v.Points {
		if !math.IsNaN(q.Detectable) && (!ok || q.Detectable > p.Detectable) {
			p, ok = q, true
		}
	}
	return p, ok
}

// floorMetric is the NoisePoint.Metric of m's floor.
func floorMetric(m analysis.Metric) string {
	if m == analysis.MetricThroughput {
		return ""
	}
	return string(m)
}

// perSecondOf is the per-second means and spreads of a point on each side:
// the QPS samples for throughput, the per-second p95 latency for p95. p99
// has none (no per-second series at that percentile).
func perSecondOf(m analysis.Metric, before, after *results.ManifestCell, k inference.Key) (
	mb float64, sb results.Spread, ma float64, sa results.Spread, ok bool) {
	var spreads func(c *results.ManifestCell) (float64, results.Spread, bool)
	switch m {
	case analysis.MetricThroughput:
		spreads = func(c *results.ManifestCell) (float64, results.Spread, bool) {
			s, ok := c.QPSSpread[k.Step][k.Threads]
			return c.QPS[k.Step][k.Threads], s, ok
		}
	case analysis.MetricP95Latency:
		spreads = func(c *results.ManifestCell) (float64, results.Spread, bool) {
			s, ok := c.LatencySpread[k.Step][k.Threads]
			mean, okm := c.LatencyMeanMs[k.Step][k.Threads]
			return mean, s, ok && okm && mean > 0
		}
	default:
		return 0, results.Spread{}, 0, results.Spread{}, false
	}
	mb, sb, okb := spreads(before)
	ma, sa, oka := spreads(after)
	ok = oka && okb && sa.Independent() >= 2 && sb.Independent() >= 2
	return mb, sb, ma, sa, ok
}

func reciprocals(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = 1 / x
	}
	return out
}
