package changepoint

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Status says whether a change point is settled.
type Status string

const (
	// Confirmed: the change holds on at least two runs after it and survives
	// the MaxOutliers check. Every change point of the E-divisive merge pass
	// is Confirmed.
	Confirmed Status = "Confirmed"
	// Suspected: a change in the newest runs (Options.NewestRuns) that the
	// newest run shows significantly but that is not yet robust: one run
	// alone, or later runs that do not yet survive the MaxOutliers check.
	// The next runs confirm it or make it disappear.
	Suspected Status = "Suspected"
)

// ChangePoint is one detected change: the series behaves differently from
// Index on. Before is the segment from the previous change point (or the start)
// up to Index; After is the segment from Index up to the next change point (or
// the end).
type ChangePoint struct {
	// Index is the position of the first point of the new segment.
	Index int `json:"index"`
	// Time and Label are copied from the Series, when it has them.
	Time  time.Time `json:"time,omitzero"`
	Label string    `json:"label,omitempty"`

	BeforeLen    int     `json:"beforeLen"`
	AfterLen     int     `json:"afterLen"`
	MeanBefore   float64 `json:"meanBefore"`
	MeanAfter    float64 `json:"meanAfter"`
	StddevBefore float64 `json:"stddevBefore"` // population stddev (ddof=0), as Otava reports it
	StddevAfter  float64 `json:"stddevAfter"`
	// ChangePercent is 100·(MeanAfter/MeanBefore − 1); 0 when MeanBefore is 0.
	ChangePercent float64 `json:"changePercent"`
	// Magnitude is max(|after/before − 1|, |before/after − 1|), a fraction; the
	// quantity Options.MinMagnitude is compared with.
	Magnitude float64 `json:"magnitude"`
	// PValue is the two-sided Student's t-test p-value between Before and After.
	PValue float64 `json:"pValue"`
	// Status is Confirmed or Suspected (only with Options.NewestRuns, for a
	// change in the newest runs); empty on the weak points of Result.Weak.
	Status Status `json:"status,omitempty"`
}

// Drift is a sustained slope over the runs [Start, End), reported instead of
// the change points a steady decline or rise would otherwise produce
// (Options.Drift).
type Drift struct {
	// Start is the first run of the drift and End the run after its last one
	// (End == the series length when the drift is still going on).
	Start int `json:"start"`
	End   int `json:"end"`
	// StartTime/StartLabel and EndTime/EndLabel are those of the first and
	// the last run of the drift, copied from the Series when it has them.
	StartTime  time.Time `json:"startTime,omitzero"`
	StartLabel string    `json:"startLabel,omitempty"`
	EndTime    time.Time `json:"endTime,omitzero"`
	EndLabel   string    `json:"endLabel,omitempty"`
	// SlopePerRun is the least-squares slope, in the metric's unit per run.
	SlopePerRun float64 `json:"slopePerRun"`
	// SlopePercentPerRun is 100·SlopePerRun divided by the line's value at
	// Start.
	SlopePercentPerRun float64 `json:"slopePercentPerRun"`
	// FittedStart and FittedEnd are the line's values at the first and the
	// last run of the drift; ChangePercent is 100·(FittedEnd/FittedStart − 1)
	// and Magnitude max(|end/start − 1|, |start/end − 1|).
	FittedStart   float64 `json:"fittedStart"`
	FittedEnd     float64 `json:"fittedEnd"`
	ChangePercent float64 `json:"changePercent"`
	Magnitude     float64 `json:"magnitude"`
	// PValue is the two-sided t-test p-value of the slope (n−2 degrees of
	// freedom).
	PValue float64 `json:"pValue"`
}

// Series is one metric's values over a sequence of runs, oldest first.
type Series struct {
	// Name identifies the metric (a CSV column, a BMF measure).
	Name string
	// Values are the measurements; they must all be finite.
	Values []float64
	// Times and Labels are optional; when set they must have len(Values) items.
	Times  []time.Time
	Labels []string
}

