package plugin

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
)

// pgbenchOutput is what one pgbench run printed: the summary that
// printResults writes to stdout and, with -P, the progress lines
// printProgressReport writes to stderr (src/bin/pgbench/pgbench.c),
// captured together.
type pgbenchOutput struct {
	// Version is the client's, from the banner "pgbench (16.4 (Debian
	// ...))"; ServerVersion the server's when the banner names it
	// ("pgbench (17.2, server 16.4)": it does when they differ).
	Version, ServerVersion string
	// Script is "transaction type:": "<builtin: TPC-B (sort of)>", a script
	// file's name, or "multiple scripts".
	Script           string
	Clients, Threads int
	// DurationSeconds is -T ("duration: 60 s"); 0 in -t mode.
	DurationSeconds float64
	// Processed is "number of transactions actually processed:"; Failed
	// "number of failed transactions:" (pgbench 15 and later).
	Processed, Failed int64
	// TPS is the last "tps = " line: "without initial connection time"
	// (14 and later), "excluding connections establishing" (13 and
	// before, printed after the "including" one).
	TPS          float64
	LatencyAvgMs float64
	Progress     []pgbenchProgress
}

// pgbenchProgress is one "progress: 5.0 s, 1021.3 tps, lat 7.811 ms stddev
// 2.114, 0 failed" line (the failures from pgbench 15 on).
type pgbenchProgress struct {
	Second, TPS, LatencyMs float64
	Failed                 int64
}

var (
	pgbenchBanner   = regexp.MustCompile(`^pgbench \(([0-9][^ ,()]*)(.*)\)$`)
	pgbenchServer   = regexp.MustCompile(`, server ([0-9][^ ,()]*)`)
	pgbenchProgLine = regexp.MustCompile(`^progress: [0-9.]+ s, [^,]+ tps, lat `)
)

// pgbenchBuiltins name pgbench's built-in scripts by their "transaction
// type:" (and the names before 9.6) as pgbench -b names them, with the SQL
// statements of one transaction, BEGIN and END included as the catalog
// counts them.
var pgbenchBuiltins = map[string]struct {
	name       string
	statements int
}{
	"<builtin: TPC-B (sort of)>":   {"tpcb-like", 7},
	"TPC-B (sort of)":              {"tpcb-like", 7},
	"<builtin: simple update>":     {"simple-update", 5},
	"Update only pgbench_accounts": {"simple-update", 5},
	"<builtin: select only>":       {"select-only", 1},
	"SELECT only":                  {"select-only", 1},
}

// PgbenchStepPrefix starts the step names of pgbench runs:
// pgbench-tpcb-like, pgbench-simple-update, pgbench-select-only.
const PgbenchStepPrefix = "pgbench-"

// pgbenchStep is the step a pgbench run is imported as, and the statements
// per transaction its queries/s count: pgbench-<builtin>, or for a script
// file pgbench-<its name without extension> at one statement per
// transaction (pgbench does not say how many a script runs).
func pgbenchStep(script string) (string, int) {
	if b, ok := pgbenchBuiltins[script]; ok {
		return PgbenchStepPrefix + b.name, b.statements
	}
	if script == "multiple scripts" || script == "" {
		return PgbenchStepPrefix + "multiple-scripts", 1
	}
	base := path.Base(script)
	return PgbenchStepPrefix + strings.TrimSuffix(base, path.Ext(base)), 1
}

// isPgbench reports whether a file's first lines are pgbench's: its banner,
// a progress line or the summary's first line.
func isPgbench(data []byte) bool {
	head := data
	if len(head) > 4096 {
		head = head[:4096]
	}
	for _, line := range strings.Split(string(head), "\n") {
		t := strings.TrimSpace(line)
		if pgbenchBanner.MatchString(t) || pgbenchProgLine.MatchString(t) || strings.HasPrefix(t, "transaction type: ") {
			return true
		}
	}
	return false
}

// errPgbenchKilled is a pgbench output without its summary.
var errPgbenchKilled = errors.New("no final report (was the run killed?)")

// pgbenchFailed is a pgbench run that reported an error and printed no
// summary.
type pgbenchFailed struct {
	Line sysbench.Line
}

func (e *pgbenchFailed) Error() string {
	return fmt.Sprintf("pgbench failed, line %d: %s", e.Line.Number, strings.TrimSpace(e.Line.Text))
}

