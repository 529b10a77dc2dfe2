package integration_test

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/benchmarkbisection"
	"github.com/dbbench/dbbench/internal/testutil/kubetest"
	"github.com/dbbench/dbbench/pkg/specs"
)

// validBisectionYAML is accepted; every case of the invalid table breaks
// one thing.
const validBisectionYAML = `
apiVersion: dbbench.io/v1alpha1
kind: BenchmarkBisection
metadata:
  name: valid
spec:
  template:
    databases:
      - name: maria
        engine: mariadb
        versions: ["v1"]
        image: example.test/mariadb:{version}
    workload:
      steps: [point-query, update-index]
      threads: [1, 4]
  good: {version: v1}
  bad: {version: v8}
  candidates: [{version: v2}, {version: v3}, {image: "example.test/mariadb@sha256:0123"}]
  judge:
    steps: [update-index]
    threads: [4]
`

func TestBisectionSpecsAreValidatedByTheSchema(t *testing.T) {
	requireEnvtest(t)
	ns := newNamespace(t)
	valid := parseRun(t, validBisectionYAML)
	valid.SetNamespace(ns)
	if err := k8sClient.Create(ctx, valid, client.DryRunAll); err != nil {
		t.Fatalf("valid bisection refused: %v", err)
	}
	if dryRunSamples(t, ns, "benchmarkbisection_*.yaml") == 0 {
		t.Fatal("no BenchmarkBisection samples")
	}
	spec := valid.Object["spec"].(map[string]any)
	for k, want := range map[string]any{"parallelism": int64(1), "repeats": int64(2), "maxCells": int64(100)} {
		if got := spec[k]; got != want {
			t.Errorf("default %s = %v (%T), want %v", k, got, got, want)
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(o map[string]any)
		want   string
	}{
		{"no candidates", func(o map[string]any) { set(o, "spec.candidates", []any{}) }, "spec.candidates: Invalid value"},
		{"good = bad", func(o map[string]any) { set(o, "spec.bad", map[string]any{"version": "v1"}) }, "bad: must differ from good"},
		{"good = bad as images", func(o map[string]any) {
			set(o, "spec.good", map[string]any{"image": "x/m:1"})
			set(o, "spec.bad", map[string]any{"image": "x/m:1"})
		}, "bad: must differ from good"},
		{"parallelism 0", func(o map[string]any) { set(o, "spec.parallelism", 0) }, "spec.parallelism: Invalid value: 0"},
		{"judged step not in the workload", func(o map[string]any) { set(o, "spec.judge.steps", []any{"update-index", "insert"}) },
			"judge.steps: insert is not a step of template.workload.steps"},
		{"judged threads not in the workload", func(o map[string]any) { set(o, "spec.judge.threads", []any{16}) },
			"judge.threads: every thread count must be one of template.workload.threads"},
		{"point with version and image", func(o map[string]any) {
			set(o, "spec.candidates.0", map[string]any{"version": "v2", "image": "x/m:2"})
		}, "spec.candidates[0]: Invalid value: set exactly one of version and image"},
		{"empty point", func(o map[string]any) { set(o, "spec.good", map[string]any{}) }, "spec.good: Invalid value: set exactly one of version and image"},
		{"neither runRef nor template", func(o map[string]any) { delete(o["spec"].(map[string]any), "template") }, "runRef: set exactly one of runRef and template"},
		{"both runRef and template", func(o map[string]any) { set(o, "spec.runRef", map[string]any{"name": "r"}) }, "runRef: set exactly one of runRef and template"},
		{"two databases", func(o map[string]any) {
			db := o["spec"].(map[string]any)["template"].(map[string]any)["databases"].([]any)[0].(map[string]any)
			other := map[string]any{"name": "other", "engine": db["engine"], "versions": db["versions"]}
			set(o, "spec.template.databases", []any{db, other})
		}, "template.databases: a bisection measures one database"},
		{"template breaks a run rule", func(o map[string]any) { set(o, "spec.template.workload.steps", []any{"update-everything"}) },
			"steps: update-everything is neither a catalog step"},
		{"bad version text", func(o map[string]any) { set(o, "spec.bad", map[string]any{"version": "v 8"}) }, "spec.bad.version"},
		{"zero repeats", func(o map[string]any) { set(o, "spec.repeats", 0) }, "spec.repeats"},
		{"bad maxPValue", func(o map[string]any) { set(o, "spec.maxPValue", "5%") }, "spec.maxPValue"},
		{"name too long for round names", func(o map[string]any) { set(o, "metadata.name", strings.Repeat("a", 51)) }, "metadata.name: must be at most 50 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) { requireRefused(t, ns, validBisectionYAML, tc.mutate, tc.want) })
	}

	// The spec is immutable.
	obj := parseRun(t, validBisectionYAML)
	obj.SetNamespace(ns)
	if err := k8sClient.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	set(obj.Object, "spec.parallelism", 2)
	if err := k8sClient.Update(ctx, obj); err == nil || !strings.Contains(err.Error(), "spec is immutable") {
		t.Fatalf("update of the spec: %v, want spec is immutable", err)
	}
}

// versions v1 (good) … v8 (bad): the candidates are v2..v7.
func bisectionOf(ns, name string, parallelism int32) *dbbenchv1alpha1.BenchmarkBisection {
	run := minimalRun(ns, "")
	run.Spec.Databases[0].Image = "example.test/mariadb:{version}"
	run.Spec.Databases[0].Versions = []string{"v1"}
	run.Spec.Placement.MaxParallelCells = 4
	run.Spec.Workload.Threads = []int32{1, 4}
	b := &dbbenchv1alpha1.BenchmarkBisection{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: dbbenchv1alpha1.BenchmarkBisectionSpec{
			Template:    &run.Spec,
			Good:        dbbenchv1alpha1.BisectionPoint{Version: "v1"},
			Bad:         dbbenchv1alpha1.BisectionPoint{Version: "v8"},
			Parallelism: parallelism,
			Repeats:     2,
			MaxCells:    100,
		},
	}
	for v := 2; v <= 7; v++ {
		b.Spec.Candidates = append(b.Spec.Candidates, dbbenchv1alpha1.BisectionPoint{Version: fmt.Sprintf("v%d", v)})
	}
	return b
}

// cellObject matches a cell's object base, <run>-<cell>-<hash>, where the
// cell is p<point>-<version>-<config>-r<repeat>.
var cellObject = regexp.MustCompile(`-p([0-9]+)-[^-]+-[^-]+-r([0-9]+)-[0-9a-z]+$`)

// cellPoint is the bisection point and repeat an object of a cell is for.
func cellPoint(t *testing.T, object string) (point, repeat int) {
	t.Helper()
	m := cellObject.FindStringSubmatch(object)
	if m == nil {
		t.Fatalf("cell object %q does not name a point", object)
	}
	point, _ = strconv.Atoi(m[1])
	repeat, _ = strconv.Atoi(m[2])
	return point, repeat
}

// driveBisection plays kubelet, agent and Job controller for every round of
// the bisection until its Localized condition has a verdict: a point's
// point-query@4 QPS is scaled by scale(point) (times 1 + repeat/100, so the
// repeats differ), and the database pods of the points in failed wait on
// an image that may not be pulled.
func driveBisection(t *testing.T, ns, name string, scale func(int) float64, failed map[int]bool) *dbbenchv1alpha1.BenchmarkBisection {
	t.Helper()
	deadline := time.Now().Add(3 * driveTimeout)
	for time.Now().Before(deadline) {
		pods := kubetest.ListPods(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRole: specs.RoleDatabase})
		jobs := kubetest.ListJobs(t, k8sClient, ns, map[string]string{dbbenchv1alpha1.LabelRole: specs.RoleClient})
		bis := &dbbenchv1alpha1.BenchmarkBisection{}
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, bis); err != nil {
			t.Fatal(err)
		}
		if c := meta.FindStatusCondition(bis.Status.Conditions, dbbenchv1alpha1.BisectionConditionLocalized); c != nil && c.Status != metav1.ConditionUnknown {
			return bis
		}
		for _, pod := range pods {
			if pod.DeletionTimestamp != nil || pod.Status.PodIP != "" || len(pod.Status.ContainerStatuses) > 0 {
				continue
			}
			if pt, _ := cellPoint(t, pod.Labels[dbbenchv1alpha1.LabelCell]); failed[pt] {
				markPodImageNeverPull(t, &pod)
				continue
			}
			markPodReady(t, &pod, "node-1", "10.88.0.20")
		}
		for _, job := range jobs {
			if len(job.Status.Conditions) > 0 {
				continue
			}
			pt, rep := cellPoint(t, job.Labels[dbbenchv1alpha1.LabelCell])
			attempt, _ := strconv.Atoi(job.Labels[dbbenchv1alpha1.LabelAttempt])
			agentCompletes(t, ns, &job, attempt, scale(pt)*(1+float64(rep)/100))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("bisection %s: no verdict within %s", name, 3*driveTimeout)
	return nil
}

// markPodImageNeverPull plays the kubelet failing to find the image.
func markPodImageNeverPull(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	playStatus(t, client.ObjectKeyFromObject(pod), func(fresh *corev1.Pod) {
		fresh.Status.Phase = corev1.PodPending
		fresh.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: specs.DatabaseContainer, Image: fresh.Spec.Containers[0].Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: "image is not present with pull policy of Never"}},
		}}
	})
}