// Result is the outcome for one Series.
type Result struct {
	Name string `json:"name"`
	// ChangePoints are the change points that passed the merge pass.
	ChangePoints []ChangePoint `json:"changePoints"`
	// Weak are the change points of the split pass (relaxed p-value), with
	// statistics computed between their weak neighbours. Useful for debugging.
	Weak []ChangePoint `json:"weak,omitempty"`
	// Drifts are the sustained slopes (Options.Drift), oldest first. A
	// drift's runs hold no change point.
	Drifts []Drift `json:"drifts,omitempty"`
	// NoiseCV is the noise used by the noise-relative magnitude filter
	// (Options.NoiseCV, or the estimate from the series); 0 when that filter
	// is off.
	NoiseCV float64 `json:"noiseCV,omitempty"`
	// MagnitudeThreshold is the magnitude a change had to exceed:
	// max(MinMagnitude, NoiseMultiple × NoiseCV).
	MagnitudeThreshold float64 `json:"magnitudeThreshold"`
}

// Detector runs change-point detection with fixed options and reuses its
// buffers between calls. It is not safe for concurrent use; use one per
// goroutine (DetectAll does).
type Detector struct {
	opts      Options
	firstPass float64

	win   window
	local []int
	mark  []bool
	cps   []cpState
	trimA []float64
	trimB []float64
	segs  []segmentStats
	// below decides p < MaxPValue for the outlier check and the drift
	// pass without the t distribution where it can.
	below tThresholds

	// Per-series state of the nightly passes (nightly.go).
	noiseCV float64
	minMag  float64
	drifts  []driftState
	pre     prefix
	sortBuf []float64
	// holdLast: the merge pass keeps the last change point (mergePass).
	holdLast bool
}

// cpState is a change point during the split and merge passes.
type cpState struct {
	idx            int
	before, after  segmentStats
	p, mag, change float64
	// pending: p is not computed yet, only the t statistic and degrees of
	// freedom it follows from (resolve computes it, pBelow decides p <
	// MaxPValue from t where it can).
	pending bool
	t, df   float64
	status  Status
	// dirty: its statistics were refreshed after the merge pass (settle
	// checks it again).
	dirty bool
}

// NewDetector validates opts and returns a Detector.
func NewDetector(opts Options) (*Detector, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return newDetector(opts), nil
}

// newDetector returns a Detector with options opts (already validated).
func newDetector(opts Options) *Detector {
	return &Detector{opts: opts, firstPass: opts.firstPassPValue(), below: tThresholds{strict: true}}
}

// Options returns the detector's options.
func (d *Detector) Options() Options { return d.opts }

// Detect returns the change points of values with the given options. It is a
// shorthand for NewDetector followed by Detector.Detect.
func Detect(values []float64, opts Options) ([]ChangePoint, error) {
	d, err := NewDetector(opts)
	if err != nil {
		return nil, err
	}
	return d.Detect(values)
}

// Detect returns the change points of values, sorted by index. A series too
// short to hold two segments of MinSegmentLength points has none. Values must
// be finite: a NaN or ±Inf is an error naming its index.
func (d *Detector) Detect(values []float64) ([]ChangePoint, error) {
	if err := checkFinite(values); err != nil {
		return nil, err
	}
	d.setThreshold(values)
	d.splitPass(values)
	d.mergePass(values)
	d.nightlyPasses(values)
	return d.export(nil), nil
}

// DetectSeries is Detect for a Series: it also fills Time and Label and the
// weak change points of the split pass.
func (d *Detector) DetectSeries(s Series) (Result, error) {
	res := Result{Name: s.Name}
	if err := checkSeries(s); err != nil {
		return res, err
	}
	d.setThreshold(s.Values)
	d.splitPass(s.Values)
	res.Weak = d.export(&s)
	for i := range res.Weak {
		res.Weak[i].Status = ""
	}
	d.mergePass(s.Values)
	d.nightlyPasses(s.Values)
	res.ChangePoints = d.export(&s)
	res.Drifts = d.exportDrifts(&s)
	res.NoiseCV, res.MagnitudeThreshold = d.noiseCV, d.minMag
	return res, nil
}

// DetectAll runs DetectSeries on every series, in parallel over GOMAXPROCS
// goroutines, and returns the results in the input order. It returns the
// first error met (by input order), wrapped with the series name.
func DetectAll(series []Series, opts Options) ([]Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	results := make([]Result, len(series))
	errs := make([]error, len(series))
	workers := min(runtime.GOMAXPROCS(0), len(series))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := detectorFor(opts)
			defer detectors.Put(d)
			for {
				i := int(next.Add(1)) - 1
				if i >= len(series) {
					return
				}
				results[i], errs[i] = d.DetectSeries(series[i])
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("series %d (%q): %w", i, series[i].Name, err)
		}
	}
	return results, nil
}

