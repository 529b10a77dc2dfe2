package changepoint

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dbbench/dbbench/pkg/stats"
)

// The property every reported change point must have, whatever pass
// placed, moved or refreshed it: it passes the filters it is reported
// under, with statistics recomputed here, independently of the detector's
// code, from the series and the neighbouring change points. See
// checkResult for the list.

// refDescribe is the mean and population standard deviation, two passes.
func refDescribe(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)))
}

// refTTest is the two-sided pooled t-test with the pooled variance built
// from population variances (Otava's form), with the same guards as the
// package for spreads and differences at the rounding level.
func refTTest(a, b []float64) float64 {
	n1, n2 := float64(len(a)), float64(len(b))
	if len(a) == 0 || len(b) == 0 || len(a)+len(b) <= 2 {
		return 1
	}
	m1, s1 := refDescribe(a)
	m2, s2 := refDescribe(b)
	df := n1 + n2 - 2
	se := math.Sqrt(((n1-1)*s1*s1 + (n2-1)*s2*s2) / df * (1/n1 + 1/n2))
	scale := math.Max(math.Abs(m1), math.Abs(m2))
	diff := m1 - m2
	switch {
	case math.Abs(diff) <= 1e-12*scale:
		return 1
	case se <= 1e-12*scale:
		return 0
	}
	return stats.StudentTwoSidedP(diff/se, df)
}

// refMagnitude is max(|after/before − 1|, |before/after − 1|).
func refMagnitude(before, after float64) float64 {
	return math.Max(math.Abs(after/before-1), math.Abs(before/after-1))
}

// refRobust reports whether the change between before and after keeps p <
// maxP after removing, for every split j + (k−j) = k, the j values of
// before and the k−j values of after that most favour the change (for a
// rise: the smallest before, the largest after). Removal by sorting copies.
func refRobust(before, after []float64, k int, maxP float64) bool {
	if k == 0 {
		return true
	}
	mb, _ := refDescribe(before)
	ma, _ := refDescribe(after)
	b, a := slices.Clone(before), slices.Clone(after)
	slices.Sort(b)
	slices.Sort(a)
	if ma > mb { // a rise: favourable are the smallest before, the largest after
		slices.Reverse(b)
	} else {
		slices.Reverse(a)
	}
	// Now the most favourable values are at the end of b and a.
	for j := 0; j <= k; j++ {
		if j >= len(b) || k-j >= len(a) {
			return false
		}
		if !(refTTest(b[:len(b)-j], a[:len(a)-(k-j)]) < maxP) {
			return false
		}
	}
	return true
}

// refNoiseCV is the documented noise estimate, with sorts.
func refNoiseCV(xs []float64) float64 {
	if len(xs) < 3 {
		return 0
	}
	med := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	center := math.Abs(med(xs))
	var d []float64
	for i := 1; i < len(xs); i++ {
		d = append(d, xs[i]-xs[i-1])
	}
	m := med(d)
	for i := range d {
		d[i] = math.Abs(d[i] - m)
	}
	if center == 0 {
		return 0
	}
	return 1.482602218505602 * med(d) / math.Sqrt2 / center
}

// refLine is the OLS line through (i, xs[i]): slope, fitted start and end,
// and the two-sided p-value of slope = 0.
func refLine(xs []float64) (slope, start, end, p float64) {
	n := float64(len(xs))
	xm := (n - 1) / 2
	ym, _ := refDescribe(xs)
	var sxx, sxy, syy float64
	for i, y := range xs {
		sxx += (float64(i) - xm) * (float64(i) - xm)
		sxy += (float64(i) - xm) * (y - ym)
		syy += (y - ym) * (y - ym)
	}
	slope = sxy / sxx
	rss := math.Max(0, syy-slope*sxy)
	se := math.Sqrt(rss / (n - 2) / sxx)
	p = 0
	if se > 0 {
		p = stats.StudentTwoSidedP(slope/se, n-2)
	}
	return slope, ym - slope*xm, ym + slope*xm, p
}

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) || math.Abs(a-b) < 1e-300
}

