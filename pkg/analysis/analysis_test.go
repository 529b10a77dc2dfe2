package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/stats"
	"github.com/dbbench/dbbench/pkg/workload"
)

// build makes a dataset from {cell: {step: qps}} at one thread count, cells
// and steps in the order given.
func build(t *testing.T, cells []string, steps []string, qps map[string]map[string]float64) *Dataset {
	t.Helper()
	ds := NewDataset("test")
	for _, c := range cells {
		if err := ds.AddCell(CellMeta{Name: c}); err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			q, ok := qps[c][s]
			if !ok {
				continue
			}
			if err := ds.Add(Observation{Cell: c, Step: s, Threads: 1, QPS: q}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ds
}

func ratioStrings(rs []Ratio) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.String()
	}
	return out
}

func TestDivideRules(t *testing.T) {
	for _, tc := range []struct {
		num, den float64
		want     string
		state    RatioState
	}{
		{3845, 3966, "0.97", RatioValue},
		{0, 0, "1", RatioZeroOverZero},
		{0.077, 0, "inf", RatioInf},
		{0, 5, "0.00", RatioValue},
		{1.005, 1, "1.00", RatioValue}, // binary 1.00499999... rounds down, like printf
		{2, 1, "2.00", RatioValue},
	} {
		r := Divide(tc.num, tc.den)
		if r.String() != tc.want || r.State != tc.state {
			t.Errorf("Divide(%v, %v) = %q state %d, want %q state %d", tc.num, tc.den, r.String(), r.State, tc.want, tc.state)
		}
	}
	if r := DivideOpt(nil, ptr(1.0)); !r.IsMissing() || r.String() != "missing" {
		t.Errorf("missing numerator gave %q", r)
	}
	b, _ := json.Marshal([]Ratio{Divide(1, 2), Divide(1, 0), Missing(), Divide(0, 0)})
	if string(b) != `[0.5,"inf",null,1]` {
		t.Errorf("JSON %s", b)
	}
	var back []Ratio
	if err := json.Unmarshal(b, &back); err != nil || back[1].State != RatioInf || !back[2].IsMissing() {
		t.Errorf("round trip %v %+v", err, back)
	}
}

func ptr[T any](v T) *T { return &v }

