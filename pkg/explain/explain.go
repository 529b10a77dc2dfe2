// Package explain says what differs between two builds' measurements of
// one step: the engine counters per operation that moved most, and where
// the server's CPU went (the functions whose share of on-CPU samples moved
// most, from the profiled passes). It is what a bisection attaches to the
// build it named, from the cells of the last good and the first bad build;
// it has no Kubernetes imports.
package explain

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/dbbench/dbbench/pkg/profile"
	"github.com/dbbench/dbbench/pkg/results"
)

// DefaultTop is how many counters and functions an explanation keeps.
const DefaultTop = 5

// MinCounterChange is how far a counter's per-op ratio must be from 1 to
// be listed (5 %): smaller moves are within the noise of a server-wide
// counter over a short window.
const MinCounterChange = 0.05

// Counter is one engine counter per operation on each side: the mean over
// the side's cells that recorded it.
type Counter struct {
	Name string  `json:"name"`
	Good float64 `json:"good"`
	Bad  float64 `json:"bad"`
	// Ratio is Bad/Good: +Inf from zero.
	Ratio float64 `json:"ratio"`
	// Cells counts the cells behind each side's mean.
	GoodCells int `json:"goodCells"`
	BadCells  int `json:"badCells"`
}

// Explanation is what differs between the good and the bad side at one
// step and thread count.
type Explanation struct {
	Step    string `json:"step"`
	Threads int    `json:"threads"`
	// Counters are the counters that moved most, the largest move (on a
	// log scale, from zero first) first.
	Counters []Counter `json:"counters,omitempty"`
	// Functions are the functions whose self share of the samples moved
	// most, by |change|; empty without a profile on both sides.
	Functions []profile.Change `json:"functions,omitempty"`
	// ProfileThreads is the thread count the profiles are of (the
	// profiled pass may run at another count than the judged step).
	ProfileThreads int `json:"profileThreads,omitempty"`
	// GoodSamples and BadSamples are the profiles' sample counts.
	GoodSamples int64 `json:"goodSamples,omitempty"`
	BadSamples  int64 `json:"badSamples,omitempty"`
	// Notes say what could not be compared and why.
	Notes []string `json:"notes,omitempty"`

	good, bad *profile.Profile
}

// ErrNothing means neither counters nor profiles of the step were found
// on both sides.
var ErrNothing = errors.New("no counters or profiles of the step on both sides")

// Explain compares the good side's documents with the bad side's at step
// and threads, keeping the top counters and functions (DefaultTop when
// top is 0). Profiles are taken from the first document of each side that
// has one of the step (at threads if it has, else at its largest thread
// count both sides profiled).
func Explain(good, bad []*results.Document, step string, threads, top int) (*Explanation, error) {
	if top <= 0 {
		top = DefaultTop
	}
	e := &Explanation{Step: step, Threads: threads}
	var perWindow []string
	e.Counters, perWindow = counterMoves(good, bad, step, threads, top)
	if len(perWindow) > 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("left out, as they moved like a count per measured window rather than per operation (the agent's own snapshot queries; their per-operation value follows the throughput): %s", strings.Join(perWindow, ", ")))
	}
	if len(e.Counters) == 0 {
		e.Notes = append(e.Notes, fmt.Sprintf("no engine counter of %s@%d moved by %.0f %% or more per operation (or none was recorded on both sides)", step, threads, 100*MinCounterChange))
	}
	if err := e.profiles(good, bad, top); err != nil {
		e.Notes = append(e.Notes, err.Error())
	}
	if len(e.Counters) == 0 && len(e.Functions) == 0 {
		return e, fmt.Errorf("%s@%d: %w", step, threads, ErrNothing)
	}
	return e, nil
}

// perWindowTolerance is how close (on the log scale) a counter's per-op
// ratio must be to the inverse throughput ratio to count as moving per
// window: 10 %.
const perWindowTolerance = 0.1

// counterMoves are the counters per op of step@threads that moved most
// between the sides' means, and the names of those left out because they
// moved like a fixed count per measured window: a counter the agent's own
// snapshots bump a few times a window (SHOW GLOBAL STATUS materializes a
// temporary table) grows per operation exactly as the throughput falls,
// which says nothing about the build.
func counterMoves(good, bad []*results.Document, step string, threads, top int) ([]Counter, []string) {
	mg, ng := meanPerOp(good, step, threads)
	mb, nb := meanPerOp(bad, step, threads)
	qg, qb := meanQPS(good, step, threads), meanQPS(bad, step, threads)
	var out []Counter
	var perWindow []string
	for name, g := range mg {
		b, ok := mb[name]
		if !ok || (g == 0 && b == 0) {
			continue
		}
		r := math.Inf(1)
		if g != 0 {
			r = b / g
		}
		if !math.IsInf(r, 1) && math.Abs(r-1) < MinCounterChange {
			continue
		}
		if qg > 0 && qb > 0 && r > 0 && !math.IsInf(r, 1) && math.Abs(qb/qg-1) >= MinCounterChange &&
			math.Abs(math.Log(r)+math.Log(qb/qg)) < perWindowTolerance {
			perWindow = append(perWindow, name)
			continue
		}
		out = append(out, Counter{Name: name, Good: g, Bad: b, Ratio: r, GoodCells: ng[name], BadCells: nb[name]})
	}
	sort.Strings(perWindow)
	sort.Slice(out, func(i, j int) bool {
		mi, mj := moveSize(out[i].Ratio), moveSize(out[j].Ratio)
		if mi != mj {
			return mi > mj
		}
		return out[i].Name < out[j].Name
	})
	return out[:min(top, len(out))], perWindow
}

