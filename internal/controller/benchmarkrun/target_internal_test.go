package benchmarkrun

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/internal/controller/framework"
	"github.com/dbbench/dbbench/pkg/matrix"
	"github.com/dbbench/dbbench/pkg/specs"
)

// targetForRun is a one-cell run of db, with a database pod and a client Job
// of attempt 1 in the pass's children.
func targetForRun(t *testing.T, db dbbenchv1alpha1.DatabaseSpec) (*runPass, matrix.Cell) {
	t.Helper()
	run := &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "kinds", UID: "run-uid"},
		Spec: dbbenchv1alpha1.BenchmarkRunSpec{
			Databases: []dbbenchv1alpha1.DatabaseSpec{db},
			Workload:  dbbenchv1alpha1.WorkloadSpec{Steps: []string{"point-query"}},
		},
	}
	cells := matrix.Expand(run)
	if len(cells) != 1 {
		t.Fatalf("%d cells, want 1", len(cells))
	}
	c := cells[0]
	pod := specs.DatabasePod(run, c, 1, false, "")
	job := specs.ClientJob(run, c, 1, DefaultAgentImage, "10.88.0.1", false)
	p := &runPass{run: run, kids: children{
		pods: map[string]*corev1.Pod{pod.Name: pod},
		jobs: map[string]*batchv1.Job{job.Name: job},
	}}
	return p, c
}

// TestTargetFor: the cell's spec alone (and, for a templated cell, whether
// its object's endpoint is recorded) chooses its target, what records its
// attempts, and the cell the target runs.
func TestTargetFor(t *testing.T) {
	external := &dbbenchv1alpha1.ExternalDatabase{Host: "pg.shop", CredentialsSecret: dbbenchv1alpha1.CredentialsSecretRef{Name: "shop-db"}}
	template := &dbbenchv1alpha1.DatabaseTemplate{
		Object:         runtime.RawExtension{Raw: []byte(`{"apiVersion":"apps/v1","kind":"Deployment"}`)},
		ReadyCondition: "Available",
		Endpoint:       dbbenchv1alpha1.TemplateEndpoint{Host: "{name}-rw", CredentialsSecret: dbbenchv1alpha1.CredentialsSecretRef{Name: "{name}-app"}},
	}
	ready := &dbbenchv1alpha1.CellTarget{APIVersion: "apps/v1", Kind: "Deployment", Name: "obj", Host: "obj-rw", Port: 3307,
		CredentialsSecret: "obj-app", ReadyTime: &metav1.Time{Time: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}}
	notReady := &dbbenchv1alpha1.CellTarget{APIVersion: "apps/v1", Kind: "Deployment", Name: "obj"}
	for _, tc := range []struct {
		name     string
		db       dbbenchv1alpha1.DatabaseSpec
		target   *dbbenchv1alpha1.CellTarget
		want     cellTarget
		attempts string // the kind of child that records an attempt, "" for none
		host     string // the external host the target's cell connects to
	}{
		{name: "server pod", db: dbbenchv1alpha1.DatabaseSpec{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"11.8"}},
			want: serverPodTarget{}, attempts: "Pod"},
		{name: "external", db: dbbenchv1alpha1.DatabaseSpec{Name: "shop", Engine: dbbenchv1alpha1.EnginePostgres, External: external},
			want: externalTarget{}, attempts: "Job", host: "pg.shop"},
		{name: "templated, object not created", db: dbbenchv1alpha1.DatabaseSpec{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"10.11"}, Template: template},
			want: templatedTarget{}},
		{name: "templated, object not ready", db: dbbenchv1alpha1.DatabaseSpec{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"10.11"}, Template: template},
			target: notReady, want: templatedTarget{}},
		{name: "templated, object ready", db: dbbenchv1alpha1.DatabaseSpec{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"10.11"}, Template: template},
			target: ready, want: templatedTarget{}, attempts: "Job", host: "obj-rw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, c := targetForRun(t, tc.db)
			cs := &dbbenchv1alpha1.CellStatus{Name: c.Name, Target: tc.target}
			got := p.targetFor(c, cs)
			if gotT, wantT := typeName(got), typeName(tc.want); gotT != wantT {
				t.Fatalf("target %s, want %s", gotT, wantT)
			}
			if got.cell().Name != c.Name || got.cell().ObjectBase != c.ObjectBase {
				t.Errorf("target's cell %s (%s), want %s (%s)", got.cell().Name, got.cell().ObjectBase, c.Name, c.ObjectBase)
			}
			var host string
			if ext := got.cell().Database.External; ext != nil {
				host = ext.Host
			}
			if host != tc.host {
				t.Errorf("external host %q, want %q", host, tc.host)
			}
			records := got.attempts()
			switch {
			case tc.attempts == "" && len(records) != 0:
				t.Errorf("%d attempt records, want none", len(records))
			case tc.attempts == "Pod" && (len(records) != 1 || !isA[*corev1.Pod](records[0])):
				t.Errorf("attempt records %v, want the database pod", records)
			case tc.attempts == "Job" && (len(records) != 1 || !isA[*batchv1.Job](records[0])):
				t.Errorf("attempt records %v, want the client Job", records)
			}
		})
	}
}

