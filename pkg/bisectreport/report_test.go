package bisectreport

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

func TestSummaryAndChart(t *testing.T) {
	done := metav1.NewTime(time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC))
	localized := &dbbenchv1alpha1.BenchmarkBisection{
		ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ci", UID: "u1"},
		Spec:       dbbenchv1alpha1.BenchmarkBisectionSpec{RunRef: &dbbenchv1alpha1.BisectionRunRef{Name: "night-3"}, Parallelism: 2, Repeats: 3, MaxCells: 40},
		Status: dbbenchv1alpha1.BenchmarkBisectionStatus{
			Conditions: []metav1.Condition{{Type: dbbenchv1alpha1.BisectionConditionLocalized, Status: metav1.ConditionTrue, Reason: "Localized", Message: "t2 is the first bad point"}},
			FirstBad:   "t2", CellsUsed: 12, CompletionTime: &done,
			Endpoints: &dbbenchv1alpha1.BisectionEndpoints{Reproduced: true, Key: "write@4", Ratio: "0.8"},
			Points: []dbbenchv1alpha1.BisectionPointStatus{
				{Index: 0, Name: "t0", Verdict: "Good", Ratio: "1"},
				{Index: 1, Name: "t1", Verdict: "Failed", Reason: "InvalidImage"},
				{Index: 2, Name: "t2", Verdict: "Bad", Ratio: "0.8", RatioLow: "0.78", RatioHigh: "0.82", Key: "write@8"},
			},
		},
	}
	for _, tc := range []struct {
		name                 string
		b                    *dbbenchv1alpha1.BenchmarkBisection
		localized, run, want string
		firstBad             int
	}{
		{name: "localized", b: localized, localized: "True", run: "night-3", want: `"firstBad": "t2"`, firstBad: 2},
		{name: "not started", b: &dbbenchv1alpha1.BenchmarkBisection{ObjectMeta: metav1.ObjectMeta{Name: "new"}},
			localized: "Unknown", want: `"points": []`, firstBad: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSummary(tc.b, "nightly")
			raw, err := s.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			var back Summary
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			if back.SchemaVersion != SchemaV1 || back.Localized != tc.localized || back.Run != tc.run || back.Suite != "nightly" ||
				len(back.Points) != len(tc.b.Status.Points) || !strings.Contains(string(raw), tc.want) {
				t.Errorf("summary %s", raw)
			}
			c := Chart(tc.b, Extra{})
			if c.FirstBad != tc.firstBad || len(c.Points) != len(tc.b.Status.Points) {
				t.Errorf("chart first bad %d of %d points, want %d", c.FirstBad, len(c.Points), tc.firstBad)
			}
		})
	}
	c := Chart(localized, Extra{})
	// The culprit's own key is the chart's; a failed point has no ratio.
	if c.Key != "write@8" || !math.IsNaN(c.Points[1].Ratio) || c.Points[2].Low != 0.78 {
		t.Errorf("chart %+v", c)
	}
	if s := NewSummary(localized, ""); s.Rule.Parallelism != 2 || s.Rule.Repeats != 3 || s.Rule.MaxCells != 40 || s.CompletionTime == nil || !s.CompletionTime.Equal(done.Time) {
		t.Errorf("summary rule %+v, completion %v", s.Rule, s.CompletionTime)
	}
	html, err := HTML(localized, Extra{})
	if err != nil || !strings.Contains(string(html), "dbbench bisection: b") {
		t.Errorf("HTML: %v\n%.300s", err, html)
	}
}

// The page of a bisection a suite's verdict started says how it started,
// links the run's report, and carries the probabilities, the environment
// and the explanation with its flame graph.
func TestChainPage(t *testing.T) {
	b := &dbbenchv1alpha1.BenchmarkBisection{ObjectMeta: metav1.ObjectMeta{Name: "night-6-bisect"}}
	b.Status = dbbenchv1alpha1.BenchmarkBisectionStatus{
		FirstBad: "t5", LastGood: "t4", Confidence: "0.981",
		Rule: &dbbenchv1alpha1.BisectionRule{MinMagnitudePercent: 5, MagnitudeRule: "Estimated", MaxPValue: "0.05", Correction: "Holm", Metrics: []dbbenchv1alpha1.RegressionMetric{"Throughput"}, Confidence: "0.9"},
		Points: []dbbenchv1alpha1.BisectionPointStatus{{Name: "t3", Verdict: "Good", Ratio: "1"}, {Name: "t4", Verdict: "Good", Ratio: "0.99", Probability: "0.019"},
			{Name: "t5", Verdict: "Bad", Ratio: "0.15", Probability: "0.981"}, {Name: "t6", Verdict: "Bad", Ratio: "0.14"}},
		Environment: []dbbenchv1alpha1.BisectionEnvironmentChange{{Round: 2, ShiftPercent: "+31", Key: "update-index@1", Held: true}},
		Explanation: &dbbenchv1alpha1.BisectionExplanation{Step: "update-index", Threads: 1, ProfileThreads: 1,
			Counters:  []dbbenchv1alpha1.ExplainedCounter{{Name: "Innodb_os_log_fsyncs", LastGood: "0.01", FirstBad: "1", Ratio: "100"}},
			Functions: []dbbenchv1alpha1.ExplainedFunction{{Function: "os_file_flush", LastGoodSelfPercent: "1.00", FirstBadSelfPercent: "40.00", ChangePoints: "+39.00"}}},
	}
	x := Extra{RegressedRun: "night-6", Verdict: "1 step × thread pairs slower by 5% or more", Since: "night-5", LastBefore: "night-4",
		RunReport: "../../night-6/report.html", FlameGraph: []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><text>os_file_flush</text></svg>`)}
	c := Chart(b, x)
	if len(c.Chain) != 3 || !strings.Contains(c.Chain[1], "night-5 is the first run of the new level, night-4 the last run before it") ||
		len(c.Links) != 1 || c.Links[0].Href != "../../night-6/report.html" {
		t.Fatalf("chain %q, links %+v", c.Chain, c.Links)
	}
	ids := []string{}
	for _, tb := range c.Tables {
		ids = append(ids, tb.ID)
	}
	if strings.Join(ids, ",") != "bisection.probability,bisection.environment,bisection.counters,bisection.functions" || len(c.Tables[0].Rows) != 2 {
		t.Fatalf("tables %v (probability rows %v)", ids, c.Tables[0].Rows)
	}
	html, err := HTML(b, x)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<a href="../../night-6/report.html">Report of run night-6</a>`, "<h2>How it started</h2>", "Innodb_os_log_fsyncs",
		"<text>os_file_flush</text>", "Where the server&#39;s CPU went: t5 against t4"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(string(html), "<?xml") {
		t.Error("the flame graph's XML declaration is inside the page")
	}
}
