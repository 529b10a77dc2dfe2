package main

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		name string
		pkg  pkg
		// wantErr is a substring of the one error expected; "" for none.
		wantErr string
	}{
		{"a kind uses the framework", pkg{ImportPath: "internal/controller/benchmarkrun",
			Imports: []string{module + "internal/controller/framework", module + "pkg/results", "k8s.io/api/core/v1"}}, ""},
		{"a kind imports another", pkg{ImportPath: "internal/controller/benchmarkbisection",
			Imports: []string{module + "internal/controller/benchmarkrun"}}, "kinds may import only"},
		{"the framework imports a kind", pkg{ImportPath: "internal/controller/framework",
			Imports: []string{module + "internal/controller/benchmarkrun"}}, "framework may import only"},
		{"a domain package imports the API", pkg{ImportPath: "pkg/inference",
			Imports: []string{module + "api/v1alpha1"}}, "domain may import only domain"},
		{"a domain package imports client-go", pkg{ImportPath: "pkg/store",
			Imports: []string{"k8s.io/client-go/kubernetes"}}, "no Kubernetes API or client"},
		{"a domain package uses apimachinery's utilities", pkg{ImportPath: "pkg/store",
			Imports: []string{"k8s.io/apimachinery/pkg/util/wait"}}, ""},
		{"a domain package's tests use test support", pkg{ImportPath: "pkg/site",
			TestImports: []string{module + "internal/testutil/chromium"}}, ""},
		{"a domain package's code uses test support", pkg{ImportPath: "pkg/site",
			Imports: []string{module + "internal/testutil/chromium"}}, "domain may import only domain"},
		{"the plugin imports a kind", pkg{ImportPath: "internal/plugin",
			Imports: []string{module + "internal/controller/benchmarkrun"}}, "plugin may import only"},
		{"a package in no layer", pkg{ImportPath: "misc/thing"}, "is in no layer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := check([]pkg{tc.pkg})
			switch {
			case tc.wantErr == "" && len(errs) > 0:
				t.Errorf("errors %q, want none", errs)
			case tc.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0], tc.wantErr)):
				t.Errorf("errors %q, want one saying %q", errs, tc.wantErr)
			}
		})
	}
}