// meanQPS is the mean steady QPS of step@threads over the documents' step
// results (0 when none has it).
func meanQPS(docs []*results.Document, step string, threads int) float64 {
	var sum float64
	n := 0
	for _, d := range docs {
		for _, s := range d.Steps {
			if s.Step == step && s.Threads == threads && s.SteadyQPS > 0 {
				sum += s.SteadyQPS
				n++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// moveSize is |ln ratio|, infinite from or to zero.
func moveSize(r float64) float64 {
	if r == 0 || math.IsInf(r, 1) {
		return math.Inf(1)
	}
	return math.Abs(math.Log(r))
}

// meanPerOp is each counter's mean per-op value over the documents' step
// results at step@threads, with the number of cells behind it.
func meanPerOp(docs []*results.Document, step string, threads int) (map[string]float64, map[string]int) {
	sum, n := map[string]float64{}, map[string]int{}
	for _, d := range docs {
		for _, s := range d.Steps {
			if s.Step != step || s.Threads != threads || s.Counters == nil {
				continue
			}
			for name, v := range s.Counters.PerOp {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					sum[name] += v
					n[name]++
				}
			}
		}
	}
	for name := range sum {
		sum[name] /= float64(n[name])
	}
	return sum, n
}

// profiles diffs the sides' profiles of the step.
func (e *Explanation) profiles(good, bad []*results.Document, top int) error {
	pg := profilesOf(good, e.Step)
	pb := profilesOf(bad, e.Step)
	if len(pg) == 0 || len(pb) == 0 {
		return fmt.Errorf("no profile of %s on both sides (the profiled pass: docs/explain.md)", e.Step)
	}
	th := e.Threads
	if pg[th] == nil || pb[th] == nil {
		th = 0
		for t := range pg {
			if pb[t] != nil && t > th {
				th = t
			}
		}
		if th == 0 {
			return fmt.Errorf("%s: the sides profiled no thread count in common", e.Step)
		}
	}
	a, err := parse(pg[th], "good")
	if err != nil {
		return err
	}
	b, err := parse(pb[th], "bad")
	if err != nil {
		return err
	}
	changes := profile.Diff(a, b, profile.RankSelf)
	e.Functions = changes[:min(top, len(changes))]
	e.ProfileThreads, e.GoodSamples, e.BadSamples = th, a.Total(), b.Total()
	e.good, e.bad = a, b
	return nil
}

// profilesOf are the first profile of step per thread count in docs.
func profilesOf(docs []*results.Document, step string) map[int]*results.Profile {
	out := map[int]*results.Profile{}
	for _, d := range docs {
		for i := range d.Steps {
			s := &d.Steps[i]
			if s.Step == step && s.Profile != nil && s.Profile.Error == "" && s.Profile.Folded != "" && out[s.Threads] == nil {
				out[s.Threads] = s.Profile
			}
		}
	}
	return out
}

func parse(p *results.Profile, side string) (*profile.Profile, error) {
	prof, err := profile.ParseFoldedString(p.Folded)
	if err != nil {
		return nil, fmt.Errorf("the %s side's profile: %w", side, err)
	}
	prof.Dropped = p.Dropped
	if prof.Total() == 0 {
		return nil, fmt.Errorf("the %s side's profile has no samples", side)
	}
	return prof, nil
}

// FlameGraph is the differential flame graph of the profiles (good to
// bad) as SVG; nil without profiles on both sides.
func (e *Explanation) FlameGraph(title string) ([]byte, error) {
	if e.good == nil || e.bad == nil {
		return nil, nil
	}
	var buf bytes.Buffer
	if err := profile.WriteDiffSVG(&buf, e.good, e.bad, profile.SVGOptions{Title: title,
		Subtitle: fmt.Sprintf("%s, %d threads: the bad build's stacks, red where a call path's share of samples grew from the good build, blue where it shrank", e.Step, e.ProfileThreads)}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
