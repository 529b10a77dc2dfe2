package benchmarkrun

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
)

// Adaptive repeats (workload.precision): the run's cells come in rounds,
// one cell per combination each (matrix.Expand, every second round
// reversed). status.precision.rounds is the record of how many rounds the
// run has; matrix.Expand reads it, so a restarted controller expands the
// same cells. When every cell of the rounds so far has finished, the
// stopping rule (inference.PrecisionRule) judges all of their results and
// either adds a round or lets the run finish.

// startPrecision records the first rounds (minRepeats) when the run starts.
func (p *runPass) startPrecision() {
	if p.run.Spec.Workload.Precision == nil {
		return
	}
	p.run.Status.Precision = &dbbenchv1alpha1.PrecisionStatus{
		Rounds: matrix.Rounds(p.run), State: dbbenchv1alpha1.PrecisionMeasuring,
	}
}

// nextRound judges the finished rounds and adds one when the target is
// not met yet; it reports whether it did. Called once every cell finished.
// The judgement is a pure function of the cells' results, so a pass whose
// status write was lost makes the same decision again.
func (p *runPass) nextRound(cells []matrix.Cell) bool {
	spec := p.run.Spec.Workload.Precision
	if spec == nil {
		return false
	}
	st := &p.run.Status
	if st.Precision == nil {
		p.startPrecision()
	}
	ps := st.Precision
	if ps.State != dbbenchv1alpha1.PrecisionMeasuring {
		return false // decided by an earlier pass
	}
	rounds := matrix.Rounds(p.run)
	ps.Rounds, ps.RoundsJudged = rounds, rounds
	for _, cs := range st.Cells {
		if cs.Phase == dbbenchv1alpha1.CellFailed {
			// The run fails whatever more rounds measure; do not spend
			// them.
			ps.State = dbbenchv1alpha1.PrecisionStopped
			ps.Message = fmt.Sprintf("cell %s failed: no more rounds, the run fails either way", cs.Name)
			return false
		}
	}
	rule := inference.PrecisionRule{TargetPercent: spec.Target(), MinRepeats: int(spec.Min()), MaxRepeats: int(spec.Max())}
	d, err := rule.Decide(int(rounds), precisionSamples(p.run, cells, p.manifest(cells), p.steps))
	if err != nil {
		ps.State = dbbenchv1alpha1.PrecisionStopped
		ps.Message = fmt.Sprintf("cannot judge the precision: %v", err)
		return false
	}
	ps.Message = ""
	ps.HalfWidthPercent = percentString(d.Worst)
	ps.Points = precisionPoints(d, rule.TargetPercent)
	ps.Reached = fmt.Sprintf("±%s%% after %d/%d", ps.HalfWidthPercent, rounds, spec.Max())
	switch {
	case d.Stop && d.Met:
		ps.State = dbbenchv1alpha1.PrecisionTargetMet
	case d.Stop:
		ps.State = dbbenchv1alpha1.PrecisionMaxRepeatsReached
	default:
		ps.Rounds = rounds + 1
		p.Event(false, EventRoundAdded, "Repeat", fmt.Sprintf("Added round %d of at most %d: widest interval ±%s%%, target ±%s%%",
			ps.Rounds, spec.Max(), ps.HalfWidthPercent, percentString(rule.TargetPercent)))
		return true
	}
	return false
}

