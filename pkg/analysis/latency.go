package analysis

import (
	"fmt"
	"math"
	"slices"

	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/workload"
)

// Latency is one observation's response time, in milliseconds. Percentiles
// cover the whole run, warm-up included, as sysbench's final report does;
// a nil percentile was not recorded (an older agent, a compact document
// without it) and is never read as 0.
type Latency struct {
	AvgMs  float64  `json:"avgMs"`
	MaxMs  float64  `json:"maxMs"`
	P50Ms  *float64 `json:"p50Ms,omitempty"`
	P95Ms  *float64 `json:"p95Ms,omitempty"`
	P99Ms  *float64 `json:"p99Ms,omitempty"`
	P999Ms *float64 `json:"p999Ms,omitempty"`
	// Series is the per-second latency at SeriesPercentile (95), warm-up
	// included, aligned with the observation's QPS series; only the full
	// form of a results document keeps it.
	Series           *TimeSeries `json:"series,omitempty"`
	SeriesPercentile float64     `json:"seriesPercentile,omitempty"`
	// Rate is set for a fixed-rate observation.
	Rate *results.Rate `json:"rate,omitempty"`
}

// latencyOf reads a step result's latency; nil when it has none at all.
func latencyOf(s results.StepResult) *Latency {
	if s.LatencyAvgMs == 0 && s.LatencyMaxMs == 0 && s.LatencyP95Ms == nil && s.LatencyP99Ms == nil {
		return nil
	}
	l := &Latency{AvgMs: s.LatencyAvgMs, MaxMs: s.LatencyMaxMs, P50Ms: s.LatencyP50Ms, P95Ms: s.LatencyP95Ms,
		P99Ms: s.LatencyP99Ms, P999Ms: s.LatencyP999Ms, Rate: s.Rate}
	if se := s.Series; se != nil && len(se.LatencyMs) > 0 && se.IntervalSeconds > 0 {
		l.Series = &TimeSeries{IntervalSeconds: se.IntervalSeconds, WarmupSeconds: s.WarmupSeconds, Values: se.LatencyMs}
		l.SeriesPercentile = se.LatencyPercentile
	}
	return l
}

// IsFixedRateStep reports whether a step name is a fixed-rate variant
// ("point-query@0.5peak"). Throughput tables leave them out: their
// throughput is the target they were given.
func IsFixedRateStep(name string) bool {
	_, label := results.SplitRateStep(name)
	return label != ""
}

// LatencyOptions tune BuildLatencyReport.
type LatencyOptions struct {
	// Base cell of the relative tables; "" means the first cell.
	Base string
	// SpikeFactor: a second whose latency is above SpikeFactor × the
	// median second's is a spike; 0 means 2.
	SpikeFactor float64
	// StallFraction: a second whose QPS is below StallFraction × the
	// median is a stall, as in the throughput-over-time table; 0 means 0.5.
	StallFraction float64
	// IncludeUnreported keeps `.pre` and `.warm` steps.
	IncludeUnreported bool
}

func (o LatencyOptions) withDefaults() LatencyOptions {
	if o.SpikeFactor == 0 {
		o.SpikeFactor = 2
	}
	if o.StallFraction == 0 {
		o.StallFraction = 0.5
	}
	return o
}

// LatencyReport is every latency table of a dataset (docs/reports.md,
// "Latency"). Sections without data are empty.
type LatencyReport struct {
	Base string `json:"base"`
	// Percentiles are p95 and p99 per step and cell, one per thread count.
	Percentiles []*LatencyTable `json:"percentiles,omitempty"`
	// Concurrency is throughput and response time against concurrency,
	// one per cell with at least two thread counts.
	Concurrency []*ConcurrencyTable `json:"concurrency,omitempty"`
	// Series is latency over time beside throughput over time.
	Series []LatencySeriesStats `json:"series,omitempty"`
	// FixedRate are the fixed-rate observations.
	FixedRate []FixedRateRow `json:"fixedRate,omitempty"`
}

