package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/runplan"
	"github.com/dbbench/dbbench/pkg/workload"
)

// fraction is a flag value given as a percentage ("10%") or a fraction
// ("0.1"), stored as the fraction; set says it was given.
type fraction struct {
	v   float64
	set bool
}

func (f *fraction) String() string {
	if !f.set {
		return ""
	}
	return strconv.FormatFloat(100*f.v, 'g', -1, 64) + "%"
}

func (f *fraction) Set(s string) error {
	t := strings.TrimSpace(s)
	scale := 1.0
	if p, ok := strings.CutSuffix(t, "%"); ok {
		t, scale = strings.TrimSpace(p), 100
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%q: want a percentage (10%%) or a fraction (0.1)", s)
	}
	if scale == 1 && v >= 1 {
		return fmt.Errorf("%q: a fraction must be below 1 (write %g%% for a percentage)", s, v)
	}
	f.v, f.set = v/scale, true
	return nil
}

func (f *fraction) Type() string { return "percent" }

// or is the flag's value when it was given, else def.
func (f *fraction) or(def float64) float64 {
	if f.set {
		return f.v
	}
	return def
}

// PlanOptions are the options of `plan`.
type PlanOptions struct {
	suiteOptions
	// For is a BenchmarkRun manifest whose steps, threads, combinations,
	// warm-up, regression rule and precision target the plan is for.
	For string

	Detect, Power, HalfWidth, Level, Magnitude, Alpha fraction
	Rule                                              string
	Tests                                             int

	Nodes      int
	Objective  string
	MinSeconds float64
	MaxSeconds float64
	MaxRepeats int

	OverheadSeconds float64
	LoadSeconds     float64
	WarmupSeconds   float64
	Combinations    int

	RunCV, WithinCV, NodeCV fraction
	DefaultSeconds          float64

	Steps   []string
	Threads []int

	run  *dbbenchv1alpha1.BenchmarkRun
	yaml bool
	// suiteFromSpec: the suite is the spec's, not an argument; a suite
	// with no run yet is then planned from the defaults.
	suiteFromSpec bool
}

