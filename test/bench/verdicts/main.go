// Command verdicts is the regression verdicts' benchmark (make
// bench-verdicts): on a real local MariaDB, how often does an A/A pair end
// "regressed", how often is a calibrated slowdown found, how close is the
// realised slowdown to the nominal one, and what does adaptive repetition
// save against a fixed number of repeats?
//
// One server (hack/dbservers.sh, a private data root and a free loopback
// port) runs inside a CPU cgroup of its own; its CFS quota (cgroup v2
// cpu.max, v1 cpu.cfs_quota_us) is the same mechanism as a pod's CPU limit,
// so a quota of 90 % of the base quota is what configs[].cpuScalePercent: 90
// does in a cluster: a slowdown the server cannot see. Each "run" is one
// dbbench-agent local invocation (its own data load, then the steps) at one
// quota. A round runs four cells: A and A2 at the base quota (an A/A pair)
// and one cell per calibrated scale (90 % and 95 % by default), in the order
// A S90 S95 A2, reversed every other round so that a drift over time does
// not favour a side.
//
// The verdicts are regression.JudgeRuns on manifests built from the agent's
// results documents (results.NewManifestCell), the controller's code path:
//
//   - one run per side (a nightly suite): round i's A2 (A/A) or S (slowdown)
//     against round i's A, with the suite's noise floor from
//     regression.SuiteNoise over the other rounds' A and A2 runs (the judged
//     round never joins its own floor), Holm over the steps, α 0.05,
//     magnitude 5 % by both rules (regression.magnitudeRule: Tested, the
//     API's default, and Estimated) and, for the detection rate of "any
//     slowdown", magnitude 0;
//   - repeats (3+3, 5+5 and 10+10 per side): disjoint blocks of rounds, the
//     between-run test, and the same over overlapping subsamples of rounds;
//   - per rule, the n per side inference.Design gives 90 % power against
//     the slowest cell, over bootstrap draws of the rounds.
//
// Precision: after each round, the Fieller 95 % interval of every compared
// ratio S/A per step over the rounds so far (inference.RatioOfMeans); the
// adaptive plan stops at the first round where every half-width is under the
// target. A fixed plan must choose its repeats in advance: the smallest n
// whose max half-width is under the target in 90 % of bootstrap resamples of
// n rounds. Cell-hours count the wall time of the cells the plan needs (A
// and the slowed cells; A2 serves only the A/A count).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/dbbench/dbbench/internal/benchutil"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
)

const (
	// The API's defaults: regression.maxPValue and minMagnitudePercent.
	defaultAlpha     = 0.05
	defaultMagnitude = 0.05
	// fixedAssurance is the share of resamples in which a fixed plan must
	// reach the target: a plan sized in advance must reach it reliably.
	fixedAssurance = 0.9
	baseCell       = "A"
	aaCell         = "A2"
)

// repeatSizes are the n of the n+n repeat verdicts: 3, the e2e test's; 5,
// what 90 % power for a 10 % slowdown beyond the 5 % magnitude needs at a
// 2 % run-to-run CV (inference.Design); 10, what the Estimated rule needs
// for it at a 5 % CV.
var repeatSizes = []int{3, 5, 10}

// rule is a verdict's magnitude and how it enters the test
// (regression.minMagnitudePercent and magnitudeRule).
type rule struct {
	magnitude float64
	how       regression.MagnitudeRule
}

func (r rule) String() string {
	if r.magnitude == 0 {
		return "magnitude 0 %"
	}
	return fmt.Sprintf("magnitude %.0f %% %s", 100*r.magnitude, r.how)
}

func (r rule) options() regression.VerdictOptions {
	return regression.VerdictOptions{MinMagnitude: r.magnitude, MagnitudeRule: r.how, Alpha: defaultAlpha}
}

// rules are the verdict rows: the API's default (5 %, Tested), the
// Estimated rule at 5 %, and "slower at all" (where the rules agree).
var rules = []rule{
	{defaultMagnitude, regression.MagnitudeTested},
	{defaultMagnitude, regression.MagnitudeEstimated},
	{0, regression.MagnitudeTested},
}

// design is the rule's inference.Design at the CV and level, and the
// effect whose power it gives for a cell at scale (0.9: 10 % slower):
// beyond the magnitude for Tested, beyond 1 with the magnitude as the
// estimate's minimum for Estimated.
func (r rule) design(cv, alpha float64, floorDF int, scale float64) (inference.Design, float64) {
	d := inference.Design{CV: cv, Alpha: alpha, FloorDF: floorDF}
	if r.how == regression.MagnitudeEstimated {
		d.MinEstimate = r.magnitude
		return d, 1 - scale
	}
	return d, 1 - scale/(1-r.magnitude)
}

type config struct {
	rounds    int
	steps     []string
	seconds   int
	warmup    int
	threads   int
	tableSize int64
	flushWait int
	quota     float64 // CPUs of the base quota
	scales    []int   // percent of the base quota of the slowed cells
	target    float64 // half-width target, 0.02 = ±2 %
	agentBin  string
	sysbench  string
}

