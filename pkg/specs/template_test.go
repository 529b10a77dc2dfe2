package specs

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
)

// cnpgCell is a cell of a run templating a CloudNativePG-like Cluster.
func cnpgCell(object string, ep dbbenchv1alpha1.TemplateEndpoint) (*dbbenchv1alpha1.BenchmarkRun, matrix.Cell) {
	run := &dbbenchv1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "r", UID: "u1"}}
	db := &dbbenchv1alpha1.DatabaseSpec{Name: "pg", Engine: dbbenchv1alpha1.EnginePostgres, Versions: []string{"17.2"},
		Template: &dbbenchv1alpha1.DatabaseTemplate{Object: runtime.RawExtension{Raw: []byte(object)}, ReadyCondition: "Ready", Endpoint: ep}}
	return run, matrix.Cell{Name: "pg-17.2-default", ObjectBase: "r-pg-17-2-default-abcde", Version: "17.2", Database: db}
}

const cnpgCluster = `{"apiVersion":"postgresql.cnpg.io/v1","kind":"Cluster",
 "metadata":{"name":"ignored","namespace":"elsewhere","labels":{"team":"db"},"resourceVersion":"7"},
 "spec":{"instances":1,"imageName":"ghcr.io/cloudnative-pg/postgresql:{version}","bootstrap":{"initdb":{"database":"app","owner":"{name}"}},
  "postgresql":{"parameters":{"{version}":"keys stay"}},"args":["--v={version}",3]},
 "status":{"phase":"stale"}}`

// TestTemplateObject: {version} and {name} are replaced in string values at
// any depth (keys and other values stay), name and namespace are the cell's
// and the run's whatever the template says, the cell's labels join the
// template's, and a status carried over is dropped.
func TestTemplateObject(t *testing.T) {
	run, c := cnpgCell(cnpgCluster, dbbenchv1alpha1.TemplateEndpoint{})
	obj, err := TemplateObject(run, c)
	if err != nil {
		t.Fatal(err)
	}
	name := TemplateObjectName(c)
	checks := []struct {
		path []string
		want any
	}{
		{[]string{"metadata", "name"}, name},
		{[]string{"metadata", "namespace"}, "bench"},
		{[]string{"metadata", "labels", "team"}, "db"},
		{[]string{"metadata", "labels", dbbenchv1alpha1.LabelCell}, c.ObjectBase},
		{[]string{"metadata", "labels", dbbenchv1alpha1.LabelRole}, RoleTarget},
		{[]string{"spec", "imageName"}, "ghcr.io/cloudnative-pg/postgresql:17.2"},
		{[]string{"spec", "bootstrap", "initdb", "owner"}, name},
		{[]string{"spec", "postgresql", "parameters", "{version}"}, "keys stay"},
	}
	for _, ch := range checks {
		got, _, _ := unstructured.NestedFieldNoCopy(obj.Object, ch.path...)
		if got != ch.want {
			t.Errorf("%s = %v, want %v", strings.Join(ch.path, "."), got, ch.want)
		}
	}
	args, _, _ := unstructured.NestedSlice(obj.Object, "spec", "args")
	if len(args) != 2 || args[0] != "--v=17.2" || args[1] != float64(3) {
		t.Errorf("spec.args = %v, want [--v=17.2 3]", args)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "status"); found {
		t.Error("status kept from the template")
	}
	if obj.GetResourceVersion() != "" {
		t.Errorf("resourceVersion %q kept from the template", obj.GetResourceVersion())
	}
	// The template itself is not changed: the next cell substitutes again.
	if !strings.Contains(string(c.Database.Template.Object.Raw), "{version}") {
		t.Error("the template's raw object was modified")
	}
}