// LatencyTable is p95 and p99 latency per step (rows) and cell (columns) at
// one thread count, absolute and relative to the base cell.
type LatencyTable struct {
	Threads int      `json:"threads"`
	Base    string   `json:"base"`
	Cells   []string `json:"cells"`
	Steps   []string `json:"steps"`
	// P95[i][j] and P99[i][j] are step i in cell j, in ms (nil: not
	// recorded).
	P95 [][]*float64 `json:"p95"`
	P99 [][]*float64 `json:"p99"`
	// RelP95 and RelP99 are latency(cell) / latency(base): lower is better.
	RelP95 [][]Ratio `json:"relP95"`
	RelP99 [][]Ratio `json:"relP99"`
}

// ConcurrencyTable is one cell's throughput and response time against
// concurrency: the seed studies' pair of charts as numbers.
type ConcurrencyTable struct {
	Cell    string   `json:"cell"`
	Threads []int    `json:"threads"`
	Steps   []string `json:"steps"`
	// QPS[i][k], P95[i][k] and P99[i][k] are step i at Threads[k].
	QPS [][]*float64 `json:"qps"`
	P95 [][]*float64 `json:"p95"`
	P99 [][]*float64 `json:"p99"`
}

// LatencySeriesStats is one observation's latency over time after the
// warm-up, read beside its throughput: a write stall shows as latency
// spikes, often before the throughput moves.
type LatencySeriesStats struct {
	Cell    string `json:"cell"`
	Step    string `json:"step"`
	Threads int    `json:"threads"`
	// Percentile is the per-second percentile (95).
	Percentile float64 `json:"percentile"`
	// Samples are the seconds after the warm-up that completed events;
	// IdleSeconds those that completed none (sysbench prints latency 0
	// for them, which is no latency at all: they are left out).
	Samples     int `json:"samples"`
	IdleSeconds int `json:"idleSeconds"`
	// MedianMs and MaxMs are the median and the largest per-second value;
	// MaxAtSecond is when the largest came (seconds since the step started).
	MedianMs    float64 `json:"medianMs"`
	MaxMs       float64 `json:"maxMs"`
	MaxAtSecond float64 `json:"maxAtSecond"`
	// SpikeSeconds are seconds above SpikeFactor × MedianMs; StallSeconds
	// seconds whose QPS is below StallFraction × the median QPS (idle
	// seconds included); BothSeconds are seconds that are both.
	SpikeFactor   float64 `json:"spikeFactor"`
	SpikeSeconds  int     `json:"spikeSeconds"`
	StallFraction float64 `json:"stallFraction"`
	StallSeconds  int     `json:"stallSeconds"`
	BothSeconds   int     `json:"bothSeconds"`

	qps, lat *TimeSeries // for charts
}

// QPSSeries is the throughput series of the statistics, for charts.
func (s LatencySeriesStats) QPSSeries() *TimeSeries { return s.qps }

// LatencySeries is the latency series of the statistics, for charts.
func (s LatencySeriesStats) LatencySeries() *TimeSeries { return s.lat }

func ptrTo[T any](v T) *T { return &v }

// FixedRateRow is one fixed-rate observation: the rate asked, the rate
// kept, and the response time at that load.
type FixedRateRow struct {
	Cell    string `json:"cell"`
	Step    string `json:"step"`
	Threads int    `json:"threads"`
	results.Rate
	// AchievedTPS is the steady TPS measured; Kept is false when it fell
	// more than 5 % short of the target (the server did not keep the rate,
	// the backlog grew and the percentiles lack the events never run).
	AchievedTPS float64  `json:"achievedTps"`
	Kept        bool     `json:"kept"`
	P50Ms       *float64 `json:"p50Ms,omitempty"`
	P95Ms       *float64 `json:"p95Ms,omitempty"`
	P99Ms       *float64 `json:"p99Ms,omitempty"`
	P999Ms      *float64 `json:"p999Ms,omitempty"`
	MaxMs       float64  `json:"maxMs"`
}

// keptRateFraction is the share of its target a fixed-rate run must
// achieve to count as having kept the rate.
const keptRateFraction = 0.95