// NewCmdPlan builds `kubectl dbbench plan [SUITE]`.
func NewCmdPlan(streams genericiooptions.IOStreams, clients Clients) *cobra.Command {
	o := &PlanOptions{suiteOptions: suiteOptions{sourceOptions: newSourceOptions(streams, clients)}}
	cmd := &cobra.Command{
		Use:   "plan [SUITE] (--detect 10% [--power 0.9] | --half-width 5%)",
		Short: "Choose step lengths, repeats and nodes that reach a precision goal at the least cost",
		Long: `Plan a run before it runs: from the variance components of a suite's
history (kubectl dbbench noise: within a run, between runs on a node,
between nodes) or defaults, choose the read and write step lengths, the
repeats of every combination and the nodes to spread them over that reach
the goal at every (step, threads) at the least cell-hours (or the least
wall time on --nodes nodes with --objective wall-time), and print the plan
with its cost, power, minimum detectable slowdown and interval half-width
beside the reference method's fixed plan (300-s read and 600-s write
steps) and, with --for, the run spec's own step lengths.

The goal is a slowdown to find with a power under the verdict's rule
(--detect, --power, --rule, --magnitude, --alpha, over --tests tests:
Holm's first level), or a half-width of every ratio's interval
(--half-width, --level). --for RUN.yaml takes the steps, threads,
combinations, warm-up, regression settings and precision target of a
BenchmarkRun manifest; flags override them. Points without history take
the defaults (--run-cv measured at --default-seconds steps; --within-cv and
--node-cv unmeasured unless given). A goal out of reach prints what the
limits reach and exits non-zero. docs/noise.md states the model.

Sources as for noise: the cluster's runs of the suite, --from-dir DIR or
--from-s3; without a suite, the defaults alone.`,
		Example: `  kubectl dbbench plan nightly --detect 10% --power 0.9 --rule Estimated
  kubectl dbbench plan --for run.yaml --half-width 5% --nodes 4 --objective wall-time
  kubectl dbbench plan nightly --from-dir ./runs --detect 15% -o yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: runE(o),
	}
	fs := cmd.Flags()
	fs.StringVarP(&o.Output, "output", "o", "table", "Output format: table, markdown, json or yaml.")
	fs.StringVar(&o.FromDir, "from-dir", "", "Read the suite's results files from this directory (a subdirectory per run) instead of the cluster.")
	o.S3.AddFlags(fs, false)
	fs.StringVar(&o.For, "for", "", "A BenchmarkRun manifest (YAML or JSON) whose steps, threads, combinations, warm-up, regression and precision the plan is for.")
	fs.Var(&o.Detect, "detect", "Goal: the true slowdown to find (10% or 0.1).")
	fs.Var(&o.Power, "power", "Probability of finding it (default 0.9).")
	fs.Var(&o.HalfWidth, "half-width", "Goal instead: every ratio's interval within ±this (5% or 0.05); default the spec's precision target.")
	fs.Var(&o.Level, "level", "Confidence level of the intervals (default 95%).")
	fs.Var(&o.Magnitude, "magnitude", "The verdict's minMagnitudePercent (default the spec's, else 5%).")
	fs.Var(&o.Alpha, "alpha", "The verdict's maxPValue (default the spec's, else 0.05).")
	fs.StringVar(&o.Rule, "rule", "", "The verdict's magnitudeRule: Tested or Estimated (default the spec's, else Tested).")
	fs.IntVar(&o.Tests, "tests", 0, "Tests in the verdict's family (default: points × the spec's metrics).")
	fs.IntVar(&o.Nodes, "nodes", 1, "Nodes available to spread cells over.")
	fs.StringVar(&o.Objective, "objective", string(inference.ObjectiveCellHours), "Minimise cell-hours or wall-time.")
	fs.Float64Var(&o.MinSeconds, "min-seconds", 10, "Shortest step length to consider.")
	fs.Float64Var(&o.MaxSeconds, "max-seconds", 600, "Longest step length to consider.")
	fs.IntVar(&o.MaxRepeats, "max-repeats", 50, "Most repeats per combination to consider.")
	fs.Float64Var(&o.OverheadSeconds, "overhead-seconds", inference.DefaultOverheadSeconds, "A cell's fixed cost outside the agent (pods' start; make demo measures it per cell: docs/benchmarks.md).")
	fs.Float64Var(&o.LoadSeconds, "load-seconds", -1, "A cell's data load (default: the history's documents' median load, else the flush wait the spec implies).")
	fs.Float64Var(&o.WarmupSeconds, "warmup-seconds", -1, "Warm-up before every point (default the spec's, else 10).")
	fs.IntVar(&o.Combinations, "combinations", 0, "Combinations a repeat round runs (default the spec's, else 2).")
	fs.Var(&o.RunCV, "run-cv", "Default run-to-run CV on one node for points without history (default 7%, measured at 5-s steps by make bench-verdicts).")
	fs.Float64Var(&o.DefaultSeconds, "default-seconds", 0, "Step length the default run CV was measured at (default 5; the plan goes no shorter without --within-cv).")
	fs.Var(&o.WithinCV, "within-cv", "Default within-run long-run CV per second (√σ²_w) for points without history.")
	fs.Var(&o.NodeCV, "node-cv", "Default CV between nodes (without it and without history, every cell stays on one node).")
	fs.StringSliceVar(&o.Steps, "steps", nil, "Steps to plan for (default: the spec's, else the history's, else the standard 32).")
	fs.IntSliceVar(&o.Threads, "threads", nil, "Thread counts to plan for (default: the spec's, else the history's, else 1).")
	return cmd
}

// Complete reads the spec and the source.
func (o *PlanOptions) Complete(args []string) error {
	if len(args) == 1 {
		o.Suite = args[0]
	}
	if o.Output == "yaml" {
		o.yaml, o.Output = true, "json"
	}
	if err := o.OutputFlags.Complete(); err != nil {
		return err
	}
	if o.For != "" {
		run, err := readRunForPlan(o.For)
		if err != nil {
			return err
		}
		o.run = run
		if o.Suite == "" {
			o.Suite, o.suiteFromSpec = run.Spec.Suite, run.Spec.Suite != ""
		}
	}
	return o.completeSource(o.Suite != "")
}

// readRunForPlan reads the BenchmarkRun file --for names, with the
// schema's defaults the plan depends on, which the API server would apply.
func readRunForPlan(file string) (*dbbenchv1alpha1.BenchmarkRun, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--for: %w", err)
	}
	run := &dbbenchv1alpha1.BenchmarkRun{}
	if err := yaml.UnmarshalStrict(b, run); err != nil {
		return nil, fmt.Errorf("--for %s: %w", file, err)
	}
	if run.Kind != "" && run.Kind != "BenchmarkRun" {
		return nil, fmt.Errorf("--for %s: a %s, not a BenchmarkRun", file, run.Kind)
	}
	var raw struct {
		Spec struct {
			Regression map[string]any `json:"regression"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("--for %s: %w", file, err)
	}
	if r := run.Spec.Regression; r != nil {
		if _, ok := raw.Spec.Regression["minMagnitudePercent"]; !ok {
			r.MinMagnitudePercent = 5
		}
	}
	return run, nil
}

