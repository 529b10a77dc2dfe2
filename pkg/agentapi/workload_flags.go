package agentapi

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// WorkloadFlags are the workload's knobs as command-line flags, for the
// agent's local mode (dbbench-agent local), which has no BenchmarkRun to
// read them from. The controller fills the same Workload fields from the
// API (specs.Plan); this is the only other place they are filled, so a
// knob is its Workload field, one line in AddFlags, one line in specs and
// its use in the agent (docs/design.md, "Adding a workload knob").
//
// A flag given records a change that Apply makes to a Workload: the local
// defaults, or a --plan file's workload, which the flags then override. A
// flag left out changes nothing; the last value of a repeated flag wins;
// as before the flags moved here, a value outside an integer knob's range
// (0 or less; below 0 for --warmup-seconds, whose 0 is a value) and an
// empty list or string mean "not given".
//
// The step list (--steps) and custom steps (--custom) are not knobs: they
// name catalog step sets and files, and stay in pkg/agent's LocalOptions.
type WorkloadFlags struct {
	// names are the flags in AddFlags' order, so that Apply is
	// deterministic; changes holds each given flag's change.
	names   []string
	changes map[string]func(*Workload) error
}

// AddFlags registers one flag per workload knob on fs.
func (f *WorkloadFlags) AddFlags(fs *flag.FlagSet) {
	f.positive(fs, "tables", "tables (default 1)", func(w *Workload) *int { return &w.Tables })
	f.positive64(fs, "table-size", "rows per table (default 10000)", func(w *Workload) *int64 { return &w.TableSize })
	f.positive(fs, "read-seconds", "read step duration (default 60)", func(w *Workload) *int { return &w.ReadSeconds })
	f.positive(fs, "write-seconds", "write step duration (default 60)", func(w *Workload) *int { return &w.WriteSeconds })
	f.nonNegative(fs, "warmup-seconds", "seconds dropped from each step's start (default 0)", func(w *Workload) *int { return &w.WarmupSeconds })
	f.ints(fs, "threads", "thread counts, e.g. 1,2,4 (default 1)", func(w *Workload) *[]int { return &w.Threads })
	f.boolean(fs, "ps", "prepared statements (--db-ps-mode=auto) (default true)", func(w *Workload) *bool { return &w.PreparedStatements })
	f.positive(fs, "flush-wait", "cap of the flush wait in seconds (default: min(1200, 60 + rows/1e6))", func(w *Workload) *int { return &w.FlushWaitSeconds })
	f.positive(fs, "tpcc-warehouses", "TPC-C warehouses per table set", func(w *Workload) *int { return &w.tpcc().Warehouses })
	f.positive(fs, "tpcc-tables", "TPC-C table sets", func(w *Workload) *int { return &w.tpcc().Tables })
	f.positive(fs, "tpcc-seconds", "TPC-C duration (default: write-seconds)", func(w *Workload) *int { return &w.tpcc().DurationSeconds })
	f.str(fs, "tpcc-isolation", "TPC-C isolation RR, RC or SER", func(w *Workload) *string { return &w.tpcc().Isolation })
	f.enable(fs, "tpcc-fk", "TPC-C foreign keys", func(w *Workload) *bool { return &w.tpcc().UseForeignKeys })
	f.positive(fs, "pgbench-scale", "pgbench -i scaling factor of the pgbench steps (default 10)", func(w *Workload) *int { return &w.pgbench().Scale })
	f.strs(fs, "fixed-rate-fractions", "after each closed-loop run, fixed-rate runs at these fractions of its TPS, e.g. 0.5,0.9", func(w *Workload) *[]string { return &w.fixedRate().FractionsOfPeak })
	f.strs(fs, "counters", "extra engine counters to record per operation, comma-separated (SHOW GLOBAL STATUS names, or PostgreSQL view.column)", func(w *Workload) *[]string { return &w.ExtraCounters })
	f.ints(fs, "fixed-rates", "after each closed-loop run, fixed-rate runs at these events/s, e.g. 1000,2000", func(w *Workload) *[]int { return &w.fixedRate().Rates })
	f.strs(fs, "profile-steps", "after the measured runs, an unmeasured pass of these steps with the server's on-CPU time sampled by perf (docs/explain.md)", func(w *Workload) *[]string { return &w.profile().Steps })
	f.positive(fs, "profile-threads", "threads of the profiled pass (default: the step's largest)", func(w *Workload) *int { return &w.profile().Threads })
	f.positive(fs, "profile-seconds", "sampled seconds of the profiled pass, after the warm-up (default 30)", func(w *Workload) *int { return &w.profile().Seconds })
	f.positive(fs, "profile-frequency", "samples per second per CPU of the profiled pass (default 99)", func(w *Workload) *int { return &w.profile().FrequencyHz })
	f.positive(fs, "adaptive-min-seconds", "adaptive step duration: steady seconds before a step may stop (default 30; the step's seconds are the maximum; docs/agent.md)", func(w *Workload) *int { return &w.adaptive().MinSeconds })
	f.positiveFloat(fs, "adaptive-between-run-cv", "adaptive step duration: the between-run CV in percent; a step stops once its mean's error is small beside it", func(w *Workload) *float64 { return &w.adaptive().BetweenRunCVPercent })
	f.positiveFloat(fs, "adaptive-target-half-width", "adaptive step duration: stop once a step's 95 % half-width is this percent of its mean", func(w *Workload) *float64 { return &w.adaptive().TargetHalfWidthPercent })
}

