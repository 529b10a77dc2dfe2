//go:build e2e

package e2e

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/tier"
)

// The tags hack/bisect-images.sh builds: t1 … t8, durable commits from t6 on.
const (
	bisectRepo       = "docker.io/dbbench/mariadb-bisect"
	bisectCulprit    = "t6"
	bisectMissing    = bisectRepo + ":missing"
	bisectTimeout    = 15 * time.Minute
	bisectCandidates = 6 // t2 … t7
)

// bisection is a search from t1 (good) to t8 (bad) over candidates with a
// real, short write step: update-index at 1 thread for 5 s on a table of
// 2000 rows, 2 cells per point, a point bad when 30 % slower.
func bisection(ns, name string, parallelism int32, candidates []dbbenchv1alpha1.BisectionPoint) *dbbenchv1alpha1.BenchmarkBisection {
	run := smallRun(ns, "", "t1")
	db := &run.Spec.Databases[0]
	db.Image = bisectRepo + ":{version}"
	db.ImagePullPolicy = corev1.PullNever
	// The image's baked-in drop-in decides durability; a config variant
	// would be read after it.
	db.Configs = nil
	run.Spec.Workload.Steps = []string{"update-index"}
	run.Spec.Workload.Threads = []int32{1}
	run.Spec.Workload.WriteSeconds = 5
	return &dbbenchv1alpha1.BenchmarkBisection{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: dbbenchv1alpha1.BenchmarkBisectionSpec{
			Template:            &run.Spec,
			Good:                dbbenchv1alpha1.BisectionPoint{Version: "t1"},
			Bad:                 dbbenchv1alpha1.BisectionPoint{Version: "t8"},
			Candidates:          candidates,
			Parallelism:         parallelism,
			Repeats:             2,
			MinMagnitudePercent: ptr.To[int32](30),
			MaxPValue:           "0.1",
			MaxCells:            60,
		},
	}
}

func tagCandidates() []dbbenchv1alpha1.BisectionPoint {
	var out []dbbenchv1alpha1.BisectionPoint
	for i := 2; i <= 7; i++ {
		out = append(out, dbbenchv1alpha1.BisectionPoint{Version: fmt.Sprintf("t%d", i)})
	}
	return out
}

// runBisection creates the bisection, waits for its verdict and logs its
// rounds, cells, wall time and points.
func runBisection(t *testing.T, b *dbbenchv1alpha1.BenchmarkBisection) (*dbbenchv1alpha1.BenchmarkBisection, time.Duration) {
	t.Helper()
	if err := k8sClient.Create(ctx, b); err != nil {
		t.Fatalf("creating bisection %s: %v", b.Name, err)
	}
	start := time.Now()
	got := &dbbenchv1alpha1.BenchmarkBisection{}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := yaml.Marshal(got)
			t.Logf("bisection %s as last read:\n%s", b.Name, out)
		}
	})
	eventually(t, bisectTimeout, "bisection "+b.Name+" to end", func() string {
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: b.Name}, got); err != nil {
			return err.Error()
		}
		c := meta.FindStatusCondition(got.Status.Conditions, dbbenchv1alpha1.BisectionConditionLocalized)
		if c == nil || c.Status == metav1.ConditionUnknown {
			return fmt.Sprintf("round %d, %d cells: %v", got.Status.RoundCount, got.Status.CellsUsed, c)
		}
		return ""
	})
	wall := time.Since(start)
	c := meta.FindStatusCondition(got.Status.Conditions, dbbenchv1alpha1.BisectionConditionLocalized)
	t.Logf("%s (parallelism %d): %d rounds, %d cells, %s wall time; Localized=%s %s: %s",
		b.Name, b.Spec.Parallelism, got.Status.RoundCount, got.Status.CellsUsed, wall.Round(time.Second), c.Status, c.Reason, c.Message)
	for _, r := range got.Status.Rounds {
		var names []string
		for _, i := range r.Points {
			names = append(names, got.Status.Points[i].Name)
		}
		t.Logf("  round %d (%s, %d cells): %s", r.Index, r.Run, r.Cells, strings.Join(names, ", "))
	}
	for _, p := range got.Status.Points {
		t.Logf("  %-40s %-12s ratio %-6s [%s, %s] %s runs %d %s", p.Name, p.Verdict, p.Ratio, p.RatioLow, p.RatioHigh, p.Key, p.Runs, p.Reason)
	}
	return got, wall
}

// TestBisectionNamesTheTagThatMadeCommitsDurable: eight real MariaDB image
// tags, the sixth and later with durable commits. A bisection with
// parallelism 2, whose candidates also hold an image that cannot be
// pulled, marks that one failed and names t6 within ⌈log3 7⌉ search
// rounds after the endpoints (parallelism 1 is the chain test's, from a
// suite's verdict: chain_test.go). Not parallel: other tests' load would be
// noise in the verdicts.
func TestBisectionNamesTheTagThatMadeCommitsDurable(t *testing.T) {
	tier.Long(t)
	ns := newNamespace(t, "bisect")
	withMissing := append([]dbbenchv1alpha1.BisectionPoint{{Version: "t2"}, {Image: bisectMissing}}, tagCandidates()[1:]...)
	two, wall := runBisection(t, bisection(ns, "bisect-k2", 2, withMissing))
	t.Logf("parallelism 2: %d rounds, %d cells, %s", two.Status.RoundCount, two.Status.CellsUsed, wall.Round(time.Second))
	c := meta.FindStatusCondition(two.Status.Conditions, dbbenchv1alpha1.BisectionConditionLocalized)
	if c.Status != metav1.ConditionTrue || two.Status.FirstBad != bisectCulprit {
		t.Errorf("%s: Localized=%s %s firstBad %q, want True naming %s", two.Name, c.Status, c.Reason, two.Status.FirstBad, bisectCulprit)
	}
	if bound := int32(math.Ceil(math.Log(bisectCandidates+1)/math.Log(3))) + 1; two.Status.RoundCount > bound+1 {
		t.Errorf("parallelism 2 took %d rounds, more than ⌈log3 %d⌉ + 1 = %d and one for the failed image", two.Status.RoundCount, bisectCandidates+1, bound)
	}
	missing := two.Status.Points[2]
	if missing.Name != bisectMissing || missing.Verdict != dbbenchv1alpha1.VerdictFailed || missing.Reason != dbbenchv1alpha1.ReasonInvalidImage {
		t.Errorf("the image that cannot be pulled: %+v, want Failed InvalidImage", missing)
	}
}