// TestTemplateEndpoint: the host is given ({name} replaced) or read from a
// string field, the port given or read from an integer field (0: the
// engine's), the Secret's name has {name} replaced; a field the object lacks
// or of the wrong type is an error naming the template field.
func TestTemplateEndpoint(t *testing.T) {
	status := map[string]any{"writeService": "c-rw", "port": int64(5433), "bad": 1.5, "empty": ""}
	secret := dbbenchv1alpha1.CredentialsSecretRef{Name: "{name}-app"}
	cases := []struct {
		name    string
		ep      dbbenchv1alpha1.TemplateEndpoint
		host    string
		port    int32
		wantErr string
	}{
		{"host with {name}", dbbenchv1alpha1.TemplateEndpoint{Host: "{name}-rw", CredentialsSecret: secret}, "obj-rw", 0, ""},
		{"host and port given", dbbenchv1alpha1.TemplateEndpoint{Host: "db.example", Port: 6432, CredentialsSecret: secret}, "db.example", 6432, ""},
		{"hostField and portField", dbbenchv1alpha1.TemplateEndpoint{HostField: "status.writeService", PortField: "status.port", CredentialsSecret: secret}, "c-rw", 5433, ""},
		{"hostField missing", dbbenchv1alpha1.TemplateEndpoint{HostField: "status.readService", CredentialsSecret: secret}, "", 0,
			"template.endpoint.hostField: Cluster obj has no field status.readService"},
		{"hostField not a string", dbbenchv1alpha1.TemplateEndpoint{HostField: "status.port", CredentialsSecret: secret}, "", 0,
			"template.endpoint.hostField: Cluster obj's status.port is 5433, not a host name"},
		{"hostField empty", dbbenchv1alpha1.TemplateEndpoint{HostField: "status.empty", CredentialsSecret: secret}, "", 0,
			"not a host name"},
		{"portField not an integer", dbbenchv1alpha1.TemplateEndpoint{Host: "h", PortField: "status.bad", CredentialsSecret: secret}, "", 0,
			"template.endpoint.portField: Cluster obj's status.bad is 1.5, not a port"},
	}
	for _, tc := range cases {
		_, c := cnpgCell(cnpgCluster, tc.ep)
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster",
			"metadata": map[string]any{"name": "obj"}, "status": status}}
		got, err := TemplateEndpoint(c, obj)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "databases[pg]") {
				t.Errorf("%s: error %v, want one naming databases[pg] and %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got.Host != tc.host || got.Port != tc.port || got.CredentialsSecret != "obj-app" || got.Kind != "Cluster" || got.Name != "obj" {
			t.Errorf("%s: %+v, want host %s port %d Secret obj-app", tc.name, got, tc.host, tc.port)
		}
	}
}

// TestConditionTrue: only a condition of the named type with status "True".
func TestConditionTrue(t *testing.T) {
	obj := func(conds ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": conds}}}
	}
	cases := []struct {
		name string
		obj  *unstructured.Unstructured
		want bool
	}{
		{"ready", obj(map[string]any{"type": "Ready", "status": "True"}), true},
		{"ready among others", obj(map[string]any{"type": "Progressing", "status": "True"}, map[string]any{"type": "Ready", "status": "True"}), true},
		{"not ready", obj(map[string]any{"type": "Ready", "status": "False"}), false},
		{"unknown", obj(map[string]any{"type": "Ready", "status": "Unknown"}), false},
		{"another type true", obj(map[string]any{"type": "Available", "status": "True"}), false},
		{"no status", &unstructured.Unstructured{Object: map[string]any{}}, false},
	}
	for _, tc := range cases {
		if got := ConditionTrue(tc.obj, "Ready"); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestNotReadyDetail: the object's own words on why it is not ready: the
// condition's status, reason and message, and its phase; else nothing.
func TestNotReadyDetail(t *testing.T) {
	obj := func(status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"status": status}}
	}
	cases := []struct {
		name string
		obj  *unstructured.Unstructured
		want string
	}{
		{"condition with reason and message", obj(map[string]any{"conditions": []any{
			map[string]any{"type": "Progressing", "status": "True", "message": "not this one"},
			map[string]any{"type": "Ready", "status": "False", "reason": "ClusterIsNotReady", "message": "Cluster Is Not Ready"}}}),
			"Ready=False, ClusterIsNotReady, Cluster Is Not Ready"},
		{"condition with no words", obj(map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "Unknown"}}}), "Ready=Unknown"},
		{"the condition and the phase", obj(map[string]any{"phase": "Setting up primary",
			"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "R"}}}), `Ready=False, R; status.phase "Setting up primary"`},
		{"no condition: the phase", obj(map[string]any{"phase": "Setting up primary"}), `status.phase "Setting up primary"`},
		{"nothing", obj(map[string]any{}), ""},
		{"no object (not created yet)", nil, ""},
	}
	for _, tc := range cases {
		if got := NotReadyDetail(tc.obj, "Ready"); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestTargetDatabase: the external view of a ready object is the endpoint
// recorded in the status with the template's Secret keys and connect
// database, leaving the spec's database untouched.
func TestTargetDatabase(t *testing.T) {
	_, c := cnpgCell(cnpgCluster, dbbenchv1alpha1.TemplateEndpoint{Host: "{name}-rw", Database: "app",
		CredentialsSecret: dbbenchv1alpha1.CredentialsSecretRef{Name: "{name}-app", UserKey: "user"}})
	got := TargetDatabase(c.Database, &dbbenchv1alpha1.CellTarget{Host: "obj-rw", Port: 5433, CredentialsSecret: "obj-app"})
	ext := got.External
	if ext == nil || ext.Host != "obj-rw" || ext.Port != 5433 || ext.Database != "app" ||
		ext.CredentialsSecret.Name != "obj-app" || ext.CredentialsSecret.UserKey != "user" {
		t.Errorf("external view %+v", ext)
	}
	if c.Database.External != nil {
		t.Error("the spec's database was changed")
	}
	c.Database = got
	if !c.External() || !c.Templated() {
		t.Errorf("view: External %v Templated %v, want both", c.External(), c.Templated())
	}
}
