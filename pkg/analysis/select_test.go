package analysis

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// warmDataset has three cells measured at 2 threads and a .warm step that
// alone ran at 8, as a published study's warm-up does.
func warmDataset(t *testing.T) *Dataset {
	t.Helper()
	ds := NewDataset("study")
	for i, c := range []string{"a", "b", "c"} {
		for _, o := range []Observation{
			{Cell: c, Step: "point-query", Threads: 2, QPS: 100 * float64(i+1)},
			{Cell: c, Step: "point-query.pre", Threads: 2, QPS: 90 * float64(i+1)},
			{Cell: c, Step: "read-only.warm", Threads: 8, QPS: 50},
		} {
			if err := ds.Add(o); err != nil {
				t.Fatal(err)
			}
		}
	}
	ds.Unverified = []UnverifiedSettings{{Cell: "a", Settings: []UnverifiedSetting{{Name: "x"}}}, {Cell: "c", Settings: []UnverifiedSetting{{Name: "y"}}}}
	return ds
}

func TestDatasetSelect(t *testing.T) {
	cases := []struct {
		names      []string
		wantCells  []string
		wantObs    int
		wantUnver  []string
		wantErrIs  error
		wantErrMsg string
	}{
		{names: []string{"c", "a"}, wantCells: []string{"c", "a"}, wantObs: 6, wantUnver: []string{"a", "c"}},
		{names: []string{"b"}, wantCells: []string{"b"}, wantObs: 3},
		{names: []string{"a", "z"}, wantErrIs: ErrNoSuchCell, wantErrMsg: `cell "z": no such cell in dataset "study" (cells: a, b, c)`},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.names), func(t *testing.T) {
			got, err := warmDataset(t).Select(tc.names)
			if tc.wantErrIs != nil {
				if !errors.Is(err, tc.wantErrIs) || err.Error() != tc.wantErrMsg {
					t.Fatalf("error %v, want %q", err, tc.wantErrMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var unver []string
			for _, u := range got.Unverified {
				unver = append(unver, u.Cell)
			}
			if d := cmp.Diff(tc.wantCells, got.CellNames()); d != "" {
				t.Errorf("cells (-want +got):\n%s", d)
			}
			if n := len(got.Observations()); n != tc.wantObs {
				t.Errorf("%d observations, want %d", n, tc.wantObs)
			}
			if d := cmp.Diff(tc.wantUnver, unver); d != "" {
				t.Errorf("unverified cells (-want +got):\n%s", d)
			}
		})
	}
}

// TestBuildReportLeftOutSteps: the thread count at which only left-out
// steps ran has no relative table (it was one of every step, each missing),
// and the report lists what it left out.
func TestBuildReportLeftOutSteps(t *testing.T) {
	cases := []struct {
		include     bool
		wantThreads []int
		wantSteps   [][]string
		wantLeftOut []string
	}{
		{include: false, wantThreads: []int{2}, wantSteps: [][]string{{"point-query"}}, wantLeftOut: []string{"point-query.pre", "read-only.warm"}},
		{include: true, wantThreads: []int{2, 8}, wantSteps: [][]string{{"point-query", "point-query.pre"}, {"read-only.warm"}}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint("include=", tc.include), func(t *testing.T) {
			r, err := BuildReport(warmDataset(t), ReportOptions{IncludeUnreported: tc.include})
			if err != nil {
				t.Fatal(err)
			}
			var threads []int
			var steps [][]string
			for _, rel := range r.Relative {
				threads = append(threads, rel.Threads)
				steps = append(steps, rel.Steps)
				for _, m := range rel.Missing {
					t.Errorf("%d threads: %+v missing", rel.Threads, m)
				}
			}
			if d := cmp.Diff(tc.wantThreads, threads); d != "" {
				t.Errorf("relative tables' threads (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantSteps, steps); d != "" {
				t.Errorf("relative tables' steps (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantLeftOut, r.LeftOut); d != "" {
				t.Errorf("left out (-want +got):\n%s", d)
			}
		})
	}
}
