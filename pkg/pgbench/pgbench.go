// Package pgbench reads the output of PostgreSQL's pgbench (15 and later):
// its per-second progress lines (-P 1) and its closing summary, and turns
// them into the shape the agent reads sysbench's in (sysbench.Output), so
// that a pgbench step's series, steady state, quality gate and reports are
// the same code as a sysbench step's.
package pgbench

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/dbbench/dbbench/pkg/sysbench"
)

// Output is what one pgbench run printed.
type Output struct {
	// Version is pgbench's first line ("15.18 (Debian 15.18-0+deb12u1)").
	Version string
	// Script is the transaction type: "TPC-B (sort of)", "select only",
	// "simple update" for the built-ins (<builtin: …>), else the file.
	Script string
	// Scale, Clients and Threads are the summary's "scaling factor",
	// "number of clients" and "number of threads"; DurationSeconds its
	// configured "duration" (-T).
	Scale, Clients, Threads int
	DurationSeconds         float64
	// Progress are the -P lines in order.
	Progress []Progress
	// Summary is nil when pgbench printed none (it failed).
	Summary *Summary
	// Errors are the "pgbench: error:" and "pgbench: fatal:" lines.
	Errors []string
}

// Progress is one -P line: "progress: 2.0 s, 4276.3 tps, lat 0.467 ms
// stddev 0.474, 0 failed". Second is the time since the run started at the
// end of the interval; a line after the client did not run covers more than
// one interval (pgbench prints it late, at its own time).
type Progress struct {
	Second, TPS, LatencyMs, StddevMs float64
	Failed                           int64
}

// Summary is the closing report.
type Summary struct {
	Transactions, Failed int64
	// LatencyAvgMs and LatencyStddevMs are over every transaction;
	// ConnectMs the initial connection time; TPS excludes it.
	LatencyAvgMs, LatencyStddevMs, ConnectMs, TPS float64
	// Extremes are the run's smallest and largest latency, which the
	// summary does not print: from the aggregated logs, nil without them.
	Extremes *Extremes
}

var (
	progressLine = regexp.MustCompile(`^progress: ([\d.]+) s, ([\d.]+) tps, lat ([\d.]+) ms stddev ([\d.]+|NaN)(?:, (\d+) failed)?`)
	summaryLine  = regexp.MustCompile(`^([a-z][a-z ()-]*?)\s*[:=]\s*(.*)$`)
	leadingNum   = regexp.MustCompile(`^[\d.]+`)
)

// Parse reads pgbench's output (stdout and stderr together).
func Parse(r io.Reader) (*Output, error) {
	out := &Output{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if err := out.line(line); err != nil {
			return out, fmt.Errorf("pgbench output line %d %q: %w", n, line, err)
		}
	}
	return out, sc.Err()
}

// ParseString is Parse of a string.
func ParseString(s string) (*Output, error) { return Parse(strings.NewReader(s)) }

func (o *Output) line(line string) error {
	switch {
	case strings.HasPrefix(line, "pgbench ("):
		o.Version = strings.TrimSuffix(strings.TrimPrefix(line, "pgbench ("), ")")
		return nil
	case strings.HasPrefix(line, "pgbench: error:"), strings.HasPrefix(line, "pgbench: fatal:"):
		o.Errors = append(o.Errors, line)
		return nil
	case strings.HasPrefix(line, "progress: "):
		return o.progress(line)
	}
	m := summaryLine.FindStringSubmatch(line)
	if m == nil {
		return nil // banners, NOTICEs, the -i steps
	}
	return o.summary(m[1], m[2])
}

func (o *Output) progress(line string) error {
	m := progressLine.FindStringSubmatch(line)
	if m == nil {
		return fmt.Errorf("a progress line of an unknown form")
	}
	var p Progress
	var err error
	for i, dst := range []*float64{&p.Second, &p.TPS, &p.LatencyMs, &p.StddevMs} {
		if m[i+1] == "NaN" {
			continue
		}
		if *dst, err = strconv.ParseFloat(m[i+1], 64); err != nil {
			return err
		}
	}
	if m[5] != "" {
		if p.Failed, err = strconv.ParseInt(m[5], 10, 64); err != nil {
			return err
		}
	}
	o.Progress = append(o.Progress, p)
	return nil
}