// runResult is one agent run of one cell.
type runResult struct {
	cell      string
	round     int
	wall      float64 // seconds
	throttled float64 // share of CFS periods in which the server was throttled
	doc       *results.Document
}

func main() {
	var (
		c        config
		steps    = flag.String("steps", "read-only-count,read-only-sum", "catalog steps of every run")
		scales   = flag.String("scales", "90,95", "CPU quota of the slowed cells, percent of the base quota")
		keep     = flag.Bool("keep-work", false, "keep the work directory (agent results)")
		planOnly = flag.Bool("plan-only", false, "print only the plan sections (make bench-plan): the designed plan against the reference method's fixed plan, and the verdict paired by round")
		replay   = flag.String("replay", "", "recompute the figures from the per-run lines of an earlier run's log (its stderr) instead of measuring; -steps, -scales, -threads, -quota as in that run")
	)
	flag.IntVar(&c.rounds, "rounds", 20, "rounds (each: A, the slowed cells, A2); also the number of A/A and of slowdown verdicts")
	flag.IntVar(&c.seconds, "seconds", 5, "measured seconds per step (after the warm-up)")
	flag.IntVar(&c.warmup, "warmup", 1, "warm-up seconds per step")
	flag.IntVar(&c.threads, "threads", 8, "client threads (enough to keep the server at its quota)")
	flag.Int64Var(&c.tableSize, "table-size", 10000, "rows in the one sbtest table")
	flag.IntVar(&c.flushWait, "flush-wait", 5, "cap of the post-load flush, seconds")
	flag.Float64Var(&c.quota, "quota", 0.4, "the server's base CPU quota in CPUs (CFS quota / period)")
	flag.Float64Var(&c.target, "target", 5, "precision target: Fieller 95 % half-width of every ratio, percent")
	flag.StringVar(&c.agentBin, "agent", "", "dbbench-agent binary (default: go build ./cmd/agent)")
	flag.StringVar(&c.sysbench, "sysbench", "sysbench", "sysbench binary")
	flag.Parse()
	c.steps = strings.Split(*steps, ",")
	for _, s := range strings.Split(*scales, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 10 || v >= 100 {
			fatalf("-scales: %q is not a percentage in [10, 100)", s)
		}
		c.scales = append(c.scales, v)
	}
	c.target /= 100
	if c.rounds < 4 || c.quota <= 0 || c.target <= 0 {
		fatalf("-rounds must be >= 4, -quota and -target > 0")
	}
	if *replay != "" {
		runs, err := readLog(*replay, c)
		if err != nil {
			fatalf("-replay: %v", err)
		}
		// Only complete rounds (a log of an unfinished run ends mid-round).
		c.rounds = 0
		count := map[int]int{}
		for _, r := range runs {
			count[r.round]++
		}
		for count[c.rounds] == len(c.scales)+2 {
			c.rounds++
		}
		runs = slices.DeleteFunc(runs, func(r runResult) bool { return r.round >= c.rounds })
		if c.rounds < 4 {
			fatalf("-replay: %d complete rounds, need 4", c.rounds)
		}
		if *planOnly {
			planSection(os.Stdout, c, byCell(runs))
			pairedSection(os.Stdout, c, byCell(runs))
			return
		}
		report(os.Stdout, c, runs, 0)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, c, *keep))
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench-verdicts: "+format+"\n", args...)
	os.Exit(2)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func slowCell(scale int) string { return fmt.Sprintf("S%d", scale) }

// roundOrder is the cells of round r (0-based): A, the slowed cells, A2,
// reversed in odd rounds.
func roundOrder(c config, r int) []string {
	cells := make([]string, 0, 1+len(c.scales)+1)
	cells = append(cells, baseCell)
	for _, s := range c.scales {
		cells = append(cells, slowCell(s))
	}
	cells = append(cells, aaCell)
	if r%2 == 1 {
		slices.Reverse(cells)
	}
	return cells
}

// quotaOf is a cell's CPU quota in CPUs.
func quotaOf(c config, cell string) float64 {
	for _, s := range c.scales {
		if cell == slowCell(s) {
			return c.quota * float64(s) / 100
		}
	}
	return c.quota
}

