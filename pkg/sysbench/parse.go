package sysbench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Output is everything Parse found in one sysbench invocation's output.
type Output struct {
	// Command is the sysbench command line a script echoed before the
	// output (ParseCommand); nil when the file has none.
	Command *Command
	// Version is from the banner line; nil when the banner is absent.
	Version *Version
	// Threads is "Number of threads:" from the run header; 0 when absent.
	Threads int
	// ReportIntervalSeconds is from "Report intermediate results every N
	// second(s)"; 0 when absent (no interval lines are then expected).
	ReportIntervalSeconds int
	// Prepared lists the tables `prepare` filled, in order.
	Prepared []PreparedTable
	// Intervals are the --report-interval lines in order.
	Intervals []Interval
	// Final is the end-of-run report; nil when the output has none (prepare,
	// cleanup, or a run that was killed).
	Final *Report
	// Warnings are lines that start with "WARNING:", kept for the record.
	Warnings []Line
	// RepeatedIntervals are interval lines left out of Intervals because
	// they carry the same second as the line before. sysbench 1.0.20
	// labels a report with its elapsed time rounded to the second; when its
	// report thread wakes late (a stall, a machine short of CPU), two
	// consecutive reports can carry the same label (seen twice in about 80
	// runs on a loaded 2-core machine). The first is kept, so Intervals'
	// seconds strictly increase, as SteadyStateOf requires. An interval
	// whose second goes back is an error, not a repeat.
	RepeatedIntervals []Line
	// Histogram is the latency histogram of the whole run (--histogram=on);
	// nil when sysbench printed none.
	Histogram *Histogram
	// Queue are the --rate queue reports in order, one per interval (a
	// repeated second is left out, as for Intervals); nil without --rate.
	Queue []QueueSample
	// QueueFull is true when sysbench stopped a --rate run because its
	// event queue overflowed (a FATAL line, QueueFullText): the server fell
	// so far behind the rate that 131072 events waited at once.
	QueueFull bool
}

// PreparedTable is one "Inserting N records into 'sbtestK'" of `prepare`.
type PreparedTable struct {
	Table string
	Rows  int64
	// SecondaryIndex is true when "Creating a secondary index on ..." followed.
	SecondaryIndex bool
}

// Layout says which final-report layout was printed.
type Layout string

const (
	// LayoutGeneral is sysbench 1.0's "General statistics:" / "total time:".
	LayoutGeneral Layout = "general-statistics"
	// LayoutThroughput is sysbench 1.1's "Throughput:" / "events/s (eps):" /
	// "time elapsed:".
	LayoutThroughput Layout = "throughput"
)

// Report is the final report block. Counters are as printed; per-second
// values are sysbench's (whole run, warm-up included).
type Report struct {
	Layout Layout
	// SQL is the "SQL statistics:" section; nil for non-database tests.
	SQL *SQLStatistics
	// TotalTimeSeconds is "total time:" (1.0) or "time elapsed:" (1.1).
	TotalTimeSeconds float64
	// TotalEvents is "total number of events:".
	TotalEvents int64
	// EventsPerSec is "events/s (eps):" as printed by 1.1; for 1.0, which
	// does not print it, TotalEvents / TotalTimeSeconds.
	EventsPerSec float64
	Latency      Latency
	// Fairness is "Threads fairness:"; nil when absent.
	Fairness *Fairness
}

// SQLStatistics is the "SQL statistics:" section.
type SQLStatistics struct {
	// Read, Write, Other and Total are the "queries performed:" counters.
	Read, Write, Other, Total int64
	// Transactions and TransactionsPerSec are "transactions: N (X per sec.)".
	Transactions       int64
	TransactionsPerSec float64
	// Queries and QueriesPerSec are "queries: N (X per sec.)". QueriesPerSec
	// is the reference QPS of the published studies.
	Queries       int64
	QueriesPerSec float64
	// IgnoredErrors are errors sysbench retried (--mysql-ignore-errors).
	IgnoredErrors       int64
	IgnoredErrorsPerSec float64
	Reconnects          int64
	ReconnectsPerSec    float64
}