// checkResult returns what is wrong with r as the result of DetectSeries
// on xs with opts (non-OtavaCompat options), or nil. For every change point
// c, with Before = xs[previous point or 0 : c] and After = xs[c : next
// point or n]:
//
//   - the reported lengths, means, standard deviations, change, magnitude
//     and p-value are those of Before and After;
//   - p < MaxPValue, magnitude > the threshold (max(MinMagnitude,
//     NoiseMultiple × NoiseCV), NoiseCV the caller's or the estimate), and
//     Before has MinSegmentLength runs;
//   - a tail point (the last one, NewestRuns on, MinSegmentLength ≥ 2, at
//     most MinSegmentLength runs after it) is Confirmed only with at least
//     two runs after it and robust to MaxOutliers outliers, else Suspected
//     only if the newest run alone differs significantly from Before in the
//     same direction and above the threshold;
//   - any other point is Confirmed, has MinSegmentLength runs after it and
//     is robust.
//
// Every drift spans at least minDriftRuns runs, holds no change point,
// has an OLS slope with p < MaxPValue and a fitted change above the
// threshold, and the reported slope and p-value are recomputed.
func checkResult(xs []float64, opts Options, r Result) []string {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	n, m, maxP := len(xs), opts.MinSegmentLength, opts.MaxPValue
	noise := opts.NoiseCV
	if noise == 0 && opts.NoiseMultiple > 0 {
		noise = refNoiseCV(xs)
	}
	threshold := math.Max(opts.MinMagnitude, opts.NoiseMultiple*noise)
	if !near(threshold, r.MagnitudeThreshold, 1e-12) {
		bad("threshold %v, recomputed %v", r.MagnitudeThreshold, threshold)
	}
	for i, c := range r.ChangePoints {
		prev, next := 0, n
		if i > 0 {
			prev = r.ChangePoints[i-1].Index
		}
		if i+1 < len(r.ChangePoints) {
			next = r.ChangePoints[i+1].Index
		}
		if c.Index <= prev || c.Index >= next {
			bad("point %d: index out of order (previous %d, next %d)", c.Index, prev, next)
			continue
		}
		before, after := xs[prev:c.Index], xs[c.Index:next]
		mb, sb := refDescribe(before)
		ma, sa := refDescribe(after)
		p := refTTest(before, after)
		mag := refMagnitude(mb, ma)
		if c.BeforeLen != len(before) || c.AfterLen != len(after) || !near(c.MeanBefore, mb, 1e-9) || !near(c.MeanAfter, ma, 1e-9) ||
			!near(c.StddevBefore, sb, 1e-6) || !near(c.StddevAfter, sa, 1e-6) || !near(c.Magnitude, mag, 1e-9) ||
			!near(c.ChangePercent, 100*(ma/mb-1), 1e-6) || !near(c.PValue, p, 1e-6) {
			bad("point %d: reported %+v; recomputed lengths %d/%d means %v/%v sd %v/%v p %v magnitude %v",
				c.Index, c, len(before), len(after), mb, ma, sb, sa, p, mag)
		}
		if !(p < maxP) {
			bad("point %d (%s): p = %v, not below %v", c.Index, c.Status, p, maxP)
		}
		if !(mag > threshold) {
			bad("point %d (%s): magnitude %v, not above %v", c.Index, c.Status, mag, threshold)
		}
		if len(before) < m {
			bad("point %d (%s): %d runs before it, fewer than %d", c.Index, c.Status, len(before), m)
		}
		robust := refRobust(before, after, opts.MaxOutliers, maxP)
		tail := opts.NewestRuns && m >= 2 && i == len(r.ChangePoints)-1 && len(after) <= m
		switch {
		case !tail:
			if c.Status != Confirmed || len(after) < m || !robust {
				bad("point %d: status %s, %d runs after it (want ≥ %d), robust %v; want Confirmed, enough runs and robust",
					c.Index, c.Status, len(after), m, robust)
			}
		case c.Status == Confirmed:
			if len(after) < 2 || !robust {
				bad("newest-runs point %d: Confirmed with %d runs after it, robust %v", c.Index, len(after), robust)
			}
		case c.Status == Suspected:
			newest := xs[n-1]
			if len(after) >= 2 && robust {
				bad("newest-runs point %d: Suspected but robust over %d runs (should be Confirmed)", c.Index, len(after))
			}
			if (newest > mb) != (ma > mb) || !(refMagnitude(mb, newest) > threshold) || !(refTTest(before, xs[n-1:]) < maxP) {
				bad("newest-runs point %d: Suspected but the newest run %v does not show the change from %v", c.Index, newest, mb)
			}
		default:
			bad("point %d: status %q", c.Index, c.Status)
		}
	}
	for i, d := range r.Drifts {
		if d.End-d.Start < minDriftRuns || d.Start < 0 || d.End > n || (i > 0 && d.Start < r.Drifts[i-1].End) {
			bad("drift %+v: bad span", d)
			continue
		}
		for _, c := range r.ChangePoints {
			if c.Index > d.Start && c.Index < d.End {
				bad("drift [%d, %d) holds change point %d", d.Start, d.End, c.Index)
			}
		}
		slope, start, end, p := refLine(xs[d.Start:d.End])
		if !(p < maxP) || !(refMagnitude(start, end) > threshold) || !near(d.SlopePerRun, slope, 1e-6) || !near(d.PValue, p, 1e-6) {
			bad("drift %+v: recomputed slope %v p %v magnitude %v (threshold %v)", d, slope, p, refMagnitude(start, end), threshold)
		}
	}
	return errs
}

