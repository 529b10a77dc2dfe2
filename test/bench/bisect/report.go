package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dbbench/dbbench/internal/benchutil"
	"github.com/dbbench/dbbench/pkg/bisect"
	"github.com/dbbench/dbbench/pkg/inference"
)

// The goals.
const (
	goalRight       = 0.90 // the right build at a 10 % slowdown
	goalCalibration = 0.05 // stated confidence vs right rate, ± points
)

// summary is one case's bisections.
type summary struct {
	slowdown            int
	n, localized, right int
	exhausted           int
	stated              float64 // sum over the localized
	cells, rounds       int
	seconds             float64
	outcomes            map[bisect.Outcome]int
}

func summarize(bs []*bisection, slowdown int) summary {
	s := summary{slowdown: slowdown, outcomes: map[bisect.Outcome]int{}}
	for _, b := range bs {
		if b.slowdown != slowdown {
			continue
		}
		if b.exhausted {
			s.exhausted++
			continue
		}
		s.n++
		s.outcomes[b.outcome]++
		s.cells += b.cells
		s.rounds += b.rounds
		s.seconds += b.seconds
		if b.localized() {
			s.localized++
			s.stated += b.confidence
		}
		if b.right() {
			s.right++
		}
	}
	return s
}

// rate is k / n with its Clopper–Pearson 95 % interval.
func rate(k, n int) string {
	lo, hi, err := inference.ClopperPearson(k, n, 0.95)
	if err != nil || n == 0 {
		return fmt.Sprintf("%d / %d", k, n)
	}
	return fmt.Sprintf("%d / %d = %.2f [%.2f, %.2f]", k, n, float64(k)/float64(n), lo, hi)
}

func outcomesString(m map[bisect.Outcome]int) string {
	var parts []string
	for _, o := range bisect.Outcomes {
		if m[o] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", o, m[o]))
		}
	}
	return strings.Join(parts, ", ")
}

