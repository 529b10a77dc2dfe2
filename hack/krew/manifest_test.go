package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const baseURL = "https://github.com/dbbench/dbbench/releases/download/v0.1.0"

// writeArchives puts fake archives (any bytes: only their hashes matter)
// in a directory and returns it with each archive's sha256.
func writeArchives(t *testing.T, names ...string) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	sums := map[string]string{}
	for _, n := range names {
		data := []byte("archive " + n)
		if err := os.WriteFile(filepath.Join(dir, n), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(data)
		sums[n] = hex.EncodeToString(s[:])
	}
	return dir, sums
}

func TestRenderTheTemplate(t *testing.T) {
	dist, sums := writeArchives(t, "kubectl-dbbench_linux_amd64.tar.gz", "kubectl-dbbench_windows_amd64.tar.gz",
		"kubectl-dbbench_darwin_arm64.tar.gz", "checksums.txt", "dbbench-0.1.0.tgz")
	out, err := Render(Options{Version: "v0.1.0", Dist: dist, BaseURL: baseURL + "/", Template: "dbbench.yaml.tmpl"})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	var m manifest
	if err := yaml.UnmarshalStrict(out, &m); err != nil {
		t.Fatalf("the rendered manifest does not parse: %v\n%s", err, out)
	}
	if m.Spec.Version != "v0.1.0" {
		t.Errorf("spec.version = %q, want v0.1.0", m.Spec.Version)
	}
	type plat struct{ os, arch, uri, sha, bin string }
	want := []plat{
		{"darwin", "arm64", baseURL + "/kubectl-dbbench_darwin_arm64.tar.gz", sums["kubectl-dbbench_darwin_arm64.tar.gz"], "kubectl-dbbench"},
		{"linux", "amd64", baseURL + "/kubectl-dbbench_linux_amd64.tar.gz", sums["kubectl-dbbench_linux_amd64.tar.gz"], "kubectl-dbbench"},
		{"windows", "amd64", baseURL + "/kubectl-dbbench_windows_amd64.tar.gz", sums["kubectl-dbbench_windows_amd64.tar.gz"], "kubectl-dbbench.exe"},
	}
	if len(m.Spec.Platforms) != len(want) {
		t.Fatalf("%d platforms, want %d (archives only):\n%s", len(m.Spec.Platforms), len(want), out)
	}
	for i, w := range want {
		p := m.Spec.Platforms[i]
		got := plat{p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"], p.URI, p.SHA256, p.Bin}
		if got != w {
			t.Errorf("platforms[%d] = %+v, want %+v", i, got, w)
		}
		if len(p.Files) != 1 || p.Files[0].From != w.bin {
			t.Errorf("platforms[%d].files = %+v, want the binary %s", i, p.Files, w.bin)
		}
	}
}

func TestRenderRefuses(t *testing.T) {
	tests := []struct {
		name     string
		archives []string
		opts     Options
		wantErr  string
	}{
		{"no archives", []string{"README"}, Options{Version: "v0.1.0", BaseURL: baseURL}, "no kubectl-dbbench_<os>_<arch>.tar.gz"},
		{"a version without v", []string{"kubectl-dbbench_linux_amd64.tar.gz"}, Options{Version: "0.1.0", BaseURL: baseURL}, "spec.version"},
		{"a plain-http base URL", []string{"kubectl-dbbench_linux_amd64.tar.gz"}, Options{Version: "v0.1.0", BaseURL: "http://example.test"}, "-base-url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Dist, _ = writeArchives(t, tt.archives...)
			tt.opts.Template = "dbbench.yaml.tmpl"
			_, err := Render(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Render: error %v, want one naming %q", err, tt.wantErr)
			}
		})
	}
}

const valid = `apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: dbbench
spec:
  version: v1.2.3
  shortDescription: short
  platforms:
  - selector:
      matchLabels: {os: linux, arch: amd64}
    uri: https://example.test/a.tar.gz
    sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
    bin: kubectl-dbbench
    files: [{from: kubectl-dbbench, to: .}]
`

func TestValidate(t *testing.T) {
	tests := []struct {
		name, file, old, new, wantErr string
	}{
		{"valid", "dbbench.yaml", "", "", ""},
		{"name differs from the file", "other.yaml", "", "", "metadata.name"},
		{"unsupported apiVersion", "dbbench.yaml", "v1alpha2", "v1alpha1", "apiVersion"},
		{"kind", "dbbench.yaml", "kind: Plugin", "kind: Plugins", "kind"},
		{"version without v", "dbbench.yaml", "version: v1.2.3", "version: 1.2.3", "spec.version"},
		{"no short description", "dbbench.yaml", "shortDescription: short", "shortDescription: \"\"", "spec.shortDescription"},
		{"upper-case sha256", "dbbench.yaml", "sha256: 0123456789abcdef", "sha256: 0123456789ABCDEF", "spec.platforms[0].sha256"},
		{"no bin", "dbbench.yaml", "bin: kubectl-dbbench", "bin: \"\"", "spec.platforms[0].bin"},
		{"no files", "dbbench.yaml", "files: [{from: kubectl-dbbench, to: .}]", "files: []", "spec.platforms[0].files"},
		{"a selector key other than os and arch", "dbbench.yaml", "{os: linux, arch: amd64}", "{os: linux, cpu: amd64}", "key \"cpu\""},
		{"a misspelt field", "dbbench.yaml", "shortDescription:", "shortDescripton:", "parsing"},
		{"two platforms for one os/arch", "dbbench.yaml", "    files: [{from: kubectl-dbbench, to: .}]\n",
			"    files: [{from: kubectl-dbbench, to: .}]\n  - selector:\n      matchLabels: {os: linux, arch: amd64}\n    uri: https://example.test/b.tar.gz\n    sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n    bin: kubectl-dbbench\n    files: [{from: kubectl-dbbench, to: .}]\n",
			"spec.platforms[1].selector: selects linux/amd64 like spec.platforms[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := valid
			if tt.old != "" {
				if !strings.Contains(data, tt.old) {
					t.Fatalf("the valid manifest has no %q to replace", tt.old)
				}
				data = strings.Replace(data, tt.old, tt.new, 1)
			}
			err := Validate(tt.file, []byte(data))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate: %v, want no error", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate: error %v, want one naming %q", err, tt.wantErr)
			}
		})
	}
}
