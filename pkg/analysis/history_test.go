package analysis_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/analysis/analysistest"
	"github.com/dbbench/dbbench/pkg/changepoint"
)

func TestHistory(t *testing.T) {
	runs := analysistest.NightlyRuns(func(i int) float64 {
		if i >= 20 {
			return 900 + float64(i%3) // a 10 % regression from run 20
		}
		return 1000 + float64(i%3)
	}, func(i int) float64 {
		if i == 7 {
			return math.NaN() // run 7 did not measure insert
		}
		return 500 + float64(i%2)
	})
	// Out of order on input: History sorts by time.
	runs[3], runs[10] = runs[10], runs[3]
	h, err := analysis.History(runs, analysis.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Series) != 2 || h.Runs[3] != "nightly-03" {
		t.Fatalf("series %d, runs %v", len(h.Series), h.Runs)
	}
	pq := h.Series[0]
	if pq.Combination != "maria-11.4-base" || len(pq.ChangePoints) != 1 || pq.ChangePoints[0].Run != "nightly-20" {
		t.Errorf("point-query change points %+v", pq.ChangePoints)
	}
	if c := pq.ChangePoints[0]; math.Abs(c.ChangePercent+10) > 0.5 {
		t.Errorf("change %+v", c)
	}
	ins := h.Series[1]
	if len(ins.ChangePoints) != 0 || len(ins.Values) != 29 || ins.MissingRuns[0] != "nightly-07" {
		t.Errorf("insert %+v", ins)
	}
	if row := h.Tables()[1].Rows[0]; row[3] != "throughput" || row[4] != "nightly-20" || row[5] != "confirmed" || row[10] != "regression" {
		t.Errorf("change table row %q, want throughput at run nightly-20, confirmed, a regression", row)
	}
	bad := changepoint.Options{WindowLen: 1}
	if _, err := analysis.History(runs, analysis.HistoryOptions{ChangePoint: &bad}); err == nil {
		t.Error("invalid detector options accepted")
	}
	if _, err := analysis.History(nil, analysis.HistoryOptions{}); !errors.Is(err, analysis.ErrEmpty) {
		t.Errorf("no runs: %v", err)
	}
}

// TestHistorySuspectedAndDrift: a drop in the newest run is listed as
// suspected, a steady decline as one drift line with its slope.
func TestHistorySuspectedAndDrift(t *testing.T) {
	runs := analysistest.NightlyRuns(func(i int) float64 {
		if i == 29 {
			return 900 // the newest run dropped by 10 %
		}
		return 1000 + float64(i%3)
	}, func(i int) float64 { return 500 - 2*float64(i) + float64(i%2) })
	h, err := analysis.History(runs, analysis.HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pq, ins := h.Series[0], h.Series[1]
	if len(pq.ChangePoints) != 1 || pq.ChangePoints[0].Run != "nightly-29" || pq.ChangePoints[0].Status != changepoint.Suspected {
		t.Errorf("point-query change points %+v, want one suspected at nightly-29", pq.ChangePoints)
	}
	if len(ins.ChangePoints) != 0 || len(ins.Drifts) != 1 || ins.Drifts[0].FirstRun != "nightly-00" || ins.Drifts[0].LastRun != "nightly-29" {
		t.Errorf("insert change points %+v drifts %+v, want one drift over all runs", ins.ChangePoints, ins.Drifts)
	}
	var rows []string
	for _, r := range h.Tables()[1].Rows {
		rows = append(rows, strings.Join(r, "|"))
	}
	want := []string{
		"maria-11.4-base|point-query|1|throughput|nightly-29|suspected|",
		"maria-11.4-base|insert|1|throughput|nightly-00..nightly-29|drift -0.40 %/run|",
	}
	for i, w := range want {
		if i >= len(rows) || !strings.HasPrefix(rows[i], w) {
			t.Errorf("change table rows %q, want row %d to start with %q", rows, i, w)
		}
	}
}