func run(ctx context.Context, c config, keep bool) int {
	srv, err := benchutil.Start(benchutil.Options{Name: "dbbench-verdicts", AgentBin: c.agentBin, Keep: keep, Logf: logf})
	if err != nil {
		logf("%v", err)
		return 2
	}
	defer srv.Close()
	cell := c.cell()
	logf("MariaDB on 127.0.0.1:%d in cgroup %s (%s); %d rounds × %d cells; steps %s, %d s + %d s warm-up, %d threads, 1 × %d rows; base quota %.2f CPU; roughly %d min",
		srv.Port, srv.Group.Dir, srv.Group.Kind(), c.rounds, len(c.scales)+2, strings.Join(c.steps, ","), c.seconds, c.warmup, c.threads, c.tableSize, c.quota,
		c.rounds*(len(c.scales)+2)*cell.PerRunSeconds()/60)

	began := time.Now()
	var runs []runResult
	for r := 0; r < c.rounds; r++ {
		for _, name := range roundOrder(c, r) {
			out := filepath.Join(srv.Work, fmt.Sprintf("r%02d-%s", r+1, name))
			res, err := srv.Run(ctx, cell, quotaOf(c, name), out)
			if err != nil {
				logf("round %d, %s: %v", r+1, name, err)
				return 2
			}
			rr := runResult{cell: name, round: r, wall: res.Wall, throttled: res.Throttled, doc: res.Doc}
			var qps []string
			for _, s := range rr.doc.Steps {
				qps = append(qps, fmt.Sprintf("%s %.1f", s.Step, s.SteadyQPS))
			}
			logf("round %2d %-4s quota %.3f CPU, throttled in %3.0f %% of periods, %4.1f s: %s", r+1, name, quotaOf(c, name), 100*rr.throttled, rr.wall, strings.Join(qps, ", "))
			runs = append(runs, rr)
		}
	}
	report(os.Stdout, c, runs, time.Since(began))
	return 0
}

// cell is what every run measures.
func (c config) cell() benchutil.Cell {
	return benchutil.Cell{Sysbench: c.sysbench, Steps: c.steps, TableSize: c.tableSize, Seconds: c.seconds, Warmup: c.warmup,
		Threads: c.threads, FlushWait: c.flushWait}
}

// logLine is the per-run line of the log (run's logf call).
var logLine = regexp.MustCompile(`round\s+(\d+) (\S+)\s+quota ([\d.]+) CPU, throttled in\s+(\d+) % of periods,\s+([\d.]+) s: (.*)$`)

// readLog rebuilds the runs from a log's per-run lines: the QPS as logged
// (0.1 QPS), the wall time and the throttled share; the documents carry
// only what the verdicts read (steps, QPS, server identity).
func readLog(path string, c config) ([]runResult, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var runs []runResult
	for n, line := range strings.Split(string(b), "\n") {
		m := logLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		round, _ := strconv.Atoi(m[1])
		thr, _ := strconv.ParseFloat(m[4], 64)
		wall, _ := strconv.ParseFloat(m[5], 64)
		doc := &results.Document{Cell: results.Cell{Name: "replay", Engine: "mariadb"},
			Provenance: results.Provenance{ServerVersion: "replay", ServerSettingsSHA256: "replay"}}
		for _, sq := range strings.Split(m[6], ", ") {
			f := strings.Fields(sq)
			if len(f) != 2 {
				return nil, fmt.Errorf("line %d: %q is not \"step qps\"", n+1, sq)
			}
			q, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n+1, err)
			}
			doc.Steps = append(doc.Steps, results.StepResult{Step: f[0], Threads: c.threads, SteadyQPS: q})
		}
		runs = append(runs, runResult{cell: m[2], round: round - 1, wall: wall, throttled: thr / 100, doc: doc})
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s has no per-run lines", path)
	}
	return runs, nil
}

// manifestOf is the manifest of a "run" made of docs, one cell each, as the
// controller writes it: the cells are repeats of one combination.
func manifestOf(name string, docs ...*results.Document) *results.Manifest {
	m := &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: results.Run{Name: name, Suite: "bench-verdicts"}, WorkloadSHA256: "bench-verdicts"}
	for i, d := range docs {
		mc := results.NewManifestCell(d, results.ManifestPhaseSucceeded, "", "")
		// One combination whatever the quota: the slowdown is invisible to
		// the server, and only the runs at the base quota go into the
		// history the floor comes from.
		mc.Database, mc.Engine, mc.Version, mc.Config, mc.Repeat = "mariadb", "mariadb", "local", "bench", i+1
		mc.Name = "mariadb-local-bench"
		if len(docs) > 1 {
			mc.Name = fmt.Sprintf("mariadb-local-bench-r%d", i+1)
		}
		m.Cells = append(m.Cells, mc)
	}
	return m
}

// byCell indexes the runs: cell → round → run.
func byCell(runs []runResult) map[string][]runResult {
	out := map[string][]runResult{}
	for _, r := range runs {
		out[r.cell] = append(out[r.cell], r)
	}
	for _, rs := range out {
		slices.SortFunc(rs, func(a, b runResult) int { return a.round - b.round })
	}
	return out
}

// verdictCount is how many run-level verdicts regressed.
type verdictCount struct{ regressed, total int }

func (v verdictCount) String() string {
	lo, hi, err := inference.ClopperPearson(v.regressed, v.total, 0.95)
	if err != nil {
		return "-"
	}
	return fmt.Sprintf("%d / %d = %.2f [%.2f, %.2f]", v.regressed, v.total, float64(v.regressed)/float64(v.total), lo, hi)
}