// detectors keeps the Detectors of finished DetectAll workers, whose
// buffers (and learned t-test bounds) the next call reuses.
var detectors sync.Pool

// detectorFor returns a pooled Detector with options opts (already
// validated), or a new one.
func detectorFor(opts Options) *Detector {
	if d, ok := detectors.Get().(*Detector); ok && d.opts == opts {
		return d
	}
	return newDetector(opts)
}

func checkFinite(values []float64) error {
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("changepoint: value at index %d is %v: values must be finite", i, v)
		}
	}
	return nil
}

func checkSeries(s Series) error {
	if len(s.Times) != 0 && len(s.Times) != len(s.Values) {
		return fmt.Errorf("changepoint: series %q has %d times for %d values", s.Name, len(s.Times), len(s.Values))
	}
	if len(s.Labels) != 0 && len(s.Labels) != len(s.Values) {
		return fmt.Errorf("changepoint: series %q has %d labels for %d values", s.Name, len(s.Labels), len(s.Values))
	}
	return checkFinite(s.Values)
}

// splitPass collects the weak change points: E-divisive in overlapping
// windows at the relaxed p-value, then statistics between weak neighbours.
func (d *Detector) splitPass(xs []float64) {
	n := len(xs)
	wl := d.opts.WindowLen
	step := wl / 2
	if cap(d.mark) < n {
		d.mark = make([]bool, n)
	}
	d.mark = d.mark[:n]
	clear(d.mark)
	d.win.forget()
	for start := 0; start < n; {
		end := min(start+wl, n)
		d.local = d.local[:0]
		// A hopeless window is neither searched nor built: the next one
		// slides from the last one built.
		if !d.win.hopeless(xs[start:end], d.opts.MinSegmentLength, d.firstPass) {
			d.win.slide(xs, start, end, d.opts.MinSegmentLength)
			d.local = d.win.split(d.firstPass, d.local)
		}
		last := 0
		for _, li := range d.local {
			d.mark[start+li] = true
			last = start + li
		}
		// The next window starts half a window later, or at the last
		// change point found if that is later (Otava's rule), moved back
		// MinSegmentLength−1 runs: otherwise a change within
		// MinSegmentLength−1 runs after that point (one the window could
		// not place, for want of runs after it, so it took the nearest
		// allowed run instead) could never be split off it. With Otava's
		// MinSegmentLength of 1 the rule is Otava's.
		start = max(last-(d.opts.MinSegmentLength-1), start+step)
	}
	d.cps = d.cps[:0]
	for i, m := range d.mark {
		if m {
			d.cps = append(d.cps, cpState{idx: i, status: Confirmed})
		}
	}
	// Statistics between weak neighbours: each segment is described once,
	// two at a time (describe2), and shared by the points on either side
	// of it. Segment j ends at change point j (the last at the end).
	if len(d.cps) == 0 {
		return
	}
	end := func(j int) int {
		if j < len(d.cps) {
			return d.cps[j].idx
		}
		return len(xs)
	}
	segs := d.segs[:0]
	for j := 0; j <= len(d.cps); j += 2 {
		lo := 0
		if j > 0 {
			lo = d.cps[j-1].idx
		}
		if j == len(d.cps) {
			segs = append(segs, describe(xs[lo:]))
			break
		}
		a, b := describe2(xs[lo:end(j)], xs[end(j):end(j+1)])
		segs = append(segs, a, b)
	}
	d.segs = segs
	for k := range d.cps {
		c := &d.cps[k]
		c.before, c.after = segs[k], segs[k+1]
		c.finish()
	}
}

// finish computes the p-value, change and magnitude of c from its
// segments' statistics, and marks it refreshed.
func (c *cpState) finish() {
	var done bool
	c.t, c.df, c.p, done = otavaT(c.before, c.after)
	c.pending = !done
	c.change, c.mag = relChange(c.before.mean, c.after.mean)
	c.dirty = true
}

// resolve computes c's p-value if it is pending: otavaTTest's value.
func (c *cpState) resolve() {
	if c.pending {
		c.p, c.pending = studentP(c.t, c.df), false
	}
}