func TestRelative(t *testing.T) {
	steps := []string{"point-query", "insert", "scan", "hot-points"}
	ds := build(t, []string{"old", "new", "zero"}, steps, map[string]map[string]float64{
		"old":  {"point-query": 1000, "insert": 0, "scan": 200, "hot-points": 0},
		"new":  {"point-query": 1500, "insert": 0, "scan": 100}, // hot-points missing
		"zero": {"point-query": 0, "insert": 10, "scan": 0, "hot-points": 0},
	})
	rel, err := Relative(ds, RelativeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rel.Base != "old" || rel.Threads != 1 {
		t.Fatalf("base %q threads %d", rel.Base, rel.Threads)
	}
	got := map[string][]string{}
	for _, c := range rel.Cells {
		col, _ := rel.Column(c)
		got[c] = ratioStrings(col)
	}
	want := map[string][]string{
		"new":  {"1.50", "1", "0.50", "missing"},
		"zero": {"0.00", "inf", "0.00", "1"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ratios (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]MissingValue{{Cell: "new", Step: "hot-points"}}, rel.Missing); d != "" {
		t.Errorf("missing (-want +got):\n%s", d)
	}
	var buf bytes.Buffer
	if err := rel.Table().WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	wantText := `Relative throughput: QPS(cell) / QPS(old), 1 threads (> 1 is faster)
step         base qps  new      zero
point-query  1000.00   1.50     0.00
insert       0.00      1        inf
scan         200.00    0.50     0.00
hot-points   0.00      missing  1
note: new has no result for hot-points (shown as missing)
note: one run per cell: the ratios have no confidence interval (repeat the cells for 95 % intervals; docs/noise.md)
`
	if d := cmp.Diff(wantText, buf.String()); d != "" {
		t.Errorf("text (-want +got):\n%s", d)
	}
}

func TestRelativeBaseMissingStep(t *testing.T) {
	ds := build(t, []string{"a", "b"}, []string{"point-query", "insert"}, map[string]map[string]float64{
		"a": {"point-query": 10},
		"b": {"point-query": 20, "insert": 5},
	})
	rel, err := Relative(ds, RelativeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := rel.Ratios[1][0]; !r.IsMissing() {
		t.Errorf("insert with no base value gave %q, want missing", r)
	}
	if rel.BaseQPS[1] != nil {
		t.Errorf("base QPS of a missing step is %v", *rel.BaseQPS[1])
	}
}

func TestBadInput(t *testing.T) {
	ds := build(t, []string{"a", "b"}, []string{"point-query"}, map[string]map[string]float64{
		"a": {"point-query": 10}, "b": {"point-query": 20},
	})
	_, err := Relative(ds, RelativeOptions{Base: "mysql-9"})
	if !errors.Is(err, ErrNoSuchCell) || !strings.Contains(err.Error(), `base "mysql-9"`) || !strings.Contains(err.Error(), "cells: a, b") {
		t.Errorf("unknown base: %v", err)
	}
	if _, err := Relative(ds, RelativeOptions{Threads: 8}); !errors.Is(err, ErrNoThreadCount) {
		t.Errorf("unknown threads: %v", err)
	}
	if _, err := Relative(NewDataset("empty"), RelativeOptions{}); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty dataset: %v", err)
	}
	for _, o := range []Observation{
		{Cell: "a", Step: "x", Threads: 1, QPS: math.NaN()},
		{Cell: "a", Step: "x", Threads: 1, QPS: -1},
		{Cell: "a", Step: "x", Threads: 1, QPS: math.Inf(1)},
		{Cell: "a", Step: "", Threads: 1, QPS: 1},
		{Cell: "a", Step: "x", Threads: 0, QPS: 1},
	} {
		if err := ds.Add(o); !errors.Is(err, ErrInvalid) {
			t.Errorf("Add(%+v) = %v, want ErrInvalid", o, err)
		}
	}
	if err := ds.Add(Observation{Cell: "a", Step: "point-query", Threads: 1, QPS: 1}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate: %v", err)
	}
	// Two thread counts and no choice.
	_ = ds.Add(Observation{Cell: "a", Step: "point-query", Threads: 4, QPS: 30})
	if _, err := Relative(ds, RelativeOptions{}); !errors.Is(err, ErrNoThreadCount) || !strings.Contains(err.Error(), "1, 4") {
		t.Errorf("ambiguous threads: %v", err)
	}
	if _, err := HWEfficiency(ds, HWOptions{Step: "nope", Threads: 1}); !errors.Is(err, ErrNoSuchStep) {
		t.Errorf("unknown HW step: %v", err)
	}
}

func TestSummarize(t *testing.T) {
	// 2, 4, 4, 4, 5, 5, 7, 9: mean 5, population stddev 2, sample sqrt(32/7).
	xs := []float64{9, 2, 4, 4, 4, 5, 5, 7}
	s := Summarize(xs, StddevSample)
	if s.Average != 5 || s.Median != 4.5 || s.Min != 2 || s.Max != 9 || math.Abs(float64(s.Stddev)-math.Sqrt(32.0/7)) > 1e-12 {
		t.Errorf("sample summary %+v", s)
	}
	if p := Summarize(xs, StddevPopulation); p.Stddev != 2 {
		t.Errorf("population stddev %v", p.Stddev)
	}
	if one := Summarize([]float64{3}, StddevSample); !math.IsNaN(float64(one.Stddev)) || one.Stddev.Format(2) != "n/a" {
		t.Errorf("stddev of one value %v", one.Stddev)
	}
	inf := Summarize([]float64{1, math.Inf(1)}, StddevSample)
	if inf.Average.Format(2) != "inf" || inf.Max.Format(2) != "inf" || inf.Stddev.Format(2) != "n/a" || inf.Median.Format(2) != "inf" {
		t.Errorf("with inf: %+v", inf)
	}
}

func TestGroupStatsCustomGrouping(t *testing.T) {
	steps := []string{"point-query", "hot-points", "random-points_range=10", "scan", "insert", "update-one"}
	ds := build(t, []string{"base", "x"}, steps, map[string]map[string]float64{
		"base": {"point-query": 100, "hot-points": 100, "random-points_range=10": 100, "scan": 100, "insert": 100, "update-one": 100},
		"x":    {"point-query": 90, "hot-points": 110, "random-points_range=10": 130, "scan": 100, "insert": 50},
	})
	g, err := ParseGrouping(strings.NewReader(`
# two point groups, writes; scan left out on purpose
point, part 1: point-query, hot-points
point, part 2: random-points_range=*
writes: insert update-*
`))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := Relative(ds, RelativeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gt, err := GroupStats(rel, g, "")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"point, part 1", "point, part 2", "writes"}, gt.Groups); d != "" {
		t.Error(d)
	}
	if d := cmp.Diff([]string{"scan"}, gt.Ungrouped); d != "" {
		t.Error(d)
	}
	p1 := gt.Stats[0][0]
	if p1.N != 2 || p1.Average != 1 || p1.Min != 0.9 || math.Abs(float64(p1.Max)-1.1) > 1e-12 || math.Abs(float64(p1.Stddev)-math.Sqrt(0.02)) > 1e-12 {
		t.Errorf("point, part 1: %+v", p1)
	}
	w := gt.Stats[0][2]
	if w.N != 1 || w.Missing != 1 || w.Average != 0.5 {
		t.Errorf("writes: %+v", w)
	}
	var buf bytes.Buffer
	if err := gt.Tables()[0].WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"average  1.00           1.30           0.50", "stddev   0.14           n/a            n/a",
		"stddev is the stddev (sample, n-1)", "writes: 1 step(s) missing", "in no group: scan"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("group table lacks %q:\n%s", want, buf.String())
		}
	}
	for _, bad := range []string{"no colon here", "a: x\na: y", ": x", "a:"} {
		if _, err := ParseGrouping(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseGrouping(%q) accepted", bad)
		}
	}
	j, err := ParseGrouping(strings.NewReader(`{"name":"mine","groups":[{"name":"all","steps":["*"]}]}`))
	if err != nil || j.Name != "mine" {
		t.Fatalf("JSON grouping: %v %+v", err, j)
	}
}

