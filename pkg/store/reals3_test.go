package store

// Tests against a real S3-compatible server: versitygw, started and stopped
// through hack/s3server.sh on 127.0.0.1. They run only with DBBENCH_REAL_S3=1:
//
//	DBBENCH_REAL_S3=1 go test ./pkg/store -run RealS3 -v
//
// The first run builds versitygw into the cache (about 80 s on 2 cores);
// later runs reuse it. Each test gets its own data directory and port, and
// stops its server on exit.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/minio/minio-go/v7"

	"github.com/dbbench/dbbench/internal/testutil/versitygw"
	"github.com/dbbench/dbbench/pkg/results"
)

const (
	realAccessKey = "dbbench-test"
	realSecretKey = "dbbench-test-secret"
	realBucket    = "dbbench-results"
)

// s3Server is a real versitygw for these tests.
type s3Server struct{ *versitygw.Server }

func startS3(t *testing.T) *s3Server {
	t.Helper()
	return &s3Server{versitygw.Start(t, realAccessKey, realSecretKey)}
}

// file is where the posix backend keeps an object: read behind the S3 API's
// back, to check what is really stored.
func (s *s3Server) file(key string) string {
	return filepath.Join(s.Dir, "data", realBucket, filepath.FromSlash(key))
}

func (s *s3Server) config(prefix string) Config {
	return Config{Endpoint: s.Endpoint(), Bucket: realBucket, Prefix: prefix, AccessKeyID: realAccessKey, SecretAccessKey: realSecretKey,
		Backoff: Backoff{Initial: 50 * time.Millisecond, Max: time.Second, Multiplier: 2, Jitter: 0.5, MaxAttempts: 4}, RequestTimeout: 10 * time.Second}
}

func newRealStore(t *testing.T, srv *s3Server, prefix string) *Store {
	t.Helper()
	s, err := New(srv.config(prefix))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func keysOf(objs []Object) []string {
	var ks []string
	for _, o := range objs {
		ks = append(ks, o.Key)
	}
	return ks
}

// checkStored verifies each object three ways: through the S3 API (Get
// checks the recorded SHA-256), against the SHA-256 the upload reported, and
// in the server's files directly.
func checkStored(t *testing.T, s *Store, srv *s3Server, objs []Object) {
	t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		data, err := s.Get(ctx, o.Key)
		if err != nil {
			t.Errorf("Get(%s): %v", o.Key, err)
			continue
		}
		if got := sha(data); got != o.SHA256 || int64(len(data)) != o.Size {
			t.Errorf("%s: read back %d bytes sha256 %s, uploaded %d bytes sha256 %s", o.Key, len(data), got, o.Size, o.SHA256)
		}
		onDisk, err := os.ReadFile(srv.file(o.Key))
		if err != nil {
			t.Errorf("%s: not in the server's files: %v", o.Key, err)
		} else if sha(onDisk) != o.SHA256 {
			t.Errorf("%s: the server's file has sha256 %s, uploaded %s", o.Key, sha(onDisk), o.SHA256)
		}
	}
}

