package agent

import (
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
)

// histogramPercentiles are the latency percentiles read from sysbench's
// histogram of the whole run (--histogram=on). sysbench 1.0.20 takes one
// --percentile per run, and the agent keeps it at 95 so the per-second
// series stays the 95th percentile the published studies plot; the
// histogram is the same counts sysbench computes that percentile from, so
// the 50th, 99th and 99.9th read from it are what sysbench would have
// printed for them. Like the final report, they cover the whole run,
// warm-up included.
var histogramPercentiles = []struct {
	percent float64
	field   func(*results.StepResult) **float64
}{
	{50, func(r *results.StepResult) **float64 { return &r.LatencyP50Ms }},
	{99, func(r *results.StepResult) **float64 { return &r.LatencyP99Ms }},
	{99.9, func(r *results.StepResult) **float64 { return &r.LatencyP999Ms }},
}

// readHistogram fills the percentiles sysbench did not print from its
// histogram; a printed percentile line wins.
func readHistogram(res *results.StepResult, h *sysbench.Histogram) {
	if h == nil {
		return
	}
	for _, p := range histogramPercentiles {
		dst := p.field(res)
		if *dst != nil {
			continue
		}
		if v, ok := h.Percentile(p.percent); ok {
			// A bucket's bound can lie above the largest latency sysbench
			// measured (the max it prints is exact): no percentile above it.
			if res.LatencyMaxMs > 0 && v > res.LatencyMaxMs {
				v = res.LatencyMaxMs
			}
			*dst = &v
		}
	}
}