// pBelow reports whether c's p-value is below MaxPValue.
func (d *Detector) pBelow(c *cpState) bool {
	if !c.pending {
		return c.p < d.opts.MaxPValue
	}
	if pass, ok := d.below.decided(c.t, c.df, d.opts.MaxPValue); ok {
		return pass
	}
	c.resolve()
	return d.below.record(c.t, c.df, c.p, d.opts.MaxPValue)
}

// rejoin refreshes, after the removal of the change point at position k,
// its two new neighbours (positions k−1 and k), whose segment between them
// is the only one that changed: it is described once. Their other
// statistics are fresh outside OtavaCompat; with it, both are recomputed.
func (d *Detector) rejoin(xs []float64, k int) {
	if d.opts.OtavaCompat {
		d.recompute(xs, k-1)
		d.recompute(xs, k)
		return
	}
	lo, hi := 0, len(xs)
	if k > 0 {
		lo = d.cps[k-1].idx
	}
	if k < len(d.cps) {
		hi = d.cps[k].idx
	}
	seg := describe(xs[lo:hi])
	if k > 0 {
		d.cps[k-1].after = seg
		d.cps[k-1].finish()
	}
	if k < len(d.cps) {
		d.cps[k].before = seg
		d.cps[k].finish()
	}
}

// recompute refreshes the statistics of change point k from its neighbours.
func (d *Detector) recompute(xs []float64, k int) {
	if k < 0 || k >= len(d.cps) {
		return
	}
	lo, hi := 0, len(xs)
	if k > 0 {
		lo = d.cps[k-1].idx
	}
	if k+1 < len(d.cps) {
		hi = d.cps[k+1].idx
	}
	c := &d.cps[k]
	c.before, c.after = describe2(xs[lo:c.idx], xs[c.idx:hi])
	c.finish()
}

// relChange returns after/before − 1 (0 when before is 0) and the magnitude
// max(|after/before − 1|, |before/after − 1|), each term 0 when its divisor is 0.
func relChange(before, after float64) (change, magnitude float64) {
	var back float64
	if before != 0 {
		change = after/before - 1
	}
	if after != 0 {
		back = before/after - 1
	}
	return change, math.Max(math.Abs(change), math.Abs(back))
}

// mergePass drops weak change points until every remaining one has
// p < MaxPValue and magnitude > the magnitude threshold (MinMagnitude, or
// NoiseMultiple × the noise CV if larger), (with MinSegmentLength > 1)
// segments of at least MinSegmentLength points on both sides and (with
// MaxOutliers > 0) keeps p < MaxPValue without its most favourable points.
// The weakest is removed first: a too-short segment, else the highest
// p-value, else the smallest magnitude, else the least robust point. Removing
// the point at position k refreshes the statistics of its two new neighbours
// (positions k−1 and k); with OtavaCompat it refreshes positions k and k+1
// instead, as Otava 0.8 does.
//
// With NewestRuns, the last change point is held (never removed here; the
// tail pass may move it and settle judges it, as it judges every last
// point) when it is less than 2·MinSegmentLength runs from the end and
// removing it would make the change point before it fail its p-value. The
// split pass cannot place a change closer than MinSegmentLength runs to
// the end, so a drop in the newest runs is often put a run or two early
// there, where it fails; removed, it would hand the newest runs to the
// segment before it, whose change point, tested against two levels mixed,
// would go too, leaving the tail pass no level to test the newest runs
// against (a speed-up, then a drop in the newest two runs:
// TestTwoOppositeShiftsInAShortSeries).
func (d *Detector) mergePass(xs []float64) {
	minMag := d.minMag
	d.holdLast = false
	defer func() { d.holdLast = false }()
	for len(d.cps) > 0 {
		// The candidates for removal are cps[:end].
		end := len(d.cps)
		if d.holdLast {
			end--
		}
		if end == 0 {
			return
		}
		k := d.weakest(xs, end, minMag)
		if k < 0 {
			return
		}
		if !d.holdLast && d.holdsTheLevelBefore(xs, k) {
			d.holdLast = true
			continue
		}
		d.cps = append(d.cps[:k], d.cps[k+1:]...)
		if d.opts.OtavaCompat {
			d.recompute(xs, k)
			d.recompute(xs, k+1)
		} else {
			// Positions k−1 and k; refreshing k+1 too, as before, changed
			// nothing: its segments are as they were.
			d.rejoin(xs, k)
		}
	}
}

