package regression

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/results"
)

func TestSuiteNoise(t *testing.T) {
	pq := func(q float64) map[string]float64 { return map[string]float64{"point-query": q} }
	single := func(name, image string, q float64) *results.Manifest {
		return vmanifest(name, vcell(0, image, pq(q), 0))
	}
	withRepeats := func(name string, qs ...float64) *results.Manifest {
		return vmanifest(name, repeats("sha256:i", pq(1), qs, 0)...)
	}
	// expected pools, built with pkg/inference directly
	floorOf := func(sets ...[]float64) inference.NoiseFloor {
		var p inference.NoisePool
		for _, s := range sets {
			if err := p.AddRepeats(s); err != nil {
				t.Fatal(err)
			}
		}
		f, _ := p.Floor()
		return f
	}
	tests := []struct {
		name    string
		history []*results.Manifest
		cur     *results.Manifest
		want    inference.NoiseFloor // zero: no floor
		runs    []string
		inherit string
	}{
		{
			name:    "an A/A set of three earlier runs; the judged run stays out",
			history: []*results.Manifest{single("a", "sha256:i", 100), single("b", "sha256:i", 110), single("c", "sha256:i", 95)},
			cur:     single("d", "sha256:i", 60),
			want:    floorOf([]float64{100, 110, 95}),
			runs:    []string{"a", "b", "c"},
		},
		{
			name:    "another image is not an A/A pair",
			history: []*results.Manifest{single("a", "sha256:i", 100), single("b", "sha256:j", 110), single("c", "sha256:i", 95)},
			want:    floorOf([]float64{100, 95}),
			runs:    []string{"a", "c"},
		},
		{
			name:    "repeats of the judged run and of an earlier one, and a pair",
			history: []*results.Manifest{withRepeats("a", 100, 104), single("b", "sha256:i", 100), single("c", "sha256:i", 90)},
			cur:     withRepeats("d", 50, 55, 52),
			want:    floorOf([]float64{100, 104}, []float64{100, 90}, []float64{50, 55, 52}),
			runs:    []string{"a", "b", "c"},
		},
		{
			name:    "nothing to pool",
			history: []*results.Manifest{single("a", "sha256:i", 100), single("b", "sha256:j", 90)},
			cur:     single("c", "sha256:i", 100),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SuiteNoise(tt.history, tt.cur, 0.05)
			if tt.want.DF == 0 {
				if got != nil {
					t.Fatalf("floor %+v, want none", got)
				}
				return
			}
			if got == nil || len(got.Points) != 1 {
				t.Fatalf("floor %+v, want one point", got)
			}
			p := got.Points[0]
			if p.Step != "point-query" || p.Threads != 4 || p.DF != tt.want.DF || p.Runs != tt.want.Runs || p.Sets != tt.want.Sets ||
				math.Abs(p.SigmaLog-tt.want.SigmaLog) > 1e-12 || math.Abs(p.CV-tt.want.CV()) > 1e-12 || p.InheritedFrom != tt.inherit {
				t.Errorf("point %+v, want %+v (cv %v)", p, tt.want, tt.want.CV())
			}
			if diff := cmp.Diff(tt.runs, got.Runs); diff != "" {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
			if got.Alpha != 0.05 {
				t.Errorf("alpha %v", got.Alpha)
			}
		})
	}
}

// A floor stored with the newest earlier run that rests on more df than
// the history still readable is taken over; the judged run's repeats are
// added to it.
func TestSuiteNoiseInheritsAStoredFloor(t *testing.T) {
	pq := map[string]float64{"point-query": 1}
	prev := vmanifest("pruned-6", vcell(0, "sha256:i", map[string]float64{"point-query": 100}, 0))
	stored := results.NoisePoint{Step: "point-query", Threads: 4, SigmaLog: 0.05, CV: math.Sqrt(math.Expm1(0.0025)), DF: 10, Runs: 14, Sets: 4}
	prev.NoiseFloor = &results.NoiseFloors{Points: []results.NoisePoint{stored}}
	cur := vmanifest("now", repeats("sha256:i", pq, []float64{100, 110}, 0)...)
	got := SuiteNoise([]*results.Manifest{prev}, cur, 0.05)

	var want inference.NoisePool
	if err := want.AddFloor(FloorOf(stored)); err != nil {
		t.Fatal(err)
	}
	if err := want.AddRepeats([]float64{100, 110}); err != nil {
		t.Fatal(err)
	}
	wf, _ := want.Floor()
	if got == nil || len(got.Points) != 1 {
		t.Fatalf("floor %+v", got)
	}
	p := got.Points[0]
	if p.DF != 11 || p.InheritedFrom != "pruned-6" || math.Abs(p.SigmaLog-wf.SigmaLog) > 1e-12 || p.Runs != 16 {
		t.Errorf("point %+v, want σ %v df 11 runs 16 inherited from pruned-6", p, wf.SigmaLog)
	}
	// A stored floor with fewer df than the readable evidence is ignored.
	prev.NoiseFloor.Points[0].DF = 1
	hist := []*results.Manifest{
		vmanifest("h1", vcell(0, "sha256:i", map[string]float64{"point-query": 100}, 0)),
		vmanifest("h2", vcell(0, "sha256:i", map[string]float64{"point-query": 104}, 0)),
		vmanifest("h3", vcell(0, "sha256:i", map[string]float64{"point-query": 98}, 0)),
		prev,
	}
	if got := SuiteNoise(hist, nil, 0.05); got == nil || got.Points[0].InheritedFrom != "" || got.Points[0].DF != 3 {
		t.Errorf("floor %+v, want the 3 df of the readable A/A set", got)
	}
}
