package plugin

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

func bisectCluster(t *testing.T, objs ...runtime.Object) (Clients, *Cluster) {
	t.Helper()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		RunGVR: "BenchmarkRunList", BisectionGVR: "BenchmarkBisectionList",
	}, objs...)
	c := &Cluster{Dynamic: dyn, Core: fake.NewClientset(), Namespace: "bench"}
	return fakeCluster{c}, c
}

func TestBisectCreatesABisectionFromARun(t *testing.T) {
	clients, c := bisectCluster(t, runObj("nightly-42", "nightly", time.Now(), "Succeeded", nil))
	out, _, err := runCmd(t, clients, "bisect", "nightly-42", "--good", "11.4.2", "--bad", "reg.example/mariadb@sha256:ff",
		"--candidates", "11.4.3, 11.4.4", "--parallelism", "2", "--steps", "update-index")
	if err != nil {
		t.Fatal(err)
	}
	if out != "benchmarkbisection.dbbench.io/nightly-42-bisect created\n" {
		t.Fatalf("output %q", out)
	}
	u, err := c.Dynamic.Resource(BisectionGVR).Namespace("bench").Get(context.Background(), "nightly-42-bisect", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got dbbenchv1alpha1.BenchmarkBisection
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &got); err != nil {
		t.Fatal(err)
	}
	want := dbbenchv1alpha1.BenchmarkBisectionSpec{
		RunRef: &dbbenchv1alpha1.BisectionRunRef{Name: "nightly-42"},
		Good:   dbbenchv1alpha1.BisectionPoint{Version: "11.4.2"},
		Bad:    dbbenchv1alpha1.BisectionPoint{Image: "reg.example/mariadb@sha256:ff"},
		Candidates: []dbbenchv1alpha1.BisectionPoint{
			{Version: "11.4.3"}, {Version: "11.4.4"},
		},
		Parallelism: 2, Repeats: 2,
		Judge: dbbenchv1alpha1.BisectionJudge{Steps: []string{"update-index"}},
	}
	if diff := cmp.Diff(want, got.Spec); diff != "" {
		t.Fatalf("spec (-want +got):\n%s", diff)
	}
}

