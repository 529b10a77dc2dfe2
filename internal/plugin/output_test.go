package plugin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

// TestWatchObjectOutput: with -o the watch prints the BenchmarkRun object
// through cli-runtime's printers; an unknown format is refused before any
// request, naming the flag.
func TestWatchObjectOutput(t *testing.T) {
	run := runObj("nightly-3", "nightly", t0, "Succeeded", []dbbenchv1alpha1.CellStatus{{Name: "a", Phase: dbbenchv1alpha1.CellSucceeded, StepsDone: 2, StepsTotal: 2}})
	clients := newFakeCluster(t, []*unstructured.Unstructured{run}, nil)
	decodeYAML := func(s string) (map[string]any, error) {
		var m map[string]any
		return m, yaml.Unmarshal([]byte(s), &m)
	}
	decodeJSON := func(s string) (map[string]any, error) {
		var m map[string]any
		return m, json.Unmarshal([]byte(s), &m)
	}
	for _, tt := range []struct {
		name    string
		args    []string
		want    string                               // exact output, when set
		decode  func(string) (map[string]any, error) // else: the object, decoded
		wantErr string
	}{
		{name: "name", args: []string{"-o", "name"}, want: "benchmarkrun.dbbench.io/nightly-3\n"},
		{name: "yaml", args: []string{"-o", "yaml"}, decode: decodeYAML},
		{name: "json", args: []string{"--output=json"}, decode: decodeJSON},
		{name: "jsonpath", args: []string{"-o", "jsonpath={.status.phase}"}, want: "Succeeded"},
		{name: "unknown format", args: []string{"-o", "table"}, wantErr: "--output: unable to match a printer suitable for the output format \"table\""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runCmd(t, clients, append([]string{"watch", "nightly-3", "--once"}, tt.args...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.decode == nil {
				if out != tt.want {
					t.Errorf("output %q, want %q", out, tt.want)
				}
				return
			}
			got, err := tt.decode(out)
			if err != nil {
				t.Fatalf("output does not decode: %v\n%s", err, out)
			}
			if diff := cmp.Diff(run.Object, got); diff != "" {
				t.Errorf("printed object (-want +got):\n%s", diff)
			}
		})
	}
}