// DefaultAdaptiveMinSeconds is local mode's adaptive minSeconds when an
// adaptive flag is given without --adaptive-min-seconds (the API's default
// too).
const DefaultAdaptiveMinSeconds = 30

// adaptive returns the adaptive duration's settings, created with their
// defaults on first use: a plan has them only when an adaptive knob is
// given.
func (w *Workload) adaptive() *Adaptive {
	if w.Adaptive == nil {
		w.Adaptive = &Adaptive{MinSeconds: DefaultAdaptiveMinSeconds}
	}
	return w.Adaptive
}

// profile returns the profiled pass's settings, created with their
// defaults on first use: a plan has them only when a profile knob is given.
func (w *Workload) profile() *Profile {
	if w.Profile == nil {
		w.Profile = &Profile{Seconds: DefaultProfileSeconds, FrequencyHz: DefaultProfileFrequencyHz}
	}
	return w.Profile
}

// Parse registers the flags on a flag set of their own and parses args
// ("--tables=2", ...): for callers without a command line (tests, tools).
func (f *WorkloadFlags) Parse(args ...string) error {
	fs := flag.NewFlagSet("workload", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.AddFlags(fs)
	return fs.Parse(args)
}

// Apply makes the given flags' changes to w. A value that only Apply can
// check (a --threads list) fails here, with the flag's name.
func (f *WorkloadFlags) Apply(w *Workload) error {
	for _, name := range f.names {
		if change := f.changes[name]; change != nil {
			if err := change(w); err != nil {
				return fmt.Errorf("--%s: %w", name, err)
			}
		}
	}
	return nil
}

// tpcc returns the TPC-C settings, created on first use: a plan has them
// only when a TPC-C knob is given.
func (w *Workload) fixedRate() *FixedRate {
	if w.FixedRate == nil {
		w.FixedRate = &FixedRate{}
	}
	return w.FixedRate
}

// pgbench returns the pgbench settings, created on first use.
func (w *Workload) pgbench() *Pgbench {
	if w.Pgbench == nil {
		w.Pgbench = &Pgbench{}
	}
	return w.Pgbench
}

func (w *Workload) tpcc() *TPCC {
	if w.TPCC == nil {
		w.TPCC = &TPCC{}
	}
	return w.TPCC
}

// set records name's change; nil forgets an earlier value of the flag.
func (f *WorkloadFlags) set(name string, change func(*Workload) error) {
	if f.changes == nil {
		f.changes = map[string]func(*Workload) error{}
	}
	f.changes[name] = change
}

// addName lists name once, however many flag sets AddFlags fills.
func (f *WorkloadFlags) addName(name string) {
	if !slices.Contains(f.names, name) {
		f.names = append(f.names, name)
	}
}

// register adds a flag whose value parse turns into a change (nil: "not
// given", which also forgets an earlier value of the flag).
func (f *WorkloadFlags) register(fs *flag.FlagSet, name, usage string, parse func(string) (func(*Workload) error, error)) {
	f.addName(name)
	fs.Func(name, usage, func(s string) error {
		change, err := parse(s)
		if err != nil {
			return err
		}
		f.set(name, change)
		return nil
	})
}

// positive is an int knob; 0 or less is "not given".
func (f *WorkloadFlags) positive(fs *flag.FlagSet, name, usage string, field func(*Workload) *int) {
	f.integer(fs, name, usage, 1, field)
}

// nonNegative is an int knob whose 0 is a value; less is "not given".
func (f *WorkloadFlags) nonNegative(fs *flag.FlagSet, name, usage string, field func(*Workload) *int) {
	f.integer(fs, name, usage, 0, field)
}

func (f *WorkloadFlags) integer(fs *flag.FlagSet, name, usage string, least int, field func(*Workload) *int) {
	f.register(fs, name, usage, func(s string) (func(*Workload) error, error) {
		v, err := strconv.ParseInt(s, 0, strconv.IntSize)
		if err != nil {
			return nil, err
		}
		if int(v) < least {
			return nil, nil // not given
		}
		return func(w *Workload) error { *field(w) = int(v); return nil }, nil
	})
}

// positiveFloat is a number knob; 0 or less is "not given".
func (f *WorkloadFlags) positiveFloat(fs *flag.FlagSet, name, usage string, field func(*Workload) *float64) {
	f.register(fs, name, usage, func(s string) (func(*Workload) error, error) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, err
		}
		if !(v > 0) {
			return nil, nil // not given
		}
		return func(w *Workload) error { *field(w) = v; return nil }, nil
	})
}