func TestRealS3RoundTrip(t *testing.T) {
	srv := startS3(t)
	s := newRealStore(t, srv, "team/bench/")
	ctx := context.Background()

	doc := testDoc("standard", "nightly 21/11", "mariadb-10-11-base-r1", 30)
	agentLog := []byte("06:00:00 agent started\n06:00:01 loading\n")
	cellObjs, err := s.UploadCell(ctx, doc, CellExtras{AgentLog: agentLog})
	if err != nil {
		t.Fatal(err)
	}
	base := "team/bench/standard/nightly%2021%2F11/"
	wantCell := []string{base + "mariadb-10-11-base-r1/series.csv", base + "mariadb-10-11-base-r1/provenance.json",
		base + "mariadb-10-11-base-r1/agent.log", base + "mariadb-10-11-base-r1/result.json"}
	if diff := cmp.Diff(wantCell, keysOf(cellObjs)); diff != "" {
		t.Errorf("UploadCell keys (-want +got):\n%s", diff)
	}
	m := testManifest(t0.Add(2*time.Hour), doc)
	m.Cells[0].ObjectKey = s.Layout().CellKey("standard", doc.Run.Name, doc.Cell.Name, ObjectResult)
	report := []byte("<!doctype html><title>nightly</title>")
	runObjs, err := s.UploadRun(ctx, m, RunExtras{ReportHTML: report})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{base + "report.html", base + "manifest.json"}, keysOf(runObjs)); diff != "" {
		t.Errorf("UploadRun keys (-want +got):\n%s", diff)
	}
	checkStored(t, s, srv, append(cellObjs, runObjs...))

	// Everything under the run, and nothing else: run.json is the only
	// object the caller did not ask for.
	all, err := s.List(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(wantCell), base+"manifest.json", base+"report.html", base+"run.json")
	slices.Sort(want)
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("objects under the run (-want +got):\n%s", diff)
	}

	got, err := s.GetCellDocument(ctx, "standard", doc.Run.Name, doc.Cell.Name)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := results.Marshal(doc)
	gotJSON, _ := results.Marshal(got)
	if !bytes.Equal(wantJSON, gotJSON) {
		t.Errorf("cell document changed in the round trip:\nwant %s\n got %s", wantJSON, gotJSON)
	}
	gm, err := s.GetManifest(ctx, "standard", doc.Run.Name)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, gm); diff != "" {
		t.Errorf("manifest round trip (-want +got):\n%s", diff)
	}
	series, err := s.Get(ctx, wantCell[0])
	if err != nil {
		t.Fatal(err)
	}
	if wantSeries, _ := EncodeSeriesCSV(doc); !bytes.Equal(series, wantSeries) {
		t.Error("series.csv differs from EncodeSeriesCSV(doc)")
	}
	if n := bytes.Count(series, []byte("\n")); n != 1+2*30 {
		t.Errorf("series.csv has %d lines, want a header and 60 samples", n)
	}
	var prov ProvenanceBundle
	raw, err := s.Get(ctx, wantCell[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &prov); err != nil || prov.Provenance.ConfigText != doc.Provenance.ConfigText || len(prov.Commands) != 3 {
		t.Errorf("provenance.json = %s (%v)", raw, err)
	}
	if ok, err := s.Uploaded(ctx, wantCell[3]); !ok || err != nil {
		t.Errorf("Uploaded(result.json) = %v, %v; want true", ok, err)
	}
	if ok, err := s.Uploaded(ctx, base+"no-such-cell/result.json"); ok || err != nil {
		t.Errorf("Uploaded(missing) = %v, %v; want false, nil", ok, err)
	}
	if _, err := s.GetCellDocument(ctx, "standard", doc.Run.Name, "no-such-cell"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no-such-cell/result.json") {
		t.Errorf("GetCellDocument(missing) = %v, want a not-found error naming the key", err)
	}

	// A corrupted object (changed behind the store's back) is detected on
	// read, not returned.
	if err := os.WriteFile(srv.file(wantCell[2]), []byte("tampered\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, wantCell[2]); !errors.Is(err, ErrIntegrity) {
		t.Errorf("Get of a tampered object = %v, want an integrity error", err)
	}
}

func TestRealS3ListRunsInTimeOrder(t *testing.T) {
	srv := startS3(t)
	s := newRealStore(t, srv, "")
	ctx := context.Background()

	// Names deliberately out of time order, one with odd characters.
	runs := []struct {
		suite, name string
		updated     time.Duration
		manifest    bool
	}{
		{"standard", "c-first", 1 * time.Hour, true},
		{"standard", "a-third", 3 * time.Hour, true},
		{"standard", "b second/ü", 2 * time.Hour, true},
		{"standard", "d-in-progress", 4 * time.Hour, false}, // cells only: not listed
		{"standard", "e-tie", 3 * time.Hour, true},          // same time: by name
		{"", "no-suite", 5 * time.Hour, true},
		{"extended", "other-suite", 0, true},
	}
	for _, r := range runs {
		d := testDoc(r.suite, r.name, "cell-r1", 5)
		if _, err := s.UploadCell(ctx, d, CellExtras{}); err != nil {
			t.Fatal(err)
		}
		if r.manifest {
			if _, err := s.UploadRun(ctx, testManifest(t0.Add(r.updated), d), RunExtras{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A foreign object at the suite level is not a run.
	if _, err := s.Put(ctx, "standard/README.txt", []byte("hello"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	names := func(ms []*results.Manifest) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Run.Name)
		}
		return out
	}
	got, err := s.ListRuns(ctx, "standard")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"c-first", "b second/ü", "a-third", "e-tie"}, names(got)); diff != "" {
		t.Errorf("ListRuns(standard) (-want +got):\n%s", diff)
	}
	got, err = s.ListRuns(ctx, "")
	if err != nil || !cmp.Equal([]string{"no-suite"}, names(got)) {
		t.Errorf("ListRuns(\"\") = %v, %v; want [no-suite]", names(got), err)
	}
	got, err = s.ListRuns(ctx, "absent")
	if err != nil || len(got) != 0 {
		t.Errorf("ListRuns(absent) = %v, %v; want none", names(got), err)
	}

	// A manifest this reader cannot read (a newer schema) is reported, and
	// the others are still returned.
	future := []byte(`{"schemaVersion":"dbbench.io/results-manifest/v2","run":{"name":"f-future"}}`)
	if _, err := s.Put(ctx, s.Layout().RunKey("standard", "f-future", ObjectManifest), future, "application/json"); err != nil {
		t.Fatal(err)
	}
	got, err = s.ListRuns(ctx, "standard")
	var le *ListError
	var uv *results.UnsupportedVersionError
	if !errors.As(err, &le) || !errors.As(le.Failed["standard/f-future/manifest.json"], &uv) || len(got) != 4 {
		t.Errorf("ListRuns with a v2 manifest = %v, %v; want the 4 v1 runs and a *ListError naming f-future", names(got), err)
	}
}

func TestRealS3IdempotentReupload(t *testing.T) {
	srv := startS3(t)
	s := newRealStore(t, srv, "p")
	ctx := context.Background()
	doc := testDoc("standard", "nightly", "cell-r1", 20)
	first, err := s.UploadCell(ctx, doc, CellExtras{AgentLog: []byte("log\n")})
	if err != nil {
		t.Fatal(err)
	}
	mtimes := map[string]time.Time{}
	for _, o := range first {
		if o.Unchanged {
			t.Errorf("%s: first upload reported Unchanged", o.Key)
		}
		info, err := s.client.StatObject(ctx, realBucket, o.Key, minio.StatObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mtimes[o.Key] = info.LastModified
	}
	time.Sleep(1100 * time.Millisecond) // LastModified has one-second resolution

	// Same document again (a controller retrying after a lost response):
	// same keys, same digests, nothing rewritten.
	again, err := s.UploadCell(ctx, testDoc("standard", "nightly", "cell-r1", 20), CellExtras{AgentLog: []byte("log\n")})
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != len(first) {
		t.Fatalf("re-upload gave %d objects, first upload %d", len(again), len(first))
	}
	for i, o := range again {
		want := first[i]
		want.Unchanged = true
		if o != want {
			t.Errorf("re-upload: got %+v, want %+v", o, want)
		}
	}
	for _, o := range again {
		info, err := s.client.StatObject(ctx, realBucket, o.Key, minio.StatObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !info.LastModified.Equal(mtimes[o.Key]) {
			t.Errorf("%s was rewritten (LastModified %v → %v)", o.Key, mtimes[o.Key], info.LastModified)
		}
	}

	// A new attempt of the cell replaces the old document.
	doc.Cell.Attempt = 2
	third, err := s.UploadCell(ctx, doc, CellExtras{AgentLog: []byte("log\n")})
	if err != nil {
		t.Fatal(err)
	}
	last := third[len(third)-1]
	if last.Unchanged || last.SHA256 == first[len(first)-1].SHA256 {
		t.Errorf("changed result.json was not rewritten: %+v", last)
	}
	got, err := s.GetCellDocument(ctx, "standard", "nightly", "cell-r1")
	if err != nil || got.Cell.Attempt != 2 {
		t.Errorf("after re-upload the stored document has attempt %v (%v), want 2", got, err)
	}
	checkStored(t, s, srv, third)

	// Another run object with the same name (recreated with a new UID) must
	// not mix its cells into this run's directory.
	other := testDoc("standard", "nightly", "cell-r2", 5)
	other.Run.UID = "another-uid"
	if _, err := s.UploadCell(ctx, other, CellExtras{}); !errors.Is(err, ErrConflict) || Retryable(err) ||
		!strings.Contains(err.Error(), "another-uid") {
		t.Errorf("UploadCell for a reused run name = %v, want a non-retryable conflict naming the UIDs", err)
	}
	if ok, _ := s.Uploaded(ctx, s.Layout().CellKey("standard", "nightly", "cell-r2", ObjectResult)); ok {
		t.Error("the conflicting cell was uploaded anyway")
	}
}

func TestRealS3WrongCredentials(t *testing.T) {
	srv := startS3(t)
	newRealStore(t, srv, "") // the bucket exists
	ctx := context.Background()
	for _, tt := range []struct{ name, ak, sk string }{
		{"wrong secret", realAccessKey, "not-the-secret"},
		{"unknown access key", "nobody", realSecretKey},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := srv.config("p")
			cfg.AccessKeyID, cfg.SecretAccessKey = tt.ak, tt.sk
			retries := 0
			cfg.OnRetry = func(RetryEvent) { retries++ }
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			objs, err := s.UploadCell(ctx, testDoc("standard", "nightly", "cell-r1", 5), CellExtras{})
			var se *Error
			if !errors.As(err, &se) || se.Kind != KindAuth || Retryable(err) || objs != nil {
				t.Fatalf("UploadCell with %s = %v, %v; want a non-retryable auth error and no objects", tt.name, objs, err)
			}
			if retries != 0 || se.Attempts != 1 {
				t.Errorf("auth error was retried: %d retries, %d attempts", retries, se.Attempts)
			}
			if !strings.Contains(err.Error(), "s3://"+realBucket+"/p/standard/nightly/") || !strings.Contains(err.Error(), "credentials refused") {
				t.Errorf("message does not name the bucket and key, or the cause: %v", err)
			}
			t.Logf("%s after %v: %v", tt.name, time.Since(start).Round(time.Millisecond), err)
			if err := s.CheckBucket(ctx); !errors.Is(err, ErrAuth) {
				t.Errorf("CheckBucket = %v, want an auth error", err)
			}
		})
	}
	// A bucket that does not exist is permanent too, and says so.
	cfg := srv.config("")
	cfg.Bucket = "no-such-bucket"
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.UploadCell(ctx, testDoc("standard", "nightly", "cell-r1", 5), CellExtras{})
	if err == nil || Retryable(err) || !strings.Contains(err.Error(), "no-such-bucket") {
		t.Errorf("UploadCell to a missing bucket = %v, want a non-retryable error naming it", err)
	}
	if err := s.CheckBucket(ctx); !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "bucket does not exist") {
		t.Errorf("CheckBucket(missing) = %v", err)
	}
}

// TestRealS3Outage stops the server in the middle of a multi-cell upload
// sequence — after the first object of the second cell — and checks the
// outbox contract: every call fails with a transient error and reports
// nothing as uploaded while the server is down; after a restart the same
// calls complete and every object is present and intact. A second phase
// restarts the server while the uploader is backing off, so one call rides
// out the outage on its own retries.
func TestRealS3Outage(t *testing.T) {
	srv := startS3(t)
	s := newRealStore(t, srv, "outage")
	ctx := context.Background()
	var docs []*results.Document
	for i := 1; i <= 4; i++ {
		docs = append(docs, testDoc("standard", "nightly", fmt.Sprintf("cell-r%d", i), 60))
	}
	extras := CellExtras{AgentLog: []byte("agent log\n")}

	// Phase 1: the server goes away after the first object of cell 2.
	var stopped bool
	var retries []RetryEvent
	s.onRetry = func(e RetryEvent) { retries = append(retries, e) }
	s.afterPut = func(key string) {
		if !stopped && strings.Contains(key, "/cell-r2/") {
			stopped = true
			srv.Stop(t)
		}
	}
	confirmed := map[string][]Object{} // cell → objects, as the controller would record
	var failed []*results.Document
	for _, d := range docs {
		objs, err := s.UploadCell(ctx, d, extras)
		switch {
		case err == nil:
			confirmed[d.Cell.Name] = objs
		case Retryable(err) && errors.Is(err, ErrTransient):
			if objs != nil {
				t.Errorf("%s: failed upload reported objects %v", d.Cell.Name, keysOf(objs))
			}
			var se *Error
			errors.As(err, &se)
			if se.Attempts != s.backoff.MaxAttempts || se.Key == "" || se.Bucket != realBucket {
				t.Errorf("%s: error %#v, want %d attempts naming bucket and key", d.Cell.Name, se, s.backoff.MaxAttempts)
			}
			t.Logf("%s: %v", d.Cell.Name, err)
			failed = append(failed, d)
		default:
			t.Fatalf("%s: %v, want success or a transient error", d.Cell.Name, err)
		}
	}
	if !stopped {
		t.Fatal("the server was never stopped")
	}
	if got := slices.Sorted(maps.Keys(confirmed)); !cmp.Equal([]string{"cell-r1"}, got) {
		t.Fatalf("confirmed during the outage: %v, want only cell-r1 (uploaded before it)", got)
	}
	if len(failed) != 3 || len(retries) < 3*(s.backoff.MaxAttempts-1) {
		t.Fatalf("%d cells failed with %d retries; want 3 cells, each retried %d times", len(failed), len(retries), s.backoff.MaxAttempts-1)
	}
	if _, err := s.Uploaded(ctx, s.Layout().CellKey("standard", "nightly", "cell-r1", ObjectResult)); !errors.Is(err, ErrTransient) {
		t.Errorf("Uploaded while the server is down = %v, want a transient error (never a false \"not uploaded\")", err)
	}
	if _, err := s.UploadRun(ctx, testManifest(t0, docs...), RunExtras{}); !errors.Is(err, ErrTransient) {
		t.Errorf("UploadRun while the server is down = %v, want a transient error", err)
	}

	// The server comes back (same data directory); the controller retries
	// what failed, and the run.
	srv.Start(t)
	for _, d := range failed {
		objs, err := s.UploadCell(ctx, d, extras)
		if err != nil {
			t.Fatalf("%s after restart: %v", d.Cell.Name, err)
		}
		confirmed[d.Cell.Name] = objs
	}
	runObjs, err := s.UploadRun(ctx, testManifest(t0.Add(time.Hour), docs...), RunExtras{ReportHTML: []byte("<html></html>")})
	if err != nil {
		t.Fatal(err)
	}
	var all []Object
	for _, d := range docs {
		objs := confirmed[d.Cell.Name]
		if len(objs) != 4 {
			t.Errorf("%s: %d objects confirmed, want 4", d.Cell.Name, len(objs))
		}
		all = append(all, objs...)
		got, err := s.GetCellDocument(ctx, "standard", "nightly", d.Cell.Name)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := results.Marshal(d)
		if b, _ := results.Marshal(got); !bytes.Equal(b, want) {
			t.Errorf("%s: stored document differs from the uploaded one", d.Cell.Name)
		}
	}
	checkStored(t, s, srv, append(all, runObjs...))
	// The first object of cell 2, written before the outage, was kept, not
	// rewritten.
	if o := confirmed["cell-r2"][0]; !o.Unchanged {
		t.Errorf("%s was written again after the restart; want it recognised as already stored", o.Key)
	}

	// Phase 2: stop the server, and start it again from the retry callback
	// while the uploader waits: the call in flight completes by itself.
	srv.Stop(t)
	s.afterPut = nil
	restarted := false
	s.backoff = Backoff{Initial: 200 * time.Millisecond, Max: time.Second, Multiplier: 2, Jitter: 0.5, MaxAttempts: 6}
	s.onRetry = func(e RetryEvent) {
		if !restarted {
			restarted = true
			t.Logf("attempt %d failed (%v); restarting the server during the %v wait", e.Attempt, e.Err, e.Wait.Round(time.Millisecond))
			srv.Start(t)
		}
	}
	d5 := testDoc("standard", "nightly", "cell-r5", 60)
	start := time.Now()
	objs, err := s.UploadCell(ctx, d5, extras)
	if err != nil || !restarted {
		t.Fatalf("UploadCell across a restart = %v (restarted: %v)", err, restarted)
	}
	t.Logf("upload across a restart took %v", time.Since(start).Round(time.Millisecond))
	checkStored(t, s, srv, objs)
}

// tamperingTransport overwrites an object's file on the server right after
// the server acknowledged its PUT, once: a concurrent writer or a corrupting
// disk between the write and the confirmation.
type tamperingTransport struct {
	srv  *s3Server
	key  string
	done bool
}

func (tt *tamperingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && r.Method == http.MethodPut && !tt.done && strings.HasSuffix(r.URL.Path, "/"+tt.key) && resp.StatusCode == http.StatusOK {
		tt.done = true
		_ = os.WriteFile(tt.srv.file(tt.key), []byte("clobbered"), 0o644)
	}
	return resp, err
}

func TestRealS3ConfirmationCatchesABadWrite(t *testing.T) {
	srv := startS3(t)
	newRealStore(t, srv, "")
	cfg := srv.config("")
	d := testDoc("standard", "nightly", "cell-r1", 10)
	key := Layout{}.CellKey("standard", "nightly", "cell-r1", ObjectResult)
	tt := &tamperingTransport{srv: srv, key: key}
	cfg.Transport = tt
	var events []RetryEvent
	cfg.OnRetry = func(e RetryEvent) { events = append(events, e) }
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := s.UploadCell(context.Background(), d, CellExtras{})
	if err != nil {
		t.Fatal(err)
	}
	if !tt.done || len(events) != 1 || events[0].Key != key || !strings.Contains(events[0].Err.Error(), "sha256") {
		t.Fatalf("tampered: %v; retries %+v; want one retry of %s for a digest mismatch", tt.done, events, key)
	}
	checkStored(t, s, srv, objs)
}

// A long cell (32 steps of 30 minutes at 1 s) through the whole path:
// measures the object sizes and the upload and read-back times.
func TestRealS3LargeCell(t *testing.T) {
	srv := startS3(t)
	s := newRealStore(t, srv, "")
	ctx := context.Background()
	d := testDoc("standard", "long", "cell-r1", 1800)
	for i := 2; len(d.Steps) < 32; i++ {
		st := d.Steps[i%2]
		st.Step = fmt.Sprintf("step-%02d", i)
		d.Steps = append(d.Steps, st)
	}
	start := time.Now()
	objs, err := s.UploadCell(ctx, d, CellExtras{})
	if err != nil {
		t.Fatal(err)
	}
	up := time.Since(start)
	start = time.Now()
	again, err := s.UploadCell(ctx, d, CellExtras{})
	if err != nil || !again[len(again)-1].Unchanged {
		t.Fatalf("re-upload: %v", err)
	}
	re := time.Since(start)
	start = time.Now()
	got, err := s.GetCellDocument(ctx, "standard", "long", "cell-r1")
	if err != nil || len(got.Steps) != 32 || len(got.Steps[31].Series.QPS) != 1800 {
		t.Fatalf("read back: %v", err)
	}
	read := time.Since(start)
	for _, o := range objs {
		t.Logf("%-16s %8.1f KiB", o.Key[strings.LastIndex(o.Key, "/")+1:], float64(o.Size)/1024)
	}
	t.Logf("upload %v, identical re-upload %v, GetCellDocument %v", up.Round(time.Millisecond), re.Round(time.Millisecond), read.Round(time.Millisecond))
	checkStored(t, s, srv, objs)
}