// genSeries returns a random history: flat stretches, steps of 1–20 %,
// linear drifts, single outlier runs, sometimes a change in the newest 1–3
// runs or values rounded to integers (ties), on noise of 0.2–5 %.
func genSeries(rng *rand.Rand) []float64 {
	n := 5 + rng.IntN(296)
	cv := []float64{0.002, 0.005, 0.01, 0.02, 0.05}[rng.IntN(5)]
	level := 100 * math.Pow(10, 2*rng.Float64())
	xs := make([]float64, 0, n)
	for len(xs) < n {
		l := min(n-len(xs), 3+rng.IntN(80))
		slope := 0.0
		switch r := rng.Float64(); {
		case r < 0.35:
			sign := 1.0
			if rng.IntN(2) == 0 {
				sign = -1
			}
			level *= 1 + sign*(0.01+0.19*rng.Float64())
		case r < 0.5:
			slope = (rng.Float64() - 0.5) * 0.02 // up to ±1 % per run
		}
		for i := range l {
			xs = append(xs, level*(1+slope*float64(i))*(1+cv*rng.NormFloat64()))
		}
		level *= 1 + slope*float64(l)
	}
	for range rng.IntN(4) {
		xs[rng.IntN(n)] *= 0.6 + 0.9*rng.Float64()
	}
	if rng.IntN(3) == 0 {
		k := 1 + rng.IntN(min(3, n))
		f := 0.85 + 0.3*rng.Float64()
		for i := n - k; i < n; i++ {
			xs[i] *= f
		}
	}
	if rng.IntN(8) == 0 {
		for i := range xs {
			xs[i] = math.Round(xs[i] / 10)
		}
	}
	return xs
}

// TestEveryReportedPointPassesItsFilters runs the detector over seeded
// random histories with the default options and variants of them, and
// checks every reported change point and drift with checkResult. Each
// series is also checked on its prefix without the newest run, as the
// night before would have seen it.
func TestEveryReportedPointPassesItsFilters(t *testing.T) {
	mod := func(f func(*Options)) Options {
		o := DefaultOptions()
		f(&o)
		return o
	}
	tests := []struct {
		name   string
		opts   Options
		series int
	}{
		{"defaults", DefaultOptions(), 1500},
		{"no outlier check", mod(func(o *Options) { o.MaxOutliers = 0 }), 300},
		{"two outliers, segments of 4", mod(func(o *Options) { o.MaxOutliers, o.MinSegmentLength = 2, 4 }), 300},
		{"segments of 2", mod(func(o *Options) { o.MinSegmentLength = 2 }), 300},
		{"caller's noise 1 %", mod(func(o *Options) { o.NoiseCV = 0.01 }), 300},
		{"no drift", mod(func(o *Options) { o.Drift = false }), 300},
		{"no newest-run test", mod(func(o *Options) { o.NewestRuns = false }), 300},
		{"window 30, floor 3 %", mod(func(o *Options) { o.WindowLen, o.MinMagnitude = 30, 0.03 }), 300},
	}
	for ti, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2024, uint64(ti)))
			d, err := NewDetector(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var points, suspected, drifts, failed int
			for s := range tc.series {
				xs := genSeries(rng)
				for _, cut := range []int{len(xs) - 1, len(xs)} {
					r, err := d.DetectSeries(Series{Values: xs[:cut]})
					if err != nil {
						t.Fatal(err)
					}
					points += len(r.ChangePoints)
					drifts += len(r.Drifts)
					for _, c := range r.ChangePoints {
						if c.Status == Suspected {
							suspected++
						}
					}
					if errs := checkResult(xs[:cut], tc.opts, r); len(errs) > 0 {
						failed++
						if failed <= 5 {
							t.Errorf("series %d (%d runs): %v\nvalues %v", s, cut, errs, xs[:cut])
						}
					}
				}
			}
			t.Logf("%d histories: %d change points (%d Suspected) and %d drifts checked, %d results failing",
				2*tc.series, points, suspected, drifts, failed)
			if points < tc.series {
				t.Errorf("only %d change points in %d histories: the generator no longer exercises the detector", points, 2*tc.series)
			}
		})
	}
}
