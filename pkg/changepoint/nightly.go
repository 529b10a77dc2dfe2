package changepoint

import (
	"math"
	"slices"
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
//  4. settle: whatever passes 2 and 3 added, moved or refreshed is checked
//     against the filters again (a removal refreshes the neighbours, which
//     are checked in turn), so every reported change point passes them.

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

// nightlyPasses runs the drift and newest-run passes the options enable,
// then settle, so that every change point they added, moved or refreshed
// passes the filters it is reported under.
func (d *Detector) nightlyPasses(xs []float64) {
	d.drifts = d.drifts[:0]
	if !d.opts.Drift && !d.opts.NewestRuns {
		return
	}
	for k := range d.cps {
		d.cps[k].dirty = false
	}
	if d.opts.Drift {
		d.driftPass(xs)
	}
	if d.opts.NewestRuns {
		d.tailPass(xs)
	}
	d.settle(xs)
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
	d.rejoin(xs, i)
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
		if fit.mag <= d.minMag || !d.lineBelow(&fit, maxP) {
			continue
		}
		if lineWins(hi-lo, fit.ss, d.bestStepSS(xs, lo, hi), 3) {
			fit.resolve()
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
	if (fit.slope > 0) != up || fit.mag <= d.minMag || !d.lineBelow(&fit, maxP) {
		return false
	}
	// The steps' segments are those of the change points' statistics,
	// which the merge pass (and any removal since) left fresh.
	ssSteps := sumSquares(d.cps[a].before)
	for k := a; k <= b; k++ {
		ssSteps += sumSquares(d.cps[k].after)
	}
	if !lineWins(hi-lo, fit.ss, ssSteps, 2*(b-a+1)+1) {
		return false
	}
	d.removeCPs(xs, a, b)
	fit.resolve()
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

// sumSquares returns a segment's sum of squared deviations from its mean.
func sumSquares(st segmentStats) float64 {
	return st.stddev * st.stddev * float64(st.n)
}

// bestStepSS returns the smallest residual sum of squares of a single step
// anywhere in xs[lo:hi) (one point or more on each side), from the prefix
// sums of the span centred on its mean.
func (d *Detector) bestStepSS(xs []float64, lo, hi int) float64 {
	d.pre.load(xs[lo:hi])
	L := hi - lo
	s1, s2 := d.pre.s1, d.pre.s2
	best := math.Inf(1)
	for j := 1; j < L; j++ {
		a1, b1 := s1[j], s1[L]-s1[j]
		ss := s2[j] - a1*a1/float64(j) + (s2[L] - s2[j]) - b1*b1/float64(L-j)
		if ss < best {
			best = ss
		}
	}
	return math.Max(best, 0)
}

// lineFit is an ordinary least-squares line through (i, xs[i]).
type lineFit struct {
	slope      float64
	start, end float64 // fitted values at the first and the last point
	ss         float64 // residual sum of squares
	p          float64 // two-sided t-test of slope = 0, n−2 degrees of freedom
	// t and df are the test's statistic and degrees of freedom; pending:
	// p is not computed yet (resolve), the decisions use t (lineBelow).
	t, df   float64
	pending bool
	change  float64 // end/start − 1
	mag     float64 // max(|end/start − 1|, |start/end − 1|)
}

// fitLine fits the line in one pass over the values shifted by the first
// one (so that a high level with a small spread keeps its precision); the
// spread of the positions is n(n²−1)/12.
func fitLine(xs []float64) lineFit {
	n := len(xs)
	f := lineFit{p: 1}
	if n == 0 {
		return f
	}
	nf := float64(n)
	xm := (nf - 1) / 2
	y0 := xs[0]
	var s1, s2, siy, i float64
	for _, y := range xs {
		dy := y - y0
		s1 += dy
		s2 += dy * dy
		siy += i * dy
		i++
	}
	ym := y0 + s1/nf
	sxx := nf * (nf*nf - 1) / 12
	sxy := siy - xm*s1
	syy := math.Max(0, s2-s1*s1/nf)
	if n < 3 {
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
		f.t, f.df, f.pending = f.slope/se, nf-2, true
	}
	return f
}

// resolve computes f's p-value if it is pending.
func (f *lineFit) resolve() {
	if !f.pending {
		return
	}
	f.p, f.pending = studentP(f.t, f.df), false
}

// lineBelow reports whether f's p-value is below maxP, from |t| where it
// can.
func (d *Detector) lineBelow(f *lineFit, maxP float64) bool {
	if !f.pending {
		return f.p < maxP
	}
	if pass, ok := d.below.decided(f.t, f.df, maxP); ok {
		return pass
	}
	f.resolve()
	return d.below.record(f.t, f.df, f.p, maxP)
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
// cannot place closer to the end than MinSegmentLength runs, and which can
// make it put the last change point a few runs too early (the drop pulls
// down the mean of the last segment, so an earlier split looks
// significant). With m = MinSegmentLength, c the last change point (if
// any) and lo the change point before it (or the start):
//
//  1. Added after c. Among the newest m positions that leave m runs after
//     c, the one with the largest |t| between [c, j) and [j, n) (the
//     maximum-likelihood position of a single step) is tested against
//     [c, j) (tailChange). It is added if it passes and c still passes
//     every filter with its right-hand segment cut at j.
//  2. Instead of c. Otherwise, if the best j over [lo, n) among the
//     newest m positions after c has a larger |t| than c itself over the
//     same span, j is tested against [lo, j). It replaces c if it passes
//     and c does not hold once cut at j (too short a segment, or a change
//     that the newest runs alone produced), provided the change point
//     before c still passes with its right-hand segment extended to j.
//
// With two or three runs of a new level, the maximum-likelihood position
// can land on a dip within the noise just before a drop: the mean of so
// few runs takes the dip in. So both steps first try the best position
// that does not start early (startsEarly: its first runs, fewer than m,
// look like noise of the level before it: nearer that level than the
// runs after them, and not significantly different from it, alone or
// together), and in step 2 a c that starts early does not win over it
// on |t|. Only if that position cannot be reported do they try the best
// position of all, as before.
//
// Nothing is tested inside a drift that reaches the newest run (there the
// newest runs are expected to be the lowest or highest), and c is not
// replaced when a drift ends at it. Whatever the pass adds or changes is
// checked again by settle.
func (d *Detector) tailPass(xs []float64) {
	n, m := len(xs), d.opts.MinSegmentLength
	if m < 2 || n < m+1 || d.driftEndsAt(n) {
		return // with MinSegmentLength 1 the E-divisive search reaches the newest run
	}
	k := len(d.cps) - 1
	last := 0 // start of the last segment
	if k >= 0 {
		last = d.cps[k].idx
	}
	if from := max(last+m, n-m); from < n {
		jNew, j := d.bestPositions(xs, last, from, n)
		if d.addAfterLast(xs, k, last, jNew) || (j != jNew && d.addAfterLast(xs, k, last, j)) {
			return
		}
	}
	if k < 0 || d.driftEndsAt(last) {
		return
	}
	lo, _ := d.segment(k-1, n)
	from := max(lo+m, n-m, last+1)
	if from >= n {
		return
	}
	jNew, j := d.bestPositions(xs, lo, from, n)
	// c itself is a candidate position, and wins ties, unless it starts
	// early.
	tLast := d.tStatAt(lo, last, n)
	if (d.startsEarly(lo, last, from, n) || tLast < d.tStatAt(lo, jNew, n)) && d.replaceLast(xs, k, lo, jNew) {
		return
	}
	if j != jNew && tLast < d.tStatAt(lo, j, n) {
		d.replaceLast(xs, k, lo, j)
	}
}

// addAfterLast adds a change at j tested against [c, j), c the start of
// the last segment (tailPass, step 1), if it passes and the last change
// point k (if any) holds with its right-hand segment cut at j. It
// reports whether it did.
func (d *Detector) addAfterLast(xs []float64, k, c, j int) bool {
	tc, ok := d.tailChange(xs, c, j)
	if !ok || (k >= 0 && !d.holds(xs, k, j)) {
		return false
	}
	d.cps = append(d.cps, tc)
	d.recompute(xs, k)
	return true
}

// replaceLast replaces the last change point, k, by a change at j tested
// against [lo, j) (tailPass, step 2), if it passes, k does not hold once
// cut at j, and the change point before k (if any) holds with its
// right-hand segment extended to j. It reports whether it did.
func (d *Detector) replaceLast(xs []float64, k, lo, j int) bool {
	tc, ok := d.tailChange(xs, lo, j)
	if !ok || d.holds(xs, k, j) || (k > 0 && !d.holds(xs, k-1, j)) {
		return false
	}
	d.cps[k] = tc
	d.recompute(xs, k-1)
	return true
}

// driftEndsAt reports whether a drift ends at run end (exclusive).
func (d *Detector) driftEndsAt(end int) bool {
	for _, dr := range d.drifts {
		if dr.end == end {
			return true
		}
	}
	return false
}

// holds reports whether change point k passes the filters of a change
// point inside the history (segments of MinSegmentLength runs, p-value,
// magnitude, MaxOutliers) with its right-hand segment ending at hi instead
// of at the next change point.
func (d *Detector) holds(xs []float64, k, hi int) bool {
	lo, _ := d.segment(k-1, len(xs))
	c := d.cps[k].idx
	if c-lo < d.opts.MinSegmentLength || hi-c < d.opts.MinSegmentLength {
		return false
	}
	t := statsAt(xs, lo, c, hi)
	return t.p < d.opts.MaxPValue && t.mag > d.minMag && d.robust(xs[lo:c], xs[c:hi], &t)
}

// statsAt returns a change point at idx with the statistics of xs[lo:idx]
// against xs[idx:hi].
func statsAt(xs []float64, lo, idx, hi int) cpState {
	c := cpState{idx: idx}
	c.before, c.after = describe2(xs[lo:idx], xs[idx:hi])
	c.p = otavaTTest(c.before, c.after)
	c.change, c.mag = relChange(c.before.mean, c.after.mean)
	return c
}

// robust reports whether the change c between before and after survives
// the MaxOutliers check (always, when it is off); c's statistics must be
// those of before and after.
func (d *Detector) robust(before, after []float64, c *cpState) bool {
	return d.opts.MaxOutliers == 0 || d.trimmedPasses(before, after, c.before, c.after, c.after.mean > c.before.mean)
}

// bestPositions returns, among the j in [from, n), the one with the
// largest |t| between xs[lo:j] and xs[j:n] that does not start early
// (startsEarly), and the one with the largest |t| of all (the first on
// ties, both; the newest run never starts early). It leaves xs[lo:n]
// loaded in d.pre.
func (d *Detector) bestPositions(xs []float64, lo, from, n int) (jNew, j int) {
	d.pre.load(xs[lo:n])
	j, bestT := from, -1.0
	jNew, bestNew := n-1, -1.0
	for i := from; i < n; i++ {
		t := d.tStatAt(lo, i, n)
		if t > bestT {
			j, bestT = i, t
		}
		if t > bestNew && !d.startsEarly(lo, i, from, n) {
			jNew, bestNew = i, t
		}
	}
	return jNew, j
}

// tStatAt returns |t| between xs[lo:j] and xs[j:n], with xs[lo:n] loaded
// in d.pre.
func (d *Detector) tStatAt(lo, j, n int) float64 {
	return tStat(d.pre.stats(0, j-lo), d.pre.stats(j-lo, n-lo))
}

// startsEarly reports whether a change at p starts with a dip (or a
// bump) within the noise, shorter than MinSegmentLength, before the new
// level: for some later position q in [from, n) with q − p <
// MinSegmentLength, every run of [p, q) is nearer the mean of xs[lo:p]
// than the mean of xs[q:n], and neither any run of [p, q) nor the runs
// of [p, q) together differ from xs[lo:p] with p < MaxPValue. xs[lo:n]
// is loaded in d.pre.
func (d *Detector) startsEarly(lo, p, from, n int) bool {
	before := d.pre.stats(0, p-lo)
	// Runs p, p+1, …, p+quiet−1 do not differ significantly from before.
	quiet := 0
	for i := p; i < min(n-1, p+d.opts.MinSegmentLength-1) && !d.below.significant(before, d.pre.stats(i-lo, i-lo+1), d.opts.MaxPValue); i++ {
		quiet++
	}
	for q := max(p+1, from); q <= p+quiet; q++ {
		if q-p > 1 && d.below.significant(before, d.pre.stats(p-lo, q-lo), d.opts.MaxPValue) {
			return false
		}
		after := d.pre.stats(q-lo, n-lo).mean
		nearer := true
		for i := p; i < q && nearer; i++ {
			x := d.pre.stats(i-lo, i-lo+1).mean
			nearer = math.Abs(x-before.mean) < math.Abs(x-after)
		}
		if nearer {
			return true
		}
	}
	return false
}

// tailChange tests a change at j, in the newest runs, against the segment
// [lo, j) and returns it with its status, or false when it is not reported.
func (d *Detector) tailChange(xs []float64, lo, j int) (cpState, bool) {
	c := statsAt(xs, lo, j, len(xs))
	if j-lo < d.opts.MinSegmentLength || !(c.p < d.opts.MaxPValue) || c.mag <= d.minMag {
		return c, false
	}
	c.status = d.tailStatus(xs, lo, &c)
	return c, c.status != ""
}

// tailStatus returns the status of the change c at the end of xs, whose
// segment before it starts at lo: Confirmed when at least two runs follow
// it and it survives the MaxOutliers check; Suspected when the newest run
// alone differs significantly from the runs before the change (p <
// MaxPValue, same direction, above the magnitude threshold); "" (not
// reported) otherwise.
func (d *Detector) tailStatus(xs []float64, lo int, c *cpState) Status {
	n := len(xs)
	if n-c.idx >= 2 && d.robust(xs[lo:c.idx], xs[c.idx:], c) {
		return Confirmed
	}
	up := c.after.mean > c.before.mean
	newest := describe(xs[n-1:])
	change, mag := relChange(c.before.mean, newest.mean)
	if (change > 0) != up || mag <= d.minMag || !(otavaTTest(c.before, newest) < d.opts.MaxPValue) {
		return ""
	}
	return Suspected
}

// isTail reports whether change point k is judged as a change in the newest
// runs: the last one, with NewestRuns on, at most MinSegmentLength runs
// from the end.
func (d *Detector) isTail(k, n int) bool {
	m := d.opts.MinSegmentLength
	return d.opts.NewestRuns && m >= 2 && k == len(d.cps)-1 && n-d.cps[k].idx <= m
}

// Failure classes of verdict, in the order settle removes them (as the
// merge pass does).
const (
	passes = iota
	failsSegment
	failsPValue
	failsMagnitude
	failsRobustness
)

// verdict returns the status change point k may be reported with, given
// its current neighbours (its statistics must be fresh), or the first
// filter it fails.
func (d *Detector) verdict(xs []float64, k int) (Status, int) {
	n, m := len(xs), d.opts.MinSegmentLength
	c := &d.cps[k]
	tail := d.isTail(k, n)
	switch {
	case c.before.n < m || (c.after.n < m && !tail):
		return "", failsSegment
	case !d.pBelow(c):
		return "", failsPValue
	case c.mag <= d.minMag:
		return "", failsMagnitude
	}
	lo, _ := d.segment(k-1, n)
	_, hi := d.segment(k, n)
	if tail {
		if st := d.tailStatus(xs, lo, c); st != "" {
			return st, passes
		}
	} else if d.robust(xs[lo:c.idx], xs[c.idx:hi], c) {
		return Confirmed, passes
	}
	return "", failsRobustness
}

// settle makes every change point the passes after the merge pass added,
// moved or refreshed (the dirty ones, and the last one) pass the filters
// it is reported under, and sets its status. It removes the failing point
// of the first failure class (segment, p-value, magnitude, robustness),
// the one with the highest p-value (smallest magnitude for that class)
// first, refreshes its neighbours and repeats.
func (d *Detector) settle(xs []float64) {
	for {
		worst, worstClass := -1, passes
		for k := range d.cps {
			c := &d.cps[k]
			if !c.dirty && k != len(d.cps)-1 {
				continue
			}
			st, class := d.verdict(xs, k)
			if class == passes {
				c.status = st
				continue
			}
			c.resolve() // weaker compares p-values
			if worst < 0 || class < worstClass || (class == worstClass && weaker(c, &d.cps[worst], class)) {
				worst, worstClass = k, class
			}
		}
		if worst < 0 {
			return
		}
		d.cps = append(d.cps[:worst], d.cps[worst+1:]...)
		d.rejoin(xs, worst)
	}
}

// weaker reports whether a is to be removed before b, both failing class.
func weaker(a, b *cpState, class int) bool {
	if class == failsMagnitude {
		return a.mag < b.mag
	}
	return a.p > b.p
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
