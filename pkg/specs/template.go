package specs

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
)

// RoleTarget is the role label of the object a templated cell creates from
// databases[].template.
const RoleTarget = "target"

// Placeholders of databases[].template: the cell's version, and the name of
// the object created from the template.
const (
	PlaceholderVersion = "{version}"
	PlaceholderName    = "{name}"
)

// TemplateObjectName is the name of the object a templated cell creates.
func TemplateObjectName(c matrix.Cell) string { return c.ObjectBase + "-target" }

// TemplateObject builds a templated cell's object from databases[].template:
// the template's manifest with {version} and {name} replaced in every string
// value (keys are left alone), the cell's name, the run's namespace and the
// cell's labels added to the template's. The owner reference is the
// caller's (it needs the scheme).
func TemplateObject(run *dbbenchv1alpha1.BenchmarkRun, c matrix.Cell) (*unstructured.Unstructured, error) {
	tpl := c.Database.Template
	var content map[string]any
	if err := json.Unmarshal(tpl.Object.Raw, &content); err != nil {
		return nil, fmt.Errorf("databases[%s].template.object: %w", c.Database.Name, err)
	}
	name := TemplateObjectName(c)
	r := strings.NewReplacer(PlaceholderVersion, c.Version, PlaceholderName, name)
	obj := &unstructured.Unstructured{Object: substitute(content, r).(map[string]any)}
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
		return nil, fmt.Errorf("databases[%s].template.object: apiVersion and kind are required", c.Database.Name)
	}
	obj.SetName(name)
	obj.SetNamespace(run.Namespace)
	obj.SetGenerateName("")
	obj.SetResourceVersion("")
	obj.SetUID("")
	obj.SetOwnerReferences(nil)
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range CellLabels(run, c, RoleTarget) {
		labels[k] = v
	}
	obj.SetLabels(labels)
	// Whatever the template carried over from a live object is not the
	// new object's.
	unstructured.RemoveNestedField(obj.Object, "status")
	return obj, nil
}

// substitute replaces the placeholders in every string value of v (a
// decoded JSON value), returning a copy.
func substitute(v any, r *strings.Replacer) any {
	switch x := v.(type) {
	case string:
		return r.Replace(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = substitute(e, r)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substitute(e, r)
		}
		return out
	}
	return v
}

// ConditionTrue reports whether obj's status.conditions has a condition of
// type condType with status "True" (the metav1.Condition convention, which
// Deployments, CloudNativePG and mariadb-operator follow).
func ConditionTrue(obj *unstructured.Unstructured, condType string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == condType && m["status"] == "True" {
			return true
		}
	}
	return false
}

// NotReadyDetail is what a templated object says about why it is not ready,
// for the cell's message: its condType condition's status, reason and
// message when it has one, and its status.phase when it has one
// (CloudNativePG's "Setting up primary"; its Ready condition only says
// "Cluster Is Not Ready"); "" when it says nothing. The operator's words,
// so the user sees the cause next to dbbench's.
func NotReadyDetail(obj *unstructured.Unstructured, condType string) string {
	if obj == nil {
		return ""
	}
	var out []string
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != condType {
			continue
		}
		parts := []string{fmt.Sprintf("%s=%v", condType, m["status"])}
		for _, k := range []string{"reason", "message"} {
			if v, _ := m[k].(string); v != "" {
				parts = append(parts, v)
			}
		}
		out = append(out, strings.Join(parts, ", "))
		break
	}
	if phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); phase != "" {
		out = append(out, "status.phase "+strconv.Quote(phase))
	}
	return strings.Join(out, "; ")
}

// TemplateEndpoint reads a ready templated object's endpoint: the host (given,
// with {name} replaced, or read from hostField), the port (given, read from
// portField, or 0 for the engine's) and the credentials Secret's name. An
// error names the template field whose path the object lacks.
func TemplateEndpoint(c matrix.Cell, obj *unstructured.Unstructured) (dbbenchv1alpha1.CellTarget, error) {
	ep := c.Database.Template.Endpoint
	name := obj.GetName()
	r := strings.NewReplacer(PlaceholderName, name, PlaceholderVersion, c.Version)
	t := dbbenchv1alpha1.CellTarget{
		APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: name,
		Host: r.Replace(ep.Host), Port: ep.Port, CredentialsSecret: r.Replace(ep.CredentialsSecret.Name),
	}
	field := func(which, path string) (any, error) {
		v, found, err := unstructured.NestedFieldNoCopy(obj.Object, strings.Split(path, ".")...)
		if err != nil || !found {
			return nil, fmt.Errorf("databases[%s].template.endpoint.%s: %s %s has no field %s", c.Database.Name, which, obj.GetKind(), name, path)
		}
		return v, nil
	}
	if ep.HostField != "" {
		v, err := field("hostField", ep.HostField)
		if err != nil {
			return t, err
		}
		s, ok := v.(string)
		if !ok || s == "" {
			return t, fmt.Errorf("databases[%s].template.endpoint.hostField: %s %s's %s is %v, not a host name", c.Database.Name, obj.GetKind(), name, ep.HostField, v)
		}
		t.Host = s
	}
	if ep.PortField != "" {
		v, err := field("portField", ep.PortField)
		if err != nil {
			return t, err
		}
		port, ok := portValue(v)
		if !ok {
			return t, fmt.Errorf("databases[%s].template.endpoint.portField: %s %s's %s is %v, not a port", c.Database.Name, obj.GetKind(), name, ep.PortField, v)
		}
		t.Port = port
	}
	return t, nil
}

// portValue is a decoded JSON number (int64 from the API server's decoder,
// float64 from encoding/json) that is a valid port.
func portValue(v any) (int32, bool) {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case float64:
		n = int64(x)
		if float64(n) != x {
			return 0, false
		}
	default:
		return 0, false
	}
	if n < 1 || n > 65535 {
		return 0, false
	}
	return int32(n), true
}

// TargetDatabase is a templated cell's database seen as an external target
// at the endpoint read from its ready object: the cell then runs exactly as
// an external cell (plan, client Job, own database, provenance).
func TargetDatabase(db *dbbenchv1alpha1.DatabaseSpec, t *dbbenchv1alpha1.CellTarget) *dbbenchv1alpha1.DatabaseSpec {
	out := db.DeepCopy()
	ref := db.Template.Endpoint.CredentialsSecret
	ref.Name = t.CredentialsSecret
	out.External = &dbbenchv1alpha1.ExternalDatabase{
		Host: t.Host, Port: t.Port, Database: db.Template.Endpoint.Database, CredentialsSecret: ref,
	}
	return out
}
