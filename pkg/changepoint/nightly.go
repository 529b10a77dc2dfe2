package changepoint

import (
	"math"
	"slices"

	"github.com/dbbench/dbbench/pkg/stats"
)

// The passes of this file make the detector fit nightly suites, where the
// newest runs matter most and a slow decline is as common as a step. They
// run after the E-divisive merge pass, only with the options that enable
// them (all off in OtavaOptions, whose results they therefore never touch):
//
//  1. setThreshold: the magnitude filter relative to the series' noise
//     (Options.NoiseMultiple), before the split pass.
//  2. driftPass: sustained slopes become Drifts (Options.Drift).
//  3. tailPass: changes in the newest runs (Options.NewestRuns).

// minDriftRuns is the fewest runs a drift may span: below it a line and a
// step (or an outlier) cannot be told apart.
const minDriftRuns = 8

// madToSigma converts the median absolute deviation of Gaussian data to its
// standard deviation (1/Φ⁻¹(3/4)).
const madToSigma = 1.482602218505602

// driftState is a drift during the passes; the segment [start, end) holds no
// change point.
type driftState struct {
	start, end int
	fit        lineFit
}

// setThreshold sets the noise CV and the magnitude threshold of the series.
func (d *Detector) setThreshold(xs []float64) {
	d.noiseCV, d.minMag = 0, d.opts.MinMagnitude
	if d.opts.NoiseMultiple == 0 {
		return
	}
	d.noiseCV = d.opts.NoiseCV
	if d.noiseCV == 0 {
		d.noiseCV = d.estimateNoiseCV(xs)
	}
	d.minMag = math.Max(d.minMag, d.opts.NoiseMultiple*d.noiseCV)
}

// EstimateNoiseCV returns the run-to-run noise of xs as a coefficient of
// variation, the estimate Options.NoiseCV = 0 uses: the median absolute
// deviation of the successive differences (around their median, so a steady
// drift does not count as noise), ×1.4826 for Gaussian noise and /√2 because
// a difference holds the noise of two runs, divided by |median(xs)|. A step
// or an outlier run touches only one or two differences, so the estimate
// ignores them. It returns 0 for fewer than 3 values or a zero median.
func EstimateNoiseCV(xs []float64) float64 {
	var d Detector
	return d.estimateNoiseCV(xs)
}

func (d *Detector) estimateNoiseCV(xs []float64) float64 {
	n := len(xs)
	if n < 3 {
		return 0
	}
	// Three medians by selection on one scratch buffer that the Detector
	// keeps: O(n), no allocation once the buffer has grown.
	buf := append(d.sortBuf[:0], xs...)
	center := math.Abs(median(buf))
	buf = buf[:0]
	for i := 1; i < n; i++ {
		buf = append(buf, xs[i]-xs[i-1])
	}
	m := median(buf)
	for i, v := range buf {
		buf[i] = math.Abs(v - m)
	}
	mad := median(buf)
	d.sortBuf = buf
	if center == 0 {
		return 0
	}
	return madToSigma * mad / math.Sqrt2 / center
}

// nightlyPasses runs the drift and newest-run passes the options enable.
func (d *Detector) nightlyPasses(xs []float64) {
	d.drifts = d.drifts[:0]
	if d.opts.Drift {
		d.driftPass(xs)
	}
	if d.opts.NewestRuns {
		d.tailPass(xs)
	}
}

// segment returns the segment on the right of change point k (k = −1: the
// first segment): [lo, hi).
func (d *Detector) segment(k, n int) (lo, hi int) {
	if k >= 0 {
		lo = d.cps[k].idx
	}
	hi = n
	if k+1 < len(d.cps) {
		hi = d.cps[k+1].idx
	}
	return lo, hi
}

// removeCPs deletes change points [i, j] and refreshes their neighbours.
func (d *Detector) removeCPs(xs []float64, i, j int) {
	d.cps = append(d.cps[:i], d.cps[j+1:]...)
	d.recompute(xs, i-1)
	d.recompute(xs, i)
}

