package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/workload"
)

// Why an invalid result is not re-run (results.Quality.NotRerun).
const (
	notRerunWrites = "the step writes: a second run would measure other data, and leave other data to every later step"
	notRerunRate   = "a fixed-rate run: its rate is a fraction of the closed-loop run before it"
	notRerunKind   = "not a catalog read step: whether it writes is unknown"
)

// gatedRun runs one (step, threads) through the quality gate
// (results.AssessStep): a result that is not a value is run once more
// when that cannot change the data later steps see (rerunBlocked), and
// the second run's result is kept, with the first on record
// (Quality.Replaced); a result still invalid after it, or not re-run, is
// kept flagged. A failed run has no verdict: its Error decides.
//
// One re-run per (step, threads) at most: a cell takes at most twice its
// step time, which the controller's default cell timeout (twice the step
// time plus an hour) allows.
func (a *Agent) gatedRun(ctx context.Context, st step, th int, rate *rateRun) results.StepResult {
	res := a.runStep(ctx, st, th, rate)
	if res.Error != "" {
		return res
	}
	q := results.AssessStep(&res)
	res.Quality = &q
	if q.Valid {
		return res
	}
	if why := rerunBlocked(st.spec(), rate); why != "" {
		q.NotRerun = why
		a.logf("step %s threads=%d: invalid (%s), not re-run (%s): kept, flagged", res.Step, th, describeQuality(q), why)
		return res
	}
	if ctx.Err() != nil {
		return res
	}
	a.logf("step %s threads=%d: invalid (%s): running it once more", res.Step, th, describeQuality(q))
	again := a.runStep(ctx, st, th, rate)
	if again.Error != "" {
		return again
	}
	q2 := results.AssessStep(&again)
	q2.Attempts, q2.Replaced = 2, res.Replacement()
	again.Quality = &q2
	if q2.Valid {
		a.logf("step %s threads=%d: the second run is valid: %.1f QPS replaces %.1f", again.Step, th, again.SteadyQPS, res.SteadyQPS)
	} else {
		a.logf("step %s threads=%d: still invalid (%s): kept, flagged", again.Step, th, describeQuality(q2))
	}
	return again
}

// rerunBlocked says why a step's invalid result cannot be run again
// within the cell, or "" when it can: closed-loop catalog steps that only
// read. A write step's second run would start from the data its first run
// left, and hand every later step other data than the cell's fixed
// sequence does.
func rerunBlocked(s RunStep, rate *rateRun) string {
	switch {
	case rate != nil:
		return notRerunRate
	case s.Kind != KindCatalog || s.Catalog.Group == "":
		return notRerunKind
	case s.Catalog.Group == workload.GroupWrite:
		return notRerunWrites
	}
	return ""
}

// describeQuality says what failed, for the log.
func describeQuality(q results.Quality) string {
	parts := make([]string, 0, len(q.Reasons))
	for _, r := range q.Reasons {
		switch r {
		case results.QualityStalled:
			parts = append(parts, fmt.Sprintf("%s %.1f s of %.0f s, limit %.1f s", r, q.StallSeconds, q.WindowSeconds, q.StallLimitSeconds))
		case results.QualitySteadyFinalMismatch:
			parts = append(parts, fmt.Sprintf("%s %.0f %% (tolerance %.0f %%)", r, 100*q.FinalMismatch, 100*q.MismatchTolerance))
		case results.QualityTooFewSteadySamples:
			parts = append(parts, fmt.Sprintf("%s (at least %d needed)", r, q.MinSteadySamples))
		default:
			parts = append(parts, string(r))
		}
	}
	return strings.Join(parts, ", ")
}
