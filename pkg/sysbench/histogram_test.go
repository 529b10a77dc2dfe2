package sysbench

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHistogramMatchesSysbenchPercentile reads the histogram of real 1.0.20
// runs and checks that it counts every event and that Percentile(95) is the
// "95th percentile:" line sysbench printed from the same histogram (it
// prints the bucket value with 2 decimals, the histogram with 3).
func TestHistogramMatchesSysbenchPercentile(t *testing.T) {
	for _, tc := range []struct {
		file      string
		wantQueue int // queue reports expected (one per interval with --rate)
	}{
		{"1.0.20/point_select_histogram.txt", 0},
		{"1.0.20/point_select_rate.txt", 3},
	} {
		t.Run(tc.file, func(t *testing.T) {
			out, err := ParseString(readFixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if out.Histogram == nil || len(out.Histogram.Buckets) == 0 {
				t.Fatal("no histogram parsed")
			}
			if got, want := out.Histogram.Total(), out.Final.TotalEvents; got != want {
				t.Errorf("histogram counts %d events, final report %d", got, want)
			}
			printed, ok := out.Final.Latency.Get(95)
			if !ok {
				t.Fatal("no 95th percentile line")
			}
			got, ok := out.Histogram.Percentile(95)
			if !ok || math.Abs(got-printed) > 0.0051 {
				t.Errorf("Percentile(95) = %v, %v; sysbench printed %v", got, ok, printed)
			}
			p99, _ := out.Histogram.Percentile(99)
			if p99 < got || p99 > out.Final.Latency.MaxMs+0.01 {
				t.Errorf("p99 %v outside [p95 %v, max %v]", p99, got, out.Final.Latency.MaxMs)
			}
			if len(out.Queue) != tc.wantQueue {
				t.Fatalf("%d queue reports, want %d", len(out.Queue), tc.wantQueue)
			}
			for i, q := range out.Queue {
				if q.Second != out.Intervals[i].Second {
					t.Errorf("queue report %d at %gs, interval at %gs", i, q.Second, out.Intervals[i].Second)
				}
			}
		})
	}
}

func TestHistogramPercentile(t *testing.T) {
	h := &Histogram{Buckets: []HistogramBucket{{1, 50}, {2, 40}, {5, 9}, {100, 1}}}
	for _, tc := range []struct {
		pct    float64
		want   float64
		wantOK bool
	}{
		{50, 1, true},   // 50 of 100 reached in the first bucket
		{50.6, 2, true}, // floor(50.6+0.5) = 51
		{90, 2, true},
		{95, 5, true},
		{99, 5, true},
		{99.5, 100, true}, // floor(99.5+0.5) = 100
		{100, 100, true},
		{0, 0, false},
		{101, 0, false},
	} {
		got, ok := h.Percentile(tc.pct)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("Percentile(%v) = %v, %v; want %v, %v", tc.pct, got, ok, tc.want, tc.wantOK)
		}
	}
	if _, ok := (&Histogram{}).Percentile(50); ok {
		t.Error("an empty histogram has a percentile")
	}
}

func TestParseHistogramAndQueue(t *testing.T) {
	const head = "[ 1s ] thds: 1 tps: 10.00 qps: 10.00 (r/w/o: 10.00/0.00/0.00) lat (ms,95%): 1.00 err/s: 0.00 reconn/s: 0.00\n"
	for _, tc := range []struct {
		name      string
		text      string
		wantHist  *Histogram
		wantQueue []QueueSample
		wantErr   string
	}{{
		name: "rows until a line that is not a row",
		text: HistogramTitle + "\n       value  ------------- distribution ------------- count\n" +
			"       0.270 |**************************************** 2379\n       0.361 |                                         9\n \nCPU speed:\n",
		wantHist: &Histogram{Buckets: []HistogramBucket{{0.27, 2379}, {0.361, 9}}},
	}, {
		name:      "queue report of the SQL driver (comma)",
		text:      head + "[ 1s ] queue length: 26, concurrency: 4\n",
		wantQueue: []QueueSample{{Second: 1, Length: 26, Concurrency: 4}},
	}, {
		name:      "queue report of the built-in tests (no comma); a repeated second is dropped",
		text:      head + "[ 1s ] queue length: 26 concurrency: 1\n[ 1s ] queue length: 30 concurrency: 1\n",
		wantQueue: []QueueSample{{Second: 1, Length: 26, Concurrency: 1}},
	}, {
		name:    "bad count",
		text:    HistogramTitle + "\n       0.270 |***  many\n",
		wantErr: "line 2",
	}, {
		name:    "bad queue length",
		text:    head + "[ 1s ] queue length: -, concurrency: 1\n",
		wantErr: "queue report: length",
	}, {
		name:    "two histograms",
		text:    HistogramTitle + "\n  1.000 | 1\n" + HistogramTitle + "\n",
		wantErr: "second latency histogram",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ParseString(tc.text)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.wantHist, out.Histogram); d != "" {
				t.Errorf("histogram (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantQueue, out.Queue); d != "" {
				t.Errorf("queue (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseQueueFull(t *testing.T) {
	for _, tc := range []struct {
		file string
		want bool
	}{
		{"1.0.20/fatal_rate_queue_full.txt", true},
		{"1.0.20/point_select_rate.txt", false},
		{"1.0.20/fatal_nodb.txt", false}, // another FATAL
	} {
		out, _ := ParseString(readFixture(t, tc.file))
		if out.QueueFull != tc.want {
			t.Errorf("%s: QueueFull = %v, want %v", tc.file, out.QueueFull, tc.want)
		}
	}
}