func condition(bis *dbbenchv1alpha1.BenchmarkBisection) *metav1.Condition {
	return meta.FindStatusCondition(bis.Status.Conditions, dbbenchv1alpha1.BisectionConditionLocalized)
}

func TestBisectionLocalizesTheFirstBadCandidate(t *testing.T) {
	requireEnvtest(t)
	startManager(t, nil)
	for _, tc := range []struct {
		name        string
		parallelism int32
		culprit     int // point index: v<culprit+1>
		failed      map[int]bool
		maxRounds   int32
	}{
		// 6 candidates: the endpoint round and ⌈log2 7⌉ = 3 search rounds.
		{name: "k1", parallelism: 1, culprit: 4, maxRounds: 4},
		// ⌈log3 7⌉ = 2 search rounds.
		{name: "k2", parallelism: 2, culprit: 4, maxRounds: 3},
		// v4 (point 3, the first probe) does not start: marked failed,
		// the search goes on around it, one round more.
		{name: "k1-failed", parallelism: 1, culprit: 6, failed: map[int]bool{3: true}, maxRounds: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			b := bisectionOf(ns, "bis-"+tc.name, tc.parallelism)
			if tc.name == "k2" {
				b.Spec.Judge = dbbenchv1alpha1.BisectionJudge{Steps: []string{"point-query"}, Threads: []int32{4}}
			}
			if err := k8sClient.Create(ctx, b); err != nil {
				t.Fatal(err)
			}
			scale := func(pt int) float64 {
				if pt >= tc.culprit {
					return 0.5
				}
				return 1
			}
			bis := driveBisection(t, ns, b.Name, scale, tc.failed)
			c := condition(bis)
			want := fmt.Sprintf("v%d", tc.culprit+1)
			if c.Status != metav1.ConditionTrue || c.Reason != dbbenchv1alpha1.BisectionReasonLocalized || bis.Status.FirstBad != want {
				t.Fatalf("Localized=%s %s %q firstBad %q, want True Localized naming %s; points %+v", c.Status, c.Reason, c.Message, bis.Status.FirstBad, want, bis.Status.Points)
			}
			if lastGood := fmt.Sprintf("v%d", tc.culprit); bis.Status.LastGood != lastGood {
				t.Fatalf("lastGood %q, want %s", bis.Status.LastGood, lastGood)
			}
			if bis.Status.RoundCount > tc.maxRounds || int(bis.Status.RoundCount) != len(bis.Status.Rounds) {
				t.Fatalf("%d rounds (%d listed), want at most %d", bis.Status.RoundCount, len(bis.Status.Rounds), tc.maxRounds)
			}
			if bis.Status.Phase != dbbenchv1alpha1.BisectionLocalized || bis.Status.CompletionTime == nil {
				t.Fatalf("phase %s completion %v", bis.Status.Phase, bis.Status.CompletionTime)
			}
			if conf, err := strconv.ParseFloat(bis.Status.Confidence, 64); err != nil || conf < 0.9 || bis.Status.Rule == nil || bis.Status.Rule.Confidence != "0.9" {
				t.Fatalf("confidence %q, rule %+v: want at least the rule's 0.9", bis.Status.Confidence, bis.Status.Rule)
			}
			if ep := bis.Status.Endpoints; ep == nil || !ep.Reproduced || ep.Key != "point-query@4" || ep.Ratio != "0.5" {
				t.Fatalf("endpoints %+v, want reproduced at point-query@4 with a ratio of 0.5", ep)
			}
			// Each round is a run the bisection owns, measuring the
			// points it lists, with 2 cells per point.
			var cells int32
			for i, r := range bis.Status.Rounds {
				run := kubetest.GetRun(t, k8sClient, ns, r.Run)
				if ref := metav1.GetControllerOf(run); ref == nil || ref.Kind != "BenchmarkBisection" || ref.Name != b.Name {
					t.Fatalf("run %s is not controlled by the bisection: %+v", run.Name, run.OwnerReferences)
				}
				if r.Run != fmt.Sprintf("%s-r%d", b.Name, i) || len(run.Spec.Databases) != len(r.Points) || r.Cells != int32(2*len(r.Points)) || !r.Finished {
					t.Fatalf("round %d: %+v, run databases %d", i, r, len(run.Spec.Databases))
				}
				if run.Spec.Suite != "" || run.Spec.Regression != nil {
					t.Fatalf("round run %s joins a suite or judges itself: %+v", run.Name, run.Spec)
				}
				// Candidates are measured beside the ends of their
				// interval, in the same run.
				switch {
				case i == 0 && (r.Kind != dbbenchv1alpha1.RoundEndpoints || len(r.Points) != 2):
					t.Fatalf("round 0 %+v: want the endpoints", r)
				case i > 0 && r.Kind == dbbenchv1alpha1.RoundSearch && (len(r.References) != 2 || len(r.Points)-len(r.References) > int(tc.parallelism)):
					t.Fatalf("round %d measures %v beside references %v: want 2 references and at most parallelism %d candidates", i, r.Points, r.References, tc.parallelism)
				}
				cells += r.Cells
			}
			if bis.Status.CellsUsed != cells {
				t.Fatalf("cellsUsed %d, rounds total %d", bis.Status.CellsUsed, cells)
			}
			for _, p := range bis.Status.Points {
				switch {
				case tc.failed[int(p.Index)]:
					if p.Verdict != dbbenchv1alpha1.VerdictFailed || p.Reason != dbbenchv1alpha1.ReasonInvalidImage {
						t.Fatalf("point %s: %s %s, want Failed InvalidImage", p.Name, p.Verdict, p.Reason)
					}
				case p.Verdict == dbbenchv1alpha1.VerdictGood && int(p.Index) >= tc.culprit,
					p.Verdict == dbbenchv1alpha1.VerdictBad && int(p.Index) < tc.culprit,
					p.Verdict == dbbenchv1alpha1.VerdictInconclusive:
					t.Fatalf("point %s judged %s, culprit is point %d", p.Name, p.Verdict, tc.culprit)
				case p.Verdict == dbbenchv1alpha1.VerdictBad:
					if r, _ := strconv.ParseFloat(p.Ratio, 64); math.Abs(r-0.5) > 0.02 || p.RatioLow == "" {
						t.Fatalf("bad point %s: ratio %s [%s, %s], want about 0.5 with an interval", p.Name, p.Ratio, p.RatioLow, p.RatioHigh)
					}
				}
			}
			for pt := range tc.failed {
				if bis.Status.Points[pt].Measured == 0 {
					t.Fatalf("the failing point was never measured: %+v", bis.Status.Points[pt])
				}
			}
			// The named build is explained: the counter that moved.
			eventually(t, "the explanation", func() string {
				got := &dbbenchv1alpha1.BenchmarkBisection{}
				if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: b.Name}, got); err != nil {
					return err.Error()
				}
				c := meta.FindStatusCondition(got.Status.Conditions, dbbenchv1alpha1.BisectionConditionExplained)
				ex := got.Status.Explanation
				if c == nil || c.Status != metav1.ConditionTrue || ex == nil || len(ex.Counters) != 1 || ex.Counters[0].Name != "Innodb_os_log_fsyncs" ||
					ex.Counters[0].Ratio != "4" || ex.Step != "point-query" || ex.Threads != 4 || got.Status.LastGood != fmt.Sprintf("v%d", tc.culprit) {
					return fmt.Sprintf("Explained %+v, explanation %+v, lastGood %q", c, ex, got.Status.LastGood)
				}
				return ""
			})
			eventually(t, "the Localized event", func() string {
				var evs eventsv1.EventList
				if err := k8sClient.List(ctx, &evs, client.InNamespace(ns)); err != nil {
					return err.Error()
				}
				for _, e := range evs.Items {
					// Which build: status.firstBad, checked above.
					if e.Regarding.Name == b.Name && e.Reason == benchmarkbisection.EventBisectionLocalized {
						return ""
					}
				}
				return fmt.Sprintf("%d events, none Localized", len(evs.Items))
			})
			t.Logf("%s: %d rounds, %d cells: %s", tc.name, bis.Status.RoundCount, bis.Status.CellsUsed, c.Message)
		})
	}
}

