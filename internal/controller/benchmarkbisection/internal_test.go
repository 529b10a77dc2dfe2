package benchmarkbisection

import (
	"context"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/bisect"
	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/regression"
	"github.com/dbbench/dbbench/pkg/results"
)

// regressedRun is a finished run of two databases whose verdict named
// update-index at 4 threads.
func regressedRun() *dbbenchv1alpha1.BenchmarkRun {
	return &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "nightly-7"},
		Spec: dbbenchv1alpha1.BenchmarkRunSpec{
			Suite: "nightly",
			Databases: []dbbenchv1alpha1.DatabaseSpec{
				{Name: "pg", Engine: dbbenchv1alpha1.EnginePostgres, Versions: []string{"17"}},
				{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"11.4"}, Image: "reg.example/mariadb:{version}",
					Configs: []dbbenchv1alpha1.ConfigVariant{{Name: "small"}, {Name: "durable", Inline: ptr.To("[mysqld]\nsync_binlog=1\n")}}},
			},
			Workload:   dbbenchv1alpha1.WorkloadSpec{Repeats: 5, Steps: []string{"point-query", "update-index"}},
			Regression: &dbbenchv1alpha1.RegressionSpec{Against: dbbenchv1alpha1.RegressAgainstPreviousRun, MinMagnitudePercent: 20, MaxPValue: "0.01"},
			Baseline:   &dbbenchv1alpha1.BaselineSpec{Database: "pg"},
		},
		Status: dbbenchv1alpha1.BenchmarkRunStatus{Regression: &dbbenchv1alpha1.RegressionStatus{
			Regressed: []dbbenchv1alpha1.RegressedStep{{Cell: "maria-11.4-durable", Step: "update-index", Threads: 4}},
		}},
	}
}

func bisectionPassFor(t *testing.T, spec dbbenchv1alpha1.BenchmarkBisectionSpec, runs ...*dbbenchv1alpha1.BenchmarkRun) *bisectionPass {
	t.Helper()
	scheme := framework.Scheme()
	if len(runs) == 0 {
		runs = append(runs, regressedRun())
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(runs[0]).Build()
	bis := &dbbenchv1alpha1.BenchmarkBisection{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "find", UID: "u1"}, Spec: spec}
	return &bisectionPass{r: &Reconciler{Client: c, Scheme: scheme}, bis: bis, log: logr.Discard()}
}