// table prints the per-case figures of bs.
func table(w io.Writer, c config, bs []*bisection, perBisectionWall bool) []summary {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "case\tbisections\tright build named (Localized, = culprit)\tLocalized\tstated confidence (mean, Localized)\tright among Localized\tcells / bisection\trounds / bisection")
	if perBisectionWall {
		fmt.Fprint(tw, "\twall / bisection")
	}
	fmt.Fprintln(tw, "\toutcomes")
	var out []summary
	for _, slowdown := range uniqueCases(c.Cases) {
		s := summarize(bs, slowdown)
		out = append(out, s)
		if s.n == 0 {
			fmt.Fprintf(tw, "%s\t0\t-\t-\t-\t-\t-\t-", caseName(slowdown))
			if perBisectionWall {
				fmt.Fprint(tw, "\t-")
			}
			fmt.Fprintln(tw, "\t-")
			continue
		}
		right, stated, among := "-", "-", "-"
		if slowdown > 0 {
			right = rate(s.right, s.n)
			if s.localized > 0 {
				among = rate(s.right, s.localized)
			}
		}
		if s.localized > 0 {
			stated = fmt.Sprintf("%.3f", s.stated/float64(s.localized))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%.1f\t%.1f", caseName(slowdown), s.n, right, rate(s.localized, s.n), stated, among,
			float64(s.cells)/float64(s.n), float64(s.rounds)/float64(s.n))
		if perBisectionWall {
			fmt.Fprintf(tw, "\t%.1f min", s.seconds/60/float64(s.n))
		}
		fmt.Fprintf(tw, "\t%s", outcomesString(s.outcomes))
		if s.exhausted > 0 {
			fmt.Fprintf(tw, " (+%d the log could not serve)", s.exhausted)
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()
	return out
}

// goals prints the goals against the summaries.
func goals(w io.Writer, c config, ss []summary, what string) {
	for _, s := range ss {
		if s.n == 0 {
			continue
		}
		if s.slowdown == 0 {
			verdict := "no"
			if float64(s.localized)/float64(s.n) <= c.MaxPValue {
				verdict = "yes"
			}
			fmt.Fprintf(w, "goal (%s), null bisections Localized ≤ α %.2f: %s; met: %s\n", what, c.MaxPValue, rate(s.localized, s.n), verdict)
			continue
		}
		r := float64(s.right) / float64(s.n)
		if s.slowdown == 10 {
			verdict := "no"
			if r >= goalRight {
				verdict = "yes"
			}
			fmt.Fprintf(w, "goal (%s), right build at 10 %% ≥ %.2f: %s; met: %s\n", what, goalRight, rate(s.right, s.n), verdict)
		}
		if s.localized > 0 {
			stated, got := s.stated/float64(s.localized), float64(s.right)/float64(s.localized)
			verdict := "no"
			if math.Abs(stated-got) <= goalCalibration {
				verdict = "yes"
			}
			fmt.Fprintf(w, "goal (%s), calibration at %s: stated %.3f, right %.3f of the Localized (%+.1f points); within ±%.0f points: %s\n",
				what, caseName(s.slowdown), stated, got, 100*(got-stated), 100*goalCalibration, verdict)
		}
	}
}

// reliability bins the slowdown bisections that named a build by the
// posterior probability they stated (Localized or not) against how often
// the build was the culprit.
func reliability(w io.Writer, bs []*bisection) {
	edges := []float64{0, 0.5, 0.9, 0.95, 0.99, 1.0000001}
	type bin struct {
		n, right, localized int
		stated              float64
	}
	bins := make([]bin, len(edges)-1)
	seen := false
	for _, b := range bs {
		if b.slowdown == 0 || b.exhausted || b.named <= 0 || math.IsNaN(b.confidence) {
			continue
		}
		for i := range bins {
			if b.confidence >= edges[i] && b.confidence < edges[i+1] {
				bins[i].n++
				bins[i].stated += b.confidence
				if b.named == b.culprit {
					bins[i].right++
				}
				if b.localized() {
					bins[i].localized++
				}
				seen = true
			}
		}
	}
	if !seen {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "stated probability of the named build\tbisections\tof them Localized\tmean stated\tnamed = culprit")
	for i, b := range bins {
		if b.n == 0 {
			continue
		}
		closing := ")"
		if i == len(bins)-1 {
			closing = "]"
		}
		fmt.Fprintf(tw, "[%.2f, %.2f%s\t%d\t%d\t%.3f\t%s\n", edges[i], math.Min(edges[i+1], 1), closing, b.n, b.localized, b.stated/float64(b.n), rate(b.right, b.n))
	}
	_ = tw.Flush()
}

// noise prints what the measured cells say (the pool's fit).
func noise(w io.Writer, c config, p *pool, l *runLog) {
	fmt.Fprintf(w, "cells measured: %d (%d failed)\n", p.cells, p.failed)
	for _, k := range p.keys {
		fmt.Fprintf(w, "  %s: run-to-run CV within a round and quota %.2f %%", k, 100*p.sigma[k])
		for _, scale := range []int{90, 80} {
			if d, ok := p.delta[scale]; ok {
				h := 1.96 * p.deltaSE[scale][k]
				fmt.Fprintf(w, "; quota %d %%: realised ratio %.3f [%.3f, %.3f] over %d rounds", scale, math.Exp(d[k]), math.Exp(d[k]-h),
					math.Exp(d[k]+h), p.deltaRounds[scale])
			}
		}
		if p.busyRounds[0] > 0 && p.busyRounds[1] > 0 {
			fmt.Fprintf(w, "; busy loop (%d in %s): busy / idle level %.3f (null bisections, %d busy and %d idle rounds)", c.Busy, c.BusyIn,
				math.Exp(p.busyShift[k]), p.busyRounds[1], p.busyRounds[0])
		}
		fmt.Fprintln(w)
	}
	var thr, wall, load []float64
	for _, cs := range l.cells {
		for _, cell := range cs {
			thr = append(thr, orNaN(cell.Throttled))
			wall = append(wall, cell.Wall)
			if cell.Load1 != nil {
				load = append(load, *cell.Load1)
			}
		}
	}
	if len(wall) > 0 && len(load) > 0 {
		fmt.Fprintf(w, "  the server throttled in %.0f %% of CFS periods on average; %.1f s per cell; the machine's 1-min load average %.1f on average, %.1f at most\n",
			100*benchutil.Mean(thr), benchutil.Mean(wall), benchutil.Mean(load), slices.Max(load))
	}
}

// report prints the real bisections' figures, then the resampled ones'.
func report(w io.Writer, c config, l *runLog, measured []*bisection, check *replayCheck, resample int, took time.Duration) {
	fmt.Fprintf(w, "\nbench-bisect: %d candidates, rule: magnitude %.0f %% %s, maxPValue %.2f, confidence %.2f; parallelism %d, %d repeats, max %d cells; steps %s at %d threads, %d s (+%d s warm-up); base quota %.2f CPU; load changed between rounds in: %s",
		c.Candidates, 100*c.Magnitude, c.MagnitudeRule, c.MaxPValue, c.Confidence, c.Parallelism, c.Repeats, c.MaxCells,
		strings.Join(c.Steps, ","), c.Threads, c.Seconds, c.Warmup, c.Quota, c.Load)
	if took > 0 {
		fmt.Fprintf(w, "; took %s", took.Round(time.Second))
	}
	fmt.Fprintln(w)
	if check != nil {
		fmt.Fprintf(w, "replay of %s (started %s)", "the log", l.started)
		if check.sameRule {
			fmt.Fprintf(w, ": the log's rule and limits; %d of %d bisections reach the logged outcome, build, cells and rounds", check.matched, check.compared)
		} else {
			fmt.Fprint(w, " with another rule or limits: a round the log lacks ends its bisection (\"could not serve\")")
		}
		if check.incomplete > 0 {
			fmt.Fprintf(w, "; %d unfinished bisection(s) not replayed", check.incomplete)
		}
		fmt.Fprintln(w)
		for _, m := range check.mismatches {
			fmt.Fprintf(w, "  mismatch: %s\n", m)
		}
	}
	p := newPool(l)
	noise(w, c, p, l)
	fmt.Fprintln(w)

	fmt.Fprintf(w, "real bisections (every cell on the server):\n")
	ss := table(w, c, measured, true)
	goals(w, c, ss, "real")
	reliability(w, measured)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "bisection\tcase\tculprit\toutcome\tnamed\tprobability\tcells\trounds\tepochs\twall")
	for _, b := range measured {
		outcome := string(b.outcome)
		if b.exhausted {
			outcome = "(the log could not serve)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%d\t%.3f\t%d\t%d\t%d\t%.1f min\n", b.index, caseName(b.slowdown), b.culprit, outcome, b.named, b.confidence,
			b.cells, b.rounds, b.epochs, b.seconds/60)
	}
	_ = tw.Flush()

	if resample <= 0 {
		return
	}
	fmt.Fprintln(w)
	if !p.canResample() {
		fmt.Fprintln(w, "resampled bisections: no measured cells to draw from")
		return
	}
	bs, err := resampleAll(context.Background(), c, p, resample)
	if err != nil {
		fmt.Fprintf(w, "resampled bisections: %v\n", err)
		return
	}
	var nominal []string
	for _, s := range uniqueCases(c.Cases) {
		if _, ok := p.delta[100-s]; s > 0 && !ok {
			nominal = append(nominal, caseName(s))
		}
	}
	fmt.Fprintf(w, "resampled bisections (%d per case, seed %d; each round a measured round's level, each cell a measured cell's noise, the realised slowdowns", resample, c.Seed)
	if len(nominal) > 0 {
		fmt.Fprintf(w, " — nominal for %s, which the log did not measure", strings.Join(nominal, ", "))
	}
	fmt.Fprintln(w, "):")
	ss = table(w, c, bs, false)
	goals(w, c, ss, "resampled")
	reliability(w, bs)
	misses(w, bs, 10)
}

// misses lists the first few bisections that did not end as they should:
// a slowdown not localized to its culprit, a null bisection Localized.
func misses(w io.Writer, bs []*bisection, most int) {
	var out []string
	n := 0
	for _, b := range bs {
		if b.exhausted || b.right() || (b.slowdown == 0 && !b.localized()) {
			continue
		}
		n++
		if len(out) < most {
			out = append(out, fmt.Sprintf("  %s, culprit %d: %s, named %d at %.3f, likely %v, %d cells, %d rounds, %d epochs",
				caseName(b.slowdown), b.culprit, b.outcome, b.named, b.confidence, b.likely, b.cells, b.rounds, b.epochs))
		}
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "misses (%d; the first %d):\n%s\n", n, len(out), strings.Join(out, "\n"))
}