func TestBisectDryRunPrintsYAML(t *testing.T) {
	clients, _ := bisectCluster(t)
	out, _, err := runCmd(t, clients, "bisect", "r1", "--name", "find-it", "--good", "v1", "--bad", "v3", "--candidates", "v2", "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	var b dbbenchv1alpha1.BenchmarkBisection
	if err := yaml.Unmarshal([]byte(out), &b); err != nil {
		t.Fatalf("output is not YAML: %v\n%s", err, out)
	}
	if b.Kind != "BenchmarkBisection" || b.Name != "find-it" || b.Namespace != "bench" || b.Spec.RunRef.Name != "r1" || b.Spec.Candidates[0].Version != "v2" {
		t.Fatalf("dry run printed %+v", b)
	}
}

func TestBisectRefusesBadFlags(t *testing.T) {
	clients, _ := bisectCluster(t, runObj("r1", "s", time.Now(), "Succeeded", nil))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no good", []string{"--bad", "v3", "--candidates", "v2"}, "--good: required"},
		{"good = bad", []string{"--good", "v3", "--bad", "v3", "--candidates", "v2"}, "--bad v3: must differ from --good"},
		{"no candidates", []string{"--good", "v1", "--bad", "v3"}, "--candidates: name at least one"},
		{"parallelism 0", []string{"--good", "v1", "--bad", "v3", "--candidates", "v2", "--parallelism", "0"}, "--parallelism 0: must be at least 1"},
		{"missing run", []string{"--good", "v1", "--bad", "v3", "--candidates", "v2", "--name", "x"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := "r1"
			if tc.want == "" {
				run, tc.want = "nope", `benchmarkrun "nope" not found`
			}
			_, _, err := runCmd(t, clients, append([]string{"bisect", run}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestBisectStatusPrintsPointsInOrder(t *testing.T) {
	b := &dbbenchv1alpha1.BenchmarkBisection{
		TypeMeta:   metav1.TypeMeta{APIVersion: "dbbench.io/v1alpha1", Kind: "BenchmarkBisection"},
		ObjectMeta: metav1.ObjectMeta{Name: "find-it", Namespace: "bench", Labels: map[string]string{dbbenchv1alpha1.LabelRegressedRun: "night-3"}},
		Status: dbbenchv1alpha1.BenchmarkBisectionStatus{
			Conditions: []metav1.Condition{{Type: "Localized", Status: "True", Reason: "Localized",
				Message: "t3 is the first bad point (after t2): ratio to good 0.21 at update-index@1", LastTransitionTime: metav1.Now()}},
			FirstBad: "t3", LastGood: "t2", Confidence: "0.974", RoundCount: 2, CellsUsed: 6,
			Rule: &dbbenchv1alpha1.BisectionRule{MinMagnitudePercent: 5, MagnitudeRule: "Estimated", MaxPValue: "0.05", Correction: "Holm",
				Metrics: []dbbenchv1alpha1.RegressionMetric{"Throughput", "P99Latency"}, Confidence: "0.9"},
			Endpoints:   &dbbenchv1alpha1.BisectionEndpoints{Reproduced: true, Key: "update-index@1", Ratio: "0.2"},
			Environment: []dbbenchv1alpha1.BisectionEnvironmentChange{{Round: 1, ShiftPercent: "-48", Key: "update-index@1", Held: true}},
			Explanation: &dbbenchv1alpha1.BisectionExplanation{Step: "update-index", Threads: 1,
				Counters:  []dbbenchv1alpha1.ExplainedCounter{{Name: "Innodb_os_log_fsyncs", LastGood: "0.01", FirstBad: "1.002", Ratio: "100"}},
				Functions: []dbbenchv1alpha1.ExplainedFunction{{Function: "os_file_flush", LastGoodSelfPercent: "0.50", FirstBadSelfPercent: "31.20", ChangePoints: "+30.70"}}},
			Rounds: []dbbenchv1alpha1.BisectionRound{
				{Index: 0, Run: "find-it-r0", Kind: "Endpoints", Points: []int32{0, 4}, Cells: 4, Finished: true},
				{Index: 1, Run: "find-it-r1", Kind: "Search", Points: []int32{0, 2, 4}, References: []int32{0, 4}, Cells: 6},
			},
			Points: []dbbenchv1alpha1.BisectionPointStatus{
				{Index: 0, Name: "t1", Verdict: "Good", Ratio: "1"},
				{Index: 1, Name: "reg/m:gone", Verdict: "Failed", Reason: dbbenchv1alpha1.ReasonInvalidImage},
				{Index: 2, Name: "t2", Verdict: "Good", Ratio: "0.98", RatioLow: "0.9", RatioHigh: "1.07", Key: "update-index@1", Probability: "0.021"},
				{Index: 3, Name: "t3", Verdict: "Bad", Ratio: "0.21", RatioLow: "0.19", RatioHigh: "0.23", Key: "update-index@1", Probability: "0.974"},
				{Index: 4, Name: "t4", Verdict: "Bad", Ratio: "0.2", Key: "update-index@1", Probability: "0.005"},
			},
		},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if err != nil {
		t.Fatal(err)
	}
	clients, _ := bisectCluster(t, &unstructured.Unstructured{Object: obj})
	out, _, err := runCmd(t, clients, "bisect", "status", "find-it")
	if err != nil {
		t.Fatal(err)
	}
	want := `find-it: Localized=True (Localized) after 2 rounds, 6 cells
  t3 is the first bad point (after t2): ratio to good 0.21 at update-index@1
Created by the Regressed verdict of run night-3 (spec.regression.bisect)
Rule: worse by 5% (Estimated), maxPValue 0.05, Holm over the judged keys, metrics Throughput, P99Latency; named at probability 0.9
Endpoints: bad/good 0.2 at update-index@1, reproduced true
First bad: t3 (after t2), probability 0.974
Environment: round 1 measured every build -48% at update-index@1; the regression held its size
Explanation (t3 against t2 at update-index@1):
  counter   Innodb_os_log_fsyncs             0.01 → 1.002 per op (×100)
  function  os_file_flush                    0.50% → 31.20% of the server's CPU (+30.70 points)
Rounds:
  0  find-it-r0               Endpoints   4 cells  finished  t1, t4
  1  find-it-r1               Search      6 cells  running   t1, t2, t4 (references t1, t4)
Points:
  POINT       VERDICT       RATIO   95% INTERVAL       P      AT
  t1          Good          1
  reg/m:gone  Failed                                          InvalidImage
  t2          Good          0.98    [0.9, 1.07]        0.021  update-index@1
  t3          Bad           0.21    [0.19, 0.23]       0.974  update-index@1  < first bad
  t4          Bad           0.2                        0.005  update-index@1
`
	if diff := cmp.Diff(want, out); diff != "" {
		t.Fatalf("output (-want +got):\n%s", diff)
	}
	page := filepath.Join(t.TempDir(), "bisect.html")
	if _, _, err := runCmd(t, clients, "bisect", "status", "find-it", "--html", page); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"QPS / QPS(good) at update-index@1", `<title>t3: Bad, ratio 0.21</title>`, `class="first-bad"`, "reg/m:gone: Failed InvalidImage"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Count(string(html), `stroke-width="2.5"`) != 1 {
		t.Error("the page does not outline exactly one bar (the first bad)")
	}
	for _, tc := range []struct {
		name string
		b    dbbenchv1alpha1.BenchmarkBisection
		want string
	}{
		{name: "no object store", want: ""},
		{name: "uploaded", b: dbbenchv1alpha1.BenchmarkBisection{Status: dbbenchv1alpha1.BenchmarkBisectionStatus{
			Upload: &dbbenchv1alpha1.BisectionUploadStatus{Uploaded: true, URL: "s3://b/p/nightly/_bisections/x/"}}},
			want: "Results: s3://b/p/nightly/_bisections/x/ (bisection.json, report.html)"},
		{name: "failing", b: dbbenchv1alpha1.BenchmarkBisection{Status: dbbenchv1alpha1.BenchmarkBisectionStatus{
			Upload:     &dbbenchv1alpha1.BisectionUploadStatus{Failures: 2},
			Conditions: []metav1.Condition{{Type: dbbenchv1alpha1.ConditionResultsUploaded, Status: "False", Reason: "UploadPending", Message: "connection refused"}}}},
			want: "Results: not uploaded (UploadPending): connection refused"},
	} {
		if got := bisectionResultsLine(&tc.b); got != tc.want {
			t.Errorf("%s: results line %q, want %q", tc.name, got, tc.want)
		}
	}
	var buf bytes.Buffer
	writeBisectionStatus(&buf, &dbbenchv1alpha1.BenchmarkBisection{ObjectMeta: metav1.ObjectMeta{Name: "new"}})
	if buf.String() != "new: not started\n" {
		t.Fatalf("a new bisection prints %q", buf.String())
	}
}
