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
			c := Chart(tc.b)
			if c.FirstBad != tc.firstBad || len(c.Points) != len(tc.b.Status.Points) {
				t.Errorf("chart first bad %d of %d points, want %d", c.FirstBad, len(c.Points), tc.firstBad)
			}
		})
	}
	c := Chart(localized)
	// The culprit's own key is the chart's; a failed point has no ratio.
	if c.Key != "write@8" || !math.IsNaN(c.Points[1].Ratio) || c.Points[2].Low != 0.78 {
		t.Errorf("chart %+v", c)
	}
	if s := NewSummary(localized, ""); s.Rule.Parallelism != 2 || s.Rule.Repeats != 3 || s.Rule.MaxCells != 40 || s.CompletionTime == nil || !s.CompletionTime.Equal(done.Time) {
		t.Errorf("summary rule %+v, completion %v", s.Rule, s.CompletionTime)
	}
	html, err := HTML(localized)
	if err != nil || !strings.Contains(string(html), "dbbench bisection: b") {
		t.Errorf("HTML: %v\n%.300s", err, html)
	}
}