// Validate checks the flags that need no data.
func (o *PlanOptions) Validate() error {
	switch inference.PlanObjective(o.Objective) {
	case inference.ObjectiveCellHours, inference.ObjectiveWallTime:
	default:
		return fmt.Errorf("--objective %q: want %s or %s", o.Objective, inference.ObjectiveCellHours, inference.ObjectiveWallTime)
	}
	if err := regression.MagnitudeRule(o.Rule).Validate(); err != nil {
		return fmt.Errorf("--rule: %w", err)
	}
	switch {
	case o.Nodes < 1:
		return fmt.Errorf("--nodes %d: must be at least 1", o.Nodes)
	case !(o.MinSeconds >= 1) || !(o.MaxSeconds >= o.MinSeconds):
		return fmt.Errorf("--min-seconds %g and --max-seconds %g: want 1 <= min <= max", o.MinSeconds, o.MaxSeconds)
	case o.MaxRepeats < 2:
		return fmt.Errorf("--max-repeats %d: must be at least 2 (the between-run test needs two runs a side)", o.MaxRepeats)
	case o.Detect.set && o.HalfWidth.set:
		return errors.New("--detect and --half-width: give one goal")
	case !o.Detect.set && !o.HalfWidth.set && (o.run == nil || (o.run.Spec.Workload.Precision == nil && o.run.Spec.Goal == nil)):
		return errors.New("no goal: give --detect (a slowdown to find) or --half-width (an interval's precision), or --for a run with spec.goal or workload.precision")
	case o.Tests < 0 || o.Combinations < 0 || o.OverheadSeconds < 0:
		return errors.New("--tests, --combinations and --overhead-seconds must not be negative")
	}
	return nil
}

// planRun is what the plan reads of one run of the history.
type planRun struct {
	manifest *results.Manifest
	loads    []float64 // its documents' load seconds
}

// Run reads the history, plans and prints.
func (o *PlanOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var runs []*results.Manifest
	var loads []float64
	if o.Suite != "" {
		prs, err := readSuiteRuns(ctx, &o.suiteOptions, func(lrs []*LocalRun) []planRun {
			out := make([]planRun, 0, len(lrs))
			for _, lr := range lrs {
				pr := planRun{manifest: lr.Manifest}
				for _, d := range lr.Docs {
					if d.Load != nil && d.Load.Seconds > 0 {
						pr.loads = append(pr.loads, d.Load.Seconds)
					}
				}
				out = append(out, pr)
			}
			return out
		}, func(v *dbbenchv1alpha1.BenchmarkRun) (planRun, error) {
			m, err := o.cluster.RunManifest(ctx, v)
			return planRun{manifest: m}, err
		})
		switch {
		case err != nil && o.suiteFromSpec:
			fmt.Fprintf(o.ErrOut, "note: the spec's suite %s has no readable history (%v): planning from the defaults\n", o.Suite, err)
		case err != nil:
			return err
		}
		for _, pr := range prs {
			if pr.manifest != nil {
				runs = append(runs, pr.manifest)
			}
			loads = append(loads, pr.loads...)
		}
	}
	rows := regression.SuiteComponents(runs, analysis.MetricThroughput)
	keys, err := o.keys(rows)
	if err != nil {
		return err
	}
	def := regression.DefaultPlanDefaults
	def.RunCV = o.RunCV.or(def.RunCV)
	if o.DefaultSeconds > 0 {
		def.Seconds = o.DefaultSeconds
	}
	def.WithinCV = o.WithinCV.or(0)
	def.NodeCV, def.NodeKnown = o.NodeCV.or(0), o.NodeCV.set
	points, err := regression.PlanPoints(keys, rows, def, runplan.WriteStep)
	if err != nil {
		return err
	}
	goal, correction, metrics := o.goal()
	if goal.Tests == 0 {
		goal.Tests = len(points) * metrics
	}
	costs, loadNote := o.costs(loads)
	lim := inference.PlanLimits{ReadSeconds: inference.PlanDurations(o.MinSeconds, o.MaxSeconds),
		WriteSeconds: inference.PlanDurations(o.MinSeconds, o.MaxSeconds), MaxRepeats: o.MaxRepeats, Nodes: o.Nodes,
		Objective: inference.PlanObjective(o.Objective)}
	var fixed []regression.FixedLengths
	if o.run != nil {
		w := &o.run.Spec.Workload
		r, wr := runplan.Lengths(w)
		fixed = append(fixed, regression.FixedLengths{Name: fmt.Sprintf("this spec (%g/%g s)", r, wr), ReadSeconds: r, WriteSeconds: wr})
	}
	rep, err := regression.BuildPlanReport(points, costs, goal, lim, fixed...)
	if err != nil {
		return err
	}
	rep.Suite, rep.RunsRead, rep.Correction = o.Suite, len(runs), correction
	tables := rep.Tables()
	tables[0].Notes = append(tables[0].Notes, loadNote)
	if o.yaml {
		b, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		y, err := yaml.JSONToYAML(b)
		if err != nil {
			return err
		}
		if _, err := o.Out.Write(y); err != nil {
			return err
		}
	} else if err := o.write(o.Out, o.ErrOut, tables, rep); err != nil {
		return err
	}
	if rep.Unreachable != "" {
		return errors.New("plan: " + rep.Unreachable)
	}
	return nil
}

