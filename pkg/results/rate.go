package results

import (
	"strconv"
	"strings"
)

// Rate describes a fixed-rate (open-loop) run: sysbench --rate, which
// generates events at the target rate whatever the server does and times
// each from when it was generated, so a server that falls behind shows as
// queueing latency instead of as fewer events (docs/reports.md,
// "Fixed-rate steps").
type Rate struct {
	// Step is the closed-loop step this run is a variant of.
	Step string `json:"step"`
	// TargetTPS is the rate asked of sysbench, in events (transactions)
	// per second; arrivals are Poisson with this mean.
	TargetTPS int `json:"targetTps"`
	// FractionOfPeak is the fraction of the closed-loop peak asked for, as
	// written in the spec ("0.5"); absent for an absolute rate.
	FractionOfPeak string `json:"fractionOfPeak,omitempty"`
	// PeakTPS is the steady TPS of the closed-loop run the fraction was
	// taken of: same cell, step and threads, run just before.
	PeakTPS float64 `json:"peakTps,omitempty"`
	// MaxQueueLength and EndQueueLength are the largest queue report after
	// the warm-up and the last one: a backlog that grows means the server
	// did not keep the rate, and events still queued at the end were never
	// run, so their latency is missing from the percentiles.
	MaxQueueLength int64 `json:"maxQueueLength"`
	EndQueueLength int64 `json:"endQueueLength"`
	// PollIntervalMs is how long an idle sysbench 1.0 worker sleeps before
	// looking at the queue again (0.5 × threads / rate seconds): an event
	// that arrives while every worker sleeps waits up to this long, and
	// that wait counts in its latency. It bounds the harness's own share of
	// the latency at low rates.
	PollIntervalMs float64 `json:"pollIntervalMs"`
	// QueueOverflow is true when sysbench stopped the run because its event
	// queue overflowed: the server fell so far behind the rate that the
	// run has no final report. The result's Error says so too; the cell
	// goes on with its next run.
	QueueOverflow bool `json:"queueOverflow,omitempty"`
}

// RateSeparator joins a step's name and its rate label in the name of a
// fixed-rate result ("point-query@0.5peak", "point-query@2000tps"), so a
// (step, threads) pair stays unique in a document and every report that
// keys on it keeps working.
const RateSeparator = "@"

// RateStepName is the result name of step run at a fraction of its peak
// (fraction non-empty) or at an absolute rate in events per second.
func RateStepName(step, fraction string, tps int) string {
	if fraction != "" {
		return step + RateSeparator + fraction + "peak"
	}
	return step + RateSeparator + strconv.Itoa(tps) + "tps"
}

// SplitRateStep splits a result step name into the closed-loop step and the
// rate label ("0.5peak"); label is "" for a closed-loop step.
func SplitRateStep(name string) (step, label string) {
	step, label, _ = strings.Cut(name, RateSeparator)
	return step, label
}
