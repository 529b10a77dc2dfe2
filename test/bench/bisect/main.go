// Command bisect is the bisection benchmark (make bench-bisect, issue 24):
// on a real local MariaDB, how often does a BenchmarkBisection's search name
// the build that introduced a calibrated slowdown, is its stated confidence
// right as often as it says, how often does a search over builds that do not
// differ end Localized=True while the machine's load changes between
// rounds, and how many cells does it spend?
//
// A "build" is a point 0..n+1 (0 the known-good one, n+1 the known-bad
// one). The server is the one bench-verdicts uses (internal/benchutil: a
// MariaDB in a CPU cgroup whose CFS quota the server cannot see): from the
// culprit on, every build runs at a quota of 90 % (a 10 % slowdown) or 80 %
// of the base quota, the builds before it at the base quota. A null
// bisection runs every build at the base quota, with a CPU busy loop
// started or stopped between rounds.
//
// The search is pkg/bisect's Search, the product's Assess and Decide one
// round at a time; its Measurer runs a round's cells here: every point of
// the round × repeats, repeats outermost, the points in order, reversed in
// odd rounds; each cell is one dbbench-agent local run (its own data load,
// then the steps). It judges throughput at every step@threads.
//
// Every cell's QPS goes to a JSON-lines log; -replay LOG re-runs the
// decisions from it without servers (with the same rule it must reach the
// same outcomes; with another it takes a round's cells of the same quota,
// as long as the log has them). -resample K runs K more bisections per
// case on cells drawn from the measured ones (resample.go): many searches
// at this machine's noise for the price of the real ones.
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbbench/dbbench/internal/benchutil"
	"github.com/dbbench/dbbench/pkg/bisect"
	"github.com/dbbench/dbbench/pkg/regression"
)

// config is the benchmark's size, server, rule and limits; the log's first
// record.
type config struct {
	Candidates int `json:"candidates"`
	// Cases are the slowdowns in percent; 0 is the null case.
	Cases      []int `json:"cases"`
	Bisections int   `json:"bisections"`
	// Minutes bounds the real bisections' wall time (0: none): no
	// bisection starts that would likely end after it.
	Minutes float64 `json:"minutes"`
	Seed    uint64  `json:"seed"`

	Steps     []string `json:"steps"`
	Seconds   int      `json:"seconds"`
	Warmup    int      `json:"warmup"`
	Threads   int      `json:"threads"`
	TableSize int64    `json:"tableSize"`
	FlushWait int      `json:"flushWait"`
	Quota     float64  `json:"quota"`

	// Busy is how many busy-loop processes run in a round with load, and
	// BusyIn where: "server" in the server's CPU group, sharing its quota
	// (a neighbour in the database's pod); "client" in the client's;
	// "max" in a group of their own at the server's CPU weight (another
	// pod on the node); "default" at the machine's default weight. Load
	// says which bisections change the load between rounds: null, all,
	// none.
	Busy   int    `json:"busy"`
	BusyIn string `json:"busyIn"`
	Load   string `json:"load"`

	Magnitude     float64 `json:"magnitude"`
	MagnitudeRule string  `json:"magnitudeRule"`
	MaxPValue     float64 `json:"maxPValue"`
	Confidence    float64 `json:"confidence"`
	Repeats       int     `json:"repeats"`
	Parallelism   int     `json:"parallelism"`
	MaxCells      int     `json:"maxCells"`
}

func (c config) rule() bisect.Rule {
	return bisect.Rule{Magnitude: c.Magnitude, MagnitudeRule: regression.MagnitudeRule(c.MagnitudeRule), MaxPValue: c.MaxPValue,
		Confidence: c.Confidence}
}

func (c config) limits() bisect.Limits {
	return bisect.Limits{Parallelism: c.Parallelism, Repeats: c.Repeats, MaxCells: c.MaxCells}
}

func (c config) cell(sysbench string) benchutil.Cell {
	return benchutil.Cell{Sysbench: sysbench, Steps: c.Steps, TableSize: c.TableSize, Seconds: c.Seconds, Warmup: c.Warmup,
		Threads: c.Threads, FlushWait: c.FlushWait}
}