// floorVerdicts judges, for every round, cell's run against the round's A
// with one run per side and the noise floor of the other rounds' A and A2
// runs, by the rule.
func floorVerdicts(c config, cells map[string][]runResult, cell string, r rule) (verdictCount, []string, error) {
	var vc verdictCount
	methods := map[string]bool{}
	for i := 0; i < c.rounds; i++ {
		var history []*results.Manifest
		for j := 0; j < c.rounds; j++ {
			if j == i {
				continue
			}
			history = append(history, manifestOf(fmt.Sprintf("r%d-A", j), cells[baseCell][j].doc),
				manifestOf(fmt.Sprintf("r%d-A2", j), cells[aaCell][j].doc))
		}
		cur := manifestOf(fmt.Sprintf("r%d-%s", i, cell), cells[cell][i].doc)
		base := manifestOf(fmt.Sprintf("r%d-A", i), cells[baseCell][i].doc)
		floor := regression.SuiteNoise(history, cur, defaultAlpha)
		opts := r.options()
		opts.Floor = floor
		v, err := regression.JudgeRuns(cur, base, opts)
		if err != nil {
			return vc, nil, err
		}
		vc.total++
		if len(v.Regressed) > 0 {
			vc.regressed++
		}
		methods[v.Summary()] = true
	}
	return vc, sortedKeys(methods), nil
}

// repeatVerdicts judges disjoint blocks of n rounds: cell's n runs against
// A's n, the between-run test (n+n repeats).
func repeatVerdicts(c config, cells map[string][]runResult, cell string, n int, r rule) (verdictCount, error) {
	var vc verdictCount
	for b := 0; b+n <= c.rounds; b += n {
		rounds := make([]int, n)
		for j := range rounds {
			rounds[j] = b + j
		}
		regressed, err := repeatVerdict(cells, cell, rounds, rounds, r)
		if err != nil {
			return vc, err
		}
		vc.total++
		if regressed {
			vc.regressed++
		}
	}
	return vc, nil
}

// repeatVerdict judges cell's runs of the rounds cur against A's runs of
// the rounds base, at the API's α and Holm, by the rule.
func repeatVerdict(cells map[string][]runResult, cell string, cur, base []int, r rule) (bool, error) {
	after := make([]*results.Document, 0, len(cur))
	before := make([]*results.Document, 0, len(base))
	for _, j := range cur {
		after = append(after, cells[cell][j].doc)
	}
	for _, j := range base {
		before = append(before, cells[baseCell][j].doc)
	}
	v, err := regression.JudgeRuns(manifestOf("cur", after...), manifestOf("base", before...), r.options())
	if err != nil {
		return false, err
	}
	return len(v.Regressed) > 0, nil
}

// drawnRate is the rate of regressed verdicts over subsampleN draws of
// the rounds each side's runs come from (draw), from a generator seeded
// with seed: the figures are reproducible from the measured rounds.
func drawnRate(cells map[string][]runResult, cell string, r rule, seed [2]uint64, draw func(*rand.Rand) (cur, base []int)) (float64, error) {
	rng := rand.New(rand.NewPCG(seed[0], seed[1]))
	regressed := 0
	for range subsampleN {
		cur, base := draw(rng)
		found, err := repeatVerdict(cells, cell, cur, base, r)
		if err != nil {
			return 0, err
		}
		if found {
			regressed++
		}
	}
	return float64(regressed) / subsampleN, nil
}

// designPower is the power the design row sizes its repeats for: the
// issue's detection goal.
const designPower = 0.9

// designRepeats is the smallest n per side whose power against the
// slowest calibrated cell by the rule reaches designPower at the
// noisiest step's CV of A (inference.Design, α / steps for Holm's first
// step), at most limit; 0 when no cell is slower than the magnitude.
func designRepeats(c config, cells map[string][]runResult, r rule, limit int) int {
	worst := 0.0
	for _, step := range c.steps {
		xs := make([]float64, 0, len(cells[baseCell]))
		for _, r := range cells[baseCell] {
			xs = append(xs, qpsOf(r, step))
		}
		worst = math.Max(worst, benchutil.CV(xs))
	}
	scale := float64(slices.Min(c.scales)) / 100
	d, effect := r.design(worst, defaultAlpha/float64(len(c.steps)), 0, scale)
	if effect <= 0 || scale > 1-r.magnitude || !(worst > 0) {
		return 0
	}
	for n := 2; n <= limit; n++ {
		if p, err := d.Power(n, effect); err == nil && p >= designPower {
			return n
		}
	}
	return limit
}

