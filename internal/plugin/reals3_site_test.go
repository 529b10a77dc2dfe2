package plugin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/internal/testutil/chromium"
	"github.com/dbbench/dbbench/pkg/site"
	"github.com/dbbench/dbbench/pkg/store"
	"github.com/dbbench/dbbench/pkg/triage"
)

// TestRealS3Site builds the nightly suite's site from a real versitygw:
// s3Fixture's 10 runs (point-query of the 11.4 cell 20 % slower from
// nightly-05 on) with report pages, nightly-09's verdict, an ack of the
// slowdown and a bisection, beside what a bucket also holds: a manifest of
// an unknown schema, a corrupt ack, a foreign file among the acks, a
// bisection whose summary is corrupt and a README at the suite's level.
// The site says what it skipped and is built anyway; -o DIR opens in
// headless Chromium with every link resolving; --publish writes it back.
func TestRealS3Site(t *testing.T) {
	endpoint := startS3(t)
	_, cred := s3Fixture(t, endpoint)
	ctx := context.Background()
	st, err := store.New(store.Config{Endpoint: endpoint, Bucket: s3Bucket, Prefix: s3Prefix, AccessKeyID: s3Access, SecretAccessKey: s3Secret})
	if err != nil {
		t.Fatal(err)
	}
	l := st.Layout()
	put := func(key, data string) {
		t.Helper()
		if _, err := st.Put(ctx, key, []byte(data), "application/octet-stream"); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []string{"nightly-04", "nightly-05", "nightly-09"} {
		put(l.RunKey("nightly", r, store.ObjectReport), "<!doctype html><title>"+r+"</title>")
	}
	v, _ := triage.MarshalVerdict(triage.Verdict{Run: "nightly-09", Suite: "nightly", Against: "ChangePoints", Status: "False", Reason: "RegressionAcknowledged",
		Message: "No step significantly slower", Acknowledged: []triage.VerdictPair{{Cell: "mariadb-11-4-base", Step: "point-query", Threads: 1, ChangePercent: "-20.0",
			Since: "nightly-05", LastBefore: "nightly-04", Ack: "slow-point", Resolution: triage.ResolutionAcknowledged}}})
	put(l.RunKey("nightly", "nightly-09", store.ObjectVerdict), string(v))
	if _, err := st.PutAck(ctx, triage.Ack{Name: "slow-point", Suite: "nightly", Run: "nightly-05", Step: "point-query", Resolution: triage.ResolutionAcknowledged,
		Reason: "the new optimizer costs 20 %", Link: "https://jira.example/MDEV-2"}); err != nil {
		t.Fatal(err)
	}
	put(l.AcksPrefix("nightly")+"broken.json", "{not json")
	put(l.AcksPrefix("nightly")+"README.txt", "acks go here")
	put(l.BisectionKey("nightly", "nightly-06-bisect", store.ObjectBisectionSummary), `{"schemaVersion":"dbbench.io/bisection-summary/v1","name":"nightly-06-bisect","run":"nightly-06","localized":"True","firstBad":"11.4.5"}`)
	put(l.BisectionKey("nightly", "nightly-06-bisect", store.ObjectReport), "<!doctype html><title>bisection</title>")
	put(l.BisectionKey("nightly", "garbled", store.ObjectBisectionSummary), "garbage")
	put(l.SuitePrefix("nightly")+"README.txt", "the nightly suite")
	put(l.RunKey("nightly", "nightly-99", store.ObjectManifest), `{"schemaVersion":"dbbench.io/results-manifest/v7","run":{"name":"nightly-99"}}`)

	dir := filepath.Join(t.TempDir(), "site")
	s3 := []string{"--from-s3", "s3://" + s3Bucket + "/" + s3Prefix, "--s3-endpoint", endpoint, "--s3-credentials-file", cred}
	out, errOut, err := runCmd(t, noCluster{}, append([]string{"site", "nightly", "-o", dir}, s3...)...)
	if err != nil {
		t.Fatalf("site: %v\n%s", err, errOut)
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	for _, want := range []string{"suite nightly: 10 of 10 runs charted", "acknowledged or invalid"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	for _, want := range []string{"nightly-99/manifest.json skipped", "_acks/broken.json skipped", "_acks/README.txt skipped: not an acknowledgement",
		"_bisections/garbled/bisection.json skipped"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks the note %q", want)
		}
	}
	var idx site.Index
	data, err := os.ReadFile(filepath.Join(dir, site.FileData))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		t.Fatal(err)
	}
	var acked []string
	for _, c := range idx.ChangePoints {
		if c.State == site.StateAcknowledged {
			acked = append(acked, c.Combination+" "+c.Step+" "+c.Run)
		}
	}
	if len(acked) != 1 || acked[0] != "mariadb-11.4-base point-query nightly-05" {
		t.Errorf("acknowledged change points %v, want the 11.4 point-query drop at nightly-05", acked)
	}
	if idx.Latest == nil || idx.Latest.Run != "nightly-09" || len(idx.Bisections) != 1 {
		t.Errorf("latest verdict %+v, bisections %+v", idx.Latest, idx.Bisections)
	}
	for _, f := range []string{"index.html", "nightly-05/report.html", "_bisections/nightly-06-bisect/report.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the copy lacks %s: %v", f, err)
		}
	}
	if _, err := os.Stat(chromium.Path); err == nil {
		dom := chromium.DOM(t, filepath.Join(dir, site.FileIndex), "1280,2000")
		if !strings.Contains(dom, `class="cp confirmed acknowledged worse"`) {
			t.Error("Chromium's DOM has no acknowledged change point")
		}
		if broken := chromium.BrokenLinks(dom, dir); len(broken) > 0 {
			t.Errorf("links that resolve to nothing in the copy: %v", broken)
		}
	}

	out, errOut, err = runCmd(t, noCluster{}, append([]string{"site", "nightly", "--publish"}, s3...)...)
	if err != nil || !strings.Contains(out, "published s3://"+s3Bucket+"/"+s3Prefix+"/nightly/index.html") {
		t.Fatalf("site --publish: %q %v\n%s", out, err, errOut)
	}
	page, err := st.Get(ctx, l.SuiteKey("nightly", store.ObjectSiteIndex))
	if err != nil || !strings.Contains(string(page), "Suite nightly") {
		t.Errorf("the bucket's index.html: %v", err)
	}

	// Bad input: no such suite, no destination, no store.
	if _, _, err := runCmd(t, noCluster{}, append([]string{"site", "monthly", "-o", dir}, s3...)...); err == nil || !strings.Contains(err.Error(), `no run of suite "monthly"`) {
		t.Errorf("unknown suite: %v", err)
	}
	if _, _, err := runCmd(t, noCluster{}, append([]string{"site", "nightly"}, s3...)...); err == nil || !strings.Contains(err.Error(), "-o DIR or --publish") {
		t.Errorf("no destination: %v", err)
	}
	if _, _, err := runCmd(t, noCluster{}, "site", "nightly", "-o", dir); err == nil || !strings.Contains(err.Error(), "--from-s3: required") {
		t.Errorf("no store: %v", err)
	}
}
