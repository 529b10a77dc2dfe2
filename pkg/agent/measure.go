package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
)

// runStep runs one (step, threads) pair and never returns an error: a failure
// is the result's Error, the measurements that exist are kept. Every kind
// runs through here: the step's hooks before, sysbench inside the measured
// window, the output read into the result, the hooks after, then the
// hardware metrics per op. A non-nil rate makes it the fixed-rate variant
// of the run (fixedrate.go): --rate added, the variant's name, its rate
// recorded.
func (a *Agent) runStep(ctx context.Context, st step, threads int, rate *rateRun) (res results.StepResult) {
	s := st.spec()
	warm := a.Plan.Workload.WarmupSeconds
	started := time.Now().UTC()
	res = results.StepResult{Step: s.Name, Group: string(s.Catalog.Group), Threads: threads, StartedAt: &started,
		DurationSeconds: float64(s.Seconds + warm), WarmupSeconds: float64(warm)}
	if rate != nil {
		res.Step = rate.name(s.Name)
	}
	ext := StepExtension{Kind: s.Kind, Script: s.Script}
	defer func() { setExt(&res.Extensions, ext) }()
	r := &stepRun{Step: s, Threads: threads, Started: started, Result: &res, Ext: &ext}

	args := a.runArgs(st, threads)
	if rate != nil {
		args = append(args, rate.args()...)
	}

	hooks := st.hooks()
	// The counters go last: their divisor is the one the kind's hooks set.
	if ch := a.counterHook(s); ch != nil {
		hooks = append(hooks, ch)
	}
	var bounds []windowBounds
	for _, h := range hooks {
		if b, ok := h.(windowBounds); ok {
			bounds = append(bounds, b)
		}
	}
	for _, h := range hooks {
		if err := h.before(ctx, r); err != nil {
			res.Error = err.Error()
			return res
		}
	}

	run, watch, err := a.measuredRun(ctx, st, res.Step, threads, args, rate)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	inv, hw := a.measure(ctx, warm, run, bounds...)
	if inv.RepeatedIntervals > 0 {
		a.logf("step %s threads=%d: dropped %d interval line(s) whose second repeated the previous one's", s.Name, threads, inv.RepeatedIntervals)
	}
	r.Ended = time.Now().UTC()
	res.Command = inv.Command
	readOutput(&res, &ext, inv, warm)
	if watch != nil {
		if inv.Err == nil && res.Error == "" && watch.err != nil {
			res.Error = "adaptive duration: " + watch.err.Error()
		}
		watch.record(&res, inv.Err != nil || res.Error != "" || inv.Parsed == nil || inv.Parsed.Final == nil)
		_ = os.Remove(watch.stopFile)
	}
	if rate != nil {
		rate.record(&res, s.Name, inv.Parsed, threads, warm)
	}
	if inv.Err != nil {
		res.Error = inv.Err.Error()
		return res
	}
	if inv.Parsed == nil || inv.Parsed.Final == nil {
		res.Error = "sysbench printed no final report: " + tail(inv.Output, 8)
		return res
	}
	if res.Error != "" {
		return res
	}
	r.Ops, r.OpsBasis = res.SteadyQPS, opsBasisSteadyQPS
	for _, h := range hooks {
		h.after(ctx, r)
	}
	if a.Collector != nil && hw.Seconds > 0 {
		res.Hardware = toHardware(hw, r.Ops, r.OpsBasis, a.ClientOnDBNode, a.Collector)
	}
	// Nothing at all, final report included, is the benchmark's failure. A
	// steady window without throughput beside a final report with some is
	// a stall (no report covers the window, or the server stopped): the
	// quality gate judges it (results.AssessStep), and a starved client is
	// then the infrastructure's failure (the controller's ClientStarved).
	if !(res.SteadyQPS > 0) && !(res.SteadyTPS > 0) && !(res.FinalQPS > 0) && !(res.FinalTPS > 0) {
		res.Error = "step reported zero throughput"
	}
	a.logf("step %s threads=%d: steady %.1f QPS / %.1f TPS (final %.1f QPS)", res.Step, threads, res.SteadyQPS, res.SteadyTPS, res.FinalQPS)
	return res
}