// bootstrapRate is the rate of regressed n+n verdicts over subsampleN
// draws of n rounds with replacement for each side, independently: the
// detection the runs' own noise gives at more repeats than the rounds
// hold disjointly (drawnRate).
func bootstrapRate(c config, cells map[string][]runResult, cell string, n int, r rule) (float64, error) {
	return drawnRate(cells, cell, r, [2]uint64{uint64(n), 13}, func(rng *rand.Rand) (cur, base []int) {
		for range n {
			cur = append(cur, rng.IntN(c.rounds))
			base = append(base, rng.IntN(c.rounds))
		}
		return cur, base
	})
}

// subsampleN is the number of subsamples of subsampleRate.
const subsampleN = 400

// subsampleRate estimates the rate of regressed n+n verdicts from more
// verdicts than disjoint blocks give: subsampleN draws of n distinct rounds
// (drawnRate), each judged like a block. The draws share rounds, so the rate
// has no binomial interval; it is the block count's estimate with less
// sampling noise, and the disjoint blocks are printed beside it.
func subsampleRate(c config, cells map[string][]runResult, cell string, n int, r rule) (float64, error) {
	return drawnRate(cells, cell, r, [2]uint64{uint64(n), 7}, func(rng *rand.Rand) (cur, base []int) {
		rounds := rng.Perm(c.rounds)[:n]
		slices.Sort(rounds)
		return rounds, rounds
	})
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// qpsOf is a run's steady QPS of a step (its only thread count).
func qpsOf(r runResult, step string) float64 {
	for _, s := range r.doc.Steps {
		if s.Step == step {
			return s.SteadyQPS
		}
	}
	return math.NaN()
}

// halfWidths returns the relative Fieller half-width of every compared
// ratio (slowed cell / A, per step) over the given rounds.
func halfWidths(c config, cells map[string][]runResult, rounds []int) ([]float64, error) {
	var out []float64
	for _, s := range c.scales {
		for _, step := range c.steps {
			a, b := make([]float64, 0, len(rounds)), make([]float64, 0, len(rounds))
			for _, r := range rounds {
				a = append(a, qpsOf(cells[baseCell][r], step))
				b = append(b, qpsOf(cells[slowCell(s)][r], step))
			}
			iv, err := inference.RatioOfMeans(a, b, 0.95)
			if err != nil {
				return nil, err
			}
			hw := (iv.High - iv.Low) / 2 / iv.Estimate
			if iv.FiellerUnbounded {
				hw = math.Inf(1)
			}
			out = append(out, hw)
		}
	}
	return out, nil
}

func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

func report(w *os.File, c config, runs []runResult, took time.Duration) {
	cells := byCell(runs)
	fmt.Fprintf(w, "\nbench-verdicts: %d rounds, steps %s at %d threads, %d s steps (+%d s warm-up), base quota %.2f CPU, took %s\n\n",
		c.rounds, strings.Join(c.steps, ","), c.threads, c.seconds, c.warmup, c.quota, took.Round(time.Second))

	// Realised slowdown and throttling.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cell\tnominal\tstep\tratio to A (Fieller 95 %)\tthrottled periods\tmean run wall")
	all := append([]string{aaCell}, func() []string {
		s := make([]string, 0, len(c.scales))
		for _, v := range c.scales {
			s = append(s, slowCell(v))
		}
		return s
	}()...)
	for _, cell := range all {
		nominal := 1.0
		if cell != aaCell {
			nominal = quotaOf(c, cell) / c.quota
		}
		var thr, wall []float64
		for _, r := range cells[cell] {
			thr = append(thr, r.throttled)
			wall = append(wall, r.wall)
		}
		for _, step := range c.steps {
			var a, b []float64
			for i := range cells[cell] {
				a = append(a, qpsOf(cells[baseCell][i], step))
				b = append(b, qpsOf(cells[cell][i], step))
			}
			iv, err := inference.RatioOfMeans(a, b, 0.95)
			ratio := "-"
			if err == nil {
				ratio = fmt.Sprintf("%.3f [%.3f, %.3f]", iv.Estimate, iv.Low, iv.High)
			}
			fmt.Fprintf(tw, "%s\t%.2f\t%s\t%s\t%.0f %%\t%.1f s\n", cell, nominal, step, ratio, 100*benchutil.Mean(thr), benchutil.Mean(wall))
		}
	}
	athr := make([]float64, 0, len(cells[baseCell]))
	for _, r := range cells[baseCell] {
		athr = append(athr, r.throttled)
	}
	fmt.Fprintf(tw, "A\t1.00\t(base)\t-\t%.0f %%\t-\n", 100*benchutil.Mean(athr))
	_ = tw.Flush()
	fmt.Fprintln(w)

	// Run-to-run CV of A per step.
	for _, step := range c.steps {
		xs := make([]float64, 0, len(cells[baseCell]))
		for _, r := range cells[baseCell] {
			xs = append(xs, qpsOf(r, step))
		}
		fmt.Fprintf(w, "run-to-run CV of A, %s: %.2f %% over %d runs\n", step, 100*benchutil.CV(xs), len(xs))
	}
	fmt.Fprintln(w)

	// Verdicts.
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "verdict (α %.2f, Holm over %d steps)\tA/A (A2 vs A)", defaultAlpha, len(c.steps))
	for _, s := range c.scales {
		fmt.Fprintf(tw, "\t%s (nominal −%d %%)", slowCell(s), 100-s)
	}
	fmt.Fprintln(tw)
	var methods []string
	for _, r := range rules {
		fmt.Fprintf(tw, "1 run/side, noise floor, %s", r)
		for _, cell := range all {
			vc, ms, err := floorVerdicts(c, cells, cell, r)
			if err != nil {
				fmt.Fprintf(tw, "\terror: %v", err)
				continue
			}
			methods = append(methods, ms...)
			fmt.Fprintf(tw, "\t%s", vc)
		}
		fmt.Fprintln(tw)
		for _, n := range repeatSizes {
			if n > c.rounds {
				continue
			}
			fmt.Fprintf(tw, "%d+%d repeats, between runs, %s", n, n, r)
			for _, cell := range all {
				vc, err := repeatVerdicts(c, cells, cell, n, r)
				if err != nil {
					fmt.Fprintf(tw, "\terror: %v", err)
					continue
				}
				rate, err := subsampleRate(c, cells, cell, n, r)
				if err != nil {
					fmt.Fprintf(tw, "\terror: %v", err)
					continue
				}
				fmt.Fprintf(tw, "\t%s; subsamples %.2f", vc, rate)
			}
			fmt.Fprintln(tw)
		}
	}
	for _, r := range rules[:2] {
		n := designRepeats(c, cells, r, 5*c.rounds)
		if n == 0 {
			continue
		}
		fmt.Fprintf(tw, "%d+%d repeats (the design's n for %.0f %% power), bootstrap of the rounds, %s", n, n, 100*designPower, r)
		for _, cell := range all {
			rate, err := bootstrapRate(c, cells, cell, n, r)
			if err != nil {
				fmt.Fprintf(tw, "\terror: %v", err)
				continue
			}
			fmt.Fprintf(tw, "\t%.2f", rate)
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "(regressed verdicts / verdicts = rate [Clopper–Pearson 95 %%] over disjoint blocks of rounds; subsamples: the rate over %d draws of n distinct rounds, which overlap (no interval); bootstrap: the same with n rounds per side drawn with replacement, the runs' own noise at more repeats than the bench ran; at magnitude 5 %% a true 5 %% slowdown sits on the null's boundary)\n", subsampleN)
	slices.Sort(methods)
	fmt.Fprintf(w, "methods used: %s\n", strings.Join(slices.Compact(methods), " | "))
	modelPower(w, c, cells)
	components(w, c, cells)
	planSection(w, c, cells)
	pairedSection(w, c, cells)
	goals(w, c, cells)
	fmt.Fprintln(w)

	// Precision round by round.
	roundWall := func(r int) float64 {
		s := cells[baseCell][r].wall
		for _, v := range c.scales {
			s += cells[slowCell(v)][r].wall
		}
		return s
	}
	fmt.Fprintf(w, "precision (max Fieller 95 %% half-width over %d ratios; target ±%.1f %%; rounds in order A S… / …S A):\n", len(c.scales)*len(c.steps), 100*c.target)
	stopAt, spent := 0, 0.0
	for r := 1; r < c.rounds; r++ {
		rounds := make([]int, r+1)
		for i := range rounds {
			rounds[i] = i
		}
		hw, err := halfWidths(c, cells, rounds)
		if err != nil {
			fmt.Fprintf(w, "  round %d: %v\n", r+1, err)
			continue
		}
		mark := ""
		if stopAt == 0 && maxOf(hw) < c.target {
			stopAt = r + 1
			mark = "  ← the adaptive plan stops"
		}
		fmt.Fprintf(w, "  round %2d: %s%s\n", r+1, pct(maxOf(hw)), mark)
	}
	for r := 0; r < c.rounds; r++ {
		if stopAt == 0 || r < stopAt {
			spent += roundWall(r)
		}
	}
	var walls []float64
	for r := 0; r < c.rounds; r++ {
		walls = append(walls, roundWall(r))
	}
	perRound := benchutil.Mean(walls)
	if stopAt == 0 {
		fmt.Fprintf(w, "the target was not reached in %d rounds (%.3f cell-hours)\n", c.rounds, spent/3600)
	} else {
		fmt.Fprintf(w, "adaptive, this run: %d rounds, %.3f cell-hours\n", stopAt, spent/3600)
	}
	adaptive, fixed := resamplePlans(c, cells)
	if adaptive.capped > 0 || fixed >= 5*c.rounds {
		fmt.Fprintf(w, "in %d of %d resamples the adaptive plan did not reach the target within %d rounds (counted as %d); the fixed plan's figure is a lower bound when it shows %d\n",
			adaptive.capped, bootstrapN, 5*c.rounds, 5*c.rounds, 5*c.rounds)
	}
	fmt.Fprintf(w, "over %d bootstrap resamples of the rounds: adaptive stops after %.1f rounds on average (90th percentile %d), %.3f cell-hours; "+
		"a fixed plan needs %d rounds to reach the target in %.0f %% of resamples, %.3f cell-hours; adaptive/fixed = %.2f\n",
		bootstrapN, adaptive.mean, adaptive.p90, adaptive.mean*perRound/3600, fixed, 100*fixedAssurance, float64(fixed)*perRound/3600, adaptive.mean/float64(fixed))
}

// goalRepeats is the n+n of the goal summary's detection rates: about
// what the Estimated rule needs for 90 % power against a 10 % slowdown at
// a 5–7 % run-to-run CV (docs/noise.md, "Two rules for the magnitude").
const goalRepeats = 10

// goals prints the figures issue 11's goals name, side by side: the A/A
// false positives of one run per side at the API's defaults (goal:
// consistent with α) and the detection of each slowed cell by both rules
// at goalRepeats+goalRepeats (goal for the 10 % slowdown: 90 %).
func goals(w *os.File, c config, cells map[string][]runResult) {
	aa, _, err := floorVerdicts(c, cells, aaCell, rules[0])
	if err != nil {
		fmt.Fprintf(w, "goals: %v\n", err)
		return
	}
	lo, _, _ := inference.ClopperPearson(aa.regressed, aa.total, 0.95)
	consistent := "yes"
	if lo > defaultAlpha {
		consistent = "no"
	}
	fmt.Fprintf(w, "goal, A/A false positives (1 run/side, %s, α %.2f): %s; consistent with α: %s\n", rules[0], defaultAlpha, aa, consistent)
	n := min(goalRepeats, c.rounds)
	for _, s := range c.scales {
		cell := slowCell(s)
		var parts []string
		for _, r := range rules[:2] {
			vc, err1 := repeatVerdicts(c, cells, cell, n, r)
			rate, err2 := subsampleRate(c, cells, cell, n, r)
			if err1 != nil || err2 != nil {
				parts = append(parts, fmt.Sprintf("%s: error %v", r, errors.Join(err1, err2)))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %d / %d blocks, subsamples %.2f", r, vc.regressed, vc.total, rate))
		}
		fmt.Fprintf(w, "goal, detection of %s (nominal −%d %%) at %d+%d repeats: %s\n", cell, 100-s, n, n, strings.Join(parts, "; "))
	}
}

// modelPower prints, per step, the power the model (inference.Design:
// log-normal runs, the step's CV measured on A's runs) gives each slowdown
// at each magnitude, one run per side with a floor of the bench's df and
// 3+3 runs, at α / steps (Holm's first step): what the detection rates
// above should be near if the model holds.
func modelPower(w *os.File, c config, cells map[string][]runResult) {
	k := float64(len(c.steps))
	for _, step := range c.steps {
		xs := make([]float64, 0, len(cells[baseCell]))
		for _, r := range cells[baseCell] {
			xs = append(xs, qpsOf(r, step))
		}
		var parts []string
		for _, r := range rules {
			for _, s := range c.scales {
				scale := float64(s) / 100
				floor, effect := r.design(benchutil.CV(xs), defaultAlpha/k, 2*c.rounds-3, scale)
				if effect <= 0 || scale > 1-r.magnitude {
					parts = append(parts, fmt.Sprintf("S%d %s -", s, r))
					continue
				}
				between, _ := r.design(benchutil.CV(xs), defaultAlpha/k, 0, scale)
				p1, err1 := floor.Power(1, effect)
				p3, err3 := between.Power(3, effect)
				p10, err10 := between.Power(10, effect)
				if err1 != nil || err3 != nil || err10 != nil {
					continue
				}
				parts = append(parts, fmt.Sprintf("S%d %s %.2f/%.2f/%.2f", s, r, p1, p3, p10))
			}
		}
		fmt.Fprintf(w, "model power, %s (CV %.2f %%; 1 run/side with floor / 3+3 / 10+10): %s\n", step, 100*benchutil.CV(xs), strings.Join(parts, ", "))
	}
}

// components prints, per step, the run level of the suite's variance
// components (inference.EstimateComponents: every cell a set of its own,
// one node; the logs keep no per-second series, so the run level holds
// the within-run noise of the bench's step length) and, as a check of the
// runs' independence, the rounds' share: a two-way analysis of variance
// with cells and rounds crossed (ln QPS = cell + round + error), whose
// round component is what a drift over the bench's time shared by a
// round's cells adds (interleaving cancels it; the between-run test does
// not know it).
func components(w *os.File, c config, cells map[string][]runResult) {
	names := sortedKeys(func() map[string]bool {
		m := map[string]bool{}
		for k := range cells {
			m[k] = true
		}
		return m
	}())
	for _, step := range c.steps {
		var rv []inference.RunValue
		byRound := map[int]map[string]float64{}
		for _, cell := range names {
			for _, r := range cells[cell] {
				q := qpsOf(r, step)
				if !(q > 0) {
					continue
				}
				rv = append(rv, inference.RunValue{Set: cell, Node: "local", Value: q})
				if byRound[r.round] == nil {
					byRound[r.round] = map[string]float64{}
				}
				byRound[r.round][cell] = math.Log(q)
			}
		}
		vc, err := inference.EstimateComponents(rv)
		if err != nil {
			fmt.Fprintf(w, "components, %s: %v\n", step, err)
			continue
		}
		// Complete rounds only, for the crossed analysis.
		var rounds [][]float64
		for r := range c.rounds {
			row := make([]float64, 0, len(names))
			for _, cell := range names {
				if y, ok := byRound[r][cell]; ok {
					row = append(row, y)
				}
			}
			if len(row) == len(names) {
				rounds = append(rounds, row)
			}
		}
		round, msRound, msErr, dfRound, dfErr := crossedRounds(rounds)
		fmt.Fprintf(w, "components, %s (%d runs, %d cells, one node; within not logged): run CV %.2f %% over %d df; rounds crossed with cells: round CV %s over %d df (mean squares %.5f round, %.5f error over %d df)\n",
			step, vc.Runs, vc.Sets, 100*vc.Run.CV(), vc.Run.DF, round, dfRound, msRound, msErr, dfErr)
	}
}

// crossedRounds is the round component of ln QPS in a complete rounds ×
// cells table without replication (two-way analysis of variance, cells
// and rounds additive): (MS_round − MS_error)/cells, truncated at 0
// ("0*"), with the mean squares and their df.
func crossedRounds(y [][]float64) (component string, msRound, msErr float64, dfRound, dfErr int) {
	r := len(y)
	if r < 2 || len(y[0]) < 2 {
		return "-", 0, 0, 0, 0
	}
	k := len(y[0])
	rowMean := make([]float64, r)
	colMean := make([]float64, k)
	var grand float64
	for i, row := range y {
		for j, v := range row {
			rowMean[i] += v / float64(k)
			colMean[j] += v / float64(r)
			grand += v / float64(r*k)
		}
	}
	var ssRound, ssErr float64
	for i, row := range y {
		ssRound += float64(k) * (rowMean[i] - grand) * (rowMean[i] - grand)
		for j, v := range row {
			e := v - rowMean[i] - colMean[j] + grand
			ssErr += e * e
		}
	}
	dfRound, dfErr = r-1, (r-1)*(k-1)
	msRound, msErr = ssRound/float64(dfRound), ssErr/float64(dfErr)
	est := (msRound - msErr) / float64(k)
	if est <= 0 {
		return "0*", msRound, msErr, dfRound, dfErr
	}
	return fmt.Sprintf("%.2f %%", 100*math.Sqrt(math.Expm1(est))), msRound, msErr, dfRound, dfErr
}

const bootstrapN = 1000

type stopping struct {
	mean float64
	p90  int
	// capped counts the resamples that did not reach the target.
	capped int
}

// resamplePlans draws rounds with replacement: the adaptive plan draws one
// round at a time until every half-width is under the target (at most
// 5×rounds); the fixed plan's n is the smallest whose resamples of n rounds
// reach the target in fixedAssurance of the draws. Seeded: the figures are
// reproducible from the measured rounds.
func resamplePlans(c config, cells map[string][]runResult) (stopping, int) {
	rng := rand.New(rand.NewPCG(11, 4))
	limit := 5 * c.rounds
	var stops []int
	var s stopping
	for b := 0; b < bootstrapN; b++ {
		rounds := []int{rng.IntN(c.rounds)}
		reached := false
		for len(rounds) < limit && !reached {
			rounds = append(rounds, rng.IntN(c.rounds))
			hw, err := halfWidths(c, cells, rounds)
			reached = err == nil && maxOf(hw) < c.target
		}
		if !reached {
			s.capped++
		}
		stops = append(stops, len(rounds))
	}
	slices.Sort(stops)
	for _, n := range stops {
		s.mean += float64(n) / float64(len(stops))
	}
	s.p90 = stops[int(0.9*float64(len(stops)-1))]
	for n := 2; n <= limit; n++ {
		ok := 0
		for b := 0; b < bootstrapN/4; b++ {
			rounds := make([]int, n)
			for i := range rounds {
				rounds[i] = rng.IntN(c.rounds)
			}
			if hw, err := halfWidths(c, cells, rounds); err == nil && maxOf(hw) < c.target {
				ok++
			}
		}
		if float64(ok) >= fixedAssurance*float64(bootstrapN/4) {
			return s, n
		}
	}
	return s, limit
}

// pct prints a half-width, "unbounded" for a Fieller set that is not an
// interval.
func pct(hw float64) string {
	if math.IsInf(hw, 0) {
		return "unbounded"
	}
	return fmt.Sprintf("±%.2f %%", 100*hw)
}
