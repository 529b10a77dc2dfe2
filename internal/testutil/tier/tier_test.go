package tier

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// root is the repository's root, from this package's directory.
var root = filepath.Join("..", "..", "..")

// tieredSuites are the test files whose every test must declare its tier.
var tieredSuites = []string{
	"test/e2e/*_test.go",
	"pkg/agent/realdb*_test.go",
	"test/realseries/*_test.go",
}

// declared reads the tests of the tiered suites and returns each one's tier
// (by suite-qualified name: "e2e.TestRunCompletes"), failing for a test
// without exactly one tier call among its first three statements.
func declared(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, pattern := range tieredSuites {
		files, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no files (%v)", pattern, err)
		}
		for _, file := range files {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			suite := filepath.Base(filepath.Dir(file))
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
					continue
				}
				name := suite + "." + fn.Name.Name
				tiers := tierCalls(fn.Body.List)
				switch {
				case len(tiers) != 1:
					t.Errorf("%s (%s): %d tier calls, want one tier.Core(t) or tier.Long(t)", name, fset.Position(fn.Pos()), len(tiers))
				case tiers[0].index > 2:
					t.Errorf("%s (%s): tier.%s(t) is statement %d; call it first, before the test does anything", name,
						fset.Position(fn.Pos()), tiers[0].tier, tiers[0].index+1)
				default:
					out[name] = strings.ToLower(tiers[0].tier)
				}
			}
		}
	}
	return out
}

type tierCall struct {
	tier  string
	index int
}

// tierCalls finds the top-level statements tier.Core(…) and tier.Long(…).
func tierCalls(stmts []ast.Stmt) []tierCall {
	var out []tierCall
	for i, s := range stmts {
		es, ok := s.(*ast.ExprStmt)
		if !ok {
			continue
		}
		call, ok := es.X.(*ast.CallExpr)
		if !ok {
			continue
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			continue
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "tier" && (sel.Sel.Name == "Core" || sel.Sel.Name == "Long") {
			out = append(out, tierCall{tier: sel.Sel.Name, index: i})
		}
	}
	return out
}

// TestEveryTestDeclaresItsTier: no test of the real-server and cluster
// suites is in neither tier, so none is dropped from both make test and
// make test-long.
func TestEveryTestDeclaresItsTier(t *testing.T) {
	got := declared(t)
	if len(got) < 20 {
		t.Fatalf("%d tiered tests found; the suites' files moved?", len(got))
	}
}

// docsRow is a row of docs/testing.md's tier table: | `suite.TestName` | core |
var docsRow = regexp.MustCompile("^\\| `([a-z0-9]+\\.Test[A-Za-z0-9_]+)` \\| (core|long) \\|")

// TestDocsListEveryTestWithItsTier: docs/testing.md's table of tiers names
// every tiered test with the tier its code declares, and nothing else.
func TestDocsListEveryTestWithItsTier(t *testing.T) {
	want := declared(t)
	text, err := os.ReadFile(filepath.Join(root, "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(string(text), "\n") {
		if m := docsRow.FindStringSubmatch(line); m != nil {
			if _, dup := got[m[1]]; dup {
				t.Errorf("docs/testing.md lists %s twice", m[1])
			}
			got[m[1]] = m[2]
		}
	}
	var names []string
	for n := range want {
		names = append(names, n)
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		switch w, g := want[n], got[n]; {
		case w == "":
			t.Errorf("docs/testing.md lists %s (%s), which no suite has", n, g)
		case g == "":
			t.Errorf("docs/testing.md does not list %s (%s tier): add a row \"| `%s` | %s | … |\"", n, w, n, w)
		case g != w:
			t.Errorf("docs/testing.md lists %s as %s; its code says %s", n, g, w)
		}
	}
}

// TestTierSkips: which tier runs under each value of Env.
func TestTierSkips(t *testing.T) {
	for _, tc := range []struct {
		env        string
		core, long bool
	}{
		{"", true, false},
		{NameCore, true, false},
		{NameLong, false, true},
		{NameAll, true, true},
	} {
		t.Setenv(Env, tc.env)
		for _, mark := range []struct {
			name string
			f    func(testing.TB)
			want bool
		}{{"core", Core, tc.core}, {"long", Long, tc.long}} {
			ran := false
			t.Run(tc.env+"/"+mark.name, func(t *testing.T) {
				mark.f(t)
				ran = true
			})
			if ran != mark.want {
				t.Errorf("%s=%q: a %s test ran %v, want %v", Env, tc.env, mark.name, ran, mark.want)
			}
		}
	}
}
