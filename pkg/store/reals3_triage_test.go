package store

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A run's verdict goes up with its report, before the manifest; an ack's
// object can be put, listed beside the runs without being taken for one,
// and deleted (twice: deleting what is gone is no error).
func TestRealS3TriageObjects(t *testing.T) {
	srv := startS3(t)
	s := newRealStore(t, srv, "team")
	ctx := context.Background()
	m := testManifest(t0, testDoc("nightly", "n1", "c1", 5))
	objs, err := s.UploadRun(ctx, m, RunExtras{ReportHTML: []byte("<!doctype html>"), Verdict: []byte(`{"schemaVersion":"dbbench.io/run-verdict/v1","run":"n1"}`),
		VerdictJUnit: []byte(`<?xml version="1.0" encoding="UTF-8"?><testsuites name="dbbench"></testsuites>`)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"team/nightly/n1/report.html", "team/nightly/n1/verdict.json", "team/nightly/n1/junit.xml", "team/nightly/n1/manifest.json"}
	if d := cmp.Diff(want, keysOf(objs)); d != "" {
		t.Errorf("UploadRun keys (-want +got):\n%s", d)
	}
	key := s.Layout().AckKey("nightly", "slow")
	if _, err := s.Put(ctx, key, []byte(`{}`), "application/json"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, s.Layout().SuiteKey("nightly", ObjectSiteIndex), []byte("<!doctype html>"), "text/html"); err != nil {
		t.Fatal(err)
	}
	runs, err := s.ListRuns(ctx, "nightly")
	if err != nil || len(runs) != 1 {
		t.Fatalf("ListRuns = %d runs, %v; want the one run, the acks and the site left out", len(runs), err)
	}
	keys, err := s.List(ctx, s.Layout().AcksPrefix("nightly"))
	if err != nil || !cmp.Equal(keys, []string{key}) {
		t.Fatalf("acks listed: %v %v", keys, err)
	}
	for range 2 {
		if err := s.Delete(ctx, key); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	}
	if _, err := s.Get(ctx, key); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete = %v, want not found", err)
	}
}
