package plugin

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
)

// ackCluster has two finished runs of suite nightly in namespace bench,
// each with its manifest (update-index and point-query at 1 thread).
func ackCluster(t *testing.T) (Clients, *Cluster) {
	t.Helper()
	var objs []runtime.Object
	core := fake.NewClientset()
	for i, name := range []string{"night-6", "night-7"} {
		objs = append(objs, runObj(name, "nightly", t0.Add(time.Duration(i)*24*time.Hour), "Succeeded", nil))
		m := &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: results.Run{Name: name, Suite: "nightly"}, UpdatedAt: t0,
			Cells: []results.ManifestCell{{Cell: results.Cell{Name: "mariadb-nightly", Database: "mariadb", Engine: "mariadb", Version: "nightly", Attempt: 1},
				Phase: "Succeeded", QPS: map[string]map[int]float64{"update-index": {1: 300}, "point-query": {1: 5000}}}}}
		b, err := results.MarshalManifest(m)
		if err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-results", Namespace: "bench"}, Data: map[string]string{agentapi.RunResultKeyManifest: string(b)}}
		if _, err := core.CoreV1().ConfigMaps("bench").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		RunGVR: "BenchmarkRunList", AckGVR: "BenchmarkAckList"}, objs...)
	c := &Cluster{Dynamic: dyn, Core: core, Namespace: "bench"}
	return fakeCluster{c}, c
}

func TestAckCreatesAnAck(t *testing.T) {
	clients, c := ackCluster(t)
	out, _, err := runCmd(t, clients, "ack", "nightly", "--run", "night-7", "--step", "update-index", "--threads", "1",
		"--reason", "durable commits (MDEV-1)", "--link", "https://jira.example/MDEV-1")
	if err != nil {
		t.Fatal(err)
	}
	if want := "benchmarkack.dbbench.io/ack-night-7-update-index-1 created: update-index@1 from run night-7 of suite nightly is acknowledged; later verdicts of the suite do not report it\n"; out != want {
		t.Errorf("output %q, want %q", out, want)
	}
	u, err := c.Dynamic.Resource(AckGVR).Namespace("bench").Get(context.Background(), "ack-night-7-update-index-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got dbbenchv1alpha1.BenchmarkAck
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &got); err != nil {
		t.Fatal(err)
	}
	want := dbbenchv1alpha1.BenchmarkAckSpec{Suite: "nightly", Run: "night-7", Step: "update-index", Threads: 1,
		Resolution: dbbenchv1alpha1.AckAcknowledged, Reason: "durable commits (MDEV-1)", Link: "https://jira.example/MDEV-1"}
	if d := cmp.Diff(want, got.Spec); d != "" {
		t.Errorf("spec (-want +got):\n%s", d)
	}
	// The same again: refused, naming the way out.
	_, _, err = runCmd(t, clients, "ack", "nightly", "--run", "night-7", "--step", "update-index", "--threads", "1", "--reason", "again")
	if err == nil || !strings.Contains(err.Error(), "kubectl dbbench unack ack-night-7-update-index-1") {
		t.Errorf("second ack: %v", err)
	}
	// Un-acknowledge.
	out, _, err = runCmd(t, clients, "unack", "ack-night-7-update-index-1")
	if err != nil || !strings.Contains(out, "deleted") {
		t.Fatalf("unack: %q %v", out, err)
	}
	if _, _, err := runCmd(t, clients, "unack", "ack-night-7-update-index-1"); err == nil || !strings.Contains(err.Error(), `benchmarkack "ack-night-7-update-index-1" not found`) {
		t.Errorf("unack of a deleted ack: %v", err)
	}
}

// What does not exist is refused, named, with what there is.
func TestAckRefusesWhatDoesNotExist(t *testing.T) {
	clients, c := ackCluster(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an unknown suite", []string{"weekly", "--run", "night-7", "--reason", "x"},
			`nothing acknowledged: suite "weekly" has no runs (looked in the runs of namespace bench (give --from-s3 to look in the object store too))`},
		{"an unknown run", []string{"nightly", "--run", "night-9", "--reason", "x"},
			`run "night-9" is not a run of suite "nightly" (runs there: night-6, night-7)`},
		{"an unknown step", []string{"nightly", "--run", "night-7", "--step", "update-non-index", "--reason", "x"},
			`step "update-non-index" is not measured by run "night-7" of suite "nightly" (steps there: point-query, update-index)`},
		{"an unknown thread count", []string{"nightly", "--run", "night-7", "--step", "update-index", "--threads", "64", "--reason", "x"},
			`threads "64" is not measured by run "night-7"`},
		{"an unknown cell", []string{"nightly", "--run", "night-7", "--cell", "postgres-17", "--reason", "x"},
			`cell "postgres-17" is not measured by run "night-7"`},
		{"no reason", []string{"nightly", "--run", "night-7"}, "--reason: required"},
		{"no run", []string{"nightly", "--reason", "x"}, "--run: required"},
		{"a bad link", []string{"nightly", "--run", "night-7", "--reason", "x", "--link", "jira/1"}, `--link "jira/1": must be an http:// or https:// URL`},
		{"a bad metric", []string{"nightly", "--run", "night-7", "--reason", "x", "--metric", "Speed"}, "--metric"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runCmd(t, clients, append([]string{"ack"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	list, err := c.Dynamic.Resource(AckGVR).Namespace("bench").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("refused acks created %d objects (%v)", len(list.Items), err)
	}
}

func TestAckDryRunPrintsYAML(t *testing.T) {
	clients, _ := ackCluster(t)
	out, _, err := runCmd(t, clients, "ack", "nightly", "--run", "night-7", "--invalid", "--reason", "node-3's disk", "--name", "bad-disk", "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	var a dbbenchv1alpha1.BenchmarkAck
	if err := yaml.UnmarshalStrict([]byte(out), &a); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if a.Kind != "BenchmarkAck" || a.Name != "bad-disk" || a.Spec.Resolution != dbbenchv1alpha1.AckInvalid || a.Spec.Run != "night-7" {
		t.Errorf("dry-run object:\n%s", out)
	}
}

func TestAckName(t *testing.T) {
	for _, tt := range []struct {
		run, step string
		threads   int32
		want      string
	}{
		{"night-7", "", 0, "ack-night-7"},
		{"night-7", "read-write_range=100", 16, "ack-night-7-read-write-range-100-16"},
		{strings.Repeat("n", 70), "update-index", 1, "ack-" + strings.Repeat("n", 50) + "-"},
	} {
		got := ackName(tt.run, tt.step, tt.threads)
		if !strings.HasPrefix(got, tt.want) || len(got) > 63 || !dnsName.MatchString(got) {
			t.Errorf("ackName(%q, %q, %d) = %q, want %q…", tt.run, tt.step, tt.threads, got, tt.want)
		}
	}
}
