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

// line reads one line of output. A line is tried as each kind in turn,
// the order deciding between forms that overlap (a banner and a command
// both mention "sysbench"; a header line has a colon, as report values do).
func (p *parser) line(n int, raw string) error {
	t := strings.TrimSpace(raw)
	if t == "" {
		return nil
	}
	for _, read := range []func(n int, raw, t string) (bool, error){
		p.histogramRow, p.markerLine, p.intervalLine, p.headerLine,
	} {
		if done, err := read(n, raw, t); done || err != nil {
			return err
		}
	}
	key, val, hasColon := strings.Cut(t, ":")
	if !hasColon {
		return nil
	}
	key, val = strings.TrimSpace(key), strings.TrimSpace(val)
	if val == "" {
		return p.anchor(n, raw, key)
	}
	if p.out.Final == nil || p.sec == secNone || p.sec == secOther {
		return nil
	}
	return p.reportValue(n, raw, key, val)
}

// badLine is the error of line n, which the parser recognised but could
// not read.
func badLine(n int, raw, format string, a ...any) error {
	return &ParseError{Line: n, Text: raw, Reason: fmt.Sprintf(format, a...)}
}

// histogramRow reads a row of the latency histogram while one is open. The
// histogram has no end marker: its first line that is not a row closes it
// and is read as any other line.
func (p *parser) histogramRow(n int, raw, t string) (bool, error) {
	if !p.inHistogram {
		return false, nil
	}
	b, ok, err := parseHistogramRow(t)
	switch {
	case err != nil:
		return true, badLine(n, raw, "%v", err)
	case ok:
		p.out.Histogram.Buckets = append(p.out.Histogram.Buckets, b)
		return true, nil
	case strings.Contains(t, "distribution"):
		return true, nil // the column header
	}
	p.inHistogram = false
	return false, nil
}

// markerLine reads the lines recognised by their start alone: the command
// a script echoed and the banner (both only before any result), the
// histogram's title, FATAL and WARNING lines.
func (p *parser) markerLine(n int, raw, t string) (bool, error) {
	beforeResults := p.out.Version == nil && len(p.out.Intervals) == 0 && p.out.Final == nil
	if beforeResults && p.out.Command == nil && strings.Contains(t, "sysbench") {
		if c, ok := ParseCommand(n, raw); ok {
			p.out.Command = c
			return true, nil
		}
	}
	switch {
	case t == HistogramTitle:
		if p.out.Histogram != nil {
			return true, badLine(n, raw, "a second latency histogram in one output")
		}
		p.out.Histogram = &Histogram{}
		p.inHistogram = true
		return true, nil
	case strings.HasPrefix(t, "FATAL:"):
		p.fatal = append(p.fatal, Line{n, raw})
		p.out.QueueFull = p.out.QueueFull || strings.Contains(t, QueueFullText)
		return true, nil
	case strings.HasPrefix(t, "WARNING:"):
		p.out.Warnings = append(p.out.Warnings, Line{n, raw})
		return true, nil
	case strings.HasPrefix(t, "sysbench ") && beforeResults:
		v, err := parseVersionLine(t)
		if err != nil {
			return true, badLine(n, raw, "%v", err)
		}
		p.out.Version = &v
		return true, nil
	}
	return false, nil
}

// intervalLine reads a --report-interval line, or the --rate queue report
// that follows each. A repeated second is kept aside rather than failing
// the output (Output.RepeatedIntervals says why sysbench prints one).
func (p *parser) intervalLine(n int, raw, t string) (bool, error) {
	sec, body, ok := isIntervalLine(t)
	if !ok {
		return false, nil
	}
	if strings.HasPrefix(body, queuePrefix) {
		q, err := parseQueueLine(sec, body)
		if err != nil {
			return true, badLine(n, raw, "%v", err)
		}
		if k := len(p.out.Queue); k == 0 || q.Second > p.out.Queue[k-1].Second {
			p.out.Queue = append(p.out.Queue, q)
		}
		return true, nil
	}
	iv, err := ParseInterval(t)
	if err != nil {
		return true, badLine(n, raw, "interval line: %v", err)
	}
	if k := len(p.out.Intervals); k > 0 && iv.Second == p.out.Intervals[k-1].Second {
		p.out.RepeatedIntervals = append(p.out.RepeatedIntervals, Line{n, raw})
		return true, nil
	}
	if k := len(p.out.Intervals); k > 0 && iv.Second < p.out.Intervals[k-1].Second {
		return true, badLine(n, raw, "interval at %gs does not come after %gs", iv.Second, p.out.Intervals[k-1].Second)
	}
	p.out.Intervals = append(p.out.Intervals, iv)
	return true, nil
}

