package benchmarkrun

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/runverdict"
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
			var history []runverdict.Run
			if tc.prev != nil {
				history = []runverdict.Run{{Name: "other"}, {Name: "prev", Manifest: tc.prev}}
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
				Judge:   dbbenchv1alpha1.BisectionJudge{Steps: []string{"update-index"}, Threads: []int32{4, 16}},
				Metrics: []dbbenchv1alpha1.RegressionMetric{dbbenchv1alpha1.MetricThroughput},
				// regression.bisect unset (no API server defaulted it):
				// the markers' defaults, not floors of 1 and 2.
				Parallelism: dbbenchv1alpha1.DefaultBisectionParallelism, Repeats: dbbenchv1alpha1.DefaultBisectionRepeats,
				MaxCells: dbbenchv1alpha1.DefaultBisectionMaxCells,
			}
			if d := cmp.Diff(want, *spec); d != "" {
				t.Errorf("spec (-want +got):\n%s", d)
			}
		})
	}
}

// A nightly suite judged against change points, with every build listed:
// the bisection runs between the builds of the runs around the change
// point, whichever run confirmed it, over the builds between them, on the
// metrics that regressed.
func TestRegressionBisectionSpecFromChangePoints(t *testing.T) {
	repo := "reg.example:5000/mariadb"
	builds := []dbbenchv1alpha1.BisectionPoint{{Image: repo + "@sha256:b1"}, {Image: repo + "@sha256:b2"}, {Image: repo + "@sha256:b3"},
		{Image: repo + "@sha256:b4"}, {Image: repo + "@sha256:b5"}, {Image: repo + "@sha256:b6"}}
	history := []runverdict.Run{{Name: "n1", Manifest: manifestWithDigest("sha256:b1")}, {Name: "n2", Manifest: manifestWithDigest("sha256:b2")},
		{Name: "n3", Manifest: manifestWithDigest("sha256:b5")}}
	for _, tc := range []struct {
		name        string
		since, last string
		builds      []dbbenchv1alpha1.BisectionPoint
		metrics     []dbbenchv1alpha1.RegressionMetric
		good, bad   dbbenchv1alpha1.BisectionPoint
		candidates  []dbbenchv1alpha1.BisectionPoint
		why         string
	}{
		{name: "confirmed by the next run: between n2's build and n3's", since: "n3", last: "n2", builds: builds,
			metrics: []dbbenchv1alpha1.RegressionMetric{dbbenchv1alpha1.MetricP99Latency},
			good:    builds[1], bad: builds[4], candidates: builds[2:4]},
		{name: "a build not in the list", since: "n3", last: "n2", builds: builds[2:],
			why: "good build reg.example:5000/mariadb@sha256:b2 (run n2) is not in regression.bisect.builds"},
		{name: "adjacent builds: the suite localized it", since: "n2", last: "n1", builds: builds,
			why: "reg.example:5000/mariadb@sha256:b2 is the build after reg.example:5000/mariadb@sha256:b1 in regression.bisect.builds"},
		{name: "builds in the wrong order", since: "n3", last: "n2", builds: []dbbenchv1alpha1.BisectionPoint{builds[4], builds[0], builds[1]},
			why: "bad build reg.example:5000/mariadb@sha256:b5 is not after good build"},
		{name: "the run of the change point is gone", since: "n0", last: "n2", builds: builds,
			why: "the regressed run n0 has no readable results"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := regressedSuiteRun(&dbbenchv1alpha1.RegressionBisect{Builds: tc.builds, Repeats: 3, MaxCells: 60, Confidence: "0.95",
				Explain: dbbenchv1alpha1.BisectionExplainSpec{Profile: true, Seconds: 5}})
			run.Name = "n4"
			run.Status.Regression.Regressed = []dbbenchv1alpha1.RegressedStep{{Cell: "maria-nightly-default", Step: "update-index", Threads: 4,
				Metrics: tc.metrics, Since: tc.since, LastBefore: tc.last}}
			spec, why := regressionBisectionSpec(run, manifestWithDigest("sha256:b5"), history)
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
				RunRef: &dbbenchv1alpha1.BisectionRunRef{Name: "n4", Database: "maria", Config: "default"},
				Good:   tc.good, Bad: tc.bad, Candidates: tc.candidates,
				Judge:   dbbenchv1alpha1.BisectionJudge{Steps: []string{"update-index"}, Threads: []int32{4}},
				Metrics: tc.metrics, Parallelism: 1, Repeats: 3, MaxCells: 60, Confidence: "0.95",
				Explain: dbbenchv1alpha1.BisectionExplainSpec{Profile: true, Seconds: 5},
			}
			if d := cmp.Diff(want, *spec); d != "" {
				t.Errorf("spec (-want +got):\n%s", d)
			}
		})
	}
}

