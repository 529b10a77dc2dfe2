package analysis

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/stats"
)

// invalidSeriesNote explains the rows of invalid values in the series
// table.
const invalidSeriesNote = "(invalid): the quality gate marked the step's value invalid (docs/reports.md); its series is shown as the evidence, its figures are not values"

// SeriesOptions tune the throughput-over-time statistics.
type SeriesOptions struct {
	// StallFraction: a sample below StallFraction × median is a stall
	// second; 0 means 0.5.
	StallFraction float64
	// LastSeconds limits the box-plot statistics to the last N seconds of
	// the steady series (the studies use the last 1000 s of a long run);
	// 0 means the whole steady series.
	LastSeconds float64
	// WindowSeconds is the width of the windows whose means show waves;
	// 0 means 60.
	WindowSeconds float64
}

func (o SeriesOptions) withDefaults() SeriesOptions {
	if o.StallFraction == 0 {
		o.StallFraction = 0.5
	}
	if o.WindowSeconds == 0 {
		o.WindowSeconds = 60
	}
	return o
}

// Box is a box plot's statistics: quartiles (type 7 interpolation),
// whiskers at the most extreme samples within 1.5 IQR of the box, and the
// count of samples beyond them.
type Box struct {
	Samples      int     `json:"samples"`
	FromSecond   float64 `json:"fromSecond"`
	Min          float64 `json:"min"`
	Q1           float64 `json:"q1"`
	Median       float64 `json:"median"`
	Q3           float64 `json:"q3"`
	Max          float64 `json:"max"`
	WhiskerLow   float64 `json:"whiskerLow"`
	WhiskerHigh  float64 `json:"whiskerHigh"`
	Outliers     int     `json:"outliers"`
	Mean         float64 `json:"mean"`
	SecondsShown float64 `json:"secondsShown"`
}

// Stall is a run of consecutive stall samples.
type Stall struct {
	// StartSecond is when it began, in seconds since the step started
	// (warm-up included, like the series).
	StartSecond float64 `json:"startSecond"`
	Seconds     float64 `json:"seconds"`
	MinQPS      float64 `json:"minQps"`
}

// Window is the mean of one WindowSeconds slice of the steady series.
type Window struct {
	FromSecond float64 `json:"fromSecond"`
	Mean       float64 `json:"mean"`
	Min        float64 `json:"min"`
	Max        float64 `json:"max"`
}

// SeriesStats describes one observation's throughput over time, after the
// warm-up.
type SeriesStats struct {
	Cell            string  `json:"cell"`
	Step            string  `json:"step"`
	Threads         int     `json:"threads"`
	IntervalSeconds float64 `json:"intervalSeconds"`
	Samples         int     `json:"samples"`
	Mean            float64 `json:"mean"`
	Median          float64 `json:"median"`
	// CV is the population stddev over the mean (as pkg/results computes
	// it for the compact form's summaries); 0 when the mean is 0.
	CV            float64  `json:"cv"`
	StallFraction float64  `json:"stallFraction"`
	StallSeconds  float64  `json:"stallSeconds"`
	Stalls        []Stall  `json:"stalls,omitempty"`
	Box           Box      `json:"box"`
	Windows       []Window `json:"windows,omitempty"`
	// Invalid are the quality gate's reasons when the series is an
	// invalid value's (InvalidValue): shown for the evidence, not a value.
	Invalid []results.QualityReason `json:"invalid,omitempty"`

	src *TimeSeries // for charts
}

// Source is the series the statistics are of, for charts; nil for
// statistics not made by AnalyzeSeries.
func (s SeriesStats) Source() *TimeSeries { return s.src }

// AnalyzeSeries computes SeriesStats of a series; it fails on an empty
// steady series or a non-positive interval.
func AnalyzeSeries(s *TimeSeries, opts SeriesOptions) (SeriesStats, error) {
	opts = opts.withDefaults()
	if s == nil || !(s.IntervalSeconds > 0) {
		return SeriesStats{}, fmt.Errorf("series: interval must be positive")
	}
	if !(opts.StallFraction > 0 && opts.StallFraction < 1) || opts.LastSeconds < 0 || !(opts.WindowSeconds > 0) {
		return SeriesStats{}, fmt.Errorf("series options %+v: stall fraction must be in (0, 1), last seconds >= 0, window > 0", opts)
	}
	steady := s.Steady()
	if len(steady) == 0 {
		return SeriesStats{}, fmt.Errorf("series of %d samples has none after the %g s warm-up: %w", len(s.Values), s.WarmupSeconds, ErrEmpty)
	}
	iv := s.IntervalSeconds
	offset := float64(len(s.Values)-len(steady)) * iv
	st := SeriesStats{IntervalSeconds: iv, Samples: len(steady), StallFraction: opts.StallFraction, src: s}
	buf := append([]float64(nil), steady...)
	st.Mean = stats.Mean(steady)
	last := steady
	if opts.LastSeconds > 0 {
		n := int(math.Ceil(opts.LastSeconds/iv - 1e-9))
		if n < len(last) {
			last = last[len(last)-n:]
		}
	}
	if len(last) == len(steady) {
		st.Box = boxOf(last, buf)
		st.Median = st.Box.Median
	} else {
		st.Median = quantilesSelect(buf, 0.5)[0]
		st.Box = boxOf(last, append(buf[:0], last...))
	}
	if st.Mean != 0 {
		st.CV = stddev(steady, StddevPopulation) / st.Mean
	}
	limit := opts.StallFraction * st.Median
	var cur *Stall
	for i, v := range steady {
		if v < limit {
			st.StallSeconds += iv
			if cur == nil {
				st.Stalls = append(st.Stalls, Stall{StartSecond: offset + float64(i)*iv, MinQPS: v})
				cur = &st.Stalls[len(st.Stalls)-1]
			}
			cur.Seconds += iv
			cur.MinQPS = math.Min(cur.MinQPS, v)
		} else {
			cur = nil
		}
	}
	st.Box.FromSecond = offset + float64(len(steady)-len(last))*iv
	st.Box.SecondsShown = float64(len(last)) * iv
	per := int(math.Max(1, math.Round(opts.WindowSeconds/iv)))
	for i := 0; i < len(steady); i += per {
		w := steady[i:min(i+per, len(steady))]
		win := Window{FromSecond: offset + float64(i)*iv, Mean: stats.Mean(w), Min: w[0], Max: w[0]}
		for _, v := range w {
			win.Min, win.Max = math.Min(win.Min, v), math.Max(win.Max, v)
		}
		st.Windows = append(st.Windows, win)
	}
	return st, nil
}