func TestCatalogGrouping(t *testing.T) {
	g := CatalogGrouping()
	if d := cmp.Diff([]string{"point", "range, part 1", "range, part 2", "writes"}, g.Names()); d != "" {
		t.Error(d)
	}
	for step, want := range map[string]string{"point-query": "point", "point-query.pre": "point", "scan": "range, part 1",
		"read-only-count": "range, part 2", "insert": "writes", "range-notcovered-si": "range, part 1"} {
		if got, ok := g.GroupOf(step); !ok || got != want {
			t.Errorf("%s in %q, want %q", step, got, want)
		}
	}
}

func TestScaleUp(t *testing.T) {
	ds := NewDataset("sweep")
	threads := []int{1, 2, 4, 8, 12, 16, 20, 24, 32, 40, 48}
	// Ratio at 48 for each step; lower thread counts scale linearly to it.
	top := map[string]float64{"point-query": 44, "scan": 35, "hot-points": 25, "insert": 15, "update-one": 3, "exactly-40": 40, "exactly-10": 10}
	steps := []string{"point-query", "scan", "hot-points", "insert", "update-one", "exactly-40", "exactly-10"}
	for _, s := range steps {
		for _, th := range threads {
			q := 1000 * (1 + (top[s]-1)*float64(th-1)/47)
			if err := ds.Add(Observation{Cell: "m", Step: s, Threads: th, QPS: q}); err != nil {
				t.Fatal(err)
			}
		}
	}
	su, err := ScaleUp(ds, ScaleUpOptions{Cell: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]float64{40, 30, 20, 10}, su.Edges, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })); d != "" {
		t.Errorf("edges at 48: %s", d)
	}
	got := map[string][]string{}
	for _, b := range su.Buckets {
		got[b.Label] = b.Steps
	}
	want := map[string][]string{"> 40": {"point-query"}, "30-40": {"scan", "exactly-40"}, "20-30": {"hot-points"},
		"10-20": {"insert"}, "<= 10": {"update-one", "exactly-10"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("buckets (-want +got):\n%s", d)
	}
	if r := su.Ratios[0][len(threads)-1].String(); r != "44.00" {
		t.Errorf("point-query at 48: %s", r)
	}
	// Edges scale with the top concurrency.
	ds16 := NewDataset("16")
	for _, th := range []int{1, 16} {
		_ = ds16.Add(Observation{Cell: "m", Step: "point-query", Threads: th, QPS: float64(th) * 100})
	}
	su16, err := ScaleUp(ds16, ScaleUpOptions{Cell: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if su16.Buckets[0].Label != "> 13.3" || su16.Buckets[4].Label != "<= 3.3" || su16.Buckets[0].Steps[0] != "point-query" {
		t.Errorf("16-thread buckets %+v", su16.Buckets)
	}
	one := NewDataset("one")
	_ = one.Add(Observation{Cell: "m", Step: "x", Threads: 4, QPS: 1})
	if _, err := ScaleUp(one, ScaleUpOptions{Cell: "m"}); err == nil || !strings.Contains(err.Error(), "two thread counts") {
		t.Errorf("single thread count: %v", err)
	}
}

func TestAnalyzeSeries(t *testing.T) {
	// 5 s warm-up at 10, then 100 s around 1000 with a 3 s stall at 200 and
	// a 1 s dip at 450 (below half the median).
	s := &TimeSeries{IntervalSeconds: 1, WarmupSeconds: 5}
	for i := 0; i < 105; i++ {
		v := 1000.0 + float64(i%3)
		switch {
		case i < 5:
			v = 10
		case i >= 40 && i < 43:
			v = 200
		case i == 80:
			v = 450
		}
		s.Values = append(s.Values, v)
	}
	st, err := AnalyzeSeries(s, SeriesOptions{LastSeconds: 20, WindowSeconds: 50})
	if err != nil {
		t.Fatal(err)
	}
	if st.Samples != 100 || st.StallSeconds != 4 || len(st.Stalls) != 2 {
		t.Fatalf("stats %+v", st)
	}
	if d := cmp.Diff(Stall{StartSecond: 40, Seconds: 3, MinQPS: 200}, st.Stalls[0]); d != "" {
		t.Error(d)
	}
	if st.Box.Samples != 20 || st.Box.FromSecond != 85 || st.Box.Min < 1000 {
		t.Errorf("box %+v", st.Box)
	}
	if len(st.Windows) != 2 || st.Windows[0].FromSecond != 5 || st.Windows[0].Min != 200 {
		t.Errorf("windows %+v", st.Windows)
	}
	if !(st.CV > 0.05 && st.CV < 0.2) {
		t.Errorf("cv %v", st.CV)
	}
	if _, err := AnalyzeSeries(&TimeSeries{IntervalSeconds: 1, WarmupSeconds: 10, Values: []float64{1, 2}}, SeriesOptions{}); !errors.Is(err, ErrEmpty) {
		t.Errorf("all warm-up: %v", err)
	}
}

func TestRepeatsAndCompare(t *testing.T) {
	ds := NewDataset("rep")
	add := func(name, version string, repeat int, qps ...float64) {
		_ = ds.AddCell(CellMeta{Name: name, Database: "maria", Engine: "mariadb", Version: version, Config: "base", Repeat: repeat})
		for i, q := range qps {
			_ = ds.Add(Observation{Cell: name, Step: []string{"point-query", "insert"}[i], Threads: 1, QPS: q})
		}
	}
	add("maria-10.11-base-r0", "10.11", 0, 1000, 500)
	add("maria-10.11-base-r1", "10.11", 1, 1010, 480)
	add("maria-10.11-base-r2", "10.11", 2, 990, 520)
	add("maria-11.4-base-r0", "11.4", 0, 1200, 505)
	add("maria-11.4-base-r1", "11.4", 1, 1210, 470)
	add("maria-11.4-base-r2", "11.4", 2, 1190, 515)
	stats := RepeatStats(ds)
	if len(stats) != 4 || stats[0].Combination != "maria-10.11-base" || stats[0].N != 3 || stats[0].Mean != 1000 || stats[0].Stddev != 10 {
		t.Fatalf("repeat stats %+v", stats)
	}
	// 95 % CI of 1000 ± t(0.975, 2) × 10 / sqrt(3).
	if h := float64(stats[0].CIHigh) - 1000; math.Abs(h-4.302653*10/math.Sqrt(3)) > 1e-3 {
		t.Errorf("CI half-width %v", h)
	}
	// Two repeats: a spread but no interval (t(0.975, 1) is 12.7).
	two := repeatStat("c", "insert", 1, []string{"a", "b"}, []float64{5019, 9514})
	if two.N != 2 || math.IsNaN(float64(two.Stddev)) || !math.IsNaN(float64(two.CILow)) || !math.IsNaN(float64(two.CIHigh)) {
		t.Errorf("two repeats: %+v, want a stddev and no CI", two)
	}
	if row := RepeatTable([]RepeatStat{two}).Rows[0]; row[len(row)-1] != "n/a" {
		t.Errorf("two repeats print CI %q, want n/a", row[len(row)-1])
	}
	cs, err := CompareRepeats(ds, "maria-10.11-base", "maria-11.4-base", CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range cs {
		got[c.Step] = c.Verdict
	}
	if d := cmp.Diff(map[string]string{"point-query": VerdictFaster, "insert": VerdictNoise}, got); d != "" {
		t.Error(d)
	}
	if _, err := CompareRepeats(ds, "maria-10.11-base", "nope", CompareOptions{}); !errors.Is(err, ErrNoSuchCell) {
		t.Errorf("unknown combination: %v", err)
	}
}

func TestTableFormats(t *testing.T) {
	tb := Table{ID: "x", Title: "T", Columns: []string{"a", "b|c"}, Rows: [][]string{{"1", "2"}}, Notes: []string{"n"}}
	var md, csv bytes.Buffer
	if err := WriteTables(&md, FormatMarkdown, []Table{tb}); err != nil {
		t.Fatal(err)
	}
	if want := "### T\n\n| a | b\\|c |\n|---|---|\n| 1 | 2 |\n\n- n\n"; md.String() != want {
		t.Errorf("markdown %q", md.String())
	}
	if err := WriteTables(&csv, FormatCSV, []Table{tb}); err != nil {
		t.Fatal(err)
	}
	if want := "table,a,b|c\nx,1,2\n"; csv.String() != want {
		t.Errorf("csv %q", csv.String())
	}
	if _, err := ParseFormat("yaml"); err == nil {
		t.Error("yaml accepted")
	}
}

func TestMergeAndPaired(t *testing.T) {
	a := build(t, []string{"m", "p"}, []string{"point-query", "insert"}, map[string]map[string]float64{
		"m": {"point-query": 100, "insert": 10}, "p": {"point-query": 50, "insert": 0}})
	a.Name = "run-a"
	b := build(t, []string{"m", "p"}, []string{"point-query", "insert"}, map[string]map[string]float64{
		"m": {"point-query": 90}, "p": {"point-query": 50, "insert": 0}})
	b.Name = "run-b"
	pt, err := PairedTable(a, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][]string{{"0.90", "1.00"}, {"missing", "1"}}, [][]string{ratioStrings(pt.Ratios[0]), ratioStrings(pt.Ratios[1])}); d != "" {
		t.Error(d)
	}
	m, err := Merge("both", a, b)
	if err != nil || len(m.Cells()) != 4 || m.Cells()[2].Name != "run-b/m" {
		t.Fatalf("merge %v %v", err, m.CellNames())
	}
	if _, err := Merge("x", a, a); !errors.Is(err, ErrDuplicate) {
		t.Errorf("merge of one name twice: %v", err)
	}
}

func TestQuantilesSelectMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 1; n < 200; n += 7 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Round(rng.Float64()*50) / 10 // many ties
		}
		s := sortedCopy(xs)
		qs := []float64{0, 0.05, 0.25, 0.5, 0.75, 0.95, 1}
		got := quantilesSelect(append([]float64(nil), xs...), qs...)
		for i, q := range qs {
			if want := stats.Quantile(s, q); math.Abs(got[i]-want) > 1e-12 {
				t.Fatalf("n=%d q=%v: %v, sort gives %v", n, q, got[i], want)
			}
		}
	}
}

func TestFiveGroupExample(t *testing.T) {
	f, err := os.Open("testdata/groups-5.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := ParseGrouping(f)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"point, part 1", "point, part 2", "range, part 1", "range, part 2", "writes"}, g.Names()); d != "" {
		t.Error(d)
	}
	cat := CatalogGrouping()
	for _, s := range workload.Standard() {
		got, ok := g.GroupOf(s.Name)
		want, _ := cat.GroupOf(s.Name)
		if !ok || !strings.HasPrefix(got, strings.TrimSuffix(want, "s")) {
			t.Errorf("%s: in %q, catalog says %q", s.Name, got, want)
		}
	}
}