// BuildLatencyReport computes the latency tables of ds; the report is empty
// (not nil) when no observation has latency.
func BuildLatencyReport(ds *Dataset, opts LatencyOptions) (*LatencyReport, error) {
	opts = opts.withDefaults()
	if !(opts.SpikeFactor > 1) || !(opts.StallFraction > 0 && opts.StallFraction < 1) {
		return nil, fmt.Errorf("latency options: spike factor %v must be above 1, stall fraction %v in (0, 1)", opts.SpikeFactor, opts.StallFraction)
	}
	r := &LatencyReport{Base: opts.Base}
	if len(ds.cells) == 0 {
		return r, nil
	}
	if r.Base == "" {
		r.Base = ds.cells[0].Name
	}
	if err := ds.checkCell("base", r.Base); err != nil {
		return nil, err
	}
	var steps []string
	for _, s := range ds.Steps() {
		base, _ := results.SplitRateStep(s)
		if opts.IncludeUnreported || workload.Reported(base) {
			steps = append(steps, s)
		}
	}
	cells := ds.CellNames()
	for _, th := range ds.Threads() {
		if t := percentileTable(ds, cells, steps, th, r.Base); len(t.Steps) > 0 {
			r.Percentiles = append(r.Percentiles, t)
		}
	}
	for _, c := range cells {
		if ct := concurrencyTable(ds, c, steps); ct != nil {
			r.Concurrency = append(r.Concurrency, ct)
		}
	}
	for i := range ds.obs {
		o := &ds.obs[i]
		base, _ := results.SplitRateStep(o.Step)
		if !opts.IncludeUnreported && !workload.Reported(base) {
			continue
		}
		if l := o.Latency; l != nil && l.Series != nil && o.Series != nil {
			if st, ok := latencySeries(o, opts); ok {
				r.Series = append(r.Series, st)
			}
		}
		if l := o.Latency; l != nil && l.Rate != nil {
			row := FixedRateRow{Cell: o.Cell, Step: o.Step, Threads: o.Threads, Rate: *l.Rate, AchievedTPS: o.TPS,
				P50Ms: l.P50Ms, P95Ms: l.P95Ms, P99Ms: l.P99Ms, P999Ms: l.P999Ms, MaxMs: l.MaxMs}
			row.Kept = o.TPS >= keptRateFraction*float64(l.Rate.TargetTPS)
			r.FixedRate = append(r.FixedRate, row)
		}
	}
	return r, nil
}

// percentileTable is the p95 and p99 of the steps at th threads, each
// relative to base's; a step no cell has a percentile of is left out.
func percentileTable(ds *Dataset, cells, steps []string, th int, base string) *LatencyTable {
	t := &LatencyTable{Threads: th, Base: base, Cells: cells}
	for _, s := range steps {
		p95, p99 := make([]*float64, len(cells)), make([]*float64, len(cells))
		found := false
		for j, c := range cells {
			if o, ok := ds.Get(c, s, th); ok && o.Latency != nil {
				p95[j], p99[j] = o.Latency.P95Ms, o.Latency.P99Ms
				found = found || p95[j] != nil || p99[j] != nil
			}
		}
		if !found {
			continue
		}
		b := slices.Index(cells, base)
		rel95, rel99 := make([]Ratio, len(cells)), make([]Ratio, len(cells))
		for j := range cells {
			rel95[j], rel99[j] = DivideOpt(p95[j], p95[b]), DivideOpt(p99[j], p99[b])
		}
		t.Steps = append(t.Steps, s)
		t.P95, t.P99 = append(t.P95, p95), append(t.P99, p99)
		t.RelP95, t.RelP99 = append(t.RelP95, rel95), append(t.RelP99, rel99)
	}
	return t
}

// concurrencyTable is nil when the cell has fewer than two thread counts or
// no latency.
func concurrencyTable(ds *Dataset, cell string, steps []string) *ConcurrencyTable {
	threads := ds.CellThreads(cell)
	if len(threads) < 2 {
		return nil
	}
	t := &ConcurrencyTable{Cell: cell, Threads: threads}
	for _, s := range steps {
		if IsFixedRateStep(s) {
			continue // their throughput is their target
		}
		q, p95, p99 := make([]*float64, len(threads)), make([]*float64, len(threads)), make([]*float64, len(threads))
		n := 0
		for k, th := range threads {
			o, ok := ds.Get(cell, s, th)
			if !ok {
				continue
			}
			q[k] = ptrTo(o.QPS)
			if o.Latency != nil {
				p95[k], p99[k] = o.Latency.P95Ms, o.Latency.P99Ms
				if p95[k] != nil {
					n++
				}
			}
		}
		if n < 2 {
			continue // no curve from one point
		}
		t.Steps = append(t.Steps, s)
		t.QPS, t.P95, t.P99 = append(t.QPS, q), append(t.P95, p95), append(t.P99, p99)
	}
	if len(t.Steps) == 0 {
		return nil
	}
	return t
}