// driftPass turns sustained slopes into drifts, in two steps:
//
//  1. Every run of consecutive change points that all go the same way (a
//     staircase, or one step; longest runs first) is compared with one
//     straight line over the span from the change point before it to the
//     one after it. The
//     line replaces the steps when its BIC is lower — n·ln(RSS/n) plus
//     ln(n) per parameter, 2 for the line and 2 per step + 1 for the steps
//     (a level and a position each) — and its slope is significant and
//     large enough.
//  2. Every remaining segment of at least minDriftRuns runs is tested the
//     same way against the best single step inside it, which catches a
//     slope too gentle for E-divisive to split.
//
// A step in the newest runs is never taken for a drift by step 2: the best
// single step fits it better than a line.
func (d *Detector) driftPass(xs []float64) {
	n := len(xs)
	maxP := d.opts.MaxPValue
	for i := 0; i < len(d.cps); {
		j := i
		up := d.cps[i].change > 0
		for j+1 < len(d.cps) && (d.cps[j+1].change > 0) == up {
			j++
		}
		// Largest runs of the group first, so that a decline that E-divisive
		// cut into a staircase is one drift, and a real step before it (the
		// first point of the group) can stay a step.
		accepted := false
		for size := j - i + 1; size >= 1 && !accepted; size-- {
			for a := i; a+size-1 <= j; a++ {
				if d.tryDrift(xs, a, a+size-1, up, maxP) {
					accepted, i = true, a // position a now holds the change point after the drift
					break
				}
			}
		}
		if !accepted {
			i = j + 1
		}
	}
	for k := -1; k < len(d.cps); k++ {
		lo, hi := d.segment(k, n)
		if hi-lo < minDriftRuns || d.driftAt(lo) >= 0 {
			continue
		}
		fit := fitLine(xs[lo:hi])
		if fit.p >= maxP || fit.mag <= d.minMag {
			continue
		}
		if lineWins(hi-lo, fit.ss, d.bestStepSS(xs, lo, hi), 3) {
			d.drifts = append(d.drifts, driftState{start: lo, end: hi, fit: fit})
		}
	}
	slices.SortFunc(d.drifts, func(a, b driftState) int { return a.start - b.start })
}

// tryDrift replaces the change points at positions [a, b], all going the
// same way (up or down), by a drift over the span from the change point
// before them to the one after them, if a line explains the span better.
func (d *Detector) tryDrift(xs []float64, a, b int, up bool, maxP float64) bool {
	lo, _ := d.segment(a-1, len(xs))
	_, hi := d.segment(b, len(xs))
	// The segment before the group may already be a drift (the group
	// before went the other way and became one): then this span would
	// overlap it.
	if hi-lo < minDriftRuns || d.driftAt(lo) >= 0 {
		return false
	}
	fit := fitLine(xs[lo:hi])
	if (fit.slope > 0) != up || !(fit.p < maxP) || fit.mag <= d.minMag {
		return false
	}
	var ssSteps float64
	prev := lo
	for k := a; k <= b; k++ {
		ssSteps += sumSquares(xs[prev:d.cps[k].idx])
		prev = d.cps[k].idx
	}
	ssSteps += sumSquares(xs[prev:hi])
	if !lineWins(hi-lo, fit.ss, ssSteps, 2*(b-a+1)+1) {
		return false
	}
	d.removeCPs(xs, a, b)
	d.drifts = append(d.drifts, driftState{start: lo, end: hi, fit: fit})
	return true
}

// driftAt returns the position in d.drifts of the drift that starts at run
// start, or −1.
func (d *Detector) driftAt(start int) int {
	for i, dr := range d.drifts {
		if dr.start == start {
			return i
		}
	}
	return -1
}

// lineWins compares the BIC of a straight line (2 parameters) with that of
// a step model with k parameters, both with Gaussian residuals of common
// variance over n points.
func lineWins(n int, ssLine, ssSteps float64, k int) bool {
	switch {
	case ssSteps <= 0:
		return false
	case ssLine <= 0:
		return true
	}
	nf := float64(n)
	return nf*math.Log(ssLine)+2*math.Log(nf) < nf*math.Log(ssSteps)+float64(k)*math.Log(nf)
}

// sumSquares returns the sum of squared deviations from the mean.
func sumSquares(xs []float64) float64 {
	st := describe(xs)
	return st.stddev * st.stddev * float64(st.n)
}

// bestStepSS returns the smallest residual sum of squares of a single step
// anywhere in xs[lo:hi) (one point or more on each side).
func (d *Detector) bestStepSS(xs []float64, lo, hi int) float64 {
	d.pre.load(xs[lo:hi])
	L := hi - lo
	best := math.Inf(1)
	for j := 1; j < L; j++ {
		a, b := d.pre.stats(0, j), d.pre.stats(j, L)
		ss := a.stddev*a.stddev*float64(a.n) + b.stddev*b.stddev*float64(b.n)
		best = math.Min(best, ss)
	}
	return best
}

