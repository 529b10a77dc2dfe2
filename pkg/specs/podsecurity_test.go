package specs

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// TestPodsMeetPodSecurityStandards evaluates every pod the builders make
// with the Pod Security Admission plugin's own checks (the code the API
// server runs for a namespace labelled pod-security.kubernetes.io/enforce),
// so a builder change that a restricted namespace would refuse fails here
// and not only in the e2e suite (TestRestrictedNamespace). Profiling is the
// one known exception: its collector runs as root with CAP_PERFMON and
// CAP_SYS_PTRACE, which even baseline refuses (docs/explain.md).
func TestPodsMeetPodSecurityStandards(t *testing.T) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	claim := &dbbenchv1alpha1.VolumeClaimSpec{Size: resource.MustParse("1Gi")}
	withLog := func(r *dbbenchv1alpha1.BenchmarkRun) {
		r.Spec.Databases[0].Storage.Log = &dbbenchv1alpha1.LogVolumeSpec{}
	}
	onClaims := func(r *dbbenchv1alpha1.BenchmarkRun) {
		r.Spec.Databases[0].Storage.VolumeClaim = claim
		r.Spec.Databases[0].Storage.Log = &dbbenchv1alpha1.LogVolumeSpec{VolumeClaim: claim}
	}
	inMemory := func(r *dbbenchv1alpha1.BenchmarkRun) {
		r.Spec.Databases[0].Storage.EmptyDir = &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}
	}
	profiled := func(r *dbbenchv1alpha1.BenchmarkRun) {
		r.Spec.Workload.Profile = &dbbenchv1alpha1.ProfileSpec{Steps: []string{"point-query"}}
	}
	guaranteed := func(r *dbbenchv1alpha1.BenchmarkRun) { r.Spec.Placement.QoSClass = dbbenchv1alpha1.QoSGuaranteed }

	tests := []struct {
		name      string
		engine    dbbenchv1alpha1.Engine
		mutate    []func(*dbbenchv1alpha1.BenchmarkRun)
		collector string
		// client builds the client Job's pod instead of the database pod.
		client bool
		// want is the strictest level that admits the pod; "" none.
		want psapi.Level
	}{
		{name: "mariadb", engine: dbbenchv1alpha1.EngineMariaDB, want: psapi.LevelRestricted},
		{name: "mariadb with collector", engine: dbbenchv1alpha1.EngineMariaDB, collector: "agent:1", want: psapi.LevelRestricted},
		{name: "mariadb log volume, collector", engine: dbbenchv1alpha1.EngineMariaDB, mutate: []func(*dbbenchv1alpha1.BenchmarkRun){withLog}, collector: "agent:1", want: psapi.LevelRestricted},
		{name: "mariadb on claims, guaranteed", engine: dbbenchv1alpha1.EngineMariaDB, mutate: []func(*dbbenchv1alpha1.BenchmarkRun){onClaims, guaranteed}, collector: "agent:1", want: psapi.LevelRestricted},
		{name: "mysql in memory", engine: dbbenchv1alpha1.EngineMySQL, mutate: []func(*dbbenchv1alpha1.BenchmarkRun){inMemory}, collector: "agent:1", want: psapi.LevelRestricted},
		{name: "postgres", engine: dbbenchv1alpha1.EnginePostgres, want: psapi.LevelRestricted},
		{name: "postgres log volume, collector", engine: dbbenchv1alpha1.EnginePostgres, mutate: []func(*dbbenchv1alpha1.BenchmarkRun){withLog}, collector: "agent:1", want: psapi.LevelRestricted},
		{name: "client", engine: dbbenchv1alpha1.EngineMariaDB, client: true, want: psapi.LevelRestricted},
		{name: "client with collector", engine: dbbenchv1alpha1.EnginePostgres, client: true, collector: "agent:1", want: psapi.LevelRestricted},
		{name: "profiled", engine: dbbenchv1alpha1.EngineMariaDB, mutate: []func(*dbbenchv1alpha1.BenchmarkRun){profiled, guaranteed}, collector: "agent:1", want: psapi.LevelPrivileged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, cell := testRun(tt.engine, tt.mutate...)
			var pod corev1.Pod
			if tt.client {
				job := ClientJob(run, cell, 1, "agent:1", "10.0.0.1", tt.collector != "")
				pod = corev1.Pod{ObjectMeta: job.Spec.Template.ObjectMeta, Spec: job.Spec.Template.Spec}
			} else {
				pod = *DatabasePod(run, cell, 1, true, tt.collector)
			}
			for _, level := range []psapi.Level{psapi.LevelRestricted, psapi.LevelBaseline} {
				res := policy.AggregateCheckResults(evaluator.EvaluatePod(
					psapi.LevelVersion{Level: level, Version: psapi.LatestVersion()}, &pod.ObjectMeta, &pod.Spec))
				wantAllowed := admits(tt.want, level)
				if res.Allowed != wantAllowed {
					t.Errorf("%s: allowed %v, want %v; forbidden: %s", level, res.Allowed, wantAllowed, forbidden(res))
				}
			}
		})
	}
}

// admits reports whether a pod whose strictest admitting level is strictest
// is admitted at level.
func admits(strictest, level psapi.Level) bool {
	rank := map[psapi.Level]int{psapi.LevelRestricted: 2, psapi.LevelBaseline: 1, psapi.LevelPrivileged: 0}
	return rank[strictest] >= rank[level]
}

func forbidden(res policy.AggregateCheckResult) string {
	var s []string
	for i, r := range res.ForbiddenReasons {
		s = append(s, r+" ("+res.ForbiddenDetails[i]+")")
	}
	return strings.Join(s, "; ")
}
