// Command importmap checks that the module's packages import only downward,
// along the layers declared below, and writes the layer map into
// docs/design.md between its markers (make manifests runs it; make
// verify-generated fails when the committed map differs). A package outside
// every layer, an import a layer does not allow, or a Kubernetes import in a
// domain package is an error that names the package and the import.
//
// Usage: go run ./hack/importmap [-check-only] docs/design.md
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"slices"
	"sort"
	"strings"
)

const module = "github.com/dbbench/dbbench/"

// layer is a set of packages (path patterns relative to the module; a
// trailing /... matches the subtree, * one path element) and the layers
// they may import.
type layer struct {
	name     string
	what     string
	patterns []string
	mayUse   []string
	// domain layers import no Kubernetes API or client package: only
	// apimachinery's generic utilities (k8s.io/apimachinery/pkg/util/...).
	domain bool
}

// The layers' names.
const (
	layerDomain        = "domain"
	layerAgent         = "agent"
	layerAPI           = "api"
	layerBuilders      = "builders"
	layerFramework     = "framework"
	layerKinds         = "kinds"
	layerManager       = "manager"
	layerPlugin        = "plugin"
	layerCommands      = "commands"
	layerTestSupport   = "test support"
	layerTestsAndTools = "tests and tools"
)

// layers, bottom up. A package belongs to the layer whose pattern names it
// exactly, else to the first whose wildcard pattern matches it.
var layers = []layer{
	{name: layerDomain, what: "statistics, reports, results, the store, the contracts: a small library with no Kubernetes API or client imports",
		patterns: []string{"pkg/...", "lua"}, mayUse: []string{layerDomain}, domain: true},
	{name: layerAgent, what: "the agent in each cell's client pod: runs the steps, writes its progress and results with client-go",
		patterns: []string{"pkg/agent"}, mayUse: []string{layerDomain}},
	{name: layerAPI, what: "the CRDs' Go types, their defaults, reasons and keys",
		patterns: []string{"api/..."}},
	{name: layerBuilders, what: "pure functions over the API's types: child objects, plans, the run's verdict; no client, no I/O",
		patterns: []string{"pkg/matrix", "pkg/specs", "pkg/runplan", "pkg/bisectreport", "pkg/runverdict"},
		mayUse:   []string{layerDomain, layerAPI, layerBuilders}},
	{name: layerFramework, what: "what every kind's reconciler shares: the pass shell, status patches, events, health, the object store, the site",
		patterns: []string{"internal/controller/framework"}, mayUse: []string{layerDomain, layerAPI, layerBuilders}},
	{name: layerKinds, what: "one reconciler per kind; no kind imports another",
		patterns: []string{"internal/controller/benchmark*"}, mayUse: []string{layerDomain, layerAPI, layerBuilders, layerFramework}},
	{name: layerManager, what: "the manager that registers every kind",
		patterns: []string{"internal/manager"}, mayUse: []string{layerDomain, layerAPI, layerBuilders, layerFramework, layerKinds}},
	{name: layerPlugin, what: "kubectl-dbbench's commands: they read what the controllers write, through the API",
		patterns: []string{"internal/plugin"}, mayUse: []string{layerDomain, layerAPI, layerBuilders}},
	{name: layerCommands, what: "thin main packages",
		patterns: []string{"cmd/..."}, mayUse: []string{layerDomain, layerAgent, layerAPI, layerBuilders, layerFramework, layerKinds, layerManager, layerPlugin}},
	{name: layerTestSupport, what: "real servers and tools for tests (any package's tests may import it)",
		patterns: []string{"internal/testutil/..."}, mayUse: []string{layerDomain, layerAPI, layerBuilders}},
	{name: layerTestsAndTools, what: "envtest and end-to-end suites, benchmarks, generators",
		patterns: []string{"internal/benchutil", "internal/controller/integration", "test/...", "hack/..."},
		mayUse:   []string{"*"}},
}

type pkg struct {
	ImportPath  string
	Imports     []string
	TestImports []string
}

func match(pattern, p string) bool {
	if sub, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == sub || strings.HasPrefix(p, sub+"/")
	}
	ok, _ := path.Match(pattern, p)
	return ok
}

