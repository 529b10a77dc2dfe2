//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/testutil/tier"
)

// pgSeriesEnv names the PostgreSQL releases of the series test, oldest
// first, whose images hack/test-e2e.sh builds for the long tier
// (hack/embedded-postgres.sh series 16 13: 16.1 … 16.14).
const pgSeriesEnv = "DBBENCH_E2E_PG_SERIES"

// TestPostgresReleaseSeries: a real release history as a suite's nights,
// one PostgreSQL release a night, oldest first, one cell (pg-16-small)
// whose image is the night's release, every night judged against the
// change points of the nights so far, every release listed as the
// bisection's builds. What the releases do is not known in advance, so the
// test holds the chain to what must be true whatever they do: each night
// ran its own build (a digest of its own) and got a verdict; a change
// point the nights confirm names the nights around it, and, the releases
// being adjacent builds, no bisection is made and the run says why; the
// suite's history has every night. It logs what it found (docs/benchmarks.md,
// "A real release history", has a run of make bench-pg-series). Not
// parallel: other tests' load would be noise in the series.
func TestPostgresReleaseSeries(t *testing.T) {
	tier.Long(t)
	releases := strings.Fields(os.Getenv(pgSeriesEnv))
	if len(releases) < 12 {
		t.Skipf("%s=%q: needs 12 or more releases with their images (hack/test-e2e.sh builds them in the long tier)", pgSeriesEnv, os.Getenv(pgSeriesEnv))
	}
	began := time.Now()
	ns := newNamespace(t, "pgseries")
	var builds []dbbenchv1alpha1.BisectionPoint
	for _, r := range releases {
		builds = append(builds, dbbenchv1alpha1.BisectionPoint{Image: "postgres:" + r})
	}
	// Every night on one node, so that the nights compare.
	nodes := &corev1.NodeList{}
	if err := k8sClient.List(ctx, nodes); err != nil || len(nodes.Items) == 0 {
		t.Fatalf("listing nodes: %v (%d)", err, len(nodes.Items))
	}
	node := nodes.Items[len(nodes.Items)-1].Name
	digests := map[string]string{}
	var confirmed []dbbenchv1alpha1.RegressedStep
	var last *dbbenchv1alpha1.BenchmarkRun
	for i, r := range releases {
		run := smallRun(ns, fmt.Sprintf("night-%02d", i+1))
		run.Spec.Suite = "pg16-releases"
		run.Spec.Databases[0] = dbbenchv1alpha1.DatabaseSpec{
			Name: "pg", Engine: dbbenchv1alpha1.EnginePostgres, Versions: []string{"16"},
			Image: "postgres:" + r, ImagePullPolicy: corev1.PullNever,
			Configs: []dbbenchv1alpha1.ConfigVariant{{
				Name:   "small",
				Inline: ptr.To("shared_buffers = 64MB\nsynchronous_commit = off\n"),
			}},
		}
		run.Spec.Workload.Steps = []string{"update-index", "point-query"}
		run.Spec.Workload.Threads = []int32{1}
		run.Spec.Workload.ReadSeconds, run.Spec.Workload.WriteSeconds = 4, 4
		run.Spec.Placement.MaxParallelCells = 1
		run.Spec.Placement.Database.NodeSelector = map[string]string{corev1.LabelHostname: node}
		run.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{
			Against: dbbenchv1alpha1.RegressAgainstChangePoints, MinMagnitudePercent: 10,
			MagnitudeRule: dbbenchv1alpha1.MagnitudeEstimated, MaxPValue: "0.01",
			Bisect: &dbbenchv1alpha1.RegressionBisect{Builds: builds},
		}
		createRun(t, run)
		run = waitForRunFinished(t, ns, run.Name, runTimeout)
		requireSucceeded(t, run)
		c := meta.FindStatusCondition(run.Status.Conditions, dbbenchv1alpha1.ConditionRegressed)
		if c == nil {
			t.Fatalf("night %d (%s): no Regressed condition", i+1, r)
		}
		t.Logf("[%s] night %d (PostgreSQL %s): Regressed=%s %s: %s", time.Since(began).Round(time.Second), i+1, r, c.Status, c.Reason, c.Message)
		if len(run.Status.Cells) != 1 || run.Status.Cells[0].ImageDigest == "" {
			t.Fatalf("night %d: cells %+v, want one with its image's digest", i+1, run.Status.Cells)
		}
		d := run.Status.Cells[0].ImageDigest
		if other, ok := digests[d]; ok {
			t.Errorf("night %d (%s) ran the digest night %s ran: %s", i+1, r, other, d)
		}
		digests[d] = fmt.Sprint(i + 1)
		if i == 0 && c.Reason != dbbenchv1alpha1.ReasonNoHistory {
			t.Errorf("the first night: %s, want NoHistory", c.Reason)
		}
		if st := run.Status.Regression; st != nil && len(st.Regressed) > 0 {
			confirmed = append(confirmed, st.Regressed...)
			for _, rs := range st.Regressed {
				if rs.Since == "" || rs.LastBefore == "" {
					t.Errorf("night %d: a confirmed change without the nights around it: %+v", i+1, rs)
				}
			}
			// Adjacent builds: the suite's nights localized the change.
			if st.Bisection != "" || st.BisectionMessage == "" {
				t.Errorf("night %d: bisection %q, message %q: want none, and why", i+1, st.Bisection, st.BisectionMessage)
			}
		}
		last = run
	}
	if st := last.Status.Regression; st == nil || len(st.ComparedTo) == 0 {
		t.Errorf("the last night compared with no earlier night: %+v", last.Status.Regression)
	}
	t.Logf("%d nights, %d confirmed change(s): %+v", len(releases), len(confirmed), confirmed)
}
