package sysbench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// HistogramTitle is the line sysbench prints before the latency histogram
// (--histogram=on), after the run and before the final report.
const HistogramTitle = "Latency histogram (values are in milliseconds)"

// Histogram is sysbench's latency histogram of a whole run (--histogram=on):
// every event's latency counted in logarithmic buckets (consecutive bucket
// values differ by about 1.9 % in 1.0.20's output). sysbench prints the
// non-empty buckets only, each as its
// bucket's value rounded to 3 decimals, so the percentiles read from it are
// the ones sysbench's own "Nth percentile:" line would print for any N.
type Histogram struct {
	// Buckets are the printed rows in increasing latency order.
	Buckets []HistogramBucket
}

// HistogramBucket is one printed row: "      12.081 |**      42".
type HistogramBucket struct {
	// Ms is the bucket's value in milliseconds as printed.
	Ms float64
	// Count is the number of events in the bucket.
	Count int64
}

// Total is the number of events the histogram counts.
func (h *Histogram) Total() int64 {
	var n int64
	for _, b := range h.Buckets {
		n += b.Count
	}
	return n
}

// Percentile returns the latency at percent (0 < percent ≤ 100) the way
// sysbench computes its percentile line from the same histogram: the value
// of the first bucket at which the running count reaches
// floor(total × percent / 100 + 0.5). It returns false for an empty
// histogram or a percent out of range.
func (h *Histogram) Percentile(percent float64) (float64, bool) {
	if h == nil || !(percent > 0 && percent <= 100) {
		return 0, false
	}
	total := h.Total()
	if total == 0 {
		return 0, false
	}
	want := int64(math.Floor(float64(total)*percent/100 + 0.5))
	var n int64
	for _, b := range h.Buckets {
		n += b.Count
		if n >= want {
			return b.Ms, true
		}
	}
	return h.Buckets[len(h.Buckets)-1].Ms, true
}

// parseHistogramRow reads "      12.081 |****         42". ok is false when
// the line is not a row (no "|"), which ends the histogram; an error means
// the line looks like a row but its numbers are bad.
func parseHistogramRow(t string) (b HistogramBucket, ok bool, err error) {
	left, right, found := strings.Cut(t, "|")
	if !found {
		return b, false, nil
	}
	if b.Ms, err = parseFloat(strings.TrimSpace(left)); err != nil || b.Ms < 0 {
		return b, true, fmt.Errorf("histogram row: value %q is not a latency", strings.TrimSpace(left))
	}
	f := strings.Fields(right)
	if len(f) == 0 {
		return b, true, fmt.Errorf("histogram row: count missing")
	}
	if b.Count, err = strconv.ParseInt(f[len(f)-1], 10, 64); err != nil || b.Count < 0 {
		return b, true, fmt.Errorf("histogram row: count %q is not a number", f[len(f)-1])
	}
	return b, true, nil
}

// QueueSample is the line sysbench adds to each interval report when it
// runs at a fixed rate (--rate):
//
//	[ 10s ] queue length: 26, concurrency: 1
//
// (the C driver prints the comma, the built-in tests do not).
type QueueSample struct {
	// Second is the interval's elapsed time, as on its throughput line.
	Second float64
	// Length is the number of events generated but not yet started when the
	// report was printed: the backlog of a rate the server does not keep.
	Length int64
	// Concurrency is the number of events being executed at that moment.
	Concurrency int64
}

// QueueFullText is in the FATAL line sysbench 1.0.20 prints when a --rate
// run's event queue overflows ("The event queue is full. This means the
// worker threads are unable to keep up with the specified event generation
// rate"); the run then ends at once, without a final report.
const QueueFullText = "The event queue is full"

// queuePrefix starts the body of a --rate queue report.
const queuePrefix = "queue length"

// parseQueueLine reads the body after "[ Ns ]" of a queue report.
func parseQueueLine(sec, body string) (QueueSample, error) {
	var q QueueSample
	var err error
	if q.Second, err = parseFloat(sec); err != nil {
		return q, fmt.Errorf("queue report: elapsed time %q: %w", sec, err)
	}
	rest := strings.TrimPrefix(body, queuePrefix)
	rest = strings.TrimPrefix(strings.TrimSpace(rest), ":")
	length, conc, found := strings.Cut(rest, "concurrency:")
	if !found {
		return q, fmt.Errorf(`queue report: "concurrency:" missing`)
	}
	length = strings.TrimSuffix(strings.TrimSpace(length), ",")
	if q.Length, err = strconv.ParseInt(strings.TrimSpace(length), 10, 64); err != nil || q.Length < 0 {
		return q, fmt.Errorf("queue report: length %q is not a number", strings.TrimSpace(length))
	}
	if q.Concurrency, err = strconv.ParseInt(strings.TrimSpace(conc), 10, 64); err != nil || q.Concurrency < 0 {
		return q, fmt.Errorf("queue report: concurrency %q is not a number", strings.TrimSpace(conc))
	}
	return q, nil
}