func TestBisectionStopsWhenTheEndpointsDoNotReproduce(t *testing.T) {
	requireEnvtest(t)
	startManager(t, nil)
	ns := newNamespace(t)
	b := bisectionOf(ns, "bis-noregress", 1)
	b.Spec.MinMagnitudePercent = ptr.To[int32](20)
	if err := k8sClient.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	// The bad point is 10 % slower: within the 20 % asked for.
	bis := driveBisection(t, ns, b.Name, func(pt int) float64 {
		if pt == 7 {
			return 0.9
		}
		return 1
	}, nil)
	c := condition(bis)
	if c.Status != metav1.ConditionFalse || c.Reason != dbbenchv1alpha1.BisectionReasonEndpointsNotReproduced {
		t.Fatalf("Localized=%s %s, want False %s", c.Status, c.Reason, dbbenchv1alpha1.BisectionReasonEndpointsNotReproduced)
	}
	ep := bis.Status.Endpoints
	if ep == nil || ep.Reproduced || ep.Key != "point-query@4" || !strings.HasPrefix(ep.Ratio, "0.9") {
		t.Fatalf("endpoints %+v, want not reproduced, ratio about 0.9 at point-query@4", ep)
	}
	if bis.Status.RoundCount != 1 || bis.Status.Phase != dbbenchv1alpha1.BisectionNotLocalized {
		t.Fatalf("%d rounds, phase %s: want only the endpoint round, NotLocalized", bis.Status.RoundCount, bis.Status.Phase)
	}
}

func TestBisectionOfAMissingRunIsAnInvalidSpec(t *testing.T) {
	requireEnvtest(t)
	startManager(t, nil)
	ns := newNamespace(t)
	b := bisectionOf(ns, "bis-ref", 1)
	b.Spec.Template = nil
	b.Spec.RunRef = &dbbenchv1alpha1.BisectionRunRef{Name: "nightly-7"}
	if err := k8sClient.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	eventually(t, "InvalidSpec", func() string {
		bis := &dbbenchv1alpha1.BenchmarkBisection{}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(b), bis); err != nil {
			return err.Error()
		}
		c := condition(bis)
		// The reason says the spec is wrong; spec.runRef.name, which run.
		if c == nil || c.Reason != dbbenchv1alpha1.BisectionReasonInvalidSpec {
			return fmt.Sprintf("condition %+v", c)
		}
		return ""
	})
}
