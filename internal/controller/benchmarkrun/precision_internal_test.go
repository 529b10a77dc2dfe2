package benchmarkrun

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/results"
)

// precisionManifest is a manifest of cells with point-query@1 QPS per cell
// (NaN: the cell failed and has no results).
func precisionManifest(cells []matrix.Cell, qps map[string]float64) *results.Manifest {
	m := &results.Manifest{}
	for _, c := range cells {
		mc := results.ManifestCell{Cell: results.Cell{Name: c.Name}, Phase: string(dbbenchv1alpha1.CellSucceeded)}
		v, ok := qps[c.Name]
		switch {
		case !ok || math.IsNaN(v):
			mc.Phase = string(dbbenchv1alpha1.CellFailed)
		default:
			mc.QPS = map[string]map[int]float64{"point-query": {1: v}}
		}
		m.Cells = append(m.Cells, mc)
	}
	return m
}

func TestPrecisionSamples(t *testing.T) {
	k := inference.Key{Step: "point-query", Threads: 1}
	run := func(versions []string, baseline string) *dbbenchv1alpha1.BenchmarkRun {
		r := &dbbenchv1alpha1.BenchmarkRun{Spec: dbbenchv1alpha1.BenchmarkRunSpec{
			Databases: []dbbenchv1alpha1.DatabaseSpec{{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: versions}},
			Workload: dbbenchv1alpha1.WorkloadSpec{Precision: &dbbenchv1alpha1.PrecisionSpec{
				TargetPercent: intstr.FromInt32(1), MinRepeats: 2, MaxRepeats: 4}},
		}}
		if baseline != "" {
			r.Spec.Baseline = &dbbenchv1alpha1.BaselineSpec{Database: "maria", Version: baseline}
		}
		return r
	}
	tests := []struct {
		name string
		run  *dbbenchv1alpha1.BenchmarkRun
		qps  map[string]float64
		want []inference.RatioSamples
	}{
		{"one combination: its own mean", run([]string{"11.8"}, ""),
			map[string]float64{"maria-11.8-default-r1": 100, "maria-11.8-default-r2": 110},
			[]inference.RatioSamples{{Key: k, Name: "maria-11.8-default", Other: []float64{100, 110}}}},
		{"each other combination against the baseline, in round order", run([]string{"10.11", "11.4", "11.8"}, "11.4"),
			map[string]float64{
				"maria-10.11-default-r1": 90, "maria-11.4-default-r1": 100, "maria-11.8-default-r1": 80,
				"maria-10.11-default-r2": 91, "maria-11.4-default-r2": 101, "maria-11.8-default-r2": 81,
			},
			[]inference.RatioSamples{
				{Key: k, Name: "maria-10.11-default", Base: []float64{100, 101}, Other: []float64{90, 91}},
				{Key: k, Name: "maria-11.8-default", Base: []float64{100, 101}, Other: []float64{80, 81}},
			}},
		{"a failed cell adds nothing; a base with no runs is an empty base, not none", run([]string{"10.11", "11.8"}, ""),
			map[string]float64{"maria-11.8-default-r1": 80, "maria-11.8-default-r2": 81},
			[]inference.RatioSamples{{Key: k, Name: "maria-11.8-default", Base: []float64{}, Other: []float64{80, 81}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cells := matrix.Expand(tc.run)
			got := precisionSamples(tc.run, cells, precisionManifest(cells, tc.qps), []string{"point-query"})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrecisionPointsKeepTheWidest(t *testing.T) {
	k1, k4 := inference.Key{Step: "insert", Threads: 1}, inference.Key{Step: "insert", Threads: 4}
	d := inference.PrecisionDecision{HalfWidths: []inference.HalfWidth{
		{Key: k1, Name: "b", Percent: 0.8},
		{Key: k1, Name: "c", Percent: 1.5},
		{Key: k4, Name: "b", Percent: math.Inf(1)},
		{Key: k4, Name: "c", Percent: 0.2},
	}}
	want := []dbbenchv1alpha1.PrecisionPoint{
		{Step: "insert", Threads: 1, HalfWidthPercent: "1.50", Combination: "c", Met: false},
		{Step: "insert", Threads: 4, HalfWidthPercent: "+Inf", Combination: "b", Met: false},
	}
	if diff := cmp.Diff(want, precisionPoints(d, 1)); diff != "" {
		t.Errorf("points (-want +got):\n%s", diff)
	}
	want[0].Met = true
	if diff := cmp.Diff(want[0], precisionPoints(d, 2)[0]); diff != "" {
		t.Errorf("at a 2 %% target (-want +got):\n%s", diff)
	}
}
