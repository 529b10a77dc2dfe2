package agent

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
)

// Adaptive step duration (docs/agent.md, "Adaptive step duration"): a
// closed-loop measured run with workload.adaptive runs sysbench with
// --time = warm-up + the step's seconds (the maximum) through
// lua/dbbench/stop_early.lua, reads its per-second reports as they come,
// and after every steady second asks inference.StopRule whether more
// seconds would still help; when it says stop, the agent creates the stop
// file and sysbench ends after the threads' current events with its final
// report.

// warmStepName is the load's warm-up read step: never adaptive.
const warmStepName = "read-only.warm"

// stopRule is the rule of one run of step s, or nil when the run has its
// configured length: no workload.adaptive, a fixed-rate run, the warm-up
// read step.
func (a *Agent) stopRule(s RunStep, threads int, rate *rateRun) *inference.StopRule {
	ad := a.Plan.Workload.Adaptive
	if ad == nil || rate != nil || s.Name == warmStepName || s.Seconds < 1 {
		return nil
	}
	return &inference.StopRule{
		MinSeconds:         min(ad.MinSeconds, s.Seconds),
		MaxSeconds:         s.Seconds,
		BetweenRunCV:       ad.BetweenRunCVPercentFor(s.Name, threads) / 100,
		TargetRelHalfWidth: ad.TargetHalfWidthPercent / 100,
	}
}

// stopWatch reads sysbench's output as it is written, line by line, and
// creates the stop file once the rule says stop. The exec package writes
// stdout and stderr (the same writer) from one goroutine; the mutex is for
// the caller reading the decision after the run.
type stopWatch struct {
	rule     inference.StopRule
	warm     float64
	stopFile string
	logf     func(format string, a ...any)

	mu      sync.Mutex
	partial []byte
	prev    float64
	steady  []float64
	last    inference.StopDecision
	stopped bool
	err     error
}

func (w *stopWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.line(string(w.partial[:i]))
		w.partial = w.partial[i+1:]
	}
	return len(p), nil
}

// line takes one line of output: a steady interval report goes to the rule.
// A sample is steady when its interval starts at or after the warm-up, as
// in sysbench.SteadyStateOf; a report whose second does not advance is
// left out, as the parser leaves it out.
func (w *stopWatch) line(raw string) {
	t := strings.TrimSpace(raw)
	if w.stopped || !strings.HasPrefix(t, "[") {
		return
	}
	iv, err := sysbench.ParseInterval(t)
	if err != nil || iv.Second <= w.prev {
		return // a --rate queue line, a repeat, or no report at all
	}
	start := w.prev
	w.prev = iv.Second
	if start < w.warm {
		return
	}
	x := iv.QPS
	if !(x > 0) && iv.TPS > 0 {
		x = iv.TPS // a script without queries: its events
	}
	w.steady = append(w.steady, x)
	d, err := w.rule.Decide(w.steady)
	if err != nil {
		w.err, w.stopped = err, true
		return
	}
	w.last = d
	if !d.Stop {
		return
	}
	w.stopped = true
	if d.Reason == inference.StopMaxDuration {
		return // sysbench's --time ends it now anyway
	}
	if err := os.WriteFile(w.stopFile, nil, 0o644); err != nil {
		w.err = fmt.Errorf("creating the stop file: %w", err)
	}
	w.logf("adaptive: %s after %d steady s (half-width ±%.2f %%, df %d)", d.Reason, d.Seconds, 100*d.RelHalfWidth, d.DF)
}

// record puts the watch's outcome in the result: the stop reason, the
// adaptive record, and DurationSeconds as warm-up + the steady seconds
// run when the rule stopped the step early. A run that ended without a
// stop ended by sysbench's --time: MaxDuration, unless it failed (then it
// has no stop reason).
func (w *stopWatch) record(res *results.StepResult, failed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ad := &results.AdaptiveDuration{MinSeconds: float64(w.rule.MinSeconds), MaxSeconds: float64(w.rule.MaxSeconds),
		SteadySeconds: len(w.steady)}
	f := func(v float64) *float64 { return &v }
	if h := w.last.RelHalfWidth; !math.IsNaN(h) && !math.IsInf(h, 0) && len(w.steady) == w.last.Seconds {
		ad.RelHalfWidth, ad.DF = f(round4(h)), w.last.DF
	}
	if h := w.rule.ConvergedHalfWidth(); h > 0 {
		ad.ConvergedHalfWidth = f(round4(h))
	}
	if h := w.rule.TargetRelHalfWidth; h > 0 {
		ad.TargetHalfWidth = f(h)
	}
	res.Adaptive = ad
	switch {
	case w.stopped && w.last.Stop:
		res.StopReason = w.last.Reason
		if w.last.Reason != inference.StopMaxDuration {
			res.DurationSeconds = w.warm + float64(w.last.Seconds)
		}
	case !failed:
		res.StopReason = inference.StopMaxDuration
	}
}

func round4(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// newStopWatch prepares the watch of one run: a stop file that does not
// exist yet, in the scripts' directory.
func (a *Agent) newStopWatch(rule inference.StopRule, warm int) (*stopWatch, error) {
	a.stopFiles++
	f := filepath.Join(a.sb.ScriptsDir, fmt.Sprintf("stop-%d", a.stopFiles))
	if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	return &stopWatch{rule: rule, warm: float64(warm), stopFile: f, logf: a.logf}, nil
}