// headerLine reads the run's header (threads, report interval) and what
// `prepare` prints. "Number of threads:" is only the header's before the
// final report, whose sections have keys of their own.
func (p *parser) headerLine(n int, raw, t string) (bool, error) {
	key, val, hasColon := strings.Cut(t, ":")
	key, val = strings.TrimSpace(key), strings.TrimSpace(val)
	switch {
	case key == "Number of threads" && hasColon && p.out.Final == nil:
		v, err := strconv.Atoi(val)
		if err != nil || v < 0 {
			return true, badLine(n, raw, "number of threads: not a number")
		}
		p.out.Threads = v
		return true, nil
	case strings.HasPrefix(t, "Report intermediate results every "):
		f := strings.Fields(strings.TrimPrefix(t, "Report intermediate results every "))
		if len(f) == 0 {
			return true, badLine(n, raw, "report interval: value missing")
		}
		v, err := strconv.Atoi(f[0])
		if err != nil || v < 0 {
			return true, badLine(n, raw, "report interval: %q is not a number", f[0])
		}
		p.out.ReportIntervalSeconds = v
		return true, nil
	case strings.HasPrefix(t, "Inserting ") && strings.Contains(t, " records into "):
		f := strings.Fields(t)
		if len(f) < 5 {
			return true, badLine(n, raw, "prepare: expected \"Inserting N records into 'table'\"")
		}
		rows, err := parseCount(f[1])
		if err != nil {
			return true, badLine(n, raw, "prepare: row count %q: %v", f[1], err)
		}
		p.out.Prepared = append(p.out.Prepared, PreparedTable{Table: strings.Trim(f[4], "'`\""), Rows: rows})
		return true, nil
	case strings.HasPrefix(t, "Creating a secondary index on "):
		table := strings.Trim(strings.TrimSuffix(strings.TrimPrefix(t, "Creating a secondary index on "), "..."), "'`\"")
		for i := range p.out.Prepared {
			if p.out.Prepared[i].Table == table {
				p.out.Prepared[i].SecondaryIndex = true
			}
		}
		return true, nil
	}
	return false, nil
}

// anchor reads a "key:" line without a value: the title of a final-report
// section. Once the report started, a title it does not know opens a
// section whose values are skipped ("CPU speed:" of non-SQL tests).
func (p *parser) anchor(n int, raw, key string) error {
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
		p.sec = secOther
	}
	return nil
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
	if p.sec == secQueriesPerformed {
		switch key {
		case "read", "write", "other", "total":
		default:
			p.sec = secSQL // the indented "queries performed:" list ended
		}
	}
	// A key seen twice in one section means two reports were printed into
	// one output: their values would mix.
	id := fmt.Sprint(p.sec) + "/" + key
	if prev, dup := p.seen[id]; dup {
		return badLine(n, raw, "%q printed twice (first on line %d): two reports in one output?", key, prev)
	}
	p.seen[id] = n
	p.lastReportLine = n

	f := reportField{n: n, raw: raw, key: key, val: val}
	rep := p.out.Final
	switch p.sec {
	case secQueriesPerformed, secSQL:
		return rep.sqlValue(f)
	case secGeneral:
		return rep.generalValue(f)
	case secLatency:
		return rep.latencyValue(f)
	case secFairness:
		return rep.fairnessValue(f)
	}
	return nil
}

// reportField is one "key: value" line of the final report, with the forms
// its values take.
type reportField struct {
	n             int
	raw, key, val string
}

func (f reportField) bad(format string, a ...any) error {
	return badLine(f.n, f.raw, format, a...)
}

// count reads "N".
func (f reportField) count(dst *int64) error {
	v, err := parseCount(f.val)
	if err != nil {
		return f.bad("%s: %v", f.key, err)
	}
	*dst = v
	return nil
}

// number reads "X" with an optional unit suffix ("10.0012s").
func (f reportField) number(dst *float64, suffix string) error {
	v, err := parseFloat(strings.TrimSuffix(f.val, suffix))
	if err != nil {
		return f.bad("%s: %v", f.key, err)
	}
	*dst = v
	return nil
}