// summary reads one "key: value" or "key = value" line of the summary.
func (o *Output) summary(key, value string) error {
	num := func() (float64, error) { return strconv.ParseFloat(leadingNum.FindString(value), 64) }
	s := o.Summary
	if s == nil {
		s = &Summary{}
	}
	var err error
	var v float64
	switch key {
	case "transaction type":
		o.Script = strings.TrimSuffix(strings.TrimPrefix(value, "<builtin: "), ">")
		return nil
	case "scaling factor", "number of clients", "number of threads", "duration":
		if v, err = num(); err != nil {
			return err
		}
		switch key {
		case "scaling factor":
			o.Scale = int(v)
		case "number of clients":
			o.Clients = int(v)
		case "number of threads":
			o.Threads = int(v)
		default:
			o.DurationSeconds = v
		}
		return nil
	case "number of transactions actually processed":
		v, err = num()
		s.Transactions = int64(v)
	case "number of failed transactions":
		v, err = num()
		s.Failed = int64(v)
	case "latency average":
		s.LatencyAvgMs, err = num()
	case "latency stddev":
		s.LatencyStddevMs, err = num()
	case "initial connection time":
		s.ConnectMs, err = num()
	case "tps":
		s.TPS, err = num()
	default:
		return nil // query mode, maximum number of tries, ...
	}
	o.Summary = s
	return err
}

// StatementsPerTransaction is the SQL statements of one transaction of a
// built-in script, BEGIN and END included as sysbench counts them; 0 for
// a script pgbench does not build in.
func StatementsPerTransaction(script string) int {
	switch script {
	case "TPC-B (sort of)":
		return 7 // BEGIN, UPDATE accounts, SELECT, UPDATE tellers, UPDATE branches, INSERT history, END
	case "simple update":
		return 5 // BEGIN, UPDATE accounts, SELECT, INSERT history, END
	case "select only":
		return 1
	}
	return 0
}

// Sysbench is the output in sysbench's shape, for the agent's reading of
// a step: each progress line an interval (QPS = TPS × the script's
// statements per transaction; the latency is the interval's mean, not a
// percentile: LatencyPercentile 0), the summary the final report (its
// time the transactions over the TPS, which leaves out the connection
// time as pgbench's TPS does; its minimum and maximum latency the
// Extremes, when read). statements is used for a script pgbench does not
// build in (0: QPS equals TPS).
func (o *Output) Sysbench(statements int) *sysbench.Output {
	if n := StatementsPerTransaction(o.Script); n > 0 {
		statements = n
	}
	statements = max(statements, 1)
	out := &sysbench.Output{Threads: o.Clients, ReportIntervalSeconds: 1}
	for _, p := range o.Progress {
		out.Intervals = append(out.Intervals, sysbench.Interval{Second: p.Second, Threads: o.Clients, TPS: p.TPS,
			QPS: p.TPS * float64(statements), LatencyMs: p.LatencyMs})
	}
	if s := o.Summary; s != nil {
		elapsed := o.DurationSeconds
		if s.TPS > 0 {
			elapsed = float64(s.Transactions) / s.TPS
		}
		out.Final = &sysbench.Report{Layout: sysbench.LayoutGeneral, TotalTimeSeconds: elapsed, TotalEvents: s.Transactions,
			EventsPerSec: s.TPS, Latency: sysbench.Latency{AvgMs: s.LatencyAvgMs},
			SQL: &sysbench.SQLStatistics{Transactions: s.Transactions, TransactionsPerSec: s.TPS,
				Queries: s.Transactions * int64(statements), QueriesPerSec: s.TPS * float64(statements)}}
		if x := s.Extremes; x != nil {
			out.Final.Latency.MinMs, out.Final.Latency.MaxMs = x.MinMs, x.MaxMs
		}
	}
	return out
}

// Extremes are the smallest and largest transaction latency of a run, in
// milliseconds, and the transactions they are over, from pgbench's
// aggregated logs (--log --aggregate-interval).
type Extremes struct {
	MinMs, MaxMs float64
	Transactions int64
}

// ReadAggregateLog adds one aggregated log (a pgbench thread's file) to e:
// each line is interval start, transactions, latency sum, sum of squares,
// min and max in microseconds, then lag and failure columns. A line of an
// interval without transactions has no latency and is skipped.
func (e *Extremes) ReadAggregateLog(r io.Reader) error {
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 6 {
			return fmt.Errorf("pgbench aggregated log line %d: %d fields, want at least 6", n, len(f))
		}
		var v [3]float64
		for i, col := range []int{1, 4, 5} {
			x, err := strconv.ParseFloat(f[col], 64)
			if err != nil {
				return fmt.Errorf("pgbench aggregated log line %d field %d: %w", n, col+1, err)
			}
			v[i] = x
		}
		if v[0] <= 0 {
			continue
		}
		minMs, maxMs := v[1]/1000, v[2]/1000
		if e.Transactions == 0 || minMs < e.MinMs {
			e.MinMs = minMs
		}
		e.MaxMs = max(e.MaxMs, maxMs)
		e.Transactions += int64(v[0])
	}
	return sc.Err()
}
