package plugin

// Reports from a real S3-compatible server: versitygw, started and stopped
// through hack/s3server.sh on 127.0.0.1 (a private data directory and a free
// port per test). They run only with DBBENCH_REAL_S3=1:
//
//	DBBENCH_REAL_S3=1 go test ./internal/plugin -run S3 -v
//
// The runs are uploaded with pkg/store (UploadCell, UploadRun), the same
// documents and manifests are written to a directory tree, and report,
// compare and history must print exactly the same text from both.

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbbench/dbbench/internal/testutil/versitygw"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/store"
)

const (
	s3Access = "dbbench-plugin"
	s3Secret = "dbbench-plugin-secret-value"
	s3Bucket = "dbbench-results"
	s3Prefix = "team/bench"
)

// startS3 starts a real versitygw on a free loopback port and returns its
// endpoint; it is stopped when the test ends.
func startS3(t *testing.T) string {
	t.Helper()
	return versitygw.Start(t, s3Access, s3Secret).Endpoint()
}

// seriesDoc adds per-second series and hardware figures to twoCells'
// documents, so that the report's time-series and hardware tables come
// from the store's full documents too.
func seriesDocs(run, suite string, i int, scale float64) []*results.Document {
	docs := twoCells(run, suite, t0.Add(time.Duration(i)*24*time.Hour), scale)
	for k, d := range docs {
		d.Run.UID = "uid-" + run
		for j := range d.Steps {
			st := &d.Steps[j]
			if st.Step != "point-query" {
				continue
			}
			s := &results.Series{IntervalSeconds: 1}
			for sec := 0; sec < 20; sec++ {
				q := math.Round((st.SteadyQPS+float64((sec*7+k)%5)-2)*100) / 100
				if sec == 11 {
					q = math.Round(st.SteadyQPS*0.3*100) / 100 // a stall
				}
				s.QPS = append(s.QPS, q)
				s.TPS = append(s.TPS, q)
				s.LatencyMs = append(s.LatencyMs, 1.5)
				s.ErrorsPerSecond = append(s.ErrorsPerSecond, 0)
				s.ReconnectsPerSecond = append(s.ReconnectsPerSecond, 0)
			}
			st.Series, st.WarmupSeconds, st.DurationSeconds, st.SteadySamples = s, 2, 20, 18
			cpu, cs := 45.5+float64(k), 12000.0*scale
			st.Hardware = &results.Hardware{OpsPerSecond: st.SteadyQPS, OpsBasis: "steadyQps", CPUs: 2, Samples: 18,
				CPUPercent: &cpu, ContextSwitchesPerSecond: &cs}
			st.Hardware.Derive()
		}
	}
	return docs
}

func manifestOf(t *testing.T, at time.Time, docs []*results.Document) *results.Manifest {
	t.Helper()
	// The baseline is the second cell, so that a source that lost the
	// manifest would print other tables.
	m := &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: docs[0].Run, UpdatedAt: at, Baseline: docs[1].Cell.Name}
	for _, d := range docs {
		m.Upsert(results.NewManifestCell(d, "Succeeded", "", store.Layout{Prefix: s3Prefix}.CellKey(d.Run.Suite, d.Run.Name, d.Cell.Name, store.ObjectResult)))
	}
	return m
}

