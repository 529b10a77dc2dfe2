package analysis

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestScaleUpUnreportedThreads: a thread count at which only steps reports
// do not publish ran (a .warm step's) is no scale-up point, even when
// --all-steps keeps those steps in the tables; with no second thread count
// left, the report has no scale-up table at all.
func TestScaleUpUnreportedThreads(t *testing.T) {
	cases := []struct {
		name string
		obs  []Observation
		// wantThreads are the scale-up table's columns; nil: no table.
		wantThreads []int
	}{{
		name: "only a warm-up at 8",
		obs: []Observation{{Cell: "m", Step: "point-query", Threads: 1, QPS: 100}, {Cell: "m", Step: "scan", Threads: 1, QPS: 5},
			{Cell: "m", Step: "point-query.warm", Threads: 8, QPS: 700}},
	}, {
		name: "a real sweep beside the warm-up",
		obs: []Observation{{Cell: "m", Step: "point-query", Threads: 1, QPS: 100}, {Cell: "m", Step: "point-query", Threads: 2, QPS: 190},
			{Cell: "m", Step: "point-query.warm", Threads: 8, QPS: 700}, {Cell: "m", Step: "scan.warmpre", Threads: 16, QPS: 9}},
		wantThreads: []int{1, 2},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := NewDataset("d")
			for _, o := range tc.obs {
				if err := ds.Add(o); err != nil {
					t.Fatal(err)
				}
			}
			for _, all := range []bool{false, true} {
				r, err := BuildReport(ds, ReportOptions{IncludeUnreported: all})
				if err != nil {
					t.Fatal(err)
				}
				var got []int
				for _, su := range r.ScaleUp {
					got = su.Threads
				}
				if d := cmp.Diff(tc.wantThreads, got); d != "" {
					t.Errorf("all steps %v: scale-up threads (-want +got):\n%s", all, d)
				}
				for _, tb := range r.Tables() {
					if strings.Contains(tb.Title, "by bucket") && tc.wantThreads == nil {
						t.Errorf("all steps %v: bucket table %q", all, tb.Title)
					}
				}
			}
		})
	}
}

// TestScaleUpBucketNote: the note under the bucket table gives this
// table's edges, not the 48-thread study's.
func TestScaleUpBucketNote(t *testing.T) {
	ds := NewDataset("d")
	for _, th := range []int{1, 2, 4} {
		if err := ds.Add(Observation{Cell: "m", Step: "point-query", Threads: th, QPS: float64(th) * 100}); err != nil {
			t.Fatal(err)
		}
	}
	su, err := ScaleUp(ds, ScaleUpOptions{Cell: "m"})
	if err != nil {
		t.Fatal(err)
	}
	tables := su.Tables()
	want := []string{"edges are 5/6, 5/8, 5/12, 5/24 of the ideal 4: 3.3, 2.5, 1.7, 0.8; a bucket a-b holds a < ratio <= b"}
	if d := cmp.Diff(want, tables[1].Notes); d != "" {
		t.Errorf("bucket note (-want +got):\n%s", d)
	}
}
