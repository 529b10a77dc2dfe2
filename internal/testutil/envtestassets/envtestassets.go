// Package envtestassets finds the kube-apiserver and etcd that
// hack/envtest-assets.sh prepares, so that a plain `go test ./...` runs the
// envtest suites when they were built once, and skips them (naming
// `make test-envtest`) when they were not, instead of failing.
package envtestassets

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// EnvVar is where controller-runtime's envtest, and `make test-envtest`,
// say where the binaries are.
const EnvVar = "KUBEBUILDER_ASSETS"

// Required are the binaries envtest starts; kubectl is optional (only the
// `kubectl explain` tests use it, and they skip without it).
var Required = []string{"kube-apiserver", "etcd"}

// MakeTarget builds the assets and runs the suites with them.
const MakeTarget = "make test-envtest"

// kubeVersionRE reads the default of KUBE_VERSION from hack/lib.sh, which
// stays its only declaration.
var kubeVersionRE = regexp.MustCompile(`(?m)^KUBE_VERSION="\$\{KUBE_VERSION:-([^}"]+)\}"`)

// Dir returns the directory holding the envtest binaries: $KUBEBUILDER_ASSETS
// when set, else the cache directory hack/lib.sh builds into
// ($DBBENCH_CACHE, or $XDG_CACHE_HOME/dbbench, or ~/.cache/dbbench, then
// k8s/$KUBE_VERSION). When the binaries are not there it returns an error
// that says what is missing and how to build it.
func Dir() (string, error) {
	if dir := os.Getenv(EnvVar); dir != "" {
		return dir, check(dir, EnvVar+"="+dir)
	}
	cache, err := cacheDir()
	if err != nil {
		return "", err
	}
	version, err := kubeVersion()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "k8s", version)
	return dir, check(dir, dir)
}

// check reports the first required binary missing from dir.
func check(dir, where string) error {
	for _, name := range Required {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("no %s in %s (`%s` builds kube-apiserver and installs etcd)", name, where, MakeTarget)
		}
	}
	return nil
}

// cacheDir mirrors hack/lib.sh: an empty variable counts as unset, as with
// the shell's ${VAR:-default}.
func cacheDir() (string, error) {
	if d := os.Getenv("DBBENCH_CACHE"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "dbbench"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the cache directory of hack/lib.sh: %w", err)
	}
	return filepath.Join(home, ".cache", "dbbench"), nil
}

// kubeVersion is $KUBE_VERSION, else hack/lib.sh's default.
func kubeVersion() (string, error) {
	if v := os.Getenv("KUBE_VERSION"); v != "" {
		return v, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	lib := filepath.Join(root, "hack", "lib.sh")
	text, err := os.ReadFile(lib)
	if err != nil {
		return "", fmt.Errorf("reading KUBE_VERSION: %w", err)
	}
	m := kubeVersionRE.FindSubmatch(text)
	if m == nil {
		return "", fmt.Errorf("%s: no line KUBE_VERSION=\"${KUBE_VERSION:-<version>}\"", lib)
	}
	return string(m[1]), nil
}

// repoRoot is the nearest directory above the working directory (a test
// runs in its package's) that holds hack/lib.sh.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "hack", "lib.sh")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no hack/lib.sh above %s", wd)
		}
	}
}
