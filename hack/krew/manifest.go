package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

const (
	// PluginName is the name users install (kubectl krew install dbbench)
	// and, as krew requires, the manifest file's base name.
	PluginName = "dbbench"
	// ManifestName is the rendered manifest's file name.
	ManifestName = PluginName + ".yaml"
	// Binary is the executable inside each archive.
	Binary = "kubectl-dbbench"
	// APIVersion and Kind are the only ones krew accepts.
	APIVersion = "krew.googlecontainertools.github.com/v1alpha2"
	Kind       = "Plugin"
)

// archiveName matches kubectl-dbbench_<os>_<arch>.tar.gz.
var archiveName = regexp.MustCompile(`^` + Binary + `_([a-z0-9]+)_([a-z0-9]+)\.tar\.gz$`)

// Options say what to render.
type Options struct {
	Version, Dist, BaseURL, Template string
}

// Platform is one archive of the manifest.
type Platform struct {
	OS, Arch, URI, SHA256, Bin string
}

// Render reads the archives in o.Dist and renders the template, then checks
// the result as krew would.
func Render(o Options) ([]byte, error) {
	if _, err := url.ParseRequestURI(o.BaseURL); err != nil || !strings.HasPrefix(o.BaseURL, "https://") {
		return nil, fmt.Errorf("-base-url %q: want an https URL", o.BaseURL)
	}
	platforms, err := archives(o.Dist, strings.TrimSuffix(o.BaseURL, "/"))
	if err != nil {
		return nil, err
	}
	tmpl, err := template.ParseFiles(o.Template)
	if err != nil {
		return nil, fmt.Errorf("reading the template: %w", err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, struct {
		Version   string
		Platforms []Platform
	}{o.Version, platforms}); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", o.Template, err)
	}
	if err := Validate(ManifestName, out.Bytes()); err != nil {
		return nil, fmt.Errorf("the rendered manifest: %w", err)
	}
	return out.Bytes(), nil
}

func archives(dist, baseURL string) ([]Platform, error) {
	entries, err := os.ReadDir(dist)
	if err != nil {
		return nil, fmt.Errorf("reading the archives: %w", err)
	}
	var ps []Platform
	for _, e := range entries {
		m := archiveName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		sum, err := sha256File(filepath.Join(dist, e.Name()))
		if err != nil {
			return nil, err
		}
		bin := Binary
		if m[1] == "windows" {
			bin += ".exe"
		}
		ps = append(ps, Platform{OS: m[1], Arch: m[2], URI: baseURL + "/" + e.Name(), SHA256: sum, Bin: bin})
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("no %s_<os>_<arch>.tar.gz in %s (make plugin-dist)", Binary, dist)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].OS+ps[i].Arch < ps[j].OS+ps[j].Arch })
	return ps, nil
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// manifest is krew's Plugin type (index.Plugin), field for field.
type manifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats"`
		Homepage         string `json:"homepage"`
		Platforms        []struct {
			Selector *struct {
				MatchLabels      map[string]string `json:"matchLabels"`
				MatchExpressions []any             `json:"matchExpressions"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Bin    string `json:"bin"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
		} `json:"platforms"`
	} `json:"spec"`
}

var (
	semverRe    = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	sha256Re    = regexp.MustCompile(`^[a-f0-9]{64}$`)
	pluginNameR = regexp.MustCompile(`^[\w-]+$`)
)

// Validate applies krew's structural rules for a plugin manifest stored as
// file (krew's validate-krew-manifest, whose module the Go proxy here does
// not serve): the supported apiVersion and kind, a name equal to the file's
// base name, a short description, a semver version with a leading v, and
// per platform a URI, a sha256 of 64 lower-case hex digits, a bin, file
// operations and a non-empty selector on os and arch only, no two platforms
// selecting the same os/arch. Errors name the field.
func Validate(file string, data []byte) error {
	var m manifest
	// Strict, as krew reads manifests: a misspelt field is an error.
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		return fmt.Errorf("parsing: %w", err)
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if m.APIVersion != APIVersion {
		bad("apiVersion: %q, want %q", m.APIVersion, APIVersion)
	}
	if m.Kind != Kind {
		bad("kind: %q, want %q", m.Kind, Kind)
	}
	name := strings.TrimSuffix(filepath.Base(file), ".yaml")
	if !pluginNameR.MatchString(name) {
		bad("file name %q: the plugin name must match %s", filepath.Base(file), pluginNameR)
	}
	if m.Metadata.Name != name {
		bad("metadata.name: %q, want %q (the file's base name)", m.Metadata.Name, name)
	}
	if m.Spec.ShortDescription == "" {
		bad("spec.shortDescription: empty")
	}
	if !semverRe.MatchString(m.Spec.Version) {
		bad("spec.version: %q is not a semantic version with a leading v", m.Spec.Version)
	}
	if len(m.Spec.Platforms) == 0 {
		bad("spec.platforms: empty")
	}
	seen := map[string]int{}
	for i, p := range m.Spec.Platforms {
		f := fmt.Sprintf("spec.platforms[%d]", i)
		if p.URI == "" {
			bad("%s.uri: empty", f)
		}
		if !sha256Re.MatchString(p.SHA256) {
			bad("%s.sha256: %q is not 64 lower-case hex digits", f, p.SHA256)
		}
		if p.Bin == "" {
			bad("%s.bin: empty", f)
		}
		if len(p.Files) == 0 {
			bad("%s.files: empty", f)
		}
		if p.Selector == nil || len(p.Selector.MatchLabels) == 0 {
			// This template selects by labels only; krew's expressions
			// are not generated here.
			bad("%s.selector.matchLabels: empty", f)
			continue
		}
		for k := range p.Selector.MatchLabels {
			if k != "os" && k != "arch" {
				bad("%s.selector.matchLabels: key %q (only os and arch)", f, k)
			}
		}
		key := p.Selector.MatchLabels["os"] + "/" + p.Selector.MatchLabels["arch"]
		if j, dup := seen[key]; dup {
			bad("%s.selector: selects %s like spec.platforms[%d]", f, key, j)
		}
		seen[key] = i
	}
	return errors.Join(errs...)
}
