package controllers

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/results"
)

func TestRegressionBisectionName(t *testing.T) {
	long := strings.Repeat("nightly-", 6) + "x" // 49 characters
	for _, tc := range []struct{ run, want string }{
		{"night-3", "night-3-bisect"},
		{strings.Repeat("a", 43), strings.Repeat("a", 43) + "-bisect"},
	} {
		if got := regressionBisectionName(tc.run); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.run, got, tc.want)
		}
	}
	a, b := regressionBisectionName(long), regressionBisectionName(long+"y")
	if len(a) > maxBisectionName || len(b) > maxBisectionName || a == b || !strings.HasSuffix(a, "-bisect") {
		t.Errorf("long names: %q (%d), %q (%d)", a, len(a), b, len(b))
	}
}

// regressedSuiteRun is a finished run of two databases whose verdict
// against run prev named maria's update-index at 4 and 16 threads and
// pg's point-query at 1.
func regressedSuiteRun(bisect *dbbenchv1alpha1.RegressionBisect) *dbbenchv1alpha1.BenchmarkRun {
	return &dbbenchv1alpha1.BenchmarkRun{
		Spec: dbbenchv1alpha1.BenchmarkRunSpec{
			Databases: []dbbenchv1alpha1.DatabaseSpec{
				{Name: "pg", Engine: dbbenchv1alpha1.EnginePostgres, Versions: []string{"17"}},
				{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"nightly"}, Image: "reg.example:5000/mariadb:{version}"},
			},
			Regression: &dbbenchv1alpha1.RegressionSpec{Bisect: bisect},
		},
		Status: dbbenchv1alpha1.BenchmarkRunStatus{
			Cells: []dbbenchv1alpha1.CellStatus{
				{Name: "pg-17-default", Database: "pg", Version: "17", Config: "default"},
				{Name: "maria-nightly-default", Database: "maria", Version: "nightly", Config: "default"},
			},
			Regression: &dbbenchv1alpha1.RegressionStatus{
				ComparedTo: []string{"prev"},
				Regressed: []dbbenchv1alpha1.RegressedStep{
					{Cell: "maria-nightly-default", Step: "update-index", Threads: 4},
					{Cell: "pg-17-default", Step: "point-query", Threads: 1},
					{Cell: "maria-nightly-default", Step: "update-index", Threads: 16},
				},
			},
		},
	}
}

func manifestWithDigest(digest string) *results.Manifest {
	return &results.Manifest{Cells: []results.ManifestCell{
		{Cell: results.Cell{Name: "pg-17-default", Database: "pg", Version: "17", Config: "default"}},
		{Cell: results.Cell{Name: "maria-nightly-default", Database: "maria", Version: "nightly", Config: "default"}, ImageDigest: digest},
	}}
}

func TestRegressionBisectionSpec(t *testing.T) {
	cands := []dbbenchv1alpha1.BisectionPoint{{Version: "c1"}}
	for _, tc := range []struct {
		name      string
		bisect    dbbenchv1alpha1.RegressionBisect
		cur, prev *results.Manifest
		good, bad dbbenchv1alpha1.BisectionPoint
		why       string
	}{
		{name: "digests recorded: points by digest in the image's repository",
			bisect: dbbenchv1alpha1.RegressionBisect{Candidates: cands},
			cur:    manifestWithDigest("sha256:bbb"), prev: manifestWithDigest("sha256:aaa"),
			good: dbbenchv1alpha1.BisectionPoint{Image: "reg.example:5000/mariadb@sha256:aaa"},
			bad:  dbbenchv1alpha1.BisectionPoint{Image: "reg.example:5000/mariadb@sha256:bbb"}},
		{name: "no digests: one moving tag cannot be bisected",
			bisect: dbbenchv1alpha1.RegressionBisect{Candidates: cands},
			cur:    manifestWithDigest(""), prev: manifestWithDigest(""),
			why: "good and bad are both nightly"},
		{name: "no digests, good and bad given",
			bisect: dbbenchv1alpha1.RegressionBisect{Candidates: cands, Good: &dbbenchv1alpha1.BisectionPoint{Version: "n-100"}, Bad: &dbbenchv1alpha1.BisectionPoint{Version: "n-110"}},
			cur:    manifestWithDigest(""), prev: manifestWithDigest(""),
			good: dbbenchv1alpha1.BisectionPoint{Version: "n-100"}, bad: dbbenchv1alpha1.BisectionPoint{Version: "n-110"}},
		{name: "compared run unreadable",
			bisect: dbbenchv1alpha1.RegressionBisect{Candidates: cands},
			cur:    manifestWithDigest("sha256:bbb"),
			why:    "the compared run prev has no readable results"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.bisect
			run := regressedSuiteRun(&b)
			var history []suiteRun
			if tc.prev != nil {
				history = []suiteRun{{name: "other"}, {name: "prev", manifest: tc.prev}}
			}
			spec, why := regressionBisectionSpec(run, tc.cur, history)
			if tc.why != "" {
				if spec != nil || !strings.Contains(why, tc.why) {
					t.Fatalf("spec %+v, message %q; want no spec and %q", spec, why, tc.why)
				}
				return
			}
			if spec == nil {
				t.Fatalf("no spec: %s", why)
			}
			want := dbbenchv1alpha1.BenchmarkBisectionSpec{
				RunRef: &dbbenchv1alpha1.BisectionRunRef{Database: "maria", Config: "default"},
				Good:   tc.good, Bad: tc.bad, Candidates: cands,
				// Only maria's regressed pairs: pg's point-query@1 is
				// another database's.
				Judge:       dbbenchv1alpha1.BisectionJudge{Steps: []string{"update-index"}, Threads: []int32{4, 16}},
				Parallelism: 1, Repeats: 1, MaxCells: 2,
			}
			if d := cmp.Diff(want, *spec); d != "" {
				t.Errorf("spec (-want +got):\n%s", d)
			}
		})
	}
}

func TestImageRepository(t *testing.T) {
	for in, want := range map[string]string{
		"mariadb:11.8":                         "mariadb",
		"reg.example:5000/mariadb:nightly":     "reg.example:5000/mariadb",
		"reg.example:5000/mariadb":             "reg.example:5000/mariadb",
		"reg.example/mariadb:11@sha256:abc":    "reg.example/mariadb",
		"docker.io/library/postgres@sha256:ab": "docker.io/library/postgres",
	} {
		if got := imageRepository(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