// latencySeries lines up an observation's latency and QPS seconds after
// the warm-up.
func latencySeries(o *Observation, opts LatencyOptions) (LatencySeriesStats, bool) {
	lat, qps := o.Latency.Series, o.Series
	if lat.IntervalSeconds != qps.IntervalSeconds || len(lat.Values) != len(qps.Values) {
		return LatencySeriesStats{}, false // a downsampled QPS series: no second-by-second pairing
	}
	st := LatencySeriesStats{Cell: o.Cell, Step: o.Step, Threads: o.Threads, Percentile: o.Latency.SeriesPercentile,
		SpikeFactor: opts.SpikeFactor, StallFraction: opts.StallFraction, qps: qps, lat: lat}
	steadyQ, steadyL := qps.Steady(), lat.Steady()
	skip := len(qps.Values) - len(steadyQ)
	if len(steadyQ) == 0 {
		return st, false
	}
	var busy []float64
	for i, v := range steadyL {
		if steadyQ[i] > 0 {
			busy = append(busy, v)
		}
	}
	st.Samples, st.IdleSeconds = len(busy), len(steadyQ)-len(busy)
	if len(busy) > 0 {
		st.MedianMs = quantilesSelect(append([]float64(nil), busy...), 0.5)[0]
	}
	qMedian := quantilesSelect(append([]float64(nil), steadyQ...), 0.5)[0]
	st.MaxAtSecond = math.NaN()
	for i, v := range steadyL {
		stall := steadyQ[i] < opts.StallFraction*qMedian
		spike := steadyQ[i] > 0 && v > opts.SpikeFactor*st.MedianMs
		if steadyQ[i] > 0 && (v > st.MaxMs || math.IsNaN(st.MaxAtSecond)) {
			st.MaxMs, st.MaxAtSecond = v, float64(skip+i+1)*lat.IntervalSeconds
		}
		if stall {
			st.StallSeconds++
		}
		if spike {
			st.SpikeSeconds++
		}
		if stall && spike {
			st.BothSeconds++
		}
	}
	if math.IsNaN(st.MaxAtSecond) {
		st.MaxAtSecond = 0
	}
	return st, true
}

// msText prints an optional latency.
func msText(v *float64) string {
	if v == nil {
		return "missing"
	}
	return FormatFloat(*v, 2)
}

// lowerIsBetter is said on every relative latency table.
const lowerIsBetter = "LOWER IS BETTER: latency(cell) / latency(base) < 1 means faster responses than the base"

// Tables renders the latency report: absolute and relative p95/p99 per
// thread count, response time against concurrency, latency over time and
// the fixed-rate runs.
func (r *LatencyReport) Tables() []Table {
	var out []Table
	for _, t := range r.Percentiles {
		out = append(out, t.Tables()...)
	}
	for _, c := range r.Concurrency {
		out = append(out, c.Table())
	}
	if len(r.Series) > 0 {
		out = append(out, LatencySeriesTable(r.Series))
	}
	if len(r.FixedRate) > 0 {
		out = append(out, FixedRateTable(r.FixedRate))
	}
	return out
}

// Tables renders the absolute and the relative table.
func (t *LatencyTable) Tables() []Table {
	abs := Table{ID: fmt.Sprintf("latency.t%d", t.Threads),
		Title:   fmt.Sprintf("Response time, %d threads: p95 and p99 latency in ms per cell (lower is better)", t.Threads),
		Columns: []string{"step"}}
	rel := Table{ID: fmt.Sprintf("latency.relative.t%d", t.Threads),
		Title:   fmt.Sprintf("Relative response time, %d threads: latency(cell) / latency(%s), LOWER IS BETTER", t.Threads, t.Base),
		Columns: []string{"step"}}
	for _, c := range t.Cells {
		abs.Columns = append(abs.Columns, c+" p95", c+" p99")
		rel.Columns = append(rel.Columns, c+" p95", c+" p99")
	}
	for i, s := range t.Steps {
		a, r := make([]string, 1, 1+2*len(t.Cells)), make([]string, 1, 1+2*len(t.Cells))
		a[0], r[0] = s, s
		for j := range t.Cells {
			a = append(a, msText(t.P95[i][j]), msText(t.P99[i][j]))
			r = append(r, t.RelP95[i][j].String(), t.RelP99[i][j].String())
		}
		abs.Rows, rel.Rows = append(abs.Rows, a), append(rel.Rows, r)
	}
	abs.Notes = []string{"Percentiles of the whole run (warm-up included), as sysbench's final report computes them; <step>@<rate> rows are fixed-rate runs."}
	rel.Notes = []string{lowerIsBetter + "; 0/0 = 1, x/0 = inf."}
	return []Table{abs, rel}
}