// parsePgbench reads one pgbench run's output. A line it knows but cannot
// read is an error naming the line; an output without the summary's "tps
// = " line is errPgbenchKilled, or a *pgbenchFailed naming the first
// "pgbench: error:" line when there is one.
func parsePgbench(data []byte) (*pgbenchOutput, error) {
	out := &pgbenchOutput{}
	var failed *sysbench.Line
	sawTPS := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		raw := strings.TrimRight(sc.Text(), "\r")
		t := strings.TrimSpace(raw)
		bad := func(what, val string) error {
			return fmt.Errorf("pgbench output line %d: %s: %q is not a number: %q", n, what, val, raw)
		}
		num := func(what, val string) (float64, error) {
			v, err := strconv.ParseFloat(val, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return 0, bad(what, val)
			}
			return v, nil
		}
		integer := func(what, val string) (int64, error) {
			v, err := strconv.ParseInt(val, 10, 64)
			if err != nil || v < 0 {
				return 0, bad(what, val)
			}
			return v, nil
		}
		switch {
		case pgbenchBanner.MatchString(t) && out.Version == "":
			m := pgbenchBanner.FindStringSubmatch(t)
			out.Version = m[1]
			if s := pgbenchServer.FindStringSubmatch(m[2]); s != nil {
				out.ServerVersion = s[1]
			}
			continue
		case strings.HasPrefix(t, "pgbench: error:"), strings.HasPrefix(t, "pgbench: fatal:"):
			if failed == nil {
				failed = &sysbench.Line{Number: n, Text: raw}
			}
			continue
		case strings.HasPrefix(t, "progress: "):
			p, err := parsePgbenchProgress(t, bad, num, integer)
			if err != nil {
				return out, err
			}
			out.Progress = append(out.Progress, p)
			continue
		case strings.HasPrefix(t, "latency average = "):
			v := strings.Fields(strings.TrimPrefix(t, "latency average = "))
			if len(v) < 2 || v[1] != "ms" {
				return out, bad("latency average", strings.TrimPrefix(t, "latency average = "))
			}
			f, err := num("latency average", v[0])
			if err != nil {
				return out, err
			}
			out.LatencyAvgMs = f
			continue
		case strings.HasPrefix(t, "tps = "):
			v := strings.Fields(strings.TrimPrefix(t, "tps = "))
			if len(v) == 0 {
				return out, bad("tps", "")
			}
			f, err := num("tps", v[0])
			if err != nil {
				return out, err
			}
			out.TPS, sawTPS = f, true
			continue
		}
		key, val, ok := strings.Cut(t, ": ")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		var err error
		switch key {
		case "transaction type":
			out.Script = val
		case "number of clients":
			var v int64
			v, err = integer(key, val)
			out.Clients = int(v)
		case "number of threads":
			var v int64
			v, err = integer(key, val)
			out.Threads = int(v)
		case "duration":
			out.DurationSeconds, err = num(key, strings.TrimSuffix(val, " s"))
		case "number of transactions actually processed":
			done, _, _ := strings.Cut(val, "/")
			out.Processed, err = integer(key, done)
		case "number of failed transactions":
			f, _, _ := strings.Cut(val, " ")
			out.Failed, err = integer(key, f)
		}
		if err != nil {
			return out, err
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("reading pgbench output: %w", err)
	}
	if !sawTPS {
		if failed != nil {
			return out, &pgbenchFailed{Line: *failed}
		}
		return out, errPgbenchKilled
	}
	return out, nil
}

// parsePgbenchProgress reads "progress: 5.0 s, 1021.3 tps, lat 7.811 ms
// stddev 2.114[, 0 failed][, lag ...]...".
func parsePgbenchProgress(t string, bad func(string, string) error, num func(string, string) (float64, error),
	integer func(string, string) (int64, error)) (pgbenchProgress, error) {
	var p pgbenchProgress
	parts := strings.Split(strings.TrimPrefix(t, "progress: "), ", ")
	if len(parts) < 3 {
		return p, bad("progress", t)
	}
	field := func(s, unit string) (string, bool) {
		f := strings.Fields(s)
		if len(f) < 2 || f[1] != unit {
			return "", false
		}
		return f[0], true
	}
	sec, ok := field(parts[0], "s")
	if !ok {
		return p, bad("progress", parts[0])
	}
	var err error
	if p.Second, err = num("progress", sec); err != nil {
		return p, err
	}
	tps, ok := field(parts[1], "tps")
	if !ok {
		return p, bad("progress", parts[1])
	}
	if p.TPS, err = num("progress", tps); err != nil {
		return p, err
	}
	lat := strings.Fields(parts[2])
	if len(lat) < 3 || lat[0] != "lat" || lat[2] != "ms" {
		return p, bad("progress", parts[2])
	}
	if p.LatencyMs, err = num("progress", lat[1]); err != nil {
		return p, err
	}
	for _, rest := range parts[3:] {
		if f, ok := field(rest, "failed"); ok {
			if p.Failed, err = integer("progress", f); err != nil {
				return p, err
			}
		}
	}
	return p, nil
}