// Latency is the "Latency (ms):" section, in milliseconds.
type Latency struct {
	MinMs, AvgMs, MaxMs, SumMs float64
	// Percentiles holds every "Nth percentile:" line (95, 99, 99.9 ...); nil
	// when sysbench printed "percentile stats: disabled".
	Percentiles []Percentile
}

// Percentile is one latency percentile line.
type Percentile struct {
	Percent float64 // 95 for "95th percentile:", 99.9 for "999th" (1.1)
	Ms      float64
}

// Get returns the latency at percent and whether it was printed.
func (l Latency) Get(percent float64) (float64, bool) {
	for _, p := range l.Percentiles {
		if p.Percent == percent {
			return p.Ms, true
		}
	}
	return 0, false
}

// Fairness is the "Threads fairness:" section: how evenly the threads got
// work. A large stddev means some threads starved (lock waits, a hot row).
type Fairness struct {
	EventsAvg, EventsStddev               float64
	ExecTimeAvgSeconds, ExecTimeStddevSec float64
}

// maxLine bounds one line; sysbench lines are short, and a Lua script that
// prints a megabyte in one line is not a report.
const maxLine = 1 << 20

// section is where we are in the final report.
type section int

const (
	secNone section = iota
	secSQL
	secQueriesPerformed
	secGeneral
	secLatency
	secFairness
	secOther // a section we do not read ("CPU speed:", "File operations:")
)

