package benchmarkrun

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// crdSpecPaths lists the paths of a CRD's spec fields to depth levels below
// spec ("spec.workload", "spec.workload.tpcc", …), arrays looked through.
func crdSpecPaths(t *testing.T, crdFile string, depth int) []string {
	t.Helper()
	raw, err := os.ReadFile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema schemaNode `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	spec, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	if !ok {
		t.Fatalf("%s: no spec", crdFile)
	}
	var out []string
	var walk func(n schemaNode, prefix string, left int)
	walk = func(n schemaNode, prefix string, left int) {
		if n.Items != nil {
			n = *n.Items
		}
		if left == 0 {
			return
		}
		for name, child := range n.Properties {
			p := prefix + "." + name
			out = append(out, p)
			walk(child, p, left-1)
		}
	}
	walk(spec, "spec", depth)
	return out
}

type schemaNode struct {
	Properties map[string]schemaNode `json:"properties"`
	Items      *schemaNode           `json:"items"`
}

// hasPath reports whether obj has the dotted path, looking into every
// element of a list on the way.
func hasPath(obj any, parts []string) bool {
	if len(parts) == 0 {
		return true
	}
	switch o := obj.(type) {
	case []any:
		for _, e := range o {
			if hasPath(e, parts) {
				return true
			}
		}
	case map[string]any:
		if v, ok := o[parts[0]]; ok {
			return hasPath(v, parts[1:])
		}
	}
	return false
}

// TestFullSampleHasEveryField: config/samples/benchmarkrun_full.yaml is the
// reference the README and docs/guide.md point at, so every field of the
// spec to two levels is in it: set, or, where it cannot be set beside a
// field the sample sets, on a commented line that shows it. (The envtest
// suite dry-runs every sample against the real API server.)
func TestFullSampleHasEveryField(t *testing.T) {
	raw, err := os.ReadFile("../../../config/samples/benchmarkrun_full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var sample map[string]any
	if err := yaml.Unmarshal(raw, &sample); err != nil {
		t.Fatal(err)
	}
	var comments []string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			comments = append(comments, line)
		}
	}
	paths := crdSpecPaths(t, "../../../config/crd/bases/dbbench.io_benchmarkruns.yaml", 2)
	if len(paths) < 50 {
		t.Fatalf("%d spec paths in the CRD: the schema walk is broken", len(paths))
	}
	for _, p := range paths {
		parts := strings.Split(p, ".")
		if hasPath(sample, parts) {
			continue
		}
		key := regexp.MustCompile(`\b` + regexp.QuoteMeta(parts[len(parts)-1]) + `:`)
		shown := false
		for _, c := range comments {
			shown = shown || key.MatchString(c)
		}
		if !shown {
			t.Errorf("benchmarkrun_full.yaml lacks %s: set it, or show it on a commented line where it cannot be set", p)
		}
	}
}
