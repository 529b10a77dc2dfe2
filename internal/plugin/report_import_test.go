package plugin

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportOfImport runs the report commands on the imported published
// layout: the steps reports leave out, the cells chosen and a bad --base.
func TestReportOfImport(t *testing.T) {
	out := t.TempDir()
	if _, stderr, err := runCmd(t, noCluster{}, append([]string{"import", "testdata/published", "--out", out}, publishedArgs...)...); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	cases := []struct {
		name          string
		args          []string
		want, notWant []string
		wantErr       string
	}{{
		name: "default leaves .pre and .warm out and says so",
		want: []string{
			"Relative throughput: QPS(cell) / QPS(mysql-8.0.40), 2 threads",
			"note: left out 2 steps reports do not publish (.pre, .warm): point-query.pre, read-only_range=100.warm (--all-steps keeps them)",
		},
		// The only step at 8 threads is a .warm one: no table, scale-up
		// or latency column of missing cells for it.
		notWant: []string{" 8 threads"},
	}, {
		name: "--all-steps keeps them",
		args: []string{"--all-steps"},
		want: []string{"Relative throughput: QPS(cell) / QPS(mysql-8.0.40), 8 threads (> 1 is faster)\nstep base qps mysql-8.4.3 mysql-9.1.0\nread-only_range=100.warm ",
			"\npoint-query.pre "},
		notWant: []string{"left out"},
	}, {
		name:    "--cells chooses and orders",
		args:    []string{"--cells", "mysql-9.1.0,mysql-8.0.40"},
		want:    []string{"Relative throughput: QPS(cell) / QPS(mysql-9.1.0), 2 threads (> 1 is faster)\nstep base qps mysql-8.0.40\n"},
		notWant: []string{"mysql-8.4.3"},
	}, {
		name: "--cells with a glob",
		args: []string{"--cells", "mysql-9.*,mysql-8.*", "--base", "mysql-8.4.3"},
		want: []string{"QPS(mysql-8.4.3), 2 threads (> 1 is faster)\nstep base qps mysql-9.1.0 mysql-8.0.40\n"},
	}, {
		name:    "--cells naming no cell",
		args:    []string{"--cells", "mariadb-*"},
		wantErr: fmt.Sprintf(`--cells: "mariadb-*" matches no cell in %s (cells: mysql-8.0.40, mysql-8.4.3, mysql-9.1.0)`, out),
	}, {
		name:    "bad --base names the folder",
		args:    []string{"--base", "mysql-5.7"},
		wantErr: fmt.Sprintf(`--base "mysql-5.7": no such cell in %s (cells: mysql-8.0.40, mysql-8.4.3, mysql-9.1.0)`, out),
	}, {
		name:    "--base outside --cells",
		args:    []string{"--cells", "mysql-9.1.0,mysql-8.4.3", "--base", "mysql-8.0.40"},
		wantErr: `--base "mysql-8.0.40": not among --cells (cells: mysql-9.1.0, mysql-8.4.3)`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, _, err := runCmd(t, noCluster{}, append([]string{"report", "--from-dir", out}, tc.args...)...)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Columns are padded: compare with single spaces.
			lines := strings.Split(stdout, "\n")
			for i, l := range lines {
				lines[i] = strings.Join(strings.Fields(l), " ")
			}
			stdout = strings.Join(lines, "\n")
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("report lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(stdout, w) {
					t.Errorf("report has %q:\n%s", w, stdout)
				}
			}
		})
	}
}

// TestHistoryAllSteps: history leaves the .pre and .warm steps out too,
// and --all-steps keeps them there as well.
func TestHistoryAllSteps(t *testing.T) {
	root := t.TempDir()
	for _, run := range []string{"study-1", "study-2"} {
		args := append([]string{"import", "testdata/published", "--out", filepath.Join(root, run), "--run", run, "--suite", "study"}, publishedArgs...)
		if _, stderr, err := runCmd(t, noCluster{}, args...); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		want bool
	}{{nil, false}, {[]string{"--all-steps"}, true}} {
		out, _, err := runCmd(t, noCluster{}, append([]string{"history", "study", "--from-dir", root, "-o", "csv"}, tc.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "point-query,") {
			t.Fatalf("%v: no point-query series:\n%s", tc.args, out)
		}
		if got := strings.Contains(out, "point-query.pre"); got != tc.want {
			t.Errorf("%v: point-query.pre listed = %v, want %v:\n%s", tc.args, got, tc.want, out)
		}
	}
}
