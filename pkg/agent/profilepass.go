package agent

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
)

// profilePasses runs the plan's profiled passes (workload.profile) after
// every measured run: per chosen step, one more sysbench run at the
// profile's thread count, warm-up included, with the Profiler sampling the
// server over the seconds after the warm-up. Nothing of a pass is
// measured: its profile (with its own QPS, the profiler's cost) is attached
// to the step's closed-loop result at that thread count. A pass that fails
// records why in that profile; it never fails the cell, whose
// measurements are complete by then.
func (a *Agent) profilePasses(ctx context.Context, steps []step) {
	pr := a.Plan.Workload.Profile
	if pr == nil {
		return
	}
	for _, name := range pr.Steps {
		i := slices.IndexFunc(steps, func(st step) bool { return st.spec().Name == name })
		if i < 0 {
			a.logf("profile: step %s is not in the run; skipped", name)
			continue
		}
		st := steps[i]
		threads := pr.Threads
		if threads == 0 {
			threads = slices.Max(st.spec().Threads)
		}
		target := a.closedResult(name, threads)
		if target == nil {
			a.logf("profile: step %s has no measured result at %d threads to attach a profile to; skipped", name, threads)
			continue
		}
		if ctx.Err() != nil {
			return
		}
		prof := a.profilePass(ctx, st, threads, pr)
		target.Profile = &prof
		a.reportProgress(ctx, true)
	}
}

// closedResult is the closed-loop result of step at threads, nil if none.
func (a *Agent) closedResult(step string, threads int) *results.StepResult {
	for i := range a.doc.Steps {
		s := &a.doc.Steps[i]
		if s.Step == step && s.Threads == threads && s.Rate == nil && s.Error == "" {
			return s
		}
	}
	return nil
}

// profilePass is one profiled run of st at threads.
func (a *Agent) profilePass(ctx context.Context, st step, threads int, pr *agentapi.Profile) results.Profile {
	s := st.spec()
	out := results.Profile{Tool: results.ProfileToolPerf, Event: ProfileEvent, FrequencyHz: pr.FrequencyHz}
	if a.Profiler == nil {
		out.Error = "no profiler: the agent was given none (docs/explain.md)"
		a.logf("profile: step %s: %s", s.Name, out.Error)
		return out
	}
	if err := st.prepare(ctx); err != nil {
		out.Error = "preparing the step: " + err.Error()
		return out
	}
	if pp, ok := a.Profiler.(*PerfProfiler); ok && pp.Targets == nil {
		// Local mode: the server is a process of this machine.
		pp.Targets = func(ctx context.Context) ([]int, error) {
			pid, err := a.srv.LocalPID(ctx)
			if err != nil {
				return nil, err
			}
			return ProcessTree("", pid)
		}
	}
	warm := a.Plan.Workload.WarmupSeconds
	args := a.runArgs(st, threads)
	for i, arg := range args {
		if strings.HasPrefix(arg, "--time=") {
			args[i] = "--time=" + strconv.Itoa(warm+pr.Seconds)
		}
	}
	a.logf("profile: step %s threads=%d: %ds sampled at %d Hz after %ds warm-up (not measured)", s.Name, threads, pr.Seconds, pr.FrequencyHz, warm)
	started := make(chan error, 1)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-runCtx.Done():
			started <- runCtx.Err()
		case <-time.After(time.Duration(warm) * time.Second):
			started <- a.Profiler.Start(runCtx, pr.FrequencyHz)
		}
	}()
	var inv *Invocation
	if own, ok := st.(runner); ok {
		inv = own.run(ctx, threads, warm+pr.Seconds)
	} else {
		inv = a.sb.Run(ctx, s.Script, args, "run", nil)
	}
	cancel()
	if err := <-started; err != nil {
		out.Error = err.Error()
		a.logf("profile: step %s: %v", s.Name, err)
		return out
	}
	sctx, c := context.WithTimeout(context.Background(), 2*time.Minute)
	defer c()
	prof, err := a.Profiler.Stop(sctx)
	out = prof
	if err != nil {
		out.Error = err.Error()
		out.Folded, out.Samples, out.Dropped = "", 0, 0
		a.logf("profile: step %s: %v", s.Name, err)
	}
	var res results.StepResult
	readOutput(&res, &StepExtension{}, inv, warm)
	if inv.Err == nil && res.SteadyQPS > 0 {
		out.PassQPS = res.SteadyQPS
	} else if inv.Err != nil && out.Error == "" {
		out.Error = fmt.Sprintf("the profiled run failed: %v", inv.Err)
	}
	if out.Error == "" {
		a.logf("profile: step %s threads=%d: %d samples (%d dropped to fit), pass %.1f QPS", s.Name, threads, out.Samples, out.Dropped, out.PassQPS)
	}
	return out
}