// weakest returns the position, among cps[:end], of the change point the
// merge pass removes next, or -1 when every one passes: a too-short
// segment, else the first of the highest p-values not below maxP, else the
// smallest magnitude if it is not above minMag, else the least robust
// point (fragile).
func (d *Detector) weakest(xs []float64, end int, minMag float64) int {
	if k := d.shortSegment(len(xs), end); k >= 0 {
		return k
	}
	k := -1
	for i := range d.cps[:end] {
		c := &d.cps[i]
		if d.pBelow(c) {
			continue
		}
		c.resolve()
		if k < 0 || c.p > d.cps[k].p {
			k = i
		}
	}
	if k >= 0 {
		return k
	}
	k = 0
	for i, c := range d.cps[:end] {
		if c.mag < d.cps[k].mag {
			k = i
		}
	}
	if d.cps[k].mag > minMag {
		return d.fragile(xs, end)
	}
	return k
}

// holdsTheLevelBefore reports whether the merge pass is to hold change
// point k instead of removing it (mergePass): k is the last, fewer than
// 2·MinSegmentLength runs from the end, with NewestRuns, and the change
// point before it passes its p-value now but would fail a filter of the
// merge pass (p-value, magnitude, outliers) with k's runs.
func (d *Detector) holdsTheLevelBefore(xs []float64, k int) bool {
	m, n := d.opts.MinSegmentLength, len(xs)
	if !d.opts.NewestRuns || d.opts.OtavaCompat || m < 2 || k == 0 || k != len(d.cps)-1 || n-d.cps[k].idx >= 2*m {
		return false
	}
	prev := &d.cps[k-1]
	if !d.pBelow(prev) {
		return false
	}
	lo := 0
	if k > 1 {
		lo = d.cps[k-2].idx
	}
	merged := *prev
	merged.after = describe(xs[prev.idx:n])
	merged.finish()
	return !d.pBelow(&merged) || merged.mag <= d.minMag ||
		(d.opts.MaxOutliers > 0 && !d.trimmedPasses(xs[lo:prev.idx], xs[prev.idx:n], merged.before, merged.after, merged.after.mean >= merged.before.mean))
}

// fragile returns the position, among cps[:end], of the least robust change
// point that fails the MaxOutliers check, or -1 when all pass (or the check
// is off).
func (d *Detector) fragile(xs []float64, end int) int {
	k := d.opts.MaxOutliers
	if k == 0 {
		return -1
	}
	worst, worstP := -1, 0.0
	for i, c := range d.cps[:end] {
		lo, hi := 0, len(xs)
		if i > 0 {
			lo = d.cps[i-1].idx
		}
		if i+1 < len(d.cps) {
			hi = d.cps[i+1].idx
		}
		sb, sa := c.before, c.after
		if d.opts.OtavaCompat { // the statistics may describe an older segment
			sb, sa = describe2(xs[lo:c.idx], xs[c.idx:hi])
		}
		up := c.after.mean >= c.before.mean
		if d.trimmedPasses(xs[lo:c.idx], xs[c.idx:hi], sb, sa, up) {
			continue
		}
		p := d.trimmedTest(xs[lo:c.idx], xs[c.idx:hi], sb, sa, up)
		if worst < 0 || p > worstP {
			worst, worstP = i, p
		}
	}
	return worst
}

// trimmedTest removes, for every split j + (k−j) = MaxOutliers, the j points
// of before and the k−j points of after that most favour the change (for a
// rise: the smallest before, the largest after), and returns the largest
// p-value over those splits. sb and sa are the statistics of before and
// after (describe's). Magnitude is deliberately not re-checked: moving a
// 5.02 % shift to 4.98 % by dropping its best point is not an outlier.
func (d *Detector) trimmedTest(before, after []float64, sb, sa segmentStats, up bool) (maxP float64) {
	if !d.trimmedSplits(before, after, sb, sa, up, func(b, a segmentStats) bool {
		maxP = math.Max(maxP, otavaTTest(b, a))
		return true
	}) {
		return 1
	}
	return maxP
}

// trimmedPasses reports whether trimmedTest(before, after, sb, sa, up) <
// MaxPValue, deciding each test from |t| where it can.
func (d *Detector) trimmedPasses(before, after []float64, sb, sa segmentStats, up bool) bool {
	return d.trimmedSplits(before, after, sb, sa, up, func(b, a segmentStats) bool {
		return d.below.significant(b, a, d.opts.MaxPValue)
	})
}