// measuredRun is the command of one measured run of st at threads: the
// kind's own client (runner: a fixed length, no fixed-rate variant), else
// sysbench, through the stop-early wrapper with a stopWatch when the step is
// adaptive (stopRule). name is the result's step name, for the log.
func (a *Agent) measuredRun(ctx context.Context, st step, name string, threads int, args []string, rate *rateRun) (func() *Invocation, *stopWatch, error) {
	s := st.spec()
	warm := a.Plan.Workload.WarmupSeconds
	if own, ok := st.(runner); ok {
		if rate != nil {
			return nil, nil, fmt.Errorf("step %s: fixed-rate runs of a %s step are not supported", s.Name, s.Kind)
		}
		a.logf("step %s threads=%d: %ds + %ds warm-up", name, threads, s.Seconds, warm)
		return func() *Invocation { return own.run(ctx, threads, s.Seconds+warm) }, nil, nil
	}
	if rule := a.stopRule(s, threads, rate); rule != nil {
		w, err := a.newStopWatch(*rule, warm)
		if err != nil {
			return nil, nil, err
		}
		a.logf("step %s threads=%d: %d to %ds (adaptive) + %ds warm-up", name, threads, rule.MinSeconds, s.Seconds, warm)
		return func() *Invocation { return a.sb.RunStoppable(ctx, s.Script, args, w.stopFile, w) }, w, nil
	}
	a.logf("step %s threads=%d: %ds + %ds warm-up", name, threads, s.Seconds, warm)
	return func() *Invocation { return a.sb.Run(ctx, s.Script, args, "run", nil) }, nil, nil
}

// runArgs are the sysbench options of one run of st at threads: the kind's
// base options, the run's (threads, warm-up included in --time, per-second
// reports, the 95th percentile, the latency histogram), then the step's own.
func (a *Agent) runArgs(st step, threads int) []string {
	s := st.spec()
	args := append(st.baseArgs(),
		"--threads="+strconv.Itoa(threads),
		"--time="+strconv.Itoa(s.Seconds+a.Plan.Workload.WarmupSeconds),
		"--events=0",
		"--report-interval=1",
		"--percentile=95",
		"--histogram=on", // the other percentiles (latency.go)
	)
	return append(args, s.Args...)
}

// measure is the measured window of one run: run starts at once, the
// collector (if any) starts when the warm-up seconds are over and stops when
// run returns, so the hardware metrics cover the steady part only. A run
// that ends within its warm-up has no sample (zero HWSample). The bounds
// are told the same two instants: windowStart as the warm-up ends (never
// if the run ended first), windowEnd once run returned and windowStart, if
// it was called, has returned.
func (a *Agent) measure(ctx context.Context, warm int, run func() *Invocation, bounds ...windowBounds) (*Invocation, HWSample) {
	hwDone := make(chan HWSample, 1)
	// opened is closed when the window's start is over: the bounds told, or
	// the run ended first.
	opened := make(chan struct{})
	hwCtx, hwCancel := context.WithCancel(ctx)
	defer hwCancel()
	if a.Collector != nil || len(bounds) > 0 {
		go func() {
			select {
			case <-hwCtx.Done():
				close(opened)
				hwDone <- HWSample{}
				return
			case <-time.After(time.Duration(warm) * time.Second):
			}
			for _, b := range bounds {
				b.windowStart(hwCtx)
			}
			close(opened)
			if a.Collector == nil {
				hwDone <- HWSample{}
				return
			}
			if err := a.Collector.Start(hwCtx); err != nil {
				a.logf("hw collector start: %v", err)
				hwDone <- HWSample{}
				return
			}
			<-hwCtx.Done()
			// The run's context may be what ended: stopping must still happen.
			sctx, c := context.WithTimeout(context.Background(), 10*time.Second)
			defer c()
			smp, err := a.Collector.Stop(sctx)
			if err != nil {
				a.logf("hw collector stop: %v", err)
			}
			hwDone <- smp
		}()
	} else {
		close(opened)
	}
	inv := run()
	hwCancel()
	<-opened
	for _, b := range bounds {
		b.windowEnd(ctx)
	}
	var hw HWSample
	if a.Collector != nil {
		hw = <-hwDone
	}
	return inv, hw
}

