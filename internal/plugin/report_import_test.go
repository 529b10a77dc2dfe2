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

// TestReportOfStudy runs report on testdata/study imported with no flag:
// group statistics of numbers, no table for the lone 8-thread warm-up even
// with --all-steps, and the notes on stderr with -o csv and -o json.
func TestReportOfStudy(t *testing.T) {
	out := t.TempDir()
	if _, stderr, err := runCmd(t, noCluster{}, "import", "testdata/study", "--out", out); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	leftOut := "note: left out 5 steps reports do not publish (.pre, .warm): point-query.pre, point-query.warm, points-covered-si.warm, scan.warm, scan.warmpre (--all-steps keeps them)\n"
	cases := []struct {
		name                string
		args                []string
		want, notWant       []string
		wantErr, notWantErr []string
	}{{
		name: "default",
		want: []string{"Relative throughput: QPS(cell) / QPS(mysql-8.0.40), 1 threads (> 1 is faster)\n",
			// scan in rows/s: 5.11 scans/s of 1,000,000-row tables.
			"\nscan 5110000.00 0.97\n", "\naverage 0.97 0.97 0.97 0.96\n", "\nsteps 3 1 2 4\n", strings.TrimSuffix(leftOut, "\n")},
		notWant: []string{"8 threads", "Scale-up", "n/a n/a"},
	}, {
		name:    "--all-steps",
		args:    []string{"--all-steps"},
		want:    []string{"\npoint-query.warm ", "\nscan.warmpre "},
		notWant: []string{"Scale-up", "by bucket", "at 48 threads"},
	}, {
		name:    "-o csv",
		args:    []string{"-o", "csv"},
		want:    []string{"relative.t1,scan,"},
		notWant: []string{"note:"},
		wantErr: []string{leftOut},
	}, {
		name:    "-o json",
		args:    []string{"-o", "json"},
		wantErr: []string{leftOut},
	}, {
		name:       "-o markdown",
		args:       []string{"-o", "markdown"},
		want:       []string{"- left out 5 steps"},
		notWantErr: []string{"note:"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := runCmd(t, noCluster{}, append([]string{"report", "--from-dir", out}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(stdout, "\n")
			for i, l := range lines {
				lines[i] = strings.Join(strings.Fields(l), " ")
			}
			flat := strings.Join(lines, "\n")
			checkContains(t, "report", flat, stdout, tc.want)
			for _, w := range tc.notWant {
				if strings.Contains(flat, w) {
					t.Errorf("report has %q:\n%s", w, stdout)
				}
			}
			checkContains(t, "stderr", stderr, stderr, tc.wantErr)
			for _, w := range tc.notWantErr {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr has %q:\n%s", w, stderr)
				}
			}
		})
	}
}
