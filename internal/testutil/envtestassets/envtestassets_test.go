package envtestassets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDir(t *testing.T) {
	version, err := kubeVersion()
	if err != nil {
		t.Fatalf("hack/lib.sh: %v", err)
	}
	if !strings.HasPrefix(version, "v1.") {
		t.Fatalf("KUBE_VERSION from hack/lib.sh = %q, want v1.x.y", version)
	}
	// populate makes dir hold the named binaries.
	populate := func(t *testing.T, dir string, names ...string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name string
		// setup returns the environment and the directory Dir must name.
		setup   func(t *testing.T, tmp string) (env map[string]string, want string)
		wantErr string
	}{
		{"KUBEBUILDER_ASSETS wins", func(t *testing.T, tmp string) (map[string]string, string) {
			d := filepath.Join(tmp, "assets")
			populate(t, d, "kube-apiserver", "etcd")
			return map[string]string{EnvVar: d, "DBBENCH_CACHE": filepath.Join(tmp, "other")}, d
		}, ""},
		{"KUBEBUILDER_ASSETS without etcd", func(t *testing.T, tmp string) (map[string]string, string) {
			d := filepath.Join(tmp, "assets")
			populate(t, d, "kube-apiserver")
			return map[string]string{EnvVar: d}, d
		}, "no etcd in KUBEBUILDER_ASSETS="},
		{"DBBENCH_CACHE", func(t *testing.T, tmp string) (map[string]string, string) {
			d := filepath.Join(tmp, "c", "k8s", version)
			populate(t, d, "kube-apiserver", "etcd", "kubectl")
			return map[string]string{"DBBENCH_CACHE": filepath.Join(tmp, "c"), "XDG_CACHE_HOME": filepath.Join(tmp, "x")}, d
		}, ""},
		{"XDG_CACHE_HOME", func(t *testing.T, tmp string) (map[string]string, string) {
			d := filepath.Join(tmp, "x", "dbbench", "k8s", version)
			populate(t, d, "kube-apiserver", "etcd")
			return map[string]string{"XDG_CACHE_HOME": filepath.Join(tmp, "x")}, d
		}, ""},
		{"HOME", func(t *testing.T, tmp string) (map[string]string, string) {
			d := filepath.Join(tmp, "h", ".cache", "dbbench", "k8s", version)
			populate(t, d, "kube-apiserver", "etcd")
			return map[string]string{"HOME": filepath.Join(tmp, "h")}, d
		}, ""},
		{"KUBE_VERSION", func(t *testing.T, tmp string) (map[string]string, string) {
			d := filepath.Join(tmp, "c", "k8s", "v1.99.0")
			populate(t, d, "kube-apiserver", "etcd")
			return map[string]string{"DBBENCH_CACHE": filepath.Join(tmp, "c"), "KUBE_VERSION": "v1.99.0"}, d
		}, ""},
		{"nothing built", func(t *testing.T, tmp string) (map[string]string, string) {
			return map[string]string{"HOME": filepath.Join(tmp, "h")}, filepath.Join(tmp, "h", ".cache", "dbbench", "k8s", version)
		}, "no kube-apiserver in "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			for _, k := range []string{EnvVar, "DBBENCH_CACHE", "XDG_CACHE_HOME", "KUBE_VERSION"} {
				t.Setenv(k, "")
			}
			env, want := tc.setup(t, tmp)
			for k, v := range env {
				t.Setenv(k, v)
			}
			got, err := Dir()
			if got != want {
				t.Errorf("Dir() = %q, want %q", got, want)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), MakeTarget)):
				t.Errorf("error %v, want one containing %q and naming %s", err, tc.wantErr, MakeTarget)
			}
		})
	}
}