func TestBuildIndex(t *testing.T) {
	builds := []dbbenchv1alpha1.BisectionPoint{{Version: "11.8.1"}, {Image: "reg/m:11.8.2"}, {Image: "reg/m@sha256:c3"}, {Image: "reg/m:nightly-4"}}
	for _, tc := range []struct {
		p             dbbenchv1alpha1.BisectionPoint
		digest, image string
		want          int
	}{
		{dbbenchv1alpha1.BisectionPoint{Version: "11.8.1"}, "", "", 0},
		{dbbenchv1alpha1.BisectionPoint{Image: "reg/m:11.8.2"}, "", "", 1},
		{dbbenchv1alpha1.BisectionPoint{Image: "other/m@sha256:c3"}, "sha256:c3", "", 2},
		// A run whose spec named the build's tag, with the runtime's
		// own digest (a locally loaded image's config digest).
		{dbbenchv1alpha1.BisectionPoint{Image: "reg/m@sha256:f00"}, "sha256:f00", "reg/m:nightly-4", 3},
		{dbbenchv1alpha1.BisectionPoint{Version: "11.8.9"}, "sha256:c9", "reg/m:nightly-9", -1},
	} {
		if got := buildIndex(builds, tc.p, tc.digest, tc.image); got != tc.want {
			t.Errorf("%+v %s: %d, want %d", tc.p, tc.digest, got, tc.want)
		}
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

func TestImageDigestOf(t *testing.T) {
	pod := func(name, id string) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: name, ImageID: id}}}}
	}
	for _, tc := range []struct {
		pod  *corev1.Pod
		want string
	}{
		{pod("database", "docker.io/dbbench/mariadb-bisect@sha256:0a1b"), "sha256:0a1b"},
		{pod("database", "sha256:0a1b"), "sha256:0a1b"},
		{pod("database", "docker-pullable://mariadb@sha256:0a1b"), "sha256:0a1b"},
		{pod("database", ""), ""},
		{pod("collector", "sha256:0a1b"), ""},
		{pod("database", "docker.io/library/mariadb:11.8"), ""},
	} {
		if got := imageDigestOf(tc.pod, "database"); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.pod.Status.ContainerStatuses, got, tc.want)
		}
	}
}

func TestBisectableRegressions(t *testing.T) {
	build := dbbenchv1alpha1.RegressedStep{Cell: "a", Step: "read"}
	env := dbbenchv1alpha1.RegressedStep{Cell: "b", Step: "write", EnvironmentOnly: true}
	for _, tc := range []struct {
		name      string
		regressed []dbbenchv1alpha1.RegressedStep
		want      []dbbenchv1alpha1.RegressedStep
		why       string
	}{
		{name: "none", why: "the verdict names no regressed step"},
		{name: "environment only", regressed: []dbbenchv1alpha1.RegressedStep{env}, why: "there is no build to bisect"},
		{name: "the build's, in order", regressed: []dbbenchv1alpha1.RegressedStep{env, build}, want: []dbbenchv1alpha1.RegressedStep{build}},
	} {
		got, why := bisectableRegressions(tc.regressed)
		if !strings.Contains(why, tc.why) || (tc.why == "") != (why == "") {
			t.Errorf("%s: message %q, want %q", tc.name, why, tc.why)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.name, d)
		}
	}
}

