package agent

import (
	"math"
	"strconv"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
)

// rateRun is the fixed-rate (open-loop) variant of one run of a step:
// runStep runs the step as always, with sysbench's --rate added, under the
// name results.RateStepName gives, and records the rate and the queue
// reports. sysbench 1.0.20 generates events at the rate (Poisson arrivals)
// into a queue the workers take from, and times each event from when it was
// queued, so a server that falls behind shows as latency rather than as
// missing events: coordinated omission is corrected by sysbench itself
// (docs/reports.md, "Fixed-rate steps", has the source and its limits).
type rateRun struct {
	// fraction is the spec's fraction of the peak ("0.5"); "" for an
	// absolute rate.
	fraction string
	// target is --rate, events per second.
	target int
	// peakTPS is the closed-loop steady TPS the fraction was taken of.
	peakTPS float64
}

// rateRuns are the fixed-rate runs that follow the closed-loop run closed
// of step s at one thread count, in the spec's order: fractions of
// closed's steady TPS first, then absolute rates.
func (a *Agent) rateRuns(s RunStep, closed results.StepResult) []rateRun {
	fr := a.Plan.Workload.FixedRate
	if !fr.Applies(s.Name) {
		return nil
	}
	var out []rateRun
	for _, f := range fr.FractionsOfPeak {
		x, err := agentapi.ParseFraction(f)
		if err != nil {
			continue // Plan.Validate refused it before the cell started
		}
		out = append(out, rateRun{fraction: f, target: max(1, int(math.Round(x*closed.SteadyTPS))), peakTPS: closed.SteadyTPS})
	}
	for _, r := range fr.Rates {
		out = append(out, rateRun{target: r})
	}
	return out
}

// name is the result's step name.
func (v *rateRun) name(step string) string { return results.RateStepName(step, v.fraction, v.target) }

// args are what the variant adds to the run's sysbench options.
func (v *rateRun) args() []string { return []string{"--rate=" + strconv.Itoa(v.target)} }

// record sets res.Rate and, when sysbench printed a queue report for every
// sample of res.Series (the last one may be cut off: that sample is
// dropped), the series' queue columns.
func (v *rateRun) record(res *results.StepResult, step string, out *sysbench.Output, threads, warm int) {
	r := &results.Rate{Step: step, TargetTPS: v.target, FractionOfPeak: v.fraction, PeakTPS: v.peakTPS,
		PollIntervalMs: pollIntervalMs(threads, v.target)}
	res.Rate = r
	if out == nil {
		return
	}
	r.QueueOverflow = out.QueueFull
	if len(out.Queue) == 0 {
		return
	}
	bySecond := make(map[float64]sysbench.QueueSample, len(out.Queue))
	for _, q := range out.Queue {
		bySecond[q.Second] = q
		// A sample covers (second-1, second]: after the warm-up when it
		// starts at or after it, as for the steady-state throughput.
		if q.Second-1 >= float64(warm) {
			r.MaxQueueLength = max(r.MaxQueueLength, q.Length)
		}
	}
	r.EndQueueLength = out.Queue[len(out.Queue)-1].Length
	se := res.Series
	if se == nil {
		return
	}
	ivs := increasing(out.Intervals) // the samples of res.Series, in order
	ql, conc := make([]float64, 0, len(ivs)), make([]float64, 0, len(ivs))
	for i, iv := range ivs {
		q, ok := bySecond[iv.Second]
		if !ok && i > 0 && i == len(ivs)-1 {
			// sysbench 1.0.20's report thread prints the queue line right
			// after the interval line and is cancelled when the run ends,
			// sometimes between the two (1 run in 40 of `sysbench cpu
			// --rate` beside two busy loops): the last second leaves the
			// series rather than carry a made-up queue value.
			se.Truncate(i)
			break
		}
		if !ok {
			return // a missing report: no column rather than a made-up value
		}
		ql, conc = append(ql, float64(q.Length)), append(conc, float64(q.Concurrency))
	}
	se.QueueLength, se.Concurrency = ql, conc
}

// pollIntervalMs is how long an idle sysbench 1.0 worker sleeps between
// looks at an empty queue: usleep(500000 × threads / rate) microseconds
// (sb_more_events in src/sysbench.c).
func pollIntervalMs(threads, rate int) float64 {
	if rate <= 0 {
		return 0
	}
	return 500 * float64(threads) / float64(rate)
}
