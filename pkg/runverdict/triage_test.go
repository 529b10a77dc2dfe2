package runverdict

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/attribution"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/triage"
	"github.com/google/go-cmp/cmp"
)

// manifestAt is a run of one cell c at point-query@4 = qps, image digest d.
func manifestAt(run string, qps float64, digest string) *results.Manifest {
	return &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: results.Run{Name: run, Suite: "s"},
		Cells: []results.ManifestCell{{Cell: results.Cell{Name: "c", Database: "db", Engine: "mariadb", Version: "1"}, Phase: "Succeeded",
			Image: "db:1", ImageDigest: digest, QPS: map[string]map[int]float64{"point-query": {4: qps}}}}}
}

// Against a fixed run: an ack of a run after the baseline covers the pair
// while the pair stays at the acknowledged level, not once it became
// worse again by more than the magnitude; the pair says what else changed.
func TestTriageAgainstRun(t *testing.T) {
	base := &Run{Name: "base", Manifest: manifestAt("base", 1000, "sha256:a")}
	history := []Run{*base, {Name: "r1", Manifest: manifestAt("r1", 800, "sha256:a")}, {Name: "r2", Manifest: manifestAt("r2", 800, "sha256:a")}}
	ack := triage.Ack{Name: "known", Run: "r1", Step: "point-query", Resolution: triage.ResolutionAcknowledged, Reason: "expected"}
	regressed := func() *dbbenchv1alpha1.RegressionStatus {
		return &dbbenchv1alpha1.RegressionStatus{Regressed: []dbbenchv1alpha1.RegressedStep{{Cell: "c", Step: "point-query", Threads: 4,
			MetricChange: dbbenchv1alpha1.MetricChange{ChangePercent: "-20.0"}}}}
	}
	tests := []struct {
		name     string
		cur      *results.Manifest
		acks     []triage.Ack
		acked    bool
		coincide []dbbenchv1alpha1.EnvironmentChange
		envOnly  bool
	}{
		{"no ack: reported", manifestAt("now", 800, "sha256:a"), nil, false, nil, false},
		{"acknowledged at r1 and still at its level", manifestAt("now", 790, "sha256:a"), []triage.Ack{ack}, true, nil, false},
		{"worse again by more than the magnitude since r1", manifestAt("now", 600, "sha256:a"), []triage.Ack{ack}, false, nil, false},
		{"an ack of another step", manifestAt("now", 800, "sha256:a"), []triage.Ack{{Name: "x", Run: "r1", Step: "update-index", Resolution: triage.ResolutionAcknowledged}}, false, nil, false},
		{"the digest changed behind the same image", manifestAt("now", 800, "sha256:b"), nil, false,
			[]dbbenchv1alpha1.EnvironmentChange{{Field: "image digest", Before: "sha256:a", After: "sha256:b"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := regressed()
			got := triageAgainstRun(st, tt.cur, base, history, "now", tt.acks, 0.05)
			if got[pairKey("c", "point-query", 4)] != tt.acked || (len(st.Acknowledged) == 1) != tt.acked || (len(st.Regressed) == 0) != tt.acked {
				t.Fatalf("acked %v: regressed %+v, acknowledged %+v", got, st.Regressed, st.Acknowledged)
			}
			if tt.acked {
				if a := st.Acknowledged[0]; a.Ack != "known" || a.ChangePercent != "-20.0" || a.Resolution != dbbenchv1alpha1.AckAcknowledged {
					t.Errorf("acknowledged %+v", a)
				}
				return
			}
			if d := cmp.Diff(tt.coincide, st.Regressed[0].CoincidesWith); d != "" || st.Regressed[0].EnvironmentOnly != tt.envOnly {
				t.Errorf("coincides with (-want +got):\n%s, environment only %v", d, st.Regressed[0].EnvironmentOnly)
			}
		})
	}
}

// verdict.json says what the status says.
func TestDocument(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 7, 2, 0, 0, 0, time.UTC))
	run := &dbbenchv1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "night-7"}}
	if Document(run) != nil {
		t.Error("a run without a verdict has a verdict document")
	}
	run.Spec.Suite = "nightly"
	run.Spec.Regression = &dbbenchv1alpha1.RegressionSpec{Against: dbbenchv1alpha1.RegressAgainstChangePoints, MaxPValue: "0.01", MinMagnitudePercent: 30}
	run.Status.Conditions = []metav1.Condition{{Type: dbbenchv1alpha1.ConditionRegressed, Status: metav1.ConditionTrue, Reason: dbbenchv1alpha1.ReasonEnvironmentChanged, Message: "m", LastTransitionTime: at}}
	env := []dbbenchv1alpha1.EnvironmentChange{{Field: "kernel", Before: "6.1", After: "6.6"}}
	run.Status.Regression = &dbbenchv1alpha1.RegressionStatus{ComparedTo: []string{"night-6"}, Bisection: "b",
		Regressed: []dbbenchv1alpha1.RegressedStep{{Cell: "c", Step: "s", Threads: 1, MetricChange: dbbenchv1alpha1.MetricChange{Metric: "Throughput", Before: "10", After: "8", ChangePercent: "-20.0"},
			Since: "night-6", LastBefore: "night-5", CoincidesWith: env, EnvironmentOnly: true}},
		Acknowledged: []dbbenchv1alpha1.AcknowledgedStep{{Cell: "c", Step: "t", Threads: 1, ChangePercent: "-9.0", Since: "night-3", Ack: "a", Resolution: dbbenchv1alpha1.AckInvalid}}}
	got := Document(run)
	want := &triage.Verdict{SchemaVersion: triage.VerdictSchemaV1, Run: "night-7", Suite: "nightly", Against: "ChangePoints", Status: "True",
		Reason: dbbenchv1alpha1.ReasonEnvironmentChanged, Message: "m", JudgedAt: at.Time, ComparedTo: []string{"night-6"}, Bisection: "b", MaxPValue: 0.01, MinMagnitude: 0.3,
		Regressed: []triage.VerdictPair{{Cell: "c", Step: "s", Threads: 1, Metric: "Throughput", Before: "10", After: "8", ChangePercent: "-20.0",
			Since: "night-6", LastBefore: "night-5", CoincidesWith: []attribution.Change{{Field: "kernel", Before: "6.1", After: "6.6"}}, EnvironmentOnly: true}},
		Acknowledged: []triage.VerdictPair{{Cell: "c", Step: "t", Threads: 1, ChangePercent: "-9.0", Since: "night-3", Ack: "a", Resolution: triage.ResolutionInvalid}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("VerdictDocument (-want +got):\n%s", d)
	}
}