func layerOf(p string) *layer {
	for i := range layers {
		if slices.Contains(layers[i].patterns, p) {
			return &layers[i]
		}
	}
	for i := range layers {
		for _, pat := range layers[i].patterns {
			if match(pat, p) {
				return &layers[i]
			}
		}
	}
	return nil
}

func main() {
	checkOnly := flag.Bool("check-only", false, "check the imports; do not write the map")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: importmap [-check-only] docs/design.md")
		os.Exit(2)
	}
	pkgs, err := list()
	if err != nil {
		fmt.Fprintln(os.Stderr, "importmap:", err)
		os.Exit(1)
	}
	members, errs := check(pkgs)
	if len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintln(os.Stderr, "importmap:", e)
		}
		os.Exit(1)
	}
	if *checkOnly {
		return
	}
	if err := writeMap(flag.Arg(0), render(members)); err != nil {
		fmt.Fprintln(os.Stderr, "importmap:", err)
		os.Exit(1)
	}
}

func list() ([]pkg, error) {
	out, err := exec.Command("go", "list", "-e", "-tags", "e2e", "-json=ImportPath,Imports,TestImports", "./...").Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			return nil, err
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// check returns each layer's packages, and every import that breaks a rule.
// A package's internal tests count: they are compiled into it.
func check(pkgs []pkg) (map[string][]string, []string) {
	members := map[string][]string{}
	var errs []string
	for _, p := range pkgs {
		l := layerOf(p.ImportPath)
		if l == nil {
			errs = append(errs, fmt.Sprintf("%s is in no layer: add it to hack/importmap's layers", p.ImportPath))
			continue
		}
		members[l.name] = append(members[l.name], p.ImportPath)
		for i, imp := range append(slices.Clone(p.Imports), p.TestImports...) {
			test := i >= len(p.Imports)
			if l.domain && kubernetes(imp) {
				errs = append(errs, fmt.Sprintf("%s (%s) imports %s: a domain package imports no Kubernetes API or client package", p.ImportPath, l.name, imp))
			}
			rel, ok := strings.CutPrefix(imp, module)
			if !ok || rel == p.ImportPath {
				continue
			}
			to := layerOf(rel)
			switch {
			case to == nil:
				errs = append(errs, fmt.Sprintf("%s imports %s, which is in no layer", p.ImportPath, rel))
			case slices.Contains(l.mayUse, "*") || slices.Contains(l.mayUse, to.name), test && to.name == layerTestSupport:
			default:
				errs = append(errs, fmt.Sprintf("%s (%s) imports %s (%s): %s may import only %s", p.ImportPath, l.name, rel, to.name,
					l.name, orNothing(l.mayUse)))
			}
		}
	}
	return members, errs
}

func kubernetes(imp string) bool {
	if strings.HasPrefix(imp, "k8s.io/apimachinery/pkg/util/") {
		return false
	}
	return strings.HasPrefix(imp, "k8s.io/") || strings.HasPrefix(imp, "sigs.k8s.io/")
}

func orNothing(s []string) string {
	if len(s) == 0 {
		return "nothing of the module"
	}
	return strings.Join(s, ", ")
}

const (
	beginMarker = "<!-- importmap:begin (generated by hack/importmap: edit its layers, then run make manifests) -->"
	endMarker   = "<!-- importmap:end -->"
)

func render(members map[string][]string) string {
	var b strings.Builder
	b.WriteString("| layer | packages | may import |\n|---|---|---|\n")
	for i := len(layers) - 1; i >= 0; i-- {
		l := layers[i]
		ps := members[l.name]
		sort.Strings(ps)
		for j := range ps {
			ps[j] = "`" + ps[j] + "`"
		}
		uses := orNothing(l.mayUse)
		if slices.Contains(l.mayUse, "*") {
			uses = "anything"
		}
		fmt.Fprintf(&b, "| **%s**: %s | %s | %s |\n", l.name, l.what, strings.Join(ps, " "), uses)
	}
	return b.String()
}

func writeMap(file, table string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	s := string(raw)
	i, j := strings.Index(s, beginMarker), strings.Index(s, endMarker)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q ... %q markers", file, beginMarker, endMarker)
	}
	out := s[:i+len(beginMarker)] + "\n" + table + s[j:]
	if out == s {
		return nil
	}
	return os.WriteFile(file, []byte(out), 0o644)
}