// boxOf computes box statistics of xs; buf is a scratch copy of xs that it
// reorders.
func boxOf(xs, buf []float64) Box {
	q := quantilesSelect(buf, 0.25, 0.5, 0.75)
	b := Box{Samples: len(xs), Min: xs[0], Q1: q[0], Median: q[1], Q3: q[2], Max: xs[0], Mean: stats.Mean(xs)}
	for _, v := range xs {
		if v < b.Min {
			b.Min = v
		}
		if v > b.Max {
			b.Max = v
		}
	}
	lo, hi := b.Q1-1.5*(b.Q3-b.Q1), b.Q3+1.5*(b.Q3-b.Q1)
	b.WhiskerLow, b.WhiskerHigh = b.Max, b.Min
	for _, v := range xs {
		if v < lo || v > hi {
			b.Outliers++
			continue
		}
		if v < b.WhiskerLow {
			b.WhiskerLow = v
		}
		if v > b.WhiskerHigh {
			b.WhiskerHigh = v
		}
	}
	return b
}

// SeriesReport analyses every observation of ds that has a series, and
// every invalid value's (InvalidValues: its series is the evidence why),
// in dataset order, spread over GOMAXPROCS goroutines. Observations
// without a series are skipped. A series that cannot be analysed (none of
// its samples after the warm-up) is left out with a note naming its cell,
// step and thread count: the report degrades per observation, never as a
// whole. Only bad options are an error.
func SeriesReport(ds *Dataset, opts SeriesOptions) ([]SeriesStats, []string, error) {
	if _, err := AnalyzeSeries(&TimeSeries{IntervalSeconds: 1, Values: []float64{1}}, opts); err != nil {
		return nil, nil, err
	}
	type item struct {
		cell, step string
		threads    int
		series     *TimeSeries
		invalid    []results.QualityReason
	}
	var todo []item
	for _, o := range ds.obs {
		if o.Series != nil && len(o.Series.Values) > 0 {
			todo = append(todo, item{o.Cell, o.Step, o.Threads, o.Series, nil})
		}
	}
	for _, v := range ds.invalid {
		if v.Series != nil && len(v.Series.Values) > 0 {
			todo = append(todo, item{v.Cell, v.Step, v.Threads, v.Series, v.Reasons})
		}
	}
	out := make([]SeriesStats, len(todo))
	errs := make([]error, len(todo))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= len(todo) {
					return
				}
				it := &todo[k]
				st, err := AnalyzeSeries(it.series, opts)
				if err != nil {
					errs[k] = fmt.Errorf("cell %s step %s (%d threads): throughput over time left out: %w", it.cell, it.step, it.threads, err)
					continue
				}
				st.Cell, st.Step, st.Threads, st.Invalid = it.cell, it.step, it.threads, it.invalid
				out[k] = st
			}
		}()
	}
	wg.Wait()
	var kept []SeriesStats
	var notes []string
	for k, err := range errs {
		if err != nil {
			notes = append(notes, err.Error())
			continue
		}
		kept = append(kept, out[k])
	}
	return kept, notes, nil
}

// SeriesTable renders series statistics, one row per observation.
func SeriesTable(stats []SeriesStats) Table {
	t := Table{
		ID:      "series",
		Title:   "Throughput over time (after warm-up)",
		Columns: []string{"cell", "step", "threads", "samples", "mean", "median", "cv", "stall s", "stalls", "box q1", "box median", "box q3", "box window"},
	}
	frac := 0.5
	invalid := false
	for _, s := range stats {
		frac = s.StallFraction
		step := s.Step
		if len(s.Invalid) > 0 {
			step += " (invalid)"
			invalid = true
		}
		t.Rows = append(t.Rows, []string{s.Cell, step, fmt.Sprint(s.Threads), fmt.Sprint(s.Samples),
			FormatFloat(s.Mean, 2), FormatFloat(s.Median, 2), FormatFloat(s.CV, 3),
			TrimFloat(s.StallSeconds), fmt.Sprint(len(s.Stalls)),
			FormatFloat(s.Box.Q1, 2), FormatFloat(s.Box.Median, 2), FormatFloat(s.Box.Q3, 2),
			fmt.Sprintf("last %s s", TrimFloat(s.Box.SecondsShown))})
	}
	t.Notes = []string{fmt.Sprintf("cv = population stddev / mean; a stall second is a sample below %s × median", TrimFloat(frac))}
	if invalid {
		t.Notes = append(t.Notes, invalidSeriesNote)
	}
	return t
}