func TestBisectionSetupFromARun(t *testing.T) {
	points := func(s ...string) []dbbenchv1alpha1.BisectionPoint {
		var out []dbbenchv1alpha1.BisectionPoint
		for _, v := range s {
			if strings.Contains(v, "/") {
				out = append(out, dbbenchv1alpha1.BisectionPoint{Image: v})
			} else {
				out = append(out, dbbenchv1alpha1.BisectionPoint{Version: v})
			}
		}
		return out
	}
	base := func() dbbenchv1alpha1.BenchmarkBisectionSpec {
		return dbbenchv1alpha1.BenchmarkBisectionSpec{
			RunRef: &dbbenchv1alpha1.BisectionRunRef{Name: "nightly-7", Database: "maria", Config: "durable"},
			Good:   points("11.4.1")[0], Bad: points("11.4.4")[0], Candidates: points("11.4.2", "reg.example/mariadb@sha256:33"),
			Repeats: 3,
		}
	}
	t.Run("copies the database and config, clears the suite, takes the rule and the judged pairs", func(t *testing.T) {
		p := bisectionPassFor(t, base())
		s, err := p.setup(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(s.base.Databases) != 1 || s.base.Databases[0].Name != "maria" || len(s.base.Databases[0].Configs) != 1 || s.base.Databases[0].Configs[0].Name != "durable" {
			t.Fatalf("databases %+v", s.base.Databases)
		}
		if s.base.Suite != "" || s.base.Regression != nil || s.base.Baseline != nil || s.base.Workload.Repeats != 3 || !s.base.Output.ConfigMap.IsEnabled() {
			t.Fatalf("base spec keeps the run's suite, verdict, baseline or repeats: %+v", s.base)
		}
		want := bisect.Rule{Magnitude: 0.2, MaxPValue: 0.01, MagnitudeRule: regression.MagnitudeTested, Correction: inference.CorrectionHolm, Confidence: 0.9}
		if diff := cmp.Diff(want, s.rule); diff != "" {
			t.Fatalf("rule (-want +got):\n%s", diff)
		}
		for k, want := range map[bisect.Key]bool{{Step: "update-index", Threads: 4}: true, {Step: "update-index", Threads: 1}: false, {Step: "point-query", Threads: 4}: false} {
			if s.judge(k) != want {
				t.Errorf("judge(%v) = %v, want %v", k, !want, want)
			}
		}
		run, err := p.buildRound(s, 2, bisect.Round{Kind: bisect.RoundSearch, Points: []int{0, 1, 2, 3}, Refs: []int{0, 3}})
		if err != nil {
			t.Fatal(err)
		}
		if run.Name != "find-r2" || run.Labels[dbbenchv1alpha1.LabelBisectionRound] != "2" || run.Annotations[dbbenchv1alpha1.AnnotationBisectionPoints] != "0,1,2,3" ||
			run.Annotations[dbbenchv1alpha1.AnnotationBisectionReferences] != "0,3" || run.Annotations[dbbenchv1alpha1.AnnotationBisectionRoundKind] != "Search" {
			t.Fatalf("round run %s %v %v", run.Name, run.Labels, run.Annotations)
		}
		got := [][3]string{}
		for _, db := range run.Spec.Databases {
			got = append(got, [3]string{db.Name, db.Versions[0], db.Image})
		}
		wantDBs := [][3]string{{"p0", "11.4.1", "reg.example/mariadb:{version}"}, {"p1", "11.4.2", "reg.example/mariadb:{version}"},
			{"p2", "image", "reg.example/mariadb@sha256:33"}, {"p3", "11.4.4", "reg.example/mariadb:{version}"}}
		if diff := cmp.Diff(wantDBs, got); diff != "" {
			t.Fatalf("round databases (-want +got):\n%s", diff)
		}
		if ref := metav1.GetControllerOf(run); ref == nil || ref.Kind != "BenchmarkBisection" || ref.Name != "find" {
			t.Fatalf("owner %+v", run.OwnerReferences)
		}
		// One candidate that does not start must not fail the round's
		// other points in a pre-flight.
		if run.Spec.Preflight.IsEnabled() {
			t.Fatal("a round's run makes a pre-flight")
		}
	})
	t.Run("the spec's rule and judge win over the run's", func(t *testing.T) {
		spec := base()
		spec.MinMagnitudePercent, spec.MaxPValue = ptr.To[int32](10), "0.05"
		spec.Judge = dbbenchv1alpha1.BisectionJudge{Steps: []string{"point-query"}}
		s, err := bisectionPassFor(t, spec).setup(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if s.rule.Magnitude != 0.1 || s.rule.MaxPValue != 0.05 || !s.judge(bisect.Key{Step: "point-query", Threads: 64}) || s.judge(bisect.Key{Step: "update-index", Threads: 4}) {
			t.Fatalf("rule %+v, judge not from the spec", s.rule)
		}
	})
	t.Run("the verdict's definition of worse: rule, correction, metrics", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			reg     dbbenchv1alpha1.RegressionSpec
			spec    func(*dbbenchv1alpha1.BenchmarkBisectionSpec)
			want    dbbenchv1alpha1.BisectionRule
			judged  []bisect.Key
			ignored []bisect.Key
		}{
			{"the run's verdict", dbbenchv1alpha1.RegressionSpec{Against: dbbenchv1alpha1.RegressAgainstPreviousRun, MinMagnitudePercent: 10,
				MagnitudeRule: dbbenchv1alpha1.MagnitudeEstimated, Correction: dbbenchv1alpha1.CorrectionBenjaminiHochberg, MaxPValue: "0.02",
				Metrics: []dbbenchv1alpha1.RegressionMetric{dbbenchv1alpha1.MetricThroughput, dbbenchv1alpha1.MetricP99Latency}}, nil,
				dbbenchv1alpha1.BisectionRule{MinMagnitudePercent: 10, MagnitudeRule: dbbenchv1alpha1.MagnitudeEstimated, MaxPValue: "0.02",
					Correction: dbbenchv1alpha1.CorrectionBenjaminiHochberg, Metrics: []dbbenchv1alpha1.RegressionMetric{"Throughput", "P99Latency"}, Confidence: "0.9"},
				// The regressed pair on the metric it regressed on.
				[]bisect.Key{{Step: "update-index", Threads: 4, Metric: analysis.MetricP99Latency}},
				[]bisect.Key{{Step: "update-index", Threads: 4}}},
			{"a change-point verdict keeps its rule but not its scan's level", dbbenchv1alpha1.RegressionSpec{Against: dbbenchv1alpha1.RegressAgainstChangePoints, MinMagnitudePercent: 5},
				func(s *dbbenchv1alpha1.BenchmarkBisectionSpec) { s.Confidence = "0.95" },
				dbbenchv1alpha1.BisectionRule{MinMagnitudePercent: 5, MagnitudeRule: dbbenchv1alpha1.MagnitudeTested, MaxPValue: "0.05",
					Correction: dbbenchv1alpha1.CorrectionHolm, Metrics: []dbbenchv1alpha1.RegressionMetric{"Throughput"}, Confidence: "0.95"},
				[]bisect.Key{{Step: "update-index", Threads: 4, Metric: analysis.MetricP99Latency}}, nil},
			{"the spec wins", dbbenchv1alpha1.RegressionSpec{MinMagnitudePercent: 10, MagnitudeRule: dbbenchv1alpha1.MagnitudeEstimated},
				func(s *dbbenchv1alpha1.BenchmarkBisectionSpec) {
					s.MagnitudeRule, s.Correction = dbbenchv1alpha1.MagnitudeTested, dbbenchv1alpha1.CorrectionBenjaminiHochberg
					s.Metrics = []dbbenchv1alpha1.RegressionMetric{dbbenchv1alpha1.MetricP95Latency}
					s.Judge = dbbenchv1alpha1.BisectionJudge{Steps: []string{"update-index"}}
				},
				dbbenchv1alpha1.BisectionRule{MinMagnitudePercent: 10, MagnitudeRule: dbbenchv1alpha1.MagnitudeTested, MaxPValue: "0.05",
					Correction: dbbenchv1alpha1.CorrectionBenjaminiHochberg, Metrics: []dbbenchv1alpha1.RegressionMetric{"P95Latency"}, Confidence: "0.9"},
				[]bisect.Key{{Step: "update-index", Threads: 1, Metric: analysis.MetricP95Latency}},
				[]bisect.Key{{Step: "update-index", Threads: 1}, {Step: "update-index", Threads: 1, Metric: analysis.MetricP99Latency}}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				run := regressedRun()
				run.Spec.Regression = &tc.reg
				run.Status.Regression.Regressed[0].Metrics = []dbbenchv1alpha1.RegressionMetric{dbbenchv1alpha1.MetricP99Latency}
				spec := base()
				if tc.spec != nil {
					tc.spec(&spec)
				}
				p := bisectionPassFor(t, spec, run)
				s, err := p.setup(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, s.apiRule); diff != "" {
					t.Fatalf("rule (-want +got):\n%s", diff)
				}
				for _, k := range tc.judged {
					if !s.judge(k) {
						t.Errorf("%s not judged", k)
					}
				}
				for _, k := range tc.ignored {
					if s.judge(k) {
						t.Errorf("%s judged", k)
					}
				}
			})
		}
	})
	for _, tc := range []struct {
		name   string
		mutate func(*dbbenchv1alpha1.BenchmarkBisectionSpec)
		want   string
	}{
		{"missing run", func(s *dbbenchv1alpha1.BenchmarkBisectionSpec) { s.RunRef.Name = "nightly-8" }, "runRef.name: run nightly-8 not found"},
		{"unknown database", func(s *dbbenchv1alpha1.BenchmarkBisectionSpec) { s.RunRef.Database = "mysql" }, "runRef.database: run nightly-7 has no database mysql"},
		{"unknown config", func(s *dbbenchv1alpha1.BenchmarkBisectionSpec) { s.RunRef.Config = "big" }, "runRef.config: database maria has no config variant big"},
		{"a point twice", func(s *dbbenchv1alpha1.BenchmarkBisectionSpec) { s.Candidates = points("11.4.2", "11.4.2") },
			"candidates[1]: 11.4.2 is also candidates[0]"},
		{"a version without {version} in the image", func(s *dbbenchv1alpha1.BenchmarkBisectionSpec) {
			s.RunRef = nil
			run := regressedRun()
			run.Spec.Databases = run.Spec.Databases[1:]
			run.Spec.Databases[0].Image = "reg.example/mariadb:latest"
			s.Template = &run.Spec
		}, "good: a version needs {version} in the database's image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := base()
			tc.mutate(&spec)
			_, err := bisectionPassFor(t, spec).setup(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestBisectedDatabase(t *testing.T) {
	dbs := []dbbenchv1alpha1.DatabaseSpec{
		{Name: "pg"},
		{Name: "maria", Configs: []dbbenchv1alpha1.ConfigVariant{{Name: "small"}, {Name: "durable"}}},
	}
	for _, tc := range []struct {
		name, db, config string
		want             [2]string
		err              string
	}{
		{name: "the first, without configs", want: [2]string{"pg", ""}},
		{name: "the first config of the named database", db: "maria", want: [2]string{"maria", "small"}},
		{name: "the named config", db: "maria", config: "durable", want: [2]string{"maria", "durable"}},
		{name: "no such database", db: "mysql", err: "runRef.database: run nightly-7 has no database mysql"},
		{name: "no such config", db: "maria", config: "big", err: "runRef.config: database maria has no config variant big"},
	} {
		db, err := bisectedDatabase(dbs, "nightly-7", tc.db, tc.config)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		got := [2]string{db.Name, ""}
		if len(db.Configs) > 1 {
			t.Errorf("%s: configs %+v, want one at most", tc.name, db.Configs)
		} else if len(db.Configs) == 1 {
			got[1] = db.Configs[0].Name
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if len(dbs[1].Configs) != 2 {
		t.Errorf("the run's spec lost configs: %+v", dbs[1].Configs)
	}
}

func TestCheckPoints(t *testing.T) {
	v := func(s string) dbbenchv1alpha1.BisectionPoint { return dbbenchv1alpha1.BisectionPoint{Version: s} }
	img := dbbenchv1alpha1.BisectionPoint{Image: "reg.example/mariadb@sha256:33"}
	for _, tc := range []struct {
		name   string
		points []dbbenchv1alpha1.BisectionPoint
		image  string
		err    string
	}{
		{name: "versions into a template", points: []dbbenchv1alpha1.BisectionPoint{v("1"), v("2"), img, v("3")}, image: "reg.example/mariadb:{version}"},
		{name: "versions into the engine's default image", points: []dbbenchv1alpha1.BisectionPoint{v("1"), v("3")}},
		{name: "images into a fixed image", points: []dbbenchv1alpha1.BisectionPoint{img, {Image: "reg.example/mariadb:2"}}, image: "reg.example/mariadb:latest"},
		{name: "a version into a fixed image", points: []dbbenchv1alpha1.BisectionPoint{img, v("3")}, image: "reg.example/mariadb:latest",
			err: `bad: a version needs {version} in the database's image "reg.example/mariadb:latest"; give an image instead`},
		{name: "good is bad", points: []dbbenchv1alpha1.BisectionPoint{v("1"), v("1")}, err: "bad: 1 is also good"},
		{name: "a candidate twice", points: []dbbenchv1alpha1.BisectionPoint{v("1"), img, img, v("3")}, err: "candidates[1]: reg.example/mariadb@sha256:33 is also candidates[0]"},
	} {
		err := checkPoints(tc.points, tc.image)
		if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}

func TestJudgeOf(t *testing.T) {
	tput, p99 := dbbenchv1alpha1.MetricThroughput, dbbenchv1alpha1.MetricP99Latency
	regressed := []dbbenchv1alpha1.RegressedStep{
		{Step: "update-index", Threads: 4},
		{Step: "point-query", Threads: 16, Metrics: []dbbenchv1alpha1.RegressionMetric{p99}},
	}
	key := func(step string, th int, m analysis.Metric) bisect.Key {
		return bisect.Key{Step: step, Threads: th, Metric: m}
	}
	for _, tc := range []struct {
		name      string
		judge     dbbenchv1alpha1.BisectionJudge
		metrics   []dbbenchv1alpha1.RegressionMetric
		regressed []dbbenchv1alpha1.RegressedStep
		judged    []bisect.Key
		ignored   []bisect.Key
	}{
		{name: "the verdict's pairs, each on its own metrics", metrics: []dbbenchv1alpha1.RegressionMetric{tput, p99}, regressed: regressed,
			judged:  []bisect.Key{key("update-index", 4, ""), key("update-index", 4, analysis.MetricThroughput), key("point-query", 16, analysis.MetricP99Latency)},
			ignored: []bisect.Key{key("update-index", 4, analysis.MetricP99Latency), key("point-query", 16, ""), key("update-index", 16, "")}},
		{name: "the judge's steps over the verdict's pairs", judge: dbbenchv1alpha1.BisectionJudge{Steps: []string{"point-query"}},
			metrics: []dbbenchv1alpha1.RegressionMetric{tput}, regressed: regressed,
			judged:  []bisect.Key{key("point-query", 1, ""), key("point-query", 64, "")},
			ignored: []bisect.Key{key("update-index", 4, ""), key("point-query", 16, analysis.MetricP99Latency)}},
		{name: "the judge's threads, the rule's metrics", judge: dbbenchv1alpha1.BisectionJudge{Threads: []int32{8}},
			metrics: []dbbenchv1alpha1.RegressionMetric{p99},
			judged:  []bisect.Key{key("point-query", 8, analysis.MetricP99Latency)},
			ignored: []bisect.Key{key("point-query", 8, ""), key("point-query", 4, analysis.MetricP99Latency)}},
		{name: "no judge and no verdict: every step on the rule's metrics", metrics: []dbbenchv1alpha1.RegressionMetric{tput},
			judged:  []bisect.Key{key("point-query", 1, ""), key("update-index", 128, "")},
			ignored: []bisect.Key{key("point-query", 1, analysis.MetricP99Latency)}},
	} {
		judged := judgeOf(tc.judge, tc.metrics, tc.regressed)
		for _, k := range tc.judged {
			if !judged(k) {
				t.Errorf("%s: %v not judged", tc.name, k)
			}
		}
		for _, k := range tc.ignored {
			if judged(k) {
				t.Errorf("%s: %v judged", tc.name, k)
			}
		}
	}
}

func TestRoundPoint(t *testing.T) {
	points := []int{0, 2, 11}
	for _, tc := range []struct {
		database string
		want     int
		ok       bool
	}{
		{"p0", 0, true},
		{"p11", 11, true},
		{"p1", 0, false},  // another round's point
		{"p02", 0, false}, // not a name buildRound gives
		{"p2x", 0, false},
		{"maria", 0, false},
	} {
		if got, ok := roundPoint(tc.database, points); got != tc.want || ok != tc.ok {
			t.Errorf("%s: %d, %v; want %d, %v", tc.database, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRoundFailures(t *testing.T) {
	oom := bisect.Failure{Reason: "OOMKilled", Message: "the database ran out of memory"}
	noResults := bisect.Failure{Reason: string(dbbenchv1alpha1.ReasonNoResults), Message: "no cell of the point succeeded with results"}
	for _, tc := range []struct {
		name      string
		succeeded map[int]bool
		last      map[int]bisect.Failure
		want      map[int]bisect.Failure
	}{
		{name: "every point succeeded", succeeded: map[int]bool{0: true, 3: true}, last: map[int]bisect.Failure{0: oom}},
		{name: "a failed cell's reason, else no results", succeeded: map[int]bool{}, last: map[int]bisect.Failure{0: oom, 5: oom},
			want: map[int]bisect.Failure{0: oom, 3: noResults}},
	} {
		if d := cmp.Diff(tc.want, roundFailures([]int{0, 3}, tc.succeeded, tc.last)); d != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.name, d)
		}
	}
}

// TestJudgedInvalid: a bisection round counts the invalid step results of
// its cells that it would have judged; the others are not its concern.
func TestJudgedInvalid(t *testing.T) {
	s := &bisectionSetup{judge: func(k bisect.Key) bool { return k.Step == "point-query" && k.Metric == analysis.MetricThroughput }}
	step := func(name string, threads int, valid bool) results.StepResult {
		q := &results.Quality{Valid: valid, WindowSeconds: 10, MinSteadySamples: 8, Attempts: 1}
		if !valid {
			q.StallSeconds, q.StallLimitSeconds, q.Reasons = 5, 2, []results.QualityReason{results.QualityStalled}
		}
		return results.StepResult{Step: name, Threads: threads, DurationSeconds: 12, WarmupSeconds: 2, SteadyQPS: 1000, Quality: q}
	}
	d := &results.Document{Steps: []results.StepResult{
		step("point-query", 1, false), step("point-query", 8, false), step("point-query", 16, true), step("update-index", 8, false)}}
	mc := results.NewManifestCell(d, "Succeeded", "", "")
	if n := judgedInvalid(s, &mc); n != 2 {
		t.Errorf("judged invalid %d, want 2 (point-query at 1 and 8 threads)", n)
	}
	if _, ok := mc.QPS["point-query"][8]; ok {
		t.Error("an invalid result has a value the round would observe")
	}
}