// keys are the points to plan: the flags', else the spec's, else the
// history's, else the standard steps at one thread.
func (o *PlanOptions) keys(rows []regression.ComponentsRow) ([]inference.Key, error) {
	steps, threads := o.Steps, o.Threads
	var custom []string
	if o.run != nil {
		w := &o.run.Spec.Workload
		custom = runplan.CustomSteps(w)
		if len(steps) == 0 {
			s, err := runplan.Steps(w)
			if err != nil {
				return nil, fmt.Errorf("--for: %w", err)
			}
			steps = s
		}
		if len(threads) == 0 && len(w.Threads) > 0 {
			threads = runplan.Threads(w)
		}
	}
	if len(steps) == 0 && len(threads) == 0 && len(rows) > 0 {
		out := make([]inference.Key, len(rows))
		for i, r := range rows {
			out[i] = inference.Key{Step: r.Step, Threads: r.Threads}
		}
		return out, nil
	}
	if len(steps) == 0 {
		for _, s := range workload.Standard() {
			steps = append(steps, s.Name)
		}
	}
	if len(threads) == 0 {
		threads = []int{1}
	}
	out, err := runplan.Keys(steps, threads, custom)
	if err != nil {
		return nil, fmt.Errorf("--steps: %w", err)
	}
	return out, nil
}

// goal is the flags' goal over the spec's regression and precision, the
// correction and the metrics per point.
func (o *PlanOptions) goal() (inference.PlanGoal, inference.Correction, int) {
	v := runplan.SpecRule(o.run)
	g := inference.PlanGoal{Magnitude: v.Magnitude, Alpha: v.Alpha, Power: o.Power.or(0.9), Tests: o.Tests, Estimated: v.Estimated}
	if o.run != nil {
		if sg, ok := runplan.SpecGoal(o.run); ok && !o.Detect.set && !o.HalfWidth.set {
			g.Detect, g.HalfWidth, g.Power = sg.Detect, sg.HalfWidth, o.Power.or(sg.Power)
		} else if p := o.run.Spec.Workload.Precision; p != nil && !o.Detect.set {
			g.HalfWidth = p.Target() / 100
		}
	}
	g.Magnitude, g.Alpha = o.Magnitude.or(g.Magnitude), o.Alpha.or(g.Alpha)
	if o.Rule != "" {
		g.Estimated = regression.MagnitudeRule(o.Rule) == regression.MagnitudeEstimated
	}
	if o.Detect.set {
		g.Detect = o.Detect.v
	}
	if o.HalfWidth.set {
		g.HalfWidth = o.HalfWidth.v
	}
	if g.HalfWidth > 0 {
		g.Power = 0
		g.Level = o.Level.or(inference.DefaultLevel)
	}
	return g, v.Correction, v.Metrics
}

// costs are the flags' costs over the spec's and the history's, and a note
// on where the load came from.
func (o *PlanOptions) costs(loads []float64) (inference.PlanCosts, string) {
	c, note := runplan.Costs(o.run, loads)
	if o.Combinations > 0 {
		c.Combinations = o.Combinations
	}
	c.OverheadSeconds = o.OverheadSeconds
	if o.WarmupSeconds >= 0 {
		c.WarmupSeconds = o.WarmupSeconds
	}
	if o.LoadSeconds >= 0 {
		c.LoadSeconds = o.LoadSeconds
		return c, fmt.Sprintf("load: %g s per cell (--load-seconds)", c.LoadSeconds)
	}
	if len(loads) == 0 {
		note += "; --load-seconds sets it"
	}
	return c, note
}