// Table renders throughput and response time against concurrency.
func (t *ConcurrencyTable) Table() Table {
	out := Table{ID: "latency.concurrency." + t.Cell,
		Title:   fmt.Sprintf("Throughput and response time against concurrency, %s: QPS, p95 and p99 ms per thread count", t.Cell),
		Columns: []string{"step"}}
	for _, th := range t.Threads {
		out.Columns = append(out.Columns, fmt.Sprintf("QPS t%d", th), fmt.Sprintf("p95 t%d", th), fmt.Sprintf("p99 t%d", th))
	}
	for i, s := range t.Steps {
		row := make([]string, 1, 1+3*len(t.Threads))
		row[0] = s
		for k := range t.Threads {
			q := "missing"
			if t.QPS[i][k] != nil {
				q = FormatFloat(*t.QPS[i][k], 2)
			}
			row = append(row, q, msText(t.P95[i][k]), msText(t.P99[i][k]))
		}
		out.Rows = append(out.Rows, row)
	}
	out.Notes = []string{"Throughput: higher is better; latency: lower is better. Past saturation, more clients add response time and no throughput."}
	return out
}

// LatencySeriesTable renders latency over time, one row per observation.
func LatencySeriesTable(stats []LatencySeriesStats) Table {
	t := Table{ID: "latency.series", Title: "Latency over time beside throughput over time (after warm-up)",
		Columns: []string{"cell", "step", "threads", "pct", "seconds", "median ms", "max ms", "max at s", "spike s", "stall s", "both s", "idle s"}}
	spike, stall := 2.0, 0.5
	for _, s := range stats {
		spike, stall = s.SpikeFactor, s.StallFraction
		t.Rows = append(t.Rows, []string{s.Cell, s.Step, fmt.Sprint(s.Threads), TrimFloat(s.Percentile), fmt.Sprint(s.Samples),
			FormatFloat(s.MedianMs, 2), FormatFloat(s.MaxMs, 2), TrimFloat(s.MaxAtSecond),
			fmt.Sprint(s.SpikeSeconds), fmt.Sprint(s.StallSeconds), fmt.Sprint(s.BothSeconds), fmt.Sprint(s.IdleSeconds)})
	}
	t.Notes = []string{
		fmt.Sprintf(
			"Per-second latency at pct; a spike second is above %s × its median, a stall second's QPS is below %s × the median QPS, both s counts seconds that are both; idle seconds completed no event and have no latency.",
			TrimFloat(spike),
			TrimFloat(stall),
		),
	}
	return t
}

// FixedRateTable renders the fixed-rate runs.
func FixedRateTable(rows []FixedRateRow) Table {
	t := Table{ID: "latency.fixedrate", Title: "Fixed-rate (open-loop) runs: response time at a target rate",
		Columns: []string{
			"cell",
			"step",
			"threads",
			"target tps",
			"of peak",
			"achieved tps",
			"kept",
			"p50 ms",
			"p95 ms",
			"p99 ms",
			"p99.9 ms",
			"max ms",
			"max queue",
			"end queue",
			"poll ms",
		}}
	for _, r := range rows {
		of := "-"
		if r.FractionOfPeak != "" {
			of = fmt.Sprintf("%s × %s", r.FractionOfPeak, FormatFloat(r.PeakTPS, 1))
		}
		kept := "yes"
		if !r.Kept {
			kept = "NO"
		}
		t.Rows = append(t.Rows, []string{r.Cell, r.Step, fmt.Sprint(r.Threads), fmt.Sprint(r.TargetTPS), of, FormatFloat(r.AchievedTPS, 1), kept,
			msText(r.P50Ms), msText(r.P95Ms), msText(r.P99Ms), msText(r.P999Ms), FormatFloat(r.MaxMs, 2),
			fmt.Sprint(r.MaxQueueLength), fmt.Sprint(r.EndQueueLength), FormatFloat(r.PollIntervalMs, 2)})
	}
	t.Notes = []string{
		"Latency is timed from when sysbench generated the event (Poisson arrivals at the target), so waiting for a busy server counts: coordinated omission is corrected.",
		fmt.Sprintf(
			"kept = NO: the achieved rate fell more than %.0f %% short; events still queued at the end were never run and are missing from the percentiles.",
			(1-keptRateFraction)*100,
		),
		"poll ms: an idle sysbench worker sleeps this long between looks at the queue, which adds up to that much to a response at low rates.",
	}
	return t
}

