package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/stats"
)

// VerdictMethod is how one (combination, step, threads) of a run was
// tested against its baseline run.
type VerdictMethod string

const (
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
var VerdictMethods = []VerdictMethod{MethodBetweenRuns, MethodNoiseFloor, MethodPerSecond, MethodMagnitudeOnly}

// VerdictOptions tune JudgeRuns.
type VerdictOptions struct {
	// MinMagnitude is the slowdown (0.05 = 5 %) below which a change is
	// not a regression: the between-run tests test "slower by more than
	// MinMagnitude", the fallbacks require it of the point estimate.
	MinMagnitude float64
	// Alpha is the level of the run's family of tests after Correction; 0
	// means 0.05.
	Alpha float64
	// Correction is the multiple-comparison procedure over the run's
	// tests; "" is Holm (family-wise error rate).
	Correction inference.Correction
	// Floor is the suite's noise floor (SuiteNoise); nil when there is
	// none.
	Floor *results.NoiseFloors
}

// PointVerdict is the test of one (combination, step, threads).
type PointVerdict struct {
	// Cell is the combination's cell name when each run has one cell of
	// it, else the combination (its repeats were pooled).
	Cell    string `json:"cell"`
	Step    string `json:"step"`
	Threads int    `json:"threads"`
	// Before and After are the mean QPS of the baseline's and this run's
	// repeats; ChangePercent is 100 × (After/Before − 1).
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
	// P is the one-sided p-value of "slower" (by more than the magnitude
	// for the between-run methods); AdjustedP is P after the correction.
	// Both are NaN for MethodMagnitudeOnly.
	P         float64 `json:"p"`
	AdjustedP float64 `json:"adjustedP"`
	Regressed bool    `json:"regressed"`
}

func (p PointVerdict) String() string {
	return fmt.Sprintf("%s %s@%d %+.1f%% (%s)", p.Cell, p.Step, p.Threads, p.ChangePercent, p.Detail)
}

// Verdict is the judgement of a run against a baseline run.
type Verdict struct {
	// Points are every compared point, by cell, step and threads.
	Points []PointVerdict `json:"points"`
	// Regressed are the regressed points, largest slowdown first.
	Regressed  []PointVerdict       `json:"regressed"`
	Correction inference.Correction `json:"correction"`
	Alpha      float64              `json:"alpha"`
	// Tests is the size of the corrected family (points with a p-value).
	Tests int `json:"tests"`
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
	var parts []string
	for _, mc := range v.Methods() {
		parts = append(parts, fmt.Sprintf("%d %s", mc.Points, mc.Detail))
	}
	if len(parts) == 0 {
		return "nothing compared"
	}
	s := strings.Join(parts, ", ")
	if v.Tests > 0 {
		s += fmt.Sprintf("; %s over %d tests at α %g", v.Correction, v.Tests, v.Alpha)
	}
	return s
}

// JudgeRuns tests every (combination, step, threads) that cur and base
// both measured for a slowdown of cur, choosing per point the best test
// the data allow:
//
//  1. both runs have two repeats or more of the combination: Welch's test
//     on per-repeat log QPS (between runs);
//  2. else the suite's noise floor for (step, threads), when it rests on
//     MinFloorDF df or more: the one-sample-per-side test with the floor's
//     variance;
//  3. else, with one cell per side that recorded its per-second spread,
//     Welch's test on the per-second samples (effective sample counts),
//     one-sided, and only for points at least MinMagnitude slower — a
//     fallback that over-calls, said so in the point's Detail;
//  4. else the magnitude alone.
//
// The p-values of methods 1–3 form one family, corrected with
// opts.Correction (Holm by default: an A/A run ends with no regressed
// point with probability ≥ 1 − α when every point uses method 1 or 2);
// a point regressed when its adjusted p-value is below α. Combinations are
// matched by CellMeta.Combination, so repeats pool and a run with repeats
// can be judged against one without. Points with a zero baseline are not
// comparable and are left out.
func JudgeRuns(cur, base *results.Manifest, opts VerdictOptions) (*Verdict, error) {
	if err := opts.Correction.Validate(); err != nil {
		return nil, err
	}
	if opts.Correction == "" {
		opts.Correction = inference.DefaultCorrection
	}
	if opts.Alpha == 0 {
		opts.Alpha = 0.05
	}
	if !(opts.Alpha > 0 && opts.Alpha < 1) || !(opts.MinMagnitude >= 0 && opts.MinMagnitude < 1) {
		return nil, fmt.Errorf("verdict: alpha %v must be in (0, 1) and magnitude %v in [0, 1): %w", opts.Alpha, opts.MinMagnitude, inference.ErrInvalid)
	}
	v := &Verdict{Correction: opts.Correction, Alpha: opts.Alpha}
	order, curCells := manifestCombinations(cur)
	_, baseCells := manifestCombinations(base)
	for _, comb := range order {
		after, before := curCells[comb], baseCells[comb]
		if len(before) == 0 {
			continue
		}
		label := comb
		if len(after) == 1 && len(before) == 1 {
			label = after[0].Name
		}
		for _, k := range pointsOf(after) {
			xa, xb := valuesOf(before, k), valuesOf(after, k)
			if len(xa) == 0 || len(xb) == 0 {
				continue
			}
			pv, err := judgePoint(label, k, before, after, xa, xb, opts)
			if err != nil {
				return nil, fmt.Errorf("%s %s@%d: %w", label, k.Step, k.Threads, err)
			}
			v.Points = append(v.Points, pv)
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
		if p.Method == MethodMagnitudeOnly {
			p.Regressed = p.ChangePercent <= -100*opts.MinMagnitude
		} else {
			p.Regressed = p.AdjustedP < opts.Alpha
		}
		if p.Regressed {
			v.Regressed = append(v.Regressed, *p)
		}
	}
	slices.SortStableFunc(v.Regressed, func(a, b PointVerdict) int {
		return cmp.Or(cmp.Compare(a.ChangePercent, b.ChangePercent), cmp.Compare(a.String(), b.String()))
	})
	return v, nil
}

// judgePoint tests one point; xa are the baseline's values, xb cur's.
func judgePoint(label string, k inference.Key, before, after []*results.ManifestCell, xa, xb []float64, opts VerdictOptions) (PointVerdict, error) {
	pv := PointVerdict{Cell: label, Step: k.Step, Threads: k.Threads, Before: mean(xa), After: mean(xb),
		NBefore: len(xa), NAfter: len(xb), P: math.NaN(), AdjustedP: math.NaN()}
	pv.ChangePercent = 100 * (pv.After/pv.Before - 1)
	if len(xa) >= 2 && len(xb) >= 2 {
		t, err := inference.Slowdown(xa, xb, opts.MinMagnitude)
		if err != nil {
			return pv, err
		}
		pv.Method, pv.P = MethodBetweenRuns, t.P
		pv.Detail = fmt.Sprintf("between runs (%d+%d repeats)", len(xa), len(xb))
		return pv, nil
	}
	if fp, ok := opts.Floor.Point(k.Step, k.Threads); ok && fp.DF >= MinFloorDF {
		t, err := inference.SlowdownKnownNoise(xa, xb, opts.MinMagnitude, FloorOf(fp))
		if err != nil {
			return pv, err
		}
		pv.Method, pv.P = MethodNoiseFloor, t.P
		pv.Detail = fmt.Sprintf("noise floor CV %.1f %% over %d df", 100*fp.CV, fp.DF)
		return pv, nil
	}
	if len(before) == 1 && len(after) == 1 {
		sb, okb := before[0].QPSSpread[k.Step][k.Threads]
		sa, oka := after[0].QPSSpread[k.Step][k.Threads]
		if oka && okb && sa.Independent() >= 2 && sb.Independent() >= 2 {
			pv.Method, pv.Detail, pv.P = MethodPerSecond, perSecondDetail, 1
			if pv.ChangePercent <= -100*opts.MinMagnitude {
				w := welchFromMoments(pv.Before, sb.Stddev, sb.Independent(), pv.After, sa.Stddev, sa.Independent())
				// One-sided "slower", as the between-run tests: t < 0
				// when cur's mean is lower.
				pv.P = stats.StudentCDF(w.T, w.DF)
				if math.IsInf(w.T, 0) || w.DF <= 0 {
					pv.P = w.P / 2
				}
			}
			return pv, nil
		}
	}
	pv.Method, pv.Detail = MethodMagnitudeOnly, magnitudeOnlyDetail
	return pv, nil
}