// precisionSamples are the compared ratios of a run's cells: every
// combination against the baseline's, per (step, threads), each side's
// values one per succeeded cell; with one combination only, that
// combination's own values (the precision of its mean). Steps reported as
// rows/s count like QPS.
func precisionSamples(run *dbbenchv1alpha1.BenchmarkRun, cells []matrix.Cell, m *results.Manifest, steps []string) []inference.RatioSamples {
	baseName := matrix.BaselineName(run)
	var base string
	var combs []string
	values := map[string]map[inference.Key][]float64{}
	keys := map[inference.Key]bool{}
	for i, c := range cells {
		if c.Name == baseName {
			base = c.Combination
		}
		if _, ok := values[c.Combination]; !ok {
			combs = append(combs, c.Combination)
			values[c.Combination] = map[inference.Key][]float64{}
		}
		mc := m.Cells[i]
		if mc.Phase != string(dbbenchv1alpha1.CellSucceeded) {
			continue
		}
		for _, series := range []map[string]map[int]float64{mc.QPS, mc.RowsPerSecond} {
			for step, byThreads := range series {
				for th, v := range byThreads {
					k := inference.Key{Step: step, Threads: th}
					keys[k] = true
					values[c.Combination][k] = append(values[c.Combination][k], v)
				}
			}
		}
	}
	order := make([]inference.Key, 0, len(keys))
	for k := range keys {
		order = append(order, k)
	}
	slices.SortFunc(order, func(a, b inference.Key) int { return compareKeys(a, b, steps) })
	var out []inference.RatioSamples
	for _, k := range order {
		if len(combs) == 1 {
			out = append(out, inference.RatioSamples{Key: k, Name: combs[0], Other: values[combs[0]][k]})
			continue
		}
		// A non-nil base, even empty: a ratio, whose base may still lack runs.
		b := append([]float64{}, values[base][k]...)
		for _, c := range combs {
			if c != base {
				out = append(out, inference.RatioSamples{Key: k, Name: c, Base: b, Other: values[c][k]})
			}
		}
	}
	return out
}

// compareKeys orders points by the run's step order (steps it does not
// list, such as fixed-rate variants, after them by name), then threads.
func compareKeys(a, b inference.Key, steps []string) int {
	pos := func(s string) int {
		if i := slices.Index(steps, s); i >= 0 {
			return i
		}
		return len(steps)
	}
	return cmp.Or(cmp.Compare(pos(a.Step), pos(b.Step)), cmp.Compare(a.Step, b.Step), cmp.Compare(a.Threads, b.Threads))
}

// precisionPoints keeps, per (step, threads), the widest half-width over
// the compared combinations, in the decision's order.
func precisionPoints(d inference.PrecisionDecision, target float64) []dbbenchv1alpha1.PrecisionPoint {
	var out []dbbenchv1alpha1.PrecisionPoint
	widest := map[inference.Key]float64{}
	at := map[inference.Key]int{}
	for _, h := range d.HalfWidths {
		i, ok := at[h.Key]
		if !ok {
			at[h.Key] = len(out)
			widest[h.Key] = h.Percent
			out = append(out, dbbenchv1alpha1.PrecisionPoint{Step: h.Key.Step, Threads: int32(h.Key.Threads),
				HalfWidthPercent: percentString(h.Percent), Combination: h.Name, Met: h.Percent <= target})
			continue
		}
		if h.Percent > widest[h.Key] {
			widest[h.Key] = h.Percent
			out[i].HalfWidthPercent, out[i].Combination = percentString(h.Percent), h.Name
		}
		out[i].Met = out[i].Met && h.Percent <= target
	}
	return out
}

// percentString prints a half-width for the status: two significant
// decimals are plenty for a precision; +Inf (no interval yet) as "+Inf",
// which strconv.ParseFloat reads back.
func percentString(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// precisionNote is what a regression verdict says of the precision the
// run's rounds reached, so that a reader knows how fine a difference it
// could see; empty without workload.precision.
func (p *runPass) precisionNote() string {
	spec, ps := p.run.Spec.Workload.Precision, p.run.Status.Precision
	if spec == nil || ps == nil || ps.HalfWidthPercent == "" {
		return ""
	}
	target := percentString(spec.Target())
	switch ps.State {
	case dbbenchv1alpha1.PrecisionTargetMet:
		return fmt.Sprintf("; precision ±%s%% after %d rounds (target ±%s%% met)", ps.HalfWidthPercent, ps.RoundsJudged, target)
	case dbbenchv1alpha1.PrecisionMaxRepeatsReached:
		return fmt.Sprintf("; precision ±%s%% after %d rounds (target ±%s%% not met: maxRepeats reached)", ps.HalfWidthPercent, ps.RoundsJudged, target)
	}
	return fmt.Sprintf("; precision ±%s%% after %d rounds (target ±%s%%, rounds stopped: %s)", ps.HalfWidthPercent, ps.RoundsJudged, target, ps.Message)
}
