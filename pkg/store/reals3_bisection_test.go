package store

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A bisection's report and summary go under the suite's _bisections
// directory, report first; the directory is claimed by the bisection object
// (another object of the same name is refused); a re-upload is idempotent;
// and ListRuns does not take the directory for a run.
func TestRealS3BisectionLayout(t *testing.T) {
	srv := startS3(t)
	s := newRealStore(t, srv, "team/bench")
	ctx := context.Background()

	b := BisectionObjects{Suite: "nightly 21/11", Name: "night-3-bisect", Namespace: "ci", UID: "uid-1",
		Summary: []byte(`{"schemaVersion":"dbbench.io/bisection-summary/v1","firstBad":"11.4.5"}`), ReportHTML: []byte("<!doctype html><title>b</title>")}
	objs, err := s.UploadBisection(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	base := "team/bench/nightly%2021%2F11/_bisections/night-3-bisect/"
	if diff := cmp.Diff([]string{base + "report.html", base + "bisection.json"}, keysOf(objs)); diff != "" {
		t.Errorf("UploadBisection keys (-want +got):\n%s", diff)
	}
	if got := s.Layout().BisectionPrefix(b.Suite, b.Name); got != base {
		t.Errorf("BisectionPrefix = %s, want %s", got, base)
	}
	checkStored(t, s, srv, objs)
	all, err := s.List(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{base + "bisection.json", base + "identity.json", base + "report.html"}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("objects under the bisection (-want +got):\n%s", diff)
	}

	// Idempotent: the same upload again finds every object there and
	// writes none.
	again, err := s.UploadBisection(ctx, b)
	if err != nil {
		t.Fatalf("re-upload: %v", err)
	}
	wantAgain := slices.Clone(objs)
	for i := range wantAgain {
		wantAgain[i].Unchanged = true
	}
	if diff := cmp.Diff(wantAgain, again); diff != "" {
		t.Errorf("re-upload (-want +got):\n%s", diff)
	}

	// Without a report: only the summary.
	nb := b
	nb.Name, nb.ReportHTML = "other", nil
	objs2, err := s.UploadBisection(ctx, nb)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"team/bench/nightly%2021%2F11/_bisections/other/bisection.json"}, keysOf(objs2)); diff != "" {
		t.Errorf("keys without a report (-want +got):\n%s", diff)
	}

	// Another object of the same name: refused as a conflict, nothing
	// overwritten.
	imp := b
	imp.UID, imp.Summary = "uid-2", []byte(`{"firstBad":"other"}`)
	if _, err := s.UploadBisection(ctx, imp); !errors.Is(err, ErrConflict) {
		t.Errorf("upload by another bisection object = %v, want a conflict", err)
	}
	checkStored(t, s, srv, objs)

	// An empty summary is refused before anything is written.
	empty := b
	empty.Name, empty.Summary = "empty", nil
	if _, err := s.UploadBisection(ctx, empty); !errors.Is(err, ErrPermanent) {
		t.Errorf("upload without a summary = %v, want a permanent error", err)
	}
	if keys, err := s.List(ctx, s.Layout().BisectionPrefix(b.Suite, "empty")); err != nil || len(keys) != 0 {
		t.Errorf("objects of a refused upload: %v (%v)", keys, err)
	}

	// The suite's runs: none (the _bisections directory is not a run).
	runs, err := s.ListRuns(ctx, b.Suite)
	if err != nil || len(runs) != 0 {
		names := []string{}
		for _, r := range runs {
			names = append(names, r.Run.Name)
		}
		slices.Sort(names)
		t.Errorf("ListRuns = %v, %v; want no runs", names, err)
	}
}