// lineFit is an ordinary least-squares line through (i, xs[i]).
type lineFit struct {
	slope      float64
	start, end float64 // fitted values at the first and the last point
	ss         float64 // residual sum of squares
	p          float64 // two-sided t-test of slope = 0, n−2 degrees of freedom
	change     float64 // end/start − 1
	mag        float64 // max(|end/start − 1|, |start/end − 1|)
}

func fitLine(xs []float64) lineFit {
	n := len(xs)
	nf := float64(n)
	xm := (nf - 1) / 2
	ym := describe(xs).mean
	var sxx, sxy, syy float64
	for i, y := range xs {
		dx, dy := float64(i)-xm, y-ym
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	f := lineFit{p: 1}
	if n < 3 || sxx == 0 {
		f.start, f.end = ym, ym
		return f
	}
	f.slope = sxy / sxx
	f.ss = math.Max(0, syy-f.slope*sxy)
	f.start = ym - f.slope*xm
	f.end = ym + f.slope*xm
	f.change, f.mag = relChange(f.start, f.end)
	se := math.Sqrt(f.ss / (nf - 2) / sxx)
	switch {
	case se <= 1e-12*math.Abs(ym) && math.Abs(f.slope) <= 1e-12*math.Abs(ym):
		f.p = 1
	case se == 0:
		f.p = 0
	default:
		if p := stats.StudentTwoSidedP(f.slope/se, nf-2); !math.IsNaN(p) {
			f.p = p
		}
	}
	return f
}

// prefix holds prefix sums of one span, centred on its mean for accuracy,
// so that the statistics of any sub-range cost O(1).
type prefix struct {
	ref    float64
	s1, s2 []float64
}

func (p *prefix) load(xs []float64) {
	p.ref = describe(xs).mean
	p.s1 = append(p.s1[:0], 0)
	p.s2 = append(p.s2[:0], 0)
	var a, b float64
	for _, x := range xs {
		v := x - p.ref
		a += v
		b += v * v
		p.s1 = append(p.s1, a)
		p.s2 = append(p.s2, b)
	}
}

// stats returns the segmentStats of the loaded span's [a, b).
func (p *prefix) stats(a, b int) segmentStats {
	n := b - a
	if n <= 0 {
		return segmentStats{}
	}
	nf := float64(n)
	m := (p.s1[b] - p.s1[a]) / nf
	v := (p.s2[b]-p.s2[a])/nf - m*m
	if v < 0 || n < 2 {
		v = 0
	}
	return segmentStats{n: n, mean: p.ref + m, stddev: math.Sqrt(v)}
}

// tStat returns |t| of the pooled-variance t-test that otavaTTest computes
// (+Inf for a difference with no spread), to rank candidate positions.
func tStat(a, b segmentStats) float64 {
	if a.n == 0 || b.n == 0 || a.n+b.n <= 2 {
		return 0
	}
	n1, n2 := float64(a.n), float64(b.n)
	pooled := ((n1-1)*a.stddev*a.stddev + (n2-1)*b.stddev*b.stddev) / (n1 + n2 - 2)
	denom := math.Sqrt(pooled * (1/n1 + 1/n2))
	diff := math.Abs(a.mean - b.mean)
	scale := math.Max(math.Abs(a.mean), math.Abs(b.mean))
	switch {
	case diff <= 1e-12*scale:
		return 0
	case denom <= 1e-12*scale:
		return math.Inf(1)
	}
	return diff / denom
}

// tailPass finds changes in the newest runs, which the E-divisive search
// cannot place closer to the end than MinSegmentLength runs:
//
//  1. Relocation. If the last change point leaves fewer than
//     2×MinSegmentLength runs after it, the minimum segment length may have
//     pushed it there from the newest runs (a drop in the last two runs is
//     found at n−3, under-sized). Over the span from the change point before
//     it, every position from it to the newest run is tried; the position
//     with the largest |t| (the maximum-likelihood position of a single
//     step) replaces it if it lies later and passes the tests below.
//  2. Tail test. Otherwise, in the last segment (from the last change point,
//     which must leave MinSegmentLength runs before the candidate), each of
//     the last MinSegmentLength positions is tried as the start of a change
//     and the one with the largest |t| is tested.
//
// A candidate must have p < MaxPValue and a magnitude above the threshold.
// It is Confirmed when at least two runs follow it and it passes the
// MaxOutliers check; otherwise it is Suspected, and reported only if the
// newest run alone differs significantly (p < MaxPValue, same direction,
// above the threshold) from the runs before the change: a change the newest
// run no longer shows is not reported at all. Nothing is tested inside a
// drift that reaches the newest run: there the newest runs are expected to
// be the lowest (or highest).
func (d *Detector) tailPass(xs []float64) {
	n, m := len(xs), d.opts.MinSegmentLength
	if m < 2 || n < m+1 {
		return // with MinSegmentLength 1 the E-divisive search reaches the newest run
	}
	k := len(d.cps) - 1
	if k >= 0 && n-d.cps[k].idx < 2*m {
		lo, _ := d.segment(k-1, n)
		if d.driftAt(lo) < 0 {
			c := d.cps[k].idx
			if j := d.bestPosition(xs, lo, c, n); j != c {
				if tc, ok := d.tailChange(xs, lo, j); ok {
					d.cps[k] = tc
					d.recompute(xs, k-1)
					return
				}
			}
		}
	}
	lo, _ := d.segment(k, n)
	if d.driftAt(lo) >= 0 {
		return
	}
	from := max(lo+m, n-m)
	if from >= n {
		return
	}
	if tc, ok := d.tailChange(xs, lo, d.bestPosition(xs, lo, from, n)); ok {
		d.cps = append(d.cps, tc)
		d.recompute(xs, k)
	}
}

// bestPosition returns the j in [from, n) with the largest |t| between
// xs[lo:j] and xs[j:n] (the first on ties).
func (d *Detector) bestPosition(xs []float64, lo, from, n int) int {
	d.pre.load(xs[lo:n])
	best, bestT := from, -1.0
	for j := from; j < n; j++ {
		t := tStat(d.pre.stats(0, j-lo), d.pre.stats(j-lo, n-lo))
		if t > bestT {
			best, bestT = j, t
		}
	}
	return best
}

// tailChange tests a change at j against the segment [lo, j) and returns it
// with its status, or false when it is not reported.
func (d *Detector) tailChange(xs []float64, lo, j int) (cpState, bool) {
	n := len(xs)
	before, after := xs[lo:j], xs[j:]
	c := cpState{idx: j, before: describe(before), after: describe(after)}
	c.p = otavaTTest(c.before, c.after)
	c.change, c.mag = relChange(c.before.mean, c.after.mean)
	if !(c.p < d.opts.MaxPValue) || c.mag <= d.minMag {
		return c, false
	}
	up := c.after.mean > c.before.mean
	robust := len(after) >= 2 && (d.opts.MaxOutliers == 0 || d.trimmedTest(before, after, up) < d.opts.MaxPValue)
	if robust {
		c.status = Confirmed
		return c, true
	}
	newest := describe(xs[n-1:])
	change, mag := relChange(c.before.mean, newest.mean)
	if (change > 0) != up || mag <= d.minMag || !(otavaTTest(c.before, newest) < d.opts.MaxPValue) {
		return c, false
	}
	c.status = Suspected
	return c, true
}

// exportDrifts converts the drifts to the public type.
func (d *Detector) exportDrifts(s *Series) []Drift {
	if len(d.drifts) == 0 {
		return nil
	}
	out := make([]Drift, 0, len(d.drifts))
	for _, dr := range d.drifts {
		f := dr.fit
		x := Drift{
			Start:         dr.start,
			End:           dr.end,
			SlopePerRun:   f.slope,
			FittedStart:   f.start,
			FittedEnd:     f.end,
			ChangePercent: 100 * f.change,
			Magnitude:     f.mag,
			PValue:        f.p,
		}
		if f.start != 0 {
			x.SlopePercentPerRun = 100 * f.slope / f.start
		}
		if s != nil {
			if len(s.Times) > 0 {
				x.StartTime, x.EndTime = s.Times[dr.start], s.Times[dr.end-1]
			}
			if len(s.Labels) > 0 {
				x.StartLabel, x.EndLabel = s.Labels[dr.start], s.Labels[dr.end-1]
			}
		}
		out = append(out, x)
	}
	return out
}