// loadChanges says whether bisections of a case run the busy loop in
// every other round.
func (c config) loadChanges(slowdown int) bool {
	switch c.Load {
	case "all":
		return true
	case "null":
		return slowdown == 0
	}
	return false
}

// decisionsOf is what a replay must reproduce: the rule and limits.
func (c config) decisionsOf() string {
	return fmt.Sprintf("%v %v", c.rule(), c.limits())
}

// uniqueCases are the cases in their first order, each once.
func uniqueCases(cases []int) []int {
	var out []int
	for _, c := range cases {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func caseName(slowdown int) string {
	if slowdown == 0 {
		return "null"
	}
	return fmt.Sprintf("%d %%", slowdown)
}

func main() {
	var (
		c        config
		cases    = flag.String("cases", "10,20,null", "cases: slowdowns in percent of the base quota, and null (no build differs)")
		steps    = flag.String("steps", "read-only-count", "catalog steps of every cell")
		replay   = flag.String("replay", "", "re-run the decisions from an earlier run's log instead of measuring (the rule and limits flags given override the log's)")
		resample = flag.Int("resample", 400, "bisections per case on cells drawn from the measured ones, after the real ones (0: none)")
		logPath  = flag.String("log", "", "the JSON-lines log (default: bench-bisect-<time>.jsonl in the temporary directory)")
		agentBin = flag.String("agent", "", "dbbench-agent binary (default: go build ./cmd/agent)")
		sysbench = flag.String("sysbench", "sysbench", "sysbench binary")
		keep     = flag.Bool("keep-work", false, "keep the work directory (agent results)")
	)
	flag.IntVar(&c.Candidates, "candidates", 8, "candidate builds between the good and the bad one (n ≥ 8 for the issue's figures)")
	flag.IntVar(&c.Bisections, "bisections", 3, "real bisections per case, the cases in turn (a case listed twice in -cases runs twice per turn)")
	flag.Float64Var(&c.Minutes, "minutes", 0, "start no real bisection that would likely end after this many minutes (0: no bound)")
	flag.Uint64Var(&c.Seed, "seed", 1, "seed of the culprits and of the resampling")
	flag.IntVar(&c.Seconds, "seconds", 5, "measured seconds per step (after the warm-up)")
	flag.IntVar(&c.Warmup, "warmup", 1, "warm-up seconds per step")
	flag.IntVar(&c.Threads, "threads", 8, "client threads (enough to keep the server at its quota)")
	flag.Int64Var(&c.TableSize, "table-size", 10000, "rows in the one sbtest table")
	flag.IntVar(&c.FlushWait, "flush-wait", 5, "cap of the post-load flush, seconds")
	flag.Float64Var(&c.Quota, "quota", 0.4, "the server's base CPU quota in CPUs (CFS quota / period)")
	flag.IntVar(&c.Busy, "busy", 1, "busy-loop processes in a round with load")
	flag.StringVar(&c.BusyIn, "busy-in", "server", "where the busy loop runs: server (in its CPU group, sharing its quota), client (in the client's group), max (a group of its own at the server's weight) or default (the machine's default weight)")
	flag.StringVar(&c.Load, "load", "null", "bisections whose load changes between rounds: null, all or none")
	flag.Float64Var(&c.Magnitude, "magnitude", 5, "minMagnitudePercent")
	flag.StringVar(&c.MagnitudeRule, "magnitude-rule", string(regression.MagnitudeEstimated), "magnitudeRule: Tested or Estimated")
	flag.Float64Var(&c.MaxPValue, "max-p", 0.05, "maxPValue")
	flag.Float64Var(&c.Confidence, "confidence", bisect.DefaultConfidence, "confidence a localization needs")
	flag.IntVar(&c.Repeats, "repeats", 3, "cells per point and round")
	flag.IntVar(&c.Parallelism, "parallelism", 1, "candidates per search round")
	flag.IntVar(&c.MaxCells, "max-cells", 200, "cell budget of a bisection")
	flag.Parse()
	c.Magnitude /= 100
	var err error
	if c.Cases, err = parseCases(*cases); err != nil {
		fatalf("-cases: %v", err)
	}
	c.Steps = strings.Split(*steps, ",")

	if *replay != "" {
		l, err := readLog(*replay)
		if err != nil {
			fatalf("-replay: %v", err)
		}
		// The log's run, with the decision flags given on the command line.
		rc := l.config
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for name, apply := range map[string]func(){
			"magnitude": func() { rc.Magnitude = c.Magnitude }, "magnitude-rule": func() { rc.MagnitudeRule = c.MagnitudeRule },
			"max-p": func() { rc.MaxPValue = c.MaxPValue }, "confidence": func() { rc.Confidence = c.Confidence },
			"repeats": func() { rc.Repeats = c.Repeats }, "parallelism": func() { rc.Parallelism = c.Parallelism },
			"max-cells": func() { rc.MaxCells = c.MaxCells }, "seed": func() { rc.Seed = c.Seed },
		} {
			if set[name] {
				apply()
			}
		}
		if err := validateDecisions(rc); err != nil {
			fatalf("-replay: %v", err)
		}
		replayed, check, err := replayAll(context.Background(), l, rc)
		if err != nil {
			fatalf("-replay: %v", err)
		}
		report(os.Stdout, rc, l, replayed, &check, *resample, 0)
		return
	}
	if err := validate(c); err != nil {
		fatalf("%v", err)
	}
	if *logPath == "" {
		*logPath = filepath.Join(os.TempDir(), "bench-bisect-"+time.Now().Format("20060102-150405")+".jsonl")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, c, *logPath, *agentBin, *sysbench, *keep, *resample))
}

func parseCases(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "null" {
			out = append(out, 0)
			continue
		}
		v, err := strconv.Atoi(strings.TrimSuffix(f, "%"))
		if err != nil || v <= 0 || v >= 90 {
			return nil, fmt.Errorf("%q is neither a slowdown in percent (1–89) nor null", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// validate checks a run's config; validateDecisions what a replay uses.
func validate(c config) error {
	if c.Bisections < 0 || c.Quota <= 0 {
		return fmt.Errorf("-bisections must be ≥ 0, -quota > 0")
	}
	if c.Load != "null" && c.Load != "all" && c.Load != "none" {
		return fmt.Errorf("-load %q: null, all or none", c.Load)
	}
	if !slices.Contains([]string{"server", "client", "max", "default"}, c.BusyIn) {
		return fmt.Errorf("-busy-in %q: server, client, max or default", c.BusyIn)
	}
	return validateDecisions(c)
}

func validateDecisions(c config) error {
	if c.Candidates < 1 || c.Repeats < 1 || c.Parallelism < 1 || c.MaxCells < 2 {
		return fmt.Errorf("-candidates, -repeats, -parallelism must be ≥ 1, -max-cells ≥ 2")
	}
	return c.rule().Validate()
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench-bisect: "+format+"\n", args...)
	os.Exit(2)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// bisection is one search: its case and culprit, and how it ended.
type bisection struct {
	index    int
	slowdown int // percent; 0: null
	culprit  int // first slowed build; 0: none
	// busyFrom says which rounds run the busy loop (nil: none).
	busy func(round int) bool

	// The result.
	outcome    bisect.Outcome
	named      int // the posterior's build (-1: none)
	confidence float64
	likely     []int
	cells      int
	rounds     int
	epochs     int
	seconds    float64
	// exhausted: a replay whose log had no cells for a round it asked.
	exhausted bool
}

// scale is point p's quota in percent of the base quota.
func (b *bisection) scale(p int) int {
	if b.slowdown > 0 && p >= b.culprit {
		return 100 - b.slowdown
	}
	return 100
}

func (b *bisection) localized() bool { return b.outcome == bisect.OutcomeLocalized }

// right says the search named the culprit and stopped Localized.
func (b *bisection) right() bool { return b.localized() && b.named == b.culprit }

// newBisection draws a culprit for a slowdown among the builds that can be
// the first bad one (1..n+1); with load, the busy loop runs in every other
// round, from round 0 in every other bisection of the case.
func newBisection(c config, index, slowdown, ofCase int, rng *rand.Rand) *bisection {
	b := &bisection{index: index, slowdown: slowdown, named: -1, confidence: math.NaN()}
	if slowdown > 0 {
		b.culprit = 1 + rng.IntN(c.Candidates+1)
	}
	if c.loadChanges(slowdown) {
		first := ofCase%2 == 1
		b.busy = func(r int) bool { return (r%2 == 1) != first }
	}
	return b
}

func (b *bisection) busyIn(round int) bool { return b.busy != nil && b.busy(round) }

// cellRef is one cell of a round.
type cellRef struct{ point, repeat int }

// cellOrder is the order of a round's cells: repeats outermost, the points
// in order, reversed in odd rounds (a drift within a round does not favour
// one side across rounds).
func cellOrder(points []int, repeats, round int) []cellRef {
	pts := slices.Clone(points)
	if round%2 == 1 {
		slices.Reverse(pts)
	}
	var out []cellRef
	for r := 0; r < repeats; r++ {
		for _, p := range pts {
			out = append(out, cellRef{p, r})
		}
	}
	return out
}

// source measures cells: a real server, a log, or draws from the
// measured cells.
type source interface {
	// round starts round ri of b (Decide's round r).
	round(ctx context.Context, b *bisection, ri int, r bisect.Round) error
	// cell measures one cell; failed is a cell's own failure (the round
	// goes on without it), err ends the bisection.
	cell(ctx context.Context, b *bisection, ri int, ref cellRef) (values map[bisect.Key]float64, failed string, err error)
}

// errExhausted ends a replay that asks for cells its log does not have.
var errExhausted = fmt.Errorf("the log has no such cells")

// measurer runs Decide's rounds on src: the bisect.Measurer of a search.
func measurer(b *bisection, repeats int, src source) bisect.Measurer {
	ri := 0
	return func(ctx context.Context, r bisect.Round) (bisect.Round, error) {
		if err := src.round(ctx, b, ri, r); err != nil {
			return r, err
		}
		ok, why := map[int]int{}, map[int]string{}
		for _, ref := range cellOrder(r.Points, repeats, ri) {
			v, failed, err := src.cell(ctx, b, ri, ref)
			if err != nil {
				return r, err
			}
			if failed != "" {
				why[ref.point] = failed
				continue
			}
			ok[ref.point]++
			r.Observations = append(r.Observations, bisect.Observation{Point: ref.point, Values: v})
		}
		for _, p := range r.Points {
			if ok[p] == 0 {
				if r.Failures == nil {
					r.Failures = map[int]bisect.Failure{}
				}
				r.Failures[p] = bisect.Failure{Reason: "CellsFailed", Message: why[p]}
			}
		}
		ri++
		return r, nil
	}
}

// search runs b's whole search on src and records how it ended.
func search(ctx context.Context, c config, b *bisection, src source) error {
	began := time.Now()
	s, d, rounds, err := bisect.Search(ctx, c.Candidates+2, c.rule(), nil, c.limits(), measurer(b, c.Repeats, src))
	b.seconds = time.Since(began).Seconds()
	if err != nil {
		return err
	}
	b.outcome, b.named, b.confidence, b.likely = d.Outcome, s.Named, s.Confidence, d.Likely
	b.cells, b.rounds, b.epochs = s.CellsUsed, len(rounds), s.Epochs
	return nil
}

func (b *bisection) result() resultRec {
	return resultRec{Type: recResult, Bisection: b.index, Outcome: string(b.outcome), Named: b.named, Confidence: finite(b.confidence),
		Likely: b.likely, Cells: b.cells, Rounds: b.rounds, Epochs: b.epochs, Seconds: math.Round(10*b.seconds) / 10}
}

func run(ctx context.Context, c config, logPath, agentBin, sysbench string, keep bool, resample int) int {
	f, err := os.Create(logPath)
	if err != nil {
		fatalf("%v", err)
	}
	defer f.Close()
	lw := &logWriter{f: f}
	srv, err := benchutil.Start(benchutil.Options{Name: "dbbench-bisect", AgentBin: agentBin, Keep: keep, Logf: logf})
	if err != nil {
		logf("%v", err)
		return 2
	}
	defer srv.Close()
	busy, err := newBusyLoop(srv, c)
	if err != nil {
		logf("the busy loop: %v", err)
		return 2
	}
	defer busy.stop()
	if err := lw.write(configRec{Type: recConfig, Started: time.Now().Format(time.RFC3339), Config: c}); err != nil {
		logf("%v", err)
		return 2
	}
	live := &liveSource{c: c, srv: srv, spec: c.cell(sysbench), busy: busy, log: lw, began: time.Now()}
	logf("MariaDB on 127.0.0.1:%d in cgroup %s (%s); %d candidates, cases %s, %d bisections each; steps %s, %d s + %d s warm-up, %d threads, 1 × %d rows; base quota %.2f CPU; %d repeats, max %d cells; log %s",
		srv.Port, srv.Group.Dir, srv.Group.Kind(), c.Candidates, casesString(c.Cases), c.Bisections, strings.Join(c.Steps, ","),
		c.Seconds, c.Warmup, c.Threads, c.TableSize, c.Quota, c.Repeats, c.MaxCells, logPath)

	rng := rand.New(rand.NewPCG(c.Seed, 1))
	began := time.Now()
	var done []*bisection
	wallOf := map[int][]float64{}
	index := 0
	stopped := false
	ofCase := map[int]int{}
	for i := 0; i < c.Bisections && !stopped; i++ {
		for _, slowdown := range c.Cases {
			b := newBisection(c, index, slowdown, ofCase[slowdown], rng)
			index++
			ofCase[slowdown]++
			if c.Minutes > 0 {
				// The mean wall of the case so far (of any case before
				// the first of this one).
				guess := benchutil.Mean(wallOf[slowdown])
				if math.IsNaN(guess) {
					guess = benchutil.Mean(slices.Concat(slices.Collect(maps.Values(wallOf))...))
				}
				if math.IsNaN(guess) {
					guess = 0
				}
				if time.Since(began).Seconds()+guess > 60*c.Minutes {
					logf("stopping: bisection %d (%s) would likely end after the %.0f-minute bound", b.index, caseName(slowdown), c.Minutes)
					stopped = true
					break
				}
			}
			if err := lw.write(bisectionRec{Type: recBisection, Bisection: b.index, Slowdown: b.slowdown, Culprit: b.culprit}); err != nil {
				logf("%v", err)
				return 2
			}
			logf("bisection %d: %s, culprit %d", b.index, caseName(slowdown), b.culprit)
			if err := search(ctx, c, b, live); err != nil {
				logf("bisection %d: %v", b.index, err)
				stopped = true
				break
			}
			if err := lw.write(b.result()); err != nil {
				logf("%v", err)
				return 2
			}
			logf("bisection %d: %s, culprit %d: %s, named %d at %.3f, %d cells in %d rounds, %.0f s", b.index, caseName(slowdown), b.culprit,
				b.outcome, b.named, b.confidence, b.cells, b.rounds, b.seconds)
			done = append(done, b)
			wallOf[slowdown] = append(wallOf[slowdown], b.seconds)
		}
	}
	busy.stop()
	_ = f.Sync()
	l, err := readLog(logPath)
	if err != nil {
		logf("reading the log back: %v", err)
		return 2
	}
	report(os.Stdout, c, l, done, nil, resample, time.Since(began))
	logf("log: %s", logPath)
	return 0
}

func casesString(cases []int) string {
	s := make([]string, 0, len(cases))
	for _, v := range cases {
		s = append(s, caseName(v))
	}
	return strings.Join(s, ", ")
}