// trimmedSplits calls f, while it returns true, with the statistics of
// before and after without the points of each split of trimmedTest, and
// reports whether every split was visited: false when f stopped or a split
// leaves a side empty (p = 1).
func (d *Detector) trimmedSplits(before, after []float64, sb, sa segmentStats, up bool, f func(b, a segmentStats) bool) bool {
	k := d.opts.MaxOutliers
	// For a rise the favourable points are the smallest of before and the
	// largest of after; for a drop, the reverse.
	d.trimB = mostExtreme(d.trimB[:0], before, k, !up)
	d.trimA = mostExtreme(d.trimA[:0], after, k, up)
	fb, fa := full(sb), full(sa)
	for j := 0; j <= k; j++ {
		if j >= len(before) || k-j >= len(after) || !f(fb.without(d.trimB[:j]), fa.without(d.trimA[:k-j])) {
			return false
		}
	}
	return true
}

// mostExtreme appends to dst the min(k, len(xs)) largest (or smallest) values
// of xs, most extreme first, in O(len(xs)·k).
func mostExtreme(dst, xs []float64, k int, largest bool) []float64 {
	k = min(k, len(xs))
	if k <= 0 {
		return dst
	}
	more := func(a, b float64) bool { return (largest && a > b) || (!largest && a < b) }
	for _, x := range xs {
		if len(dst) < k {
			dst = append(dst, x)
		} else if more(x, dst[k-1]) {
			dst[k-1] = x
		} else {
			continue
		}
		for i := len(dst) - 1; i > 0 && more(dst[i], dst[i-1]); i-- {
			dst[i], dst[i-1] = dst[i-1], dst[i]
		}
	}
	return dst
}

// fullStats is a segment's size, mean and sum of squared deviations, from
// which the statistics without a few of its points follow exactly.
type fullStats struct {
	n        int
	mean, ss float64
}

func full(st segmentStats) fullStats {
	return fullStats{n: st.n, mean: st.mean, ss: st.stddev * st.stddev * float64(st.n)}
}

// without returns the segmentStats of the segment minus the values removed
// (which must be members of it), using sums centred on the full mean.
func (f fullStats) without(removed []float64) segmentStats {
	n := f.n - len(removed)
	var s1, s2 float64
	for _, r := range removed {
		d := r - f.mean
		s1 -= d
		s2 += d * d
	}
	nf := float64(n)
	dm := s1 / nf
	v := (f.ss-s2)/nf - dm*dm
	if v < 0 || n < 2 {
		v = 0
	}
	return segmentStats{n: n, mean: f.mean + dm, stddev: math.Sqrt(v)}
}

// shortSegment returns the position, among cps[:end], of the weakest
// (highest p-value) change point that borders a segment shorter than
// MinSegmentLength, or -1.
func (d *Detector) shortSegment(n, end int) int {
	m := d.opts.MinSegmentLength
	if m <= 1 {
		return -1
	}
	k := -1
	for i := range d.cps[:end] {
		c := &d.cps[i]
		lo, hi := 0, n
		if i > 0 {
			lo = d.cps[i-1].idx
		}
		if i+1 < len(d.cps) {
			hi = d.cps[i+1].idx
		}
		if c.idx-lo >= m && hi-c.idx >= m {
			continue
		}
		c.resolve()
		if k < 0 || c.p > d.cps[k].p {
			k = i
		}
	}
	return k
}

// export converts the current change points to the public type.
func (d *Detector) export(s *Series) []ChangePoint {
	out := make([]ChangePoint, 0, len(d.cps))
	for i := range d.cps {
		d.cps[i].resolve()
		c := &d.cps[i]
		cp := ChangePoint{
			Index:         c.idx,
			BeforeLen:     c.before.n,
			AfterLen:      c.after.n,
			MeanBefore:    c.before.mean,
			MeanAfter:     c.after.mean,
			StddevBefore:  c.before.stddev,
			StddevAfter:   c.after.stddev,
			ChangePercent: 100 * c.change,
			Magnitude:     c.mag,
			PValue:        c.p,
			Status:        c.status,
		}
		if s != nil {
			if len(s.Times) > 0 {
				cp.Time = s.Times[c.idx]
			}
			if len(s.Labels) > 0 {
				cp.Label = s.Labels[c.idx]
			}
		}
		out = append(out, cp)
	}
	return out
}