// Parse reads sysbench output (stdout, or stdout and stderr together) and
// returns what it found. On a `FATAL:` line it still reads to the end, then
// returns the partial Output with a *FatalError carrying every FATAL line. On
// a line it recognises but cannot read it returns a *ParseError naming it.
func Parse(r io.Reader) (*Output, error) {
	p := &parser{out: &Output{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	n := 0
	for sc.Scan() {
		n++
		if err := p.line(n, strings.TrimRight(sc.Text(), "\r")); err != nil {
			return p.out, err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return p.out, &ParseError{Line: n + 1, Reason: fmt.Sprintf("line longer than %d bytes", maxLine)}
		}
		return p.out, fmt.Errorf("reading sysbench output: %w", err)
	}
	if err := p.finish(); err != nil {
		return p.out, err
	}
	if len(p.fatal) > 0 {
		return p.out, &FatalError{Lines: p.fatal}
	}
	return p.out, nil
}

// ParseString is Parse for output already in memory.
func ParseString(s string) (*Output, error) { return Parse(strings.NewReader(s)) }

type parser struct {
	out   *Output
	fatal []Line
	sec   section
	// seen records which final-report keys appeared, to detect a report cut
	// short and keys printed twice.
	seen map[string]int
	// lastReportLine is the last line that belonged to the final report.
	lastReportLine int
	// inHistogram is true from the histogram's title to its first line
	// that is not a row.
	inHistogram bool
}

func (p *parser) line(n int, raw string) error {
	t := strings.TrimSpace(raw)
	if t == "" {
		return nil
	}
	bad := func(format string, a ...any) error {
		return &ParseError{Line: n, Text: raw, Reason: fmt.Sprintf(format, a...)}
	}
	if p.inHistogram {
		b, ok, err := parseHistogramRow(t)
		switch {
		case err != nil:
			return bad("%v", err)
		case ok:
			p.out.Histogram.Buckets = append(p.out.Histogram.Buckets, b)
			return nil
		case strings.Contains(t, "distribution"):
			return nil // the column header
		}
		p.inHistogram = false
	}
	if p.out.Command == nil && p.out.Version == nil && len(p.out.Intervals) == 0 && p.out.Final == nil && strings.Contains(t, "sysbench") {
		if c, ok := ParseCommand(n, raw); ok {
			p.out.Command = c
			return nil
		}
	}
	switch {
	case t == HistogramTitle:
		if p.out.Histogram != nil {
			return bad("a second latency histogram in one output")
		}
		p.out.Histogram = &Histogram{}
		p.inHistogram = true
		return nil
	case strings.HasPrefix(t, "FATAL:"):
		p.fatal = append(p.fatal, Line{n, raw})
		p.out.QueueFull = p.out.QueueFull || strings.Contains(t, QueueFullText)
		return nil
	case strings.HasPrefix(t, "WARNING:"):
		p.out.Warnings = append(p.out.Warnings, Line{n, raw})
		return nil
	case strings.HasPrefix(t, "sysbench ") && p.out.Version == nil && len(p.out.Intervals) == 0 && p.out.Final == nil:
		v, err := parseVersionLine(t)
		if err != nil {
			return bad("%v", err)
		}
		p.out.Version = &v
		return nil
	}
	if sec, body, ok := isIntervalLine(t); ok {
		if strings.HasPrefix(body, queuePrefix) {
			// The --rate queue report that follows each throughput line.
			q, err := parseQueueLine(sec, body)
			if err != nil {
				return bad("%v", err)
			}
			if k := len(p.out.Queue); k == 0 || q.Second > p.out.Queue[k-1].Second {
				p.out.Queue = append(p.out.Queue, q)
			}
			return nil
		}
		iv, err := ParseInterval(t)
		if err != nil {
			return bad("interval line: %v", err)
		}
		if k := len(p.out.Intervals); k > 0 && iv.Second == p.out.Intervals[k-1].Second {
			p.out.RepeatedIntervals = append(p.out.RepeatedIntervals, Line{n, raw})
			return nil
		}
		if k := len(p.out.Intervals); k > 0 && iv.Second < p.out.Intervals[k-1].Second {
			return bad("interval at %gs does not come after %gs", iv.Second, p.out.Intervals[k-1].Second)
		}
		p.out.Intervals = append(p.out.Intervals, iv)
		return nil
	}
	key, val, hasColon := strings.Cut(t, ":")
	key = strings.TrimSpace(key)
	val = strings.TrimSpace(val)

	// Header and prepare lines.
	switch {
	case key == "Number of threads" && hasColon && p.out.Final == nil:
		v, err := strconv.Atoi(val)
		if err != nil || v < 0 {
			return bad("number of threads: not a number")
		}
		p.out.Threads = v
		return nil
	case strings.HasPrefix(t, "Report intermediate results every "):
		f := strings.Fields(strings.TrimPrefix(t, "Report intermediate results every "))
		if len(f) == 0 {
			return bad("report interval: value missing")
		}
		v, err := strconv.Atoi(f[0])
		if err != nil || v < 0 {
			return bad("report interval: %q is not a number", f[0])
		}
		p.out.ReportIntervalSeconds = v
		return nil
	case strings.HasPrefix(t, "Inserting ") && strings.Contains(t, " records into "):
		f := strings.Fields(t)
		if len(f) < 5 {
			return bad("prepare: expected \"Inserting N records into 'table'\"")
		}
		rows, err := parseCount(f[1])
		if err != nil {
			return bad("prepare: row count %q: %v", f[1], err)
		}
		p.out.Prepared = append(p.out.Prepared, PreparedTable{Table: strings.Trim(f[4], "'`\""), Rows: rows})
		return nil
	case strings.HasPrefix(t, "Creating a secondary index on "):
		table := strings.Trim(strings.TrimSuffix(strings.TrimPrefix(t, "Creating a secondary index on "), "..."), "'`\"")
		for i := range p.out.Prepared {
			if p.out.Prepared[i].Table == table {
				p.out.Prepared[i].SecondaryIndex = true
			}
		}
		return nil
	}
	if !hasColon {
		return nil
	}

	// Section anchors of the final report.
	if val == "" {
		switch key {
		case "SQL statistics":
			return p.enter(n, secSQL)
		case "queries performed":
			if p.sec == secSQL {
				p.sec = secQueriesPerformed
			}
			return nil
		case "General statistics":
			if err := p.enter(n, secGeneral); err != nil {
				return err
			}
			return p.setLayout(n, raw, LayoutGeneral)
		case "Throughput":
			if err := p.enter(n, secGeneral); err != nil {
				return err
			}
			return p.setLayout(n, raw, LayoutThroughput)
		case "Latency (ms)":
			return p.enter(n, secLatency)
		case "Threads fairness":
			return p.enter(n, secFairness)
		}
		if p.out.Final != nil {
			p.sec = secOther // e.g. "CPU speed:", "File operations:" in non-SQL tests
		}
		return nil
	}
	if p.out.Final == nil || p.sec == secNone || p.sec == secOther {
		return nil
	}
	return p.reportValue(n, raw, key, val)
}

func (p *parser) enter(n int, s section) error {
	if p.out.Final == nil {
		p.out.Final = &Report{}
		p.seen = map[string]int{}
	}
	p.sec = s
	p.lastReportLine = n
	return nil
}

func (p *parser) setLayout(n int, raw string, l Layout) error {
	if p.out.Final.Layout != "" && p.out.Final.Layout != l {
		return &ParseError{Line: n, Text: raw, Reason: fmt.Sprintf("both %q and %q layouts in one report", p.out.Final.Layout, l)}
	}
	p.out.Final.Layout = l
	return nil
}

// reportValue reads one "key: value" line inside a final-report section.
func (p *parser) reportValue(n int, raw, key, val string) error {
	bad := func(format string, a ...any) error {
		return &ParseError{Line: n, Text: raw, Reason: fmt.Sprintf(format, a...)}
	}
	rep := p.out.Final
	sql := func() *SQLStatistics {
		if rep.SQL == nil {
			rep.SQL = &SQLStatistics{}
		}
		return rep.SQL
	}
	if p.sec == secQueriesPerformed {
		switch key {
		case "read", "write", "other", "total":
		default:
			p.sec = secSQL // the indented "queries performed:" list ended
		}
	}
	id := fmt.Sprint(p.sec) + "/" + key
	if prev, dup := p.seen[id]; dup {
		return bad("%q printed twice (first on line %d): two reports in one output?", key, prev)
	}
	p.seen[id] = n
	p.lastReportLine = n

	count := func(dst *int64) error {
		v, err := parseCount(val)
		if err != nil {
			return bad("%s: %v", key, err)
		}
		*dst = v
		return nil
	}
	number := func(dst *float64, suffix string) error {
		v, err := parseFloat(strings.TrimSuffix(val, suffix))
		if err != nil {
			return bad("%s: %v", key, err)
		}
		*dst = v
		return nil
	}
	// "N (X per sec.)"
	countRate := func(c *int64, r *float64) error {
		f := strings.Fields(val)
		if len(f) != 4 || !strings.HasPrefix(f[1], "(") || f[2] != "per" || f[3] != "sec.)" {
			return bad("%s: expected \"N (X per sec.)\"", key)
		}
		v, err := parseCount(f[0])
		if err != nil {
			return bad("%s: count %q: %v", key, f[0], err)
		}
		x, err := parseFloat(strings.TrimPrefix(f[1], "("))
		if err != nil {
			return bad("%s: rate %q: %v", key, f[1], err)
		}
		*c, *r = v, x
		return nil
	}
	// "a/b"
	pair := func(a, b *float64) error {
		x, y, ok := strings.Cut(val, "/")
		if !ok {
			return bad("%s: expected \"avg/stddev\"", key)
		}
		var err error
		if *a, err = parseFloat(x); err != nil {
			return bad("%s: %q: %v", key, x, err)
		}
		if *b, err = parseFloat(y); err != nil {
			return bad("%s: %q: %v", key, y, err)
		}
		return nil
	}

	switch p.sec {
	case secQueriesPerformed, secSQL:
		switch key {
		case "read":
			return count(&sql().Read)
		case "write":
			return count(&sql().Write)
		case "other":
			return count(&sql().Other)
		case "total":
			return count(&sql().Total)
		}
		switch key {
		case "transactions":
			return countRate(&sql().Transactions, &sql().TransactionsPerSec)
		case "queries":
			return countRate(&sql().Queries, &sql().QueriesPerSec)
		case "ignored errors":
			return countRate(&sql().IgnoredErrors, &sql().IgnoredErrorsPerSec)
		case "reconnects":
			return countRate(&sql().Reconnects, &sql().ReconnectsPerSec)
		}
	case secGeneral:
		switch key {
		case "total time", "time elapsed":
			return number(&rep.TotalTimeSeconds, "s")
		case "total number of events":
			return count(&rep.TotalEvents)
		case "events/s (eps)":
			return number(&rep.EventsPerSec, "")
		}
	case secLatency:
		switch key {
		case "min":
			return number(&rep.Latency.MinMs, "")
		case "avg":
			return number(&rep.Latency.AvgMs, "")
		case "max":
			return number(&rep.Latency.MaxMs, "")
		case "sum":
			return number(&rep.Latency.SumMs, "")
		case "percentile stats":
			return nil // "disabled"
		}
		if pct, ok := strings.CutSuffix(key, " percentile"); ok {
			percent, err := percentileName(pct)
			if err != nil {
				return bad("%v", err)
			}
			var ms float64
			if err := number(&ms, ""); err != nil {
				return err
			}
			rep.Latency.Percentiles = append(rep.Latency.Percentiles, Percentile{Percent: percent, Ms: ms})
			return nil
		}
	case secFairness:
		if rep.Fairness == nil {
			rep.Fairness = &Fairness{}
		}
		switch key {
		case "events (avg/stddev)":
			return pair(&rep.Fairness.EventsAvg, &rep.Fairness.EventsStddev)
		case "execution time (avg/stddev)":
			return pair(&rep.Fairness.ExecTimeAvgSeconds, &rep.Fairness.ExecTimeStddevSec)
		}
	}
	return nil // a key this parser does not need
}

// percentileName reads "95th", "99th", "999th" (99.9, as 1.1 names it), "50th".
func percentileName(s string) (float64, error) {
	digits := strings.TrimRight(s, "thsndr") // 95th, 1st, 2nd, 3rd
	if digits == "" || len(digits) > 9 {
		return 0, fmt.Errorf("percentile %q: not a number", s)
	}
	v, err := strconv.Atoi(digits)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("percentile %q: not a number", s)
	}
	f := float64(v)
	for f > 100 { // 999th is 99.9, 9999th is 99.99
		f /= 10
	}
	return f, nil
}

// finish checks that a final report, if one started, is complete enough to
// trust: a report cut off after "SQL statistics:" would otherwise look like
// a run with zero latency.
func (p *parser) finish() error {
	rep := p.out.Final
	if rep == nil {
		return nil
	}
	var missing []string
	need := func(sec section, key string) {
		if _, ok := p.seen[fmt.Sprint(sec)+"/"+key]; !ok {
			missing = append(missing, strconv.Quote(key))
		}
	}
	if rep.SQL != nil {
		// "transactions" and "queries" are read while in secSQL.
		need(secSQL, "transactions")
		need(secSQL, "queries")
	}
	switch rep.Layout {
	case LayoutGeneral:
		need(secGeneral, "total time")
	case LayoutThroughput:
		need(secGeneral, "time elapsed")
	default:
		missing = append(missing, `"General statistics:" or "Throughput:"`)
	}
	need(secGeneral, "total number of events")
	need(secLatency, "avg")
	need(secLatency, "max")
	if len(missing) > 0 {
		return &ParseError{Reason: fmt.Sprintf("final report ends after line %d without %s (output cut short?)", p.lastReportLine, strings.Join(missing, ", "))}
	}
	if rep.Layout == LayoutGeneral && rep.TotalTimeSeconds > 0 {
		rep.EventsPerSec = float64(rep.TotalEvents) / rep.TotalTimeSeconds
	}
	return nil
}
