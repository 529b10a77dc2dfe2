package analysis

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/changepoint"
	"github.com/dbbench/dbbench/pkg/results"
)

func manifestOf(run string, qps map[string]float64) *results.Manifest {
	c := results.ManifestCell{Cell: results.Cell{Name: "maria-11.8-default", Engine: "mariadb", Version: "11.8", Attempt: 1}, Phase: "Succeeded",
		QPS: map[string]map[int]float64{}}
	for step, v := range qps {
		c.QPS[step] = map[int]float64{1: v}
	}
	return &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: results.Run{Name: run}, Cells: []results.ManifestCell{c}}
}

func TestCompareManifests(t *testing.T) {
	base := manifestOf("r1", map[string]float64{"point-query": 1000, "insert": 500, "scan": 0, "delete": 300})
	cur := manifestOf("r2", map[string]float64{"point-query": 940, "insert": 480, "scan": 10, "update-one": 5})
	got, compared := CompareManifests(cur, base, 0.05)
	if compared != 2 {
		t.Errorf("compared %d pairs, want 2 (scan has a zero baseline, update-one and delete are one-sided)", compared)
	}
	if len(got) != 1 || got[0].Step != "point-query" || got[0].ChangePercent > -5.99 || got[0].ChangePercent < -6.01 {
		t.Fatalf("regressions %v, want point-query −6 %% only (insert −4 %% is within 5 %%)", got)
	}
	if !strings.Contains(got[0].String(), "point-query@1 -6.0%") {
		t.Errorf("String() = %q", got[0].String())
	}
}

func TestChangePointRegressions(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var runs []*results.Manifest
	for i := 0; i < 30; i++ {
		pq := 1000 * (1 + 0.005*rng.NormFloat64())
		ins := 500 * (1 + 0.005*rng.NormFloat64())
		if i >= 24 {
			pq *= 0.9 // a 10 % regression in the last 6 runs
		}
		if i == 10 {
			ins *= 0.5 // a single outlier: not a regression
		}
		runs = append(runs, manifestOf("r", map[string]float64{"point-query": pq, "insert": ins}))
	}
	got, err := ChangePointRegressions(runs, changepoint.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Step != "point-query" || got[0].ChangePercent > -8 {
		t.Fatalf("change-point regressions %v, want point-query ≈ −10 %%", got)
	}
	// Before the slowdown: nothing.
	if got, _ := ChangePointRegressions(runs[:24], changepoint.DefaultOptions()); len(got) != 0 {
		t.Errorf("regressions before the slowdown: %v", got)
	}
}