func (f *WorkloadFlags) positive64(fs *flag.FlagSet, name, usage string, field func(*Workload) *int64) {
	f.register(fs, name, usage, func(s string) (func(*Workload) error, error) {
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			return nil, err
		}
		if v < 1 {
			return nil, nil // not given
		}
		return func(w *Workload) error { *field(w) = v; return nil }, nil
	})
}

// ints is a comma-separated list of numbers, checked when applied.
func (f *WorkloadFlags) ints(fs *flag.FlagSet, name, usage string, field func(*Workload) *[]int) {
	f.register(fs, name, usage, func(s string) (func(*Workload) error, error) {
		if s == "" {
			return nil, nil
		}
		return func(w *Workload) error {
			var out []int
			for _, p := range strings.Split(s, ",") {
				if p = strings.TrimSpace(p); p == "" {
					continue
				}
				n, err := strconv.Atoi(p)
				if err != nil {
					return fmt.Errorf("%q is not a number", p)
				}
				out = append(out, n)
			}
			*field(w) = out
			return nil
		}, nil
	})
}

// strs is a comma-separated list of words.
func (f *WorkloadFlags) strs(fs *flag.FlagSet, name, usage string, field func(*Workload) *[]string) {
	f.register(fs, name, usage, func(s string) (func(*Workload) error, error) {
		if s == "" {
			return nil, nil
		}
		return func(w *Workload) error {
			var out []string
			for _, p := range strings.Split(s, ",") {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
			*field(w) = out
			return nil
		}, nil
	})
}

func (f *WorkloadFlags) str(fs *flag.FlagSet, name, usage string, field func(*Workload) *string) {
	f.register(fs, name, usage, func(s string) (func(*Workload) error, error) {
		if s == "" {
			return nil, nil
		}
		return func(w *Workload) error { *field(w) = s; return nil }, nil
	})
}

// boolean is a bool knob: given, it sets the value either way (--ps=false).
func (f *WorkloadFlags) boolean(fs *flag.FlagSet, name, usage string, field func(*Workload) *bool) {
	f.boolFlag(fs, name, usage, func(v bool) func(*Workload) error {
		return func(w *Workload) error { *field(w) = v; return nil }
	})
}

// enable is a bool knob that can only switch a feature on: false is "not
// given", so that a plan's true survives.
func (f *WorkloadFlags) enable(fs *flag.FlagSet, name, usage string, field func(*Workload) *bool) {
	f.boolFlag(fs, name, usage, func(v bool) func(*Workload) error {
		if !v {
			return nil
		}
		return func(w *Workload) error { *field(w) = true; return nil }
	})
}

func (f *WorkloadFlags) boolFlag(fs *flag.FlagSet, name, usage string, change func(bool) func(*Workload) error) {
	f.addName(name)
	fs.BoolFunc(name, usage, func(s string) error {
		v, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		f.set(name, change(v))
		return nil
	})
}