// PairedLatency is the latency side of compare: for every cell name two
// runs share, p99 in each and p99(B) / p99(A) per step at one thread count
// (lower is better), fixed-rate variants included.
type PairedLatency struct {
	Threads int      `json:"threads"`
	A       string   `json:"a"`
	B       string   `json:"b"`
	Cells   []string `json:"cells"`
	Steps   []string `json:"steps"`
	// P99A[i][j] and P99B[i][j] are step i of cell j in each run (nil: not
	// recorded); Ratio[i][j] is P99B / P99A.
	P99A  [][]*float64 `json:"p99a"`
	P99B  [][]*float64 `json:"p99b"`
	Ratio [][]Ratio    `json:"ratio"`
}

// PairedLatencyTable builds the PairedLatency of runs a and b at threads;
// nil when no shared cell recorded p99 in either run.
func PairedLatencyTable(a, b *Dataset, threads int) *PairedLatency {
	t := &PairedLatency{Threads: threads, A: a.Name, B: b.Name}
	for _, c := range a.cells {
		if _, ok := b.Cell(c.Name); ok {
			t.Cells = append(t.Cells, c.Name)
		}
	}
	steps := append([]string(nil), a.Steps()...)
	for _, s := range b.Steps() {
		if !slices.Contains(steps, s) {
			steps = append(steps, s)
		}
	}
	p99 := func(ds *Dataset, c, s string) *float64 {
		if o, ok := ds.Get(c, s, threads); ok && o.Latency != nil {
			return o.Latency.P99Ms
		}
		return nil
	}
	for _, s := range steps {
		if base, _ := results.SplitRateStep(s); !workload.Reported(base) {
			continue
		}
		pa, pb, rel := make([]*float64, len(t.Cells)), make([]*float64, len(t.Cells)), make([]Ratio, len(t.Cells))
		found := false
		for j, c := range t.Cells {
			pa[j], pb[j] = p99(a, c, s), p99(b, c, s)
			rel[j] = DivideOpt(pb[j], pa[j])
			found = found || pa[j] != nil || pb[j] != nil
		}
		if found {
			t.Steps = append(t.Steps, s)
			t.P99A, t.P99B, t.Ratio = append(t.P99A, pa), append(t.P99B, pb), append(t.Ratio, rel)
		}
	}
	if len(t.Steps) == 0 {
		return nil
	}
	return t
}

// Table renders the paired latency: per shared cell, p99 in A, in B and
// their ratio.
func (t *PairedLatency) Table() Table {
	out := Table{ID: fmt.Sprintf("paired.latency.t%d", t.Threads),
		Title:   fmt.Sprintf("%s vs %s: p99 latency per cell, %d threads, ratio p99(%s) / p99(%s), LOWER IS BETTER", t.B, t.A, t.Threads, t.B, t.A),
		Columns: []string{"step"}}
	for _, c := range t.Cells {
		out.Columns = append(out.Columns, c+" "+t.A+" ms", c+" "+t.B+" ms", c+" ratio")
	}
	for i, s := range t.Steps {
		row := make([]string, 1, 1+3*len(t.Cells))
		row[0] = s
		for j := range t.Cells {
			row = append(row, msText(t.P99A[i][j]), msText(t.P99B[i][j]), t.Ratio[i][j].String())
		}
		out.Rows = append(out.Rows, row)
	}
	out.Notes = []string{fmt.Sprintf("LOWER IS BETTER: a ratio below 1 means %s answers faster than %s; 0/0 = 1, x/0 = inf.", t.B, t.A)}
	return out
}
