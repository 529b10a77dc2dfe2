package regression

import (
	"math"
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
	got, compared := CompareManifests(cur, base, 0.05, 0.05)
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

// A 10 % slowdown is a regression only when it stands out of the per-second
// spread of both runs, as Welch's test on that spread says.
func TestCompareManifestsSignificance(t *testing.T) {
	withSpread := func(m *results.Manifest, sd float64, n, eff int) *results.Manifest {
		if n > 0 {
			m.Cells[0].QPSSpread = map[string]map[int]results.Spread{"point-query": {1: {Samples: n, Stddev: sd, EffectiveSamples: eff}}}
		}
		return m
	}
	tests := []struct {
		name      string
		sd        float64
		n, eff    int
		maxPValue float64
		regressed bool
		tested    bool
	}{
		{"tight series, significant", 10, 60, 0, 0.05, true, true},
		{"noisy short series, not significant", 400, 5, 0, 0.05, false, true},
		{"no spread recorded: magnitude only", 0, 0, 0, 0.05, true, false},
		{"test off", 400, 5, 0, 0, true, false},
		{"strict level", 60, 10, 0, 0.001, false, true},
		{"same spread, loose level", 60, 10, 0, 0.01, true, true},
		// 60 seconds worth 3 independent samples: t = 100/49, p ≈ 0.1
		{"autocorrelated seconds, not significant", 60, 60, 3, 0.05, false, true},
		{"the same seconds uncorrelated, significant", 60, 60, 60, 0.05, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := withSpread(manifestOf("r1", map[string]float64{"point-query": 1000}), tt.sd, tt.n, tt.eff)
			cur := withSpread(manifestOf("r2", map[string]float64{"point-query": 900}), tt.sd, tt.n, tt.eff)
			got, compared := CompareManifests(cur, base, 0.05, tt.maxPValue)
			if compared != 1 {
				t.Fatalf("compared %d pairs, want 1", compared)
			}
			if (len(got) == 1) != tt.regressed {
				t.Fatalf("regressions %v, want regressed=%v", got, tt.regressed)
			}
			if tt.regressed {
				p := got[0].PValue
				if tt.tested != !math.IsNaN(p) || (tt.tested && !(p < tt.maxPValue)) {
					t.Errorf("p-value %v, want tested=%v and below %v", p, tt.tested, tt.maxPValue)
				}
			}
		})
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
	// The first slow run is Suspected at once, the second Confirms it.
	for _, tc := range []struct {
		runs int
		want changepoint.Status
	}{{25, changepoint.Suspected}, {26, changepoint.Confirmed}, {30, changepoint.Confirmed}} {
		got, err := ChangePointRegressions(runs[:tc.runs], changepoint.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Step != "point-query" || got[0].Status != tc.want || math.Abs(got[0].ChangePercent+10) > 1.5 {
			t.Errorf("%d runs: regressions %+v, want point-query ≈ −10 %% %s", tc.runs, got, tc.want)
		}
		if suspected := strings.Contains(got[0].String(), "(suspected)"); suspected != (tc.want == changepoint.Suspected) {
			t.Errorf("%d runs: String() %q does not say whether it is suspected", tc.runs, got[0].String())
		}
		// The change is bounded by the runs around it, whichever run
		// judges it: the bisection's good and bad builds.
		if got[0].Since != 24 || got[0].LastBefore != 23 {
			t.Errorf("%d runs: since run %d, last before %d; want 24 and 23", tc.runs, got[0].Since, got[0].LastBefore)
		}
	}
	// A run that did not measure the point is not a bound: run 23 lost
	// point-query, so the last run before the change is 22.
	gap := append([]*results.Manifest(nil), runs[:26]...)
	gap[23] = manifestOf("r", map[string]float64{"insert": 500})
	got, err = ChangePointRegressions(gap, changepoint.DefaultOptions())
	if err != nil || len(got) != 1 || got[0].Since != 24 || got[0].LastBefore != 22 {
		t.Fatalf("with run 23 lacking the point: %+v (%v), want since 24, last before 22", got, err)
	}
}

// TestChangePointRegressionsDrift: a steady decline that reaches the newest
// run is one drift regression, with its slope, not a step.
func TestChangePointRegressionsDrift(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	var runs []*results.Manifest
	for i := 0; i < 30; i++ {
		pq := 1000 * (1 - 0.004*float64(i)) * (1 + 0.005*rng.NormFloat64())
		up := 500 * (1 + 0.003*float64(i)) * (1 + 0.005*rng.NormFloat64()) // improving: not a regression
		runs = append(runs, manifestOf("r", map[string]float64{"point-query": pq, "update": up}))
	}
	got, err := ChangePointRegressions(runs, changepoint.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Step != "point-query" || got[0].Drift == nil {
		t.Fatalf("regressions %+v, want one drift on point-query", got)
	}
	d := got[0].Drift
	if d.Start != 0 || d.End != 30 || math.Abs(d.SlopePercentPerRun+0.4) > 0.1 || got[0].Status != changepoint.Confirmed {
		t.Errorf("drift %+v (status %s), want runs 0..29 at −0.4 %%/run, Confirmed", d, got[0].Status)
	}
	if s := got[0].String(); !strings.Contains(s, "(drift -0.") || !strings.Contains(s, "%/run over 30 runs)") {
		t.Errorf("String() = %q, want the drift's slope and length", s)
	}
}