// pgbenchResult turns one pgbench run into a step result. Throughput is the
// steady state of the progress lines after warmup seconds, else the
// summary's tps; queries/s are transactions/s times the statements of a
// built-in script's transaction. pgbench prints no latency percentile or
// maximum: the interval latency column holds zeros (percentile 0, as
// sysbench's --percentile=0) and latencyMaxMs is the average.
func (o *ImportOptions) pgbenchResult(f parsedFile) (*results.StepResult, error) {
	out := f.pg
	threads := out.Clients
	if threads < 1 {
		threads = f.threads
	}
	if threads < 1 {
		return nil, skipNoThreads.err("")
	}
	if f.threads != 0 && f.threads != out.Clients {
		fmt.Fprintf(o.ErrOut, "warning: %s: name says %d threads, pgbench says %d clients; using %d\n", f.path, f.threads, out.Clients, out.Clients)
	}
	_, perTxn := pgbenchStep(out.Script)
	q := float64(perTxn)
	elapsed := out.DurationSeconds
	if out.TPS > 0 {
		elapsed = float64(out.Processed) / out.TPS
	}
	duration := out.DurationSeconds
	if duration == 0 {
		duration = math.Round(elapsed)
	}
	s := &results.StepResult{Step: f.step, Threads: threads, DurationSeconds: duration, ElapsedSeconds: &elapsed,
		FinalTPS: out.TPS, FinalQPS: out.TPS * q, Transactions: out.Processed, Queries: out.Processed * int64(perTxn),
		SteadyTPS: out.TPS, SteadyQPS: out.TPS * q,
		LatencyAvgMs: out.LatencyAvgMs, LatencyMaxMs: out.LatencyAvgMs, Errors: out.Failed}
	if elapsed > 0 {
		s.ErrorsPerSecond = float64(out.Failed) / elapsed
	}
	if len(out.Progress) == 0 {
		return s, nil
	}
	ivs := make([]sysbench.Interval, len(out.Progress))
	step := out.Progress[0].Second
	if len(out.Progress) > 1 {
		step = out.Progress[1].Second - out.Progress[0].Second
	}
	// --progress-timestamp prints Unix times: count from the run's start.
	shift := 0.0
	if first := out.Progress[0].Second; first > 1e8 {
		shift = first - step
	}
	prev := 0.0
	for i, p := range out.Progress {
		iv := sysbench.Interval{Second: p.Second - shift, Threads: threads, TPS: p.TPS, QPS: p.TPS * q}
		if d := iv.Second - prev; d > 0 {
			iv.ErrorsPerSec = float64(p.Failed) / d
		}
		prev = iv.Second
		ivs[i] = iv
	}
	warm := o.Warmup
	ss, err := sysbench.SteadyStateOf(ivs, warm)
	if errors.Is(err, sysbench.ErrWarmupTooLong) {
		fmt.Fprintf(o.ErrOut, "warning: %s: the %g s warm-up covers the whole series; using every sample\n", f.path, warm)
		warm = 0
		ss, err = sysbench.SteadyStateOf(ivs, 0)
	}
	if err != nil {
		return nil, skipUnreadable.err(err.Error())
	}
	s.SteadyQPS, s.SteadyTPS, s.SteadySamples, s.WarmupSeconds = ss.QPS, ss.TPS, ss.Samples, warm
	if step <= 0 {
		step = 1
	}
	ser := &results.Series{IntervalSeconds: step}
	for _, iv := range ivs {
		ser.QPS = append(ser.QPS, iv.QPS)
		ser.TPS = append(ser.TPS, iv.TPS)
		ser.LatencyMs = append(ser.LatencyMs, 0)
		ser.ErrorsPerSecond = append(ser.ErrorsPerSecond, iv.ErrorsPerSec)
		ser.ReconnectsPerSecond = append(ser.ReconnectsPerSecond, 0)
	}
	s.Series = ser
	sum := results.SummarizeSeries(ser.QPS[ss.Dropped:], step)
	s.Summary = &sum
	return s, nil
}