// The judged pairs are those of the first regression's database and
// config variant only, each step, thread count and metric once.
func TestRegressedJudge(t *testing.T) {
	cells := []dbbenchv1alpha1.CellStatus{
		{Name: "m-1-default", Database: "maria", Config: "default"},
		{Name: "m-2-default", Database: "maria", Config: "default"},
		{Name: "m-1-tuned", Database: "maria", Config: "tuned"},
		{Name: "pg-1-default", Database: "pg", Config: "default"},
	}
	p99 := dbbenchv1alpha1.MetricP99Latency
	tput := dbbenchv1alpha1.MetricThroughput
	regs := []dbbenchv1alpha1.RegressedStep{
		{Cell: "m-1-default", Step: "update-index", Threads: 4},
		{Cell: "pg-1-default", Step: "point-query", Threads: 1},
		{Cell: "m-1-tuned", Step: "read-only", Threads: 8},
		{Cell: "m-2-default", Step: "update-index", Threads: 16, Metrics: []dbbenchv1alpha1.RegressionMetric{p99, tput}},
		{Cell: "gone", Step: "write-only", Threads: 2},
	}
	judge, metrics := regressedJudge(regs, cells, &cells[0])
	wantJudge := dbbenchv1alpha1.BisectionJudge{Steps: []string{"update-index"}, Threads: []int32{4, 16}}
	if d := cmp.Diff(wantJudge, judge); d != "" {
		t.Errorf("judge (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]dbbenchv1alpha1.RegressionMetric{tput, p99}, metrics); d != "" {
		t.Errorf("metrics (-want +got):\n%s", d)
	}
}

func TestBoundingRuns(t *testing.T) {
	for _, tc := range []struct {
		name       string
		top        dbbenchv1alpha1.RegressedStep
		comparedTo []string
		good, bad  string
	}{
		{name: "change point: the runs around it", top: dbbenchv1alpha1.RegressedStep{Since: "n3", LastBefore: "n2"}, comparedTo: []string{"n1"}, good: "n2", bad: "n3"},
		{name: "against runs: the last compared and this one", comparedTo: []string{"n1", "n2"}, good: "n2", bad: "n4"},
		{name: "no compared run", good: "", bad: "n4"},
	} {
		good, bad := boundingRuns("n4", tc.top, tc.comparedTo)
		if good != tc.good || bad != tc.bad {
			t.Errorf("%s: %q, %q; want %q, %q", tc.name, good, bad, tc.good, tc.bad)
		}
	}
}

func TestBuildsBetween(t *testing.T) {
	b := func(v string) dbbenchv1alpha1.BisectionPoint { return dbbenchv1alpha1.BisectionPoint{Version: v} }
	builds := []dbbenchv1alpha1.BisectionPoint{b("1"), b("2"), b("3"), b("4")}
	at := func(v string) regressedBuild { return regressedBuild{point: b(v)} }
	many := make([]dbbenchv1alpha1.BisectionPoint, maxBisectionCandidates+3)
	for i := range many {
		many[i] = b(strconv.Itoa(i))
	}
	for _, tc := range []struct {
		name           string
		builds         []dbbenchv1alpha1.BisectionPoint
		good, bad      regressedBuild
		wantGood       dbbenchv1alpha1.BisectionPoint
		wantBad        dbbenchv1alpha1.BisectionPoint
		wantCandidates []dbbenchv1alpha1.BisectionPoint
		why            string
	}{
		{name: "the builds strictly between", builds: builds, good: at("1"), bad: at("4"),
			wantGood: b("1"), wantBad: b("4"), wantCandidates: []dbbenchv1alpha1.BisectionPoint{b("2"), b("3")}},
		{name: "good not listed", builds: builds, good: at("0"), bad: at("4"), why: "good build 0 (run g) is not in regression.bisect.builds"},
		{name: "bad not listed", builds: builds, good: at("1"), bad: at("9"), why: "bad build 9 (run b) is not in regression.bisect.builds"},
		{name: "bad before good", builds: builds, good: at("3"), bad: at("2"), why: "bad build 2 is not after good build 3"},
		{name: "adjacent", builds: builds, good: at("2"), bad: at("3"), why: "3 is the build after 2 in regression.bisect.builds"},
		{name: "too many between", builds: many, good: at("0"), bad: at(strconv.Itoa(len(many) - 1)),
			why: strconv.Itoa(maxBisectionCandidates+1) + " builds between 0 and"},
	} {
		good, bad, candidates, why := buildsBetween(tc.builds, tc.good, tc.bad, "g", "b")
		if tc.why != "" {
			if !strings.Contains(why, tc.why) || candidates != nil {
				t.Errorf("%s: candidates %v, message %q; want none and %q", tc.name, candidates, why, tc.why)
			}
			continue
		}
		if why != "" || good != tc.wantGood || bad != tc.wantBad {
			t.Errorf("%s: %v, %v, %q; want %v, %v", tc.name, good, bad, why, tc.wantGood, tc.wantBad)
		}
		if d := cmp.Diff(tc.wantCandidates, candidates); d != "" {
			t.Errorf("%s: candidates (-want +got):\n%s", tc.name, d)
		}
	}
}