// readOutput records what sysbench's output says in the result: the
// per-second series, the final report and the steady state after the
// warm-up. It sets res.Error only when the output has a final report but no
// steady state and the command itself succeeded.
func readOutput(res *results.StepResult, ext *StepExtension, inv *Invocation, warm int) {
	out := inv.Parsed
	if out == nil {
		return
	}
	ivs := increasing(out.Intervals)
	if len(ivs) > 0 {
		se := &results.Series{IntervalSeconds: 1, LatencyPercentile: 95}
		for i, iv := range ivs {
			if iv.Second != float64(i+1) && se.Seconds == nil {
				// A report came late (the client did not run): the
				// samples' times are not their indices (results.Series).
				se.Seconds = make([]float64, 0, len(ivs))
				for _, jv := range ivs {
					se.Seconds = append(se.Seconds, jv.Second)
				}
			}
			se.QPS = append(se.QPS, iv.QPS)
			se.TPS = append(se.TPS, iv.TPS)
			se.LatencyMs = append(se.LatencyMs, iv.LatencyMs)
			se.ErrorsPerSecond = append(se.ErrorsPerSecond, iv.ErrorsPerSec)
			se.ReconnectsPerSecond = append(se.ReconnectsPerSecond, iv.ReconnectsPerSec)
		}
		res.Series = se
	}
	if f := out.Final; f != nil {
		res.FinalTPS = f.EventsPerSec
		if f.SQL != nil {
			res.FinalQPS, res.FinalTPS = f.SQL.QueriesPerSec, f.SQL.TransactionsPerSec
			res.Queries, res.Transactions = f.SQL.Queries, f.SQL.Transactions
			res.Errors, res.ErrorsPerSecond = f.SQL.IgnoredErrors, f.SQL.IgnoredErrorsPerSec
			res.Reconnects, res.ReconnectsPerSecond = f.SQL.Reconnects, f.SQL.ReconnectsPerSec
		}
		el := f.TotalTimeSeconds
		res.ElapsedSeconds = &el
		res.LatencyAvgMs, res.LatencyMaxMs = f.Latency.AvgMs, f.Latency.MaxMs
		mn := f.Latency.MinMs
		res.LatencyMinMs = &mn
		if v, ok := f.Latency.Get(95); ok {
			res.LatencyP95Ms = &v
		}
		if v, ok := f.Latency.Get(99); ok {
			res.LatencyP99Ms = &v
		}
		readHistogram(res, out.Histogram)
	}
	st, err := sysbench.SteadyStateOf(ivs, float64(warm))
	switch {
	case err == nil:
		res.SteadyQPS, res.SteadyTPS, res.SteadySamples = st.QPS, st.TPS, st.Samples
	case (errors.Is(err, sysbench.ErrNoIntervals) || errors.Is(err, sysbench.ErrWarmupTooLong)) && out.Final != nil:
		// A run of a second or two may end before its first (or first
		// post-warm-up) interval line: the final report is all there is.
		res.SteadyQPS, res.SteadyTPS = res.FinalQPS, res.FinalTPS
		ext.SteadyFromFinal = true
	case inv.Err == nil:
		res.Error = fmt.Sprintf("steady-state throughput: %v", err)
	}
}

// increasing drops interval samples whose time does not advance (sysbench
// 1.0.20 can print the last second twice when the run overshoots --time).
func increasing(in []sysbench.Interval) []sysbench.Interval {
	out := make([]sysbench.Interval, 0, len(in))
	prev := 0.0
	for _, iv := range in {
		if iv.Second > prev {
			out = append(out, iv)
			prev = iv.Second
		}
	}
	return out
}

func toHardware(s HWSample, q float64, basis string, clientIncluded bool, c Collector) *results.Hardware {
	f := func(v float64) *float64 { return &v }
	h := &results.Hardware{OpsPerSecond: q, OpsBasis: basis, CPUs: s.CPUs, Samples: int(math.Round(s.Seconds)),
		Device: strings.Join(s.Devices, ","), ClientCPUIncluded: clientIncluded,
		CPUPercent: f(s.CPUUserSysPct), ContextSwitchesPerSecond: f(s.CtxSwitches), ReadsPerSecond: f(s.ReadsPerSec),
		ReadKBPerSecond: f(s.ReadKBPerSec), WriteKBPerSecond: f(s.WriteKBPerSec)}
	if pc, ok := c.(*ProcCollector); !ok || pc.CgroupCPU != "" || pc.PodProcesses {
		if s.ServerCPUPerSec > 0 {
			h.ServerCPUSecondsPerSecond = f(s.ServerCPUPerSec)
		}
	}
	for _, v := range s.Volumes {
		io := results.VolumeIO{Name: v.Name, Device: v.Device, SharedDevice: v.SharedDevice, Unresolved: v.Unresolved}
		if v.Device != "" && v.Unresolved == "" {
			io.ReadsPerSecond, io.ReadKBPerSecond = f(v.ReadsPerSec), f(v.ReadKBPerSec)
			io.WriteKBPerSecond, io.IOsPerSecond = f(v.WriteKBPerSec), f(v.IOsPerSec)
		}
		h.Volumes = append(h.Volumes, io)
	}
	h.Derive()
	return h
}
