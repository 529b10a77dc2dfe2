package sysbench

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Interval is one line of --report-interval output:
//
//	[ 10s ] thds: 16 tps: 1402.97 qps: 22447.53 (r/w/o: 19641.58/0.00/2805.95) lat (ms,95%): 12.08 err/s: 0.00 reconn/s: 0.00
//
// All rates are per second over the interval that ends at Second.
type Interval struct {
	// Second is the elapsed time at the end of the interval, in seconds since
	// the threads started.
	Second float64
	// Threads is the number of running client threads ("thds:").
	Threads int
	// TPS is transactions (sysbench events) per second. Non-database tests
	// print "eps:" (events per second) instead; it is stored here too.
	TPS float64
	// QPS is queries per second ("qps:"), BEGIN and COMMIT included; zero
	// for non-database tests, which print none.
	QPS float64
	// ReadQPS, WriteQPS and OtherQPS split QPS ("r/w/o:"); other is
	// BEGIN/COMMIT and anything neither read nor write.
	ReadQPS, WriteQPS, OtherQPS float64
	// LatencyMs is the latency percentile of the interval in milliseconds.
	LatencyMs float64
	// LatencyPercentile is the percentile LatencyMs is ("95" for
	// "lat (ms,95%)"); --percentile=0 prints 0 and then LatencyMs is 0 too.
	LatencyPercentile float64
	// ErrorsPerSec is ignored errors per second ("err/s"); each one restarted
	// an event.
	ErrorsPerSec float64
	// ReconnectsPerSec is reconnects per second ("reconn/s").
	ReconnectsPerSec float64
}

// isIntervalLine reports whether line starts like an interval report,
// "[ 10s ]", and returns the elapsed seconds and the rest of the line.
func isIntervalLine(line string) (sec string, body string, ok bool) {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "[") {
		return "", "", false
	}
	end := strings.IndexByte(t, ']')
	if end < 0 {
		return "", "", false
	}
	inner := strings.TrimSpace(t[1:end])
	if !strings.HasSuffix(inner, "s") || len(inner) < 2 {
		return "", "", false
	}
	inner = strings.TrimSuffix(inner, "s")
	if inner[0] < '0' || inner[0] > '9' {
		return "", "", false
	}
	return inner, strings.TrimSpace(t[end+1:]), true
}

// ParseInterval reads one interval line. It accepts the C report of sysbench
// 1.0 and 1.1 ("err/s:"), the Lua report_default variant ("err/s" without
// the colon), any latency percentile ("lat (ms,99%)"), and "eps:" for
// non-database tests. Fields it does not know are skipped, so a later sysbench
// that adds one does not break parsing; the fields it knows must be numbers,
// and "thds:" plus one of "tps:"/"eps:" must be present.
func ParseInterval(line string) (Interval, error) {
	sec, body, ok := isIntervalLine(line)
	if !ok {
		return Interval{}, fmt.Errorf(`not an interval line (no leading "[ Ns ]")`)
	}
	var iv Interval
	var err error
	if iv.Second, err = parseFloat(sec); err != nil {
		return Interval{}, fmt.Errorf("elapsed time %q: %w", sec, err)
	}
	if iv.Second == 0 {
		return Interval{}, fmt.Errorf("elapsed time 0s: an interval must end after the start")
	}
	f := strings.Fields(body)
	var haveThreads, haveRate bool
	num := func(i int, key string) (float64, error) {
		if i >= len(f) {
			return 0, fmt.Errorf("%s: value missing", key)
		}
		v, err := parseFloat(f[i])
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %w", key, f[i], err)
		}
		return v, nil
	}
	for i := 0; i < len(f); i++ {
		tok := f[i]
		switch {
		case tok == "thds:":
			v, err := num(i+1, "thds")
			if err != nil {
				return Interval{}, err
			}
			if v != math.Trunc(v) || v > math.MaxInt32 {
				return Interval{}, fmt.Errorf("thds: %q is not a whole number", f[i+1])
			}
			iv.Threads, haveThreads = int(v), true
			i++
		case tok == "tps:" || tok == "eps:":
			if iv.TPS, err = num(i+1, strings.TrimSuffix(tok, ":")); err != nil {
				return Interval{}, err
			}
			haveRate = true
			i++
		case tok == "qps:":
			if iv.QPS, err = num(i+1, "qps"); err != nil {
				return Interval{}, err
			}
			i++
		case tok == "(r/w/o:":
			if i+1 >= len(f) {
				return Interval{}, fmt.Errorf("r/w/o: value missing")
			}
			parts := strings.Split(strings.TrimSuffix(f[i+1], ")"), "/")
			if len(parts) != 3 {
				return Interval{}, fmt.Errorf("r/w/o: %q is not read/write/other", f[i+1])
			}
			dst := []*float64{&iv.ReadQPS, &iv.WriteQPS, &iv.OtherQPS}
			for j, p := range parts {
				if *dst[j], err = parseFloat(p); err != nil {
					return Interval{}, fmt.Errorf("r/w/o: %q: %w", p, err)
				}
			}
			i++
		case tok == "lat" && i+1 < len(f) && strings.HasPrefix(f[i+1], "(ms,"):
			spec := f[i+1] // "(ms,95%):"
			p := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(spec, "(ms,"), ":"), ")")
			p = strings.TrimSuffix(p, "%")
			if iv.LatencyPercentile, err = parseFloat(p); err != nil {
				return Interval{}, fmt.Errorf("lat: percentile %q: %w", spec, err)
			}
			if iv.LatencyMs, err = num(i+2, "lat"); err != nil {
				return Interval{}, err
			}
			i += 2
		case tok == "err/s:" || tok == "err/s":
			if iv.ErrorsPerSec, err = num(i+1, "err/s"); err != nil {
				return Interval{}, err
			}
			i++
		case tok == "reconn/s:" || tok == "reconn/s":
			if iv.ReconnectsPerSec, err = num(i+1, "reconn/s"); err != nil {
				return Interval{}, err
			}
			i++
		}
	}
	if !haveThreads {
		return Interval{}, fmt.Errorf(`"thds:" missing`)
	}
	if !haveRate {
		return Interval{}, fmt.Errorf(`"tps:" (or "eps:") missing`)
	}
	return iv, nil
}

// parseFloat accepts the decimal numbers sysbench prints and refuses NaN,
// infinities and negative values, none of which sysbench prints for a rate or
// a time; letting one through would poison every mean downstream.
func parseFloat(s string) (float64, error) {
	if s == "" {
		return 0, fmt.Errorf("empty number")
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-' {
			return 0, fmt.Errorf("not a number")
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("out of range")
	}
	if err != nil {
		return 0, fmt.Errorf("not a number")
	}
	if math.IsInf(v, 0) || math.IsNaN(v) || v < 0 {
		return 0, fmt.Errorf("out of range")
	}
	return v, nil
}

// parseCount reads a non-negative integer counter.
func parseCount(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("not a non-negative integer")
	}
	return v, nil
}