// s3Fixture uploads 10 nightly runs (the 11.4 cell 20 % slower on
// point-query from nightly-05 on) and one weekly run to the store, and
// writes the same documents and manifests under a local directory, one
// subdirectory per run.
func s3Fixture(t *testing.T, endpoint string) (localRoot, credFile string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.New(store.Config{Endpoint: endpoint, Bucket: s3Bucket, Prefix: s3Prefix, AccessKeyID: s3Access, SecretAccessKey: s3Secret})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateBucket(ctx); err != nil {
		t.Fatal(err)
	}
	localRoot = t.TempDir()
	upload := func(name, suite string, i int, scale float64) {
		docs := seriesDocs(name, suite, i, scale)
		m := manifestOf(t, t0.Add(time.Duration(i)*24*time.Hour+2*time.Hour), docs)
		dir := filepath.Join(localRoot, name)
		writeDocs(t, dir, docs...)
		b, err := results.MarshalManifest(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, store.ObjectManifest), b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if _, err := st.UploadCell(ctx, d, store.CellExtras{AgentLog: []byte("log of " + d.Cell.Name + "\n")}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.UploadRun(ctx, m, store.RunExtras{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 10; i++ {
		scale := 1.0
		if i >= 5 {
			scale = 0.8
		}
		upload(fmt.Sprintf("nightly-%02d", i), "nightly", i, scale*(1+0.002*float64(i%3)))
	}
	upload("weekly-01", "weekly", 3, 1)
	credFile = filepath.Join(t.TempDir(), "s3.env")
	if err := os.WriteFile(credFile, []byte("# versitygw on loopback\naccessKeyID="+s3Access+"\nsecretAccessKey = "+s3Secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return localRoot, credFile
}

func TestRealS3ReportsMatchLocal(t *testing.T) {
	endpoint := startS3(t)
	local, cred := s3Fixture(t, endpoint)
	s3 := []string{"--from-s3", "s3://" + s3Bucket + "/" + s3Prefix, "--s3-endpoint", endpoint, "--s3-credentials-file", cred}
	same := func(name string, fromS3, fromDir []string, want ...string) {
		t.Helper()
		got, gotErr, err := runCmd(t, noCluster{}, append(fromS3, s3...)...)
		if err != nil {
			t.Fatalf("%s from S3: %v\n%s", name, err, gotErr)
		}
		exp, _, err := runCmd(t, noCluster{}, fromDir...)
		if err != nil {
			t.Fatalf("%s from dir: %v", name, err)
		}
		if got != exp {
			t.Errorf("%s: S3 and local output differ\n--- S3:\n%s\n--- local:\n%s", name, got, exp)
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: output lacks %q:\n%s", name, w, got)
			}
		}
		t.Logf("%s (%d bytes, identical from S3 and from files):\n%s", name, len(got), got)
	}
	same("report", []string{"report", "nightly-07", "--suite", "nightly"},
		[]string{"report", "nightly-07", "--from-dir", filepath.Join(local, "nightly-07")},
		"QPS(cell) / QPS(mariadb-11-4-base)", "point-query", "cpu/o")
	same("report markdown", []string{"report", "nightly-02", "--suite", "nightly", "-o", "markdown"},
		[]string{"report", "nightly-02", "--from-dir", filepath.Join(local, "nightly-02"), "-o", "markdown"}, "| point-query")
	same("report json", []string{"report", "weekly-01", "--suite", "weekly", "-o", "json"},
		[]string{"report", "weekly-01", "--from-dir", filepath.Join(local, "weekly-01"), "-o", "json"}, `"series"`)
	same("compare", []string{"compare", "nightly-02", "nightly-07", "--suite", "nightly"},
		[]string{"compare", "nightly-02", "nightly-07", "--from-dir", local}, "nightly-07/mariadb-11-4-base")
	same("history", []string{"history", "nightly"}, []string{"history", "nightly", "--from-dir", local},
		"History of 10 runs", "mariadb-11.4-base  point-query  1        throughput  nightly-05")
	same("history json", []string{"history", "nightly", "-o", "json"}, []string{"history", "nightly", "--from-dir", local, "-o", "json"},
		`"run": "nightly-05"`)

	// Credentials from the environment instead of a file.
	t.Setenv(EnvAccessKeyID, s3Access)
	t.Setenv(EnvSecretAccessKey, s3Secret)
	env := []string{"history", "nightly", "--from-s3", "s3://" + s3Bucket + "/" + s3Prefix, "--s3-endpoint", endpoint}
	got, _, err := runCmd(t, noCluster{}, env...)
	if err != nil {
		t.Fatalf("history with env credentials: %v", err)
	}
	exp, _, _ := runCmd(t, noCluster{}, "history", "nightly", "--from-dir", local)
	if got != exp {
		t.Errorf("history with env credentials differs:\n%s", got)
	}
}

func TestRealS3Errors(t *testing.T) {
	endpoint := startS3(t)
	_, cred := s3Fixture(t, endpoint)
	from := func(url string, cred string) []string {
		return []string{"--from-s3", url, "--s3-endpoint", endpoint, "--s3-credentials-file", cred}
	}
	good := from("s3://"+s3Bucket+"/"+s3Prefix, cred)
	writeCred := func(access, secret string) string {
		p := filepath.Join(t.TempDir(), "cred")
		if err := os.WriteFile(p, []byte("[default]\naws_access_key_id = "+access+"\naws_secret_access_key = "+secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"missing run", append([]string{"report", "nightly-99", "--suite", "nightly"}, good...),
			[]string{`run "nightly-99" not found in suite "nightly" under s3://dbbench-results/team/bench/`,
				"s3://dbbench-results/team/bench/nightly/nightly-99/manifest.json", "runs there: nightly-00, nightly-01"}},
		{"run in another suite", append([]string{"report", "weekly-01", "--suite", "nightly"}, good...),
			[]string{`run "weekly-01" not found in suite "nightly"`}},
		{"missing run in compare", append([]string{"compare", "nightly-01", "nightly-42", "--suite", "nightly"}, good...),
			[]string{`run nightly-42: run "nightly-42" not found in suite "nightly"`}},
		{"missing suite", append([]string{"history", "monthly"}, good...),
			[]string{`no run of suite "monthly" under s3://dbbench-results/team/bench/`}},
		{"wrong prefix", append([]string{"report", "nightly-01", "--suite", "nightly"}, from("s3://"+s3Bucket+"/other", cred)...),
			[]string{`run "nightly-01" not found in suite "nightly" under s3://dbbench-results/other/`, `suite "nightly" has no runs there`}},
		{"missing bucket", append([]string{"report", "nightly-01", "--suite", "nightly"}, from("s3://no-such-bucket/"+s3Prefix, cred)...),
			[]string{`bucket "no-such-bucket" does not exist at ` + endpoint}},
		{"missing bucket in history", append([]string{"history", "nightly"}, from("s3://no-such-bucket", cred)...),
			[]string{`bucket "no-such-bucket" does not exist at ` + endpoint}},
		{"wrong secret", append([]string{"report", "nightly-01", "--suite", "nightly"}, from("s3://"+s3Bucket+"/"+s3Prefix, writeCred(s3Access, "not-the-secret"))...),
			[]string{endpoint + " refused the credentials", "credentials refused"}},
		{"unknown access key", append([]string{"history", "nightly"}, from("s3://"+s3Bucket+"/"+s3Prefix, writeCred("nobody", "nothing-at-all"))...),
			[]string{endpoint + " refused the credentials"}},
		{"no credentials", []string{"report", "nightly-01", "--suite", "nightly", "--from-s3", "s3://" + s3Bucket, "--s3-endpoint", endpoint},
			[]string{"--from-s3 needs credentials"}},
		{"bad URL", append([]string{"history", "nightly"}, from("http://"+s3Bucket, cred)...),
			[]string{`want s3://BUCKET[/PREFIX]`}},
		{"two sources", append([]string{"history", "nightly", "--from-dir", "."}, good...),
			[]string{"choose one source"}},
	}
	t.Setenv(EnvAccessKeyID, "")
	t.Setenv(EnvSecretAccessKey, "")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			out, _, err := runCmd(t, noCluster{}, c.args...)
			if err == nil {
				t.Fatalf("no error; output:\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			for _, secret := range []string{s3Secret, "not-the-secret", "nothing-at-all"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error shows a secret: %v", err)
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v: a refused request must not be retried", d)
			}
			t.Logf("%v", err)
		})
	}
}