// countRate reads "N (X per sec.)".
func (f reportField) countRate(c *int64, r *float64) error {
	fs := strings.Fields(f.val)
	if len(fs) != 4 || !strings.HasPrefix(fs[1], "(") || fs[2] != "per" || fs[3] != "sec.)" {
		return f.bad("%s: expected \"N (X per sec.)\"", f.key)
	}
	v, err := parseCount(fs[0])
	if err != nil {
		return f.bad("%s: count %q: %v", f.key, fs[0], err)
	}
	x, err := parseFloat(strings.TrimPrefix(fs[1], "("))
	if err != nil {
		return f.bad("%s: rate %q: %v", f.key, fs[1], err)
	}
	*c, *r = v, x
	return nil
}

// pair reads "a/b".
func (f reportField) pair(a, b *float64) error {
	x, y, ok := strings.Cut(f.val, "/")
	if !ok {
		return f.bad("%s: expected \"avg/stddev\"", f.key)
	}
	var err error
	if *a, err = parseFloat(x); err != nil {
		return f.bad("%s: %q: %v", f.key, x, err)
	}
	if *b, err = parseFloat(y); err != nil {
		return f.bad("%s: %q: %v", f.key, y, err)
	}
	return nil
}

// sql is the report's SQL statistics, made on their first value: a report
// without any (a non-database test) keeps SQL nil.
func (r *Report) sql() *SQLStatistics {
	if r.SQL == nil {
		r.SQL = &SQLStatistics{}
	}
	return r.SQL
}

// sqlValue reads a value of "SQL statistics:", the "queries performed:"
// counters included.
func (r *Report) sqlValue(f reportField) error {
	switch f.key {
	case "read":
		return f.count(&r.sql().Read)
	case "write":
		return f.count(&r.sql().Write)
	case "other":
		return f.count(&r.sql().Other)
	case "total":
		return f.count(&r.sql().Total)
	case "transactions":
		return f.countRate(&r.sql().Transactions, &r.sql().TransactionsPerSec)
	case "queries":
		return f.countRate(&r.sql().Queries, &r.sql().QueriesPerSec)
	case "ignored errors":
		return f.countRate(&r.sql().IgnoredErrors, &r.sql().IgnoredErrorsPerSec)
	case "reconnects":
		return f.countRate(&r.sql().Reconnects, &r.sql().ReconnectsPerSec)
	}
	return nil // a key this parser does not need
}

// generalValue reads a value of "General statistics:" (1.0) or
// "Throughput:" (1.1), which name the run's length differently.
func (r *Report) generalValue(f reportField) error {
	switch f.key {
	case "total time", "time elapsed":
		return f.number(&r.TotalTimeSeconds, "s")
	case "total number of events":
		return f.count(&r.TotalEvents)
	case "events/s (eps)":
		return f.number(&r.EventsPerSec, "")
	}
	return nil
}

// latencyValue reads a value of "Latency (ms):", whose percentile lines
// are as many as --percentile asked for.
func (r *Report) latencyValue(f reportField) error {
	switch f.key {
	case "min":
		return f.number(&r.Latency.MinMs, "")
	case "avg":
		return f.number(&r.Latency.AvgMs, "")
	case "max":
		return f.number(&r.Latency.MaxMs, "")
	case "sum":
		return f.number(&r.Latency.SumMs, "")
	case "percentile stats":
		return nil // "disabled"
	}
	pct, ok := strings.CutSuffix(f.key, " percentile")
	if !ok {
		return nil
	}
	percent, err := percentileName(pct)
	if err != nil {
		return f.bad("%v", err)
	}
	var ms float64
	if err := f.number(&ms, ""); err != nil {
		return err
	}
	r.Latency.Percentiles = append(r.Latency.Percentiles, Percentile{Percent: percent, Ms: ms})
	return nil
}

// fairnessValue reads a value of "Threads fairness:". Any value of the
// section, read or not, makes Fairness non-nil: the section was printed.
func (r *Report) fairnessValue(f reportField) error {
	if r.Fairness == nil {
		r.Fairness = &Fairness{}
	}
	switch f.key {
	case "events (avg/stddev)":
		return f.pair(&r.Fairness.EventsAvg, &r.Fairness.EventsStddev)
	case "execution time (avg/stddev)":
		return f.pair(&r.Fairness.ExecTimeAvgSeconds, &r.Fairness.ExecTimeStddevSec)
	}
	return nil
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