func typeName(t cellTarget) string {
	switch t.(type) {
	case serverPodTarget:
		return "serverPodTarget"
	case externalTarget:
		return "externalTarget"
	case templatedTarget:
		return "templatedTarget"
	}
	return "unknown"
}

func isA[T any](v any) bool {
	_, ok := v.(T)
	return ok
}

// TestRetryAnnotations: an attempt after the first carries why the one
// before it ended; the first, or one with no message, carries nothing.
func TestRetryAnnotations(t *testing.T) {
	cs := &dbbenchv1alpha1.CellStatus{Reason: dbbenchv1alpha1.ReasonDatabaseEvicted, Message: "attempt 1: DatabaseEvicted: node pressure"}
	for _, tc := range []struct {
		name    string
		attempt int32
		cs      *dbbenchv1alpha1.CellStatus
		want    map[string]string
	}{
		{"first attempt", 1, cs, nil},
		{"no message", 2, &dbbenchv1alpha1.CellStatus{}, nil},
		{"retry", 2, cs, map[string]string{dbbenchv1alpha1.AnnotationRetryOf: cs.Message, dbbenchv1alpha1.AnnotationRetryReason: string(dbbenchv1alpha1.ReasonDatabaseEvicted)}},
		{"retry without a reason", 3, &dbbenchv1alpha1.CellStatus{Message: "m"}, map[string]string{dbbenchv1alpha1.AnnotationRetryOf: "m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, obj := range []metav1.Object{&corev1.Pod{}, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}}}} {
				retryAnnotations(obj, tc.attempt, tc.cs)
				got := obj.GetAnnotations()
				if len(got) != len(tc.want) {
					t.Fatalf("%T annotations %v, want %v", obj, got, tc.want)
				}
				for k, v := range tc.want {
					if got[k] != v {
						t.Errorf("%T annotation %s = %q, want %q", obj, k, got[k], v)
					}
				}
			}
		})
	}
}

// claimStates says which field of the spec each claim comes from (the
// database's index, the data or the log volume), and what it found of its
// class: claimFailure names them to the user (TestDeadlines).
func TestClaimStates(t *testing.T) {
	claim := func(class *string) *dbbenchv1alpha1.VolumeClaimSpec {
		return &dbbenchv1alpha1.VolumeClaimSpec{StorageClassName: class, Size: resource.MustParse("1Gi")}
	}
	run := &dbbenchv1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "claims", UID: "run-uid"},
		Spec: dbbenchv1alpha1.BenchmarkRunSpec{
			Databases: []dbbenchv1alpha1.DatabaseSpec{
				{Name: "pg", Engine: dbbenchv1alpha1.EnginePostgres, Versions: []string{"17"}},
				{Name: "maria", Engine: dbbenchv1alpha1.EngineMariaDB, Versions: []string{"11.8"}, Storage: dbbenchv1alpha1.StorageSpec{
					VolumeClaim: claim(ptr.To("local-path")),
					Log:         &dbbenchv1alpha1.LogVolumeSpec{VolumeClaim: claim(ptr.To("no-such-class"))},
				}},
			},
			Workload: dbbenchv1alpha1.WorkloadSpec{Steps: []string{"point-query"}},
		},
	}
	var cell matrix.Cell
	for _, c := range matrix.Expand(run) {
		if c.Database.Name == "maria" {
			cell = c
		}
	}
	objs := []client.Object{&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local-path"}, Provisioner: "rancher.io/local-path"}}
	for _, pvc := range specs.Claims(run, cell, 1) {
		pvc.Status.Phase = corev1.ClaimPending
		objs = append(objs, pvc)
	}
	reader := fake.NewClientBuilder().WithScheme(framework.Scheme()).WithObjects(objs...).Build()
	target := serverPodTarget{p: &runPass{r: &Reconciler{APIReader: reader}, run: run}, c: cell}

	got, err := target.claimStates(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []claimState{
		{name: specs.DataClaimName(cell, 1), field: "spec.databases[1].storage.volumeClaim", class: "local-path", classFound: true},
		{name: specs.LogClaimName(cell, 1), field: "spec.databases[1].storage.log.volumeClaim", class: "no-such-class"},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(claimState{})); d != "" {
		t.Errorf("claim states (-want +got):\n%s", d)
	}
}
