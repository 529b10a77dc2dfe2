package analysis

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/inference"
)

// repeatsDataset builds cells "maria-<version>-base-r<i>" with the QPS of
// each repeat per step, at the given thread counts.
func repeatsDataset(t *testing.T, threads []int, runs map[string]map[string][]float64, versions, steps []string) *Dataset {
	t.Helper()
	ds := NewDataset("rep")
	for _, v := range versions {
		n := len(runs[v][steps[0]])
		for i := range n {
			name := fmt.Sprintf("maria-%s-base-r%d", v, i)
			if err := ds.AddCell(CellMeta{Name: name, Database: "maria", Engine: "mariadb", Version: v, Config: "base", Repeat: i}); err != nil {
				t.Fatal(err)
			}
			for _, th := range threads {
				for _, s := range steps {
					if i >= len(runs[v][s]) {
						continue
					}
					if err := ds.Add(Observation{Cell: name, Step: s, Threads: th, QPS: runs[v][s][i] * float64(th)}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	return ds
}

func TestRelativeOverRepeats(t *testing.T) {
	steps := []string{"point-query", "insert", "scan"}
	runs := map[string]map[string][]float64{
		"10.11": {"point-query": {1000, 1010, 990}, "insert": {500, 480, 520}, "scan": {1000, 1001, 999}},
		// 1.2× faster; within noise; 2 % slower, significant but below
		// the 5 % magnitude.
		"11.4": {"point-query": {1200, 1210, 1190}, "insert": {505, 470, 515}, "scan": {980, 981, 979}},
		// One run: a ratio without interval.
		"11.8": {"point-query": {1100}, "insert": {400}, "scan": {1000}},
	}
	ds := repeatsDataset(t, []int{1}, runs, []string{"10.11", "11.4", "11.8"}, steps)
	rel, err := Relative(ds, RelativeOptions{ByCombination: true, Base: "maria-10.11-base-r1"})
	if err != nil {
		t.Fatal(err)
	}
	if rel.Base != "maria-10.11-base" || !cmp.Equal(rel.Cells, []string{"maria-11.4-base", "maria-11.8-base"}) {
		t.Fatalf("base %q cells %v", rel.Base, rel.Cells)
	}
	// The table's intervals are inference.RatioOfMeans of the repeats.
	for i, s := range steps {
		want, err := inference.RatioOfMeans(runs["10.11"][s], runs["11.4"][s], 0.95)
		if err != nil {
			t.Fatal(err)
		}
		got := rel.Inference[i][0]
		if got == nil || float64(got.Low) != want.Low || float64(got.High) != want.High || got.Method != inference.MethodFieller ||
			got.N != 3 || got.NBase != 3 || float64(got.P) != want.PRatioOne || rel.Ratios[i][0].Value != want.Estimate {
			t.Errorf("%s: inference %+v, want %+v", s, got, want)
		}
		if one := rel.Inference[i][1]; one == nil || !one.TooFew || one.N != 1 || one.NBase != 3 || one.Marker != MarkerUnconfirmed {
			t.Errorf("%s: one-run column: inference %+v, want too few runs, marked %q", s, one, MarkerUnconfirmed)
		}
	}
	var markers []Marker
	for i := range steps {
		markers = append(markers, rel.Inference[i][0].Marker)
	}
	if d := cmp.Diff([]Marker{MarkerSignificant, MarkerNoise, MarkerNone}, markers); d != "" {
		t.Errorf("markers (-want +got):\n%s", d)
	}
	if rel.Tests["maria-11.4-base"] != 3 || rel.Runs["maria-11.8-base"] != 1 {
		t.Errorf("tests %v runs %v", rel.Tests, rel.Runs)
	}
	var buf bytes.Buffer
	if err := rel.Table().WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	want := `Relative throughput over repeats: mean QPS(combination) / mean QPS(maria-10.11-base), 1 threads (> 1 is faster)
step         base mean qps  maria-11.4-base     maria-11.8-base
point-query  1000.00        1.20* [1.17, 1.23]  1.10?
insert       500.00         0.99~ [0.90, 1.10]  0.80?
scan         1000.00        0.98 [0.98, 0.98]   1.00?
note: ratios are of the means over repeats; runs per column: maria-10.11-base 3, maria-11.4-base 3, maria-11.8-base 1
note: ?: 1 run or block on a side, too few for an interval (it needs 3, two degrees of freedom; with 2 the bounds span orders of magnitude): not a finding until repeated more (workload.repeats >= 3): maria-11.8-base point-query, maria-11.8-base insert, maria-11.8-base scan
note: [low, high] is the 95 % interval of the ratio of means by Fieller's method (independent runs, normal per side, unequal variances); docs/noise.md
note: *: |ratio - 1| >= 5 % and significant at 5 % after Holm's correction (FWER) over the column's step x threads tests; ~: the interval contains 1 (within noise); no marker: the interval excludes 1 but the difference is smaller or does not survive the correction
`
	if d := cmp.Diff(want, buf.String()); d != "" {
		t.Errorf("text (-want +got):\n%s", d)
	}
}

func TestRelativeOverRepeatsUnbounded(t *testing.T) {
	runs := map[string]map[string][]float64{
		"10.11": {"point-query": {10, 1000, 20}},
		"11.4":  {"point-query": {500, 520, 510}},
	}
	ds := repeatsDataset(t, []int{1}, runs, []string{"10.11", "11.4"}, []string{"point-query"})
	rel, err := Relative(ds, RelativeOptions{ByCombination: true})
	if err != nil {
		t.Fatal(err)
	}
	ri := rel.Inference[0][0]
	if !ri.FiellerUnbounded || ri.Method != inference.MethodDelta || ri.Marker != MarkerNoise {
		t.Errorf("inference %+v, want an unbounded Fieller set shown by the delta method, within noise", ri)
	}
	if notes := strings.Join(rel.Table().Notes, "\n"); !strings.Contains(notes, "unbounded") || !strings.Contains(notes, "maria-11.4-base point-query") {
		t.Errorf("notes do not name the unbounded interval:\n%s", notes)
	}
}

func TestBuildReportPoolsRepeatsAcrossThreads(t *testing.T) {
	steps := []string{"point-query", "insert"}
	runs := map[string]map[string][]float64{
		"10.11": {"point-query": {1000, 1010, 990}, "insert": {500, 480, 520}},
		"11.4":  {"point-query": {1200, 1210, 1190}, "insert": {505, 470, 515}},
	}
	ds := repeatsDataset(t, []int{1, 4}, runs, []string{"10.11", "11.4"}, steps)
	r, err := BuildReport(ds, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Relative) != 2 {
		t.Fatalf("%d relative tables", len(r.Relative))
	}
	for _, rel := range r.Relative {
		// One family per column over both thread counts: 2 steps × 2.
		if !rel.ByCombination || rel.Tests["maria-11.4-base"] != 4 {
			t.Errorf("t%d: by combination %v tests %v", rel.Threads, rel.ByCombination, rel.Tests)
		}
		// Holm over 4 tests: point-query has the smallest p at both
		// thread counts (the same runs scaled), so both get 4p.
		if pq := rel.Inference[0][0]; float64(pq.PAdjusted) != math.Min(1, 4*float64(pq.P)) {
			t.Errorf("t%d: adjusted p %v of p %v, want 4p: not corrected over the family", rel.Threads, pq.PAdjusted, pq.P)
		}
	}
	if len(r.Groups) != 2 || r.Groups[0].Cells[0] != "maria-11.4-base" {
		t.Errorf("group tables not by combination: %+v", r.Groups)
	}
	// A dataset of single runs keeps its per-cell tables.
	single := build(t, []string{"a", "b"}, []string{"point-query"}, map[string]map[string]float64{
		"a": {"point-query": 100}, "b": {"point-query": 90}})
	rs, err := BuildReport(single, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rs.Relative[0].ByCombination || rs.Relative[0].Inference != nil {
		t.Errorf("single runs pooled: %+v", rs.Relative[0])
	}
	if _, err := BuildReport(ds, ReportOptions{Significance: Significance{Correction: "bonferroni"}}); err == nil {
		t.Errorf("unknown correction accepted")
	}
}

// TestReportAAFalsePositives: an A/A comparison of 32 steps with 3
// repeats per side, at run-to-run CVs of 3–18 %, marks a step "*" in at
// most α of the reports (plus three binomial standard errors).
func TestReportAAFalsePositives(t *testing.T) {
	const reports = 300
	steps := make([]string, 32)
	for i := range steps {
		steps[i] = fmt.Sprintf("step-%02d", i)
	}
	r := rand.New(rand.NewPCG(7, 7))
	flagged, marked := 0, 0
	for range reports {
		runs := map[string]map[string][]float64{"a": {}, "b": {}}
		for i, s := range steps {
			cv := 0.03 + 0.15*float64(i)/31
			for _, v := range []string{"a", "b"} {
				for range 3 {
					runs[v][s] = append(runs[v][s], 1000*math.Exp(cv*r.NormFloat64()))
				}
			}
		}
		ds := repeatsDataset(t, []int{1}, runs, []string{"a", "b"}, steps)
		rel, err := Relative(ds, RelativeOptions{ByCombination: true, Steps: steps,
			Significance: Significance{Magnitude: -1}}) // no magnitude floor: the strictest case
		if err != nil {
			t.Fatal(err)
		}
		anySignificant := false
		for i := range steps {
			switch rel.Inference[i][0].Marker {
			case MarkerSignificant:
				anySignificant = true
			case MarkerNone:
				marked++ // excludes 1 unadjusted: about 5 % of the steps
			}
		}
		if anySignificant {
			flagged++
		}
	}
	rate := float64(flagged) / reports
	unadjusted := float64(marked) / (reports * 32)
	t.Logf("A/A: %d of %d reports mark a step *; %.3f of the steps have an interval excluding 1", flagged, reports, unadjusted)
	if limit := 0.05 + 3*math.Sqrt(0.05*0.95/reports); rate > limit {
		t.Errorf("A/A reports flagged: %.3f, want <= %.3f", rate, limit)
	}
	// The per-step intervals are not corrected: about 5 % exclude 1
	// (a little less: Fieller's coverage with 3 runs is about 96 %).
	if unadjusted < 0.02 || unadjusted > 0.08 {
		t.Errorf("share of A/A intervals excluding 1: %.3f, want about 0.05", unadjusted)
	}
}

func TestNoiseFloors(t *testing.T) {
	runs := map[string]map[string][]float64{
		"10.11": {"point-query": {1000, 1100, 900}, "insert": {500, 500, 500}},
		"11.4":  {"point-query": {2000, 2100}, "insert": {400, 400}},
	}
	ds := repeatsDataset(t, []int{1}, runs, []string{"10.11", "11.4"}, []string{"point-query", "insert"})
	rows := NoiseFloors(ds)
	if len(rows) != 2 {
		t.Fatalf("rows %+v", rows)
	}
	ss := func(xs ...float64) float64 {
		m := 0.0
		for _, x := range xs {
			m += math.Log(x) / float64(len(xs))
		}
		s := 0.0
		for _, x := range xs {
			s += (math.Log(x) - m) * (math.Log(x) - m)
		}
		return s
	}
	sigma := math.Sqrt((ss(1000, 1100, 900) + ss(2000, 2100)) / 3)
	pq := rows[0]
	if pq.Step != "point-query" || pq.DF != 3 || pq.Runs != 5 || pq.Sets != 2 || pq.Repeats != 3 || math.Abs(pq.SigmaLog-sigma) > 1e-12 {
		t.Errorf("point-query floor %+v, want σ %v df 3 runs 5", pq, sigma)
	}
	mde, _ := inference.Design{CV: pq.CV}.MDE(3, 0.8)
	if float64(pq.MDE) != mde || pq.RepeatsFor5Pct < 10 {
		t.Errorf("point-query MDE %v (want %v), repeats for ±5 %% %d", pq.MDE, mde, pq.RepeatsFor5Pct)
	}
	if ins := rows[1]; ins.SigmaLog != 0 || ins.MDE != 0 || ins.RepeatsFor5Pct != 2 {
		t.Errorf("noiseless insert %+v", ins)
	}
	tab := NoiseTable(rows)
	if !cmp.Equal(tab.Columns[5], "mde % (n=3)") || tab.Rows[1][2] != "0.00" {
		t.Errorf("table %+v", tab)
	}
	r, err := BuildReport(ds, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Noise) != 2 || r.Tables()[len(r.Tables())-1].ID != "noise" {
		t.Errorf("report lacks the noise floor table")
	}
}

// TestWithinRunMarksOfSingleRuns: a table of single runs marks every ratio
// whose two runs have per-second samples: "~" when the ratio's within-run
// interval contains 1 (noise even by the runs' own jitter), "?" when it
// lies beyond it (not a finding with one run per side); a ratio without
// samples stays unmarked and the note names it.
func TestWithinRunMarksOfSingleRuns(t *testing.T) {
	series := func(vals ...float64) *TimeSeries {
		return &TimeSeries{IntervalSeconds: 1, WarmupSeconds: 1, Values: append([]float64{1}, vals...)}
	}
	ds := NewDataset("single")
	for _, c := range []string{"old", "new"} {
		if err := ds.AddCell(CellMeta{Name: c}); err != nil {
			t.Fatal(err)
		}
	}
	obs := []Observation{
		// point-query: 1000 ± 100 vs 1050 ± 100 per second: within noise.
		{Cell: "old", Step: "point-query", Threads: 1, QPS: 1000, Series: series(900, 1000, 1100, 1000)},
		{Cell: "new", Step: "point-query", Threads: 1, QPS: 1050, Series: series(950, 1050, 1150, 1050)},
		// insert: 500 vs 260, tight per-second samples: beyond the jitter.
		{Cell: "old", Step: "insert", Threads: 1, QPS: 500, Series: series(495, 500, 505, 500)},
		{Cell: "new", Step: "insert", Threads: 1, QPS: 260, Series: series(255, 260, 265, 260)},
		// scan: no series on one side: no mark.
		{Cell: "old", Step: "scan", Threads: 1, QPS: 200},
		{Cell: "new", Step: "scan", Threads: 1, QPS: 100, Series: series(99, 100, 101)},
		// update-index: a single steady sample per side: no interval.
		{Cell: "old", Step: "update-index", Threads: 1, QPS: 300, Series: series(300)},
		{Cell: "new", Step: "update-index", Threads: 1, QPS: 150, Series: series(150)},
	}
	for _, o := range obs {
		if err := ds.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	rel, err := Relative(ds, RelativeOptions{Steps: []string{"point-query", "insert", "scan", "update-index"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		step   string
		marker Marker
		marked bool
	}{
		{"point-query", MarkerNoise, true},
		{"insert", MarkerUnconfirmed, true},
		{"scan", "", false},
		{"update-index", "", false},
	}
	if !rel.WithinRun {
		t.Fatal("WithinRun not set")
	}
	for i, tt := range tests {
		ri := rel.Inference[i][0]
		if (ri != nil) != tt.marked {
			t.Errorf("%s: inference %+v, want marked %v", tt.step, ri, tt.marked)
			continue
		}
		if ri == nil {
			continue
		}
		if ri.Marker != tt.marker || ri.Method != MethodWithinRun || ri.N != 4 || ri.NBase != 4 {
			t.Errorf("%s: marker %q method %s n %d/%d, want %q within-run 4/4", tt.step, ri.Marker, ri.Method, ri.NBase, ri.N, tt.marker)
		}
		if r := rel.Ratios[i][0].Value; tt.marker == MarkerNoise && !(float64(ri.Low) <= 1 && 1 <= float64(ri.High)) ||
			tt.marker == MarkerUnconfirmed && (float64(ri.Low) > r || float64(ri.High) < r || float64(ri.High) >= 1) {
			t.Errorf("%s: interval [%v, %v] around %v does not fit the marker %q", tt.step, ri.Low, ri.High, r, tt.marker)
		}
	}
	var buf bytes.Buffer
	if err := rel.Table().WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{
		"point-query   1000.00   1.05~\n", "insert        500.00    0.52?\n", "scan          200.00    0.50\n",
		"~: within noise (the ratio's 95 % interval from the two runs' per-second samples contains 1)",
		"?: beyond the runs' own per-second jitter", "no per-second samples, no mark: new scan, new update-index",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, noIntervalNote) {
		t.Errorf("a marked table still says its ratios have no interval:\n%s", text)
	}

	// The group statistics say how many of a group's ratios are noise.
	gt, err := GroupStats(rel, CatalogGrouping(), "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int{} // group → {within noise, marked}
	for i, s := range rel.Steps {
		g, ok := CatalogGrouping().GroupOf(s)
		if !ok {
			continue
		}
		w := want[g]
		if ri := rel.Inference[i][0]; ri != nil {
			w[1]++
			if ri.Marker == MarkerNoise {
				w[0]++
			}
		}
		want[g] = w
	}
	for j, g := range gt.Groups {
		st := gt.Stats[0][j]
		if got := [2]int{st.WithinNoise, st.Marked}; got != want[g] {
			t.Errorf("group %s: within noise %d of %d marked, want %d of %d", g, got[0], got[1], want[g][0], want[g][1])
		}
	}
	buf.Reset()
	if err := gt.Tables()[0].WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "within noise (~)") || !strings.Contains(buf.String(), "1 of 1") {
		t.Errorf("group table lacks the within-noise row:\n%s", buf.String())
	}
}
