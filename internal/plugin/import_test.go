package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
)

// Other tools' files as they sit beside sysbench outputs in published
// results folders.
const (
	vmstatText = `procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
 2  0      0 1620484 123456 9876543    0    0     5    20  100  200  3  1 96  0  0
`
	iostatText = `Linux 6.1.0-26-amd64 (bench1) 	11/20/2024 	_x86_64_	(8 CPU)

avg-cpu:  %user   %nice %system %iowait  %steal   %idle
          48.02    0.00   20.51    0.10    0.00   31.37

Device            r/s     rkB/s   w/s     wkB/s  %util
nvme0n1          0.52     12.33   40.20   401.12  1.20
`
	myCnfText = `[mysqld]
innodb_buffer_pool_size=24G
innodb_flush_log_at_trx_commit=2
`
	// readmeText mentions sysbench on a line of its own, which the parser
	// takes for a banner it cannot read.
	readmeText = "sysbench results of the c8r32 server\n"
)

// fixture is a file of testdata to copy into a test tree.
type fixture string

const (
	fxPoint2  fixture = "testdata/sysbench/mariadb-10.11-base/point-query.2.txt"
	fxPoint4  fixture = "testdata/sysbench/mariadb-10.11-base/point-query.4.txt"
	fxKilled  fixture = "testdata/sysbench/mysql-8.0-base/insert.2.txt"
	fxPrepare fixture = "../../pkg/sysbench/testdata/1.0.20/prepare.txt"
)

// writeTree writes files (relative path -> fixture or literal text) under a
// new directory and returns it.
func writeTree(t *testing.T, files map[string]any) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "results")
	for rel, content := range files {
		var data []byte
		switch c := content.(type) {
		case fixture:
			b, err := os.ReadFile(string(c))
			if err != nil {
				t.Fatal(err)
			}
			data = b
		case string:
			data = []byte(c)
		default:
			t.Fatalf("%s: content of type %T", rel, content)
		}
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// readDocs reads every document import wrote, by file name without .json.
func readDocs(t *testing.T, dir string) map[string]*results.Document {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[string]*results.Document{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		d, err := results.Unmarshal(data)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		out[strings.TrimSuffix(e.Name(), ".json")] = d
	}
	return out
}

func stepNames(d *results.Document) []string {
	var out []string
	for _, s := range d.Steps {
		out = append(out, fmt.Sprintf("%s@%d", s.Step, s.Threads))
	}
	return out
}

func TestImportStrayFiles(t *testing.T) {
	manyNames := map[string]any{"mariadb-10.11-base/point-query.2.txt": fxPoint2}
	for i := range 2000 {
		manyNames[fmt.Sprintf("mariadb-10.11-base/sb.r.qps.%d.csv", i)] = "1\n"
	}
	cases := []struct {
		name  string
		files map[string]any
		args  []string
		// wantSteps are the documents written and their steps.
		wantSteps map[string][]string
		// want and notWant are substrings of stdout; wantErrLines bounds
		// how many lines stderr may have.
		want, notWant []string
		maxErrLines   int
		// wantErr and wantErr2 are substrings of the error.
		wantErr, wantErr2 string
	}{{
		// A folder of other tools' files sorts before the cell: it once
		// aborted the import before any document was written.
		name: "folder without sysbench output",
		files: map[string]any{
			"cpu-monitor/iostat.1.txt":             iostatText,
			"cpu-monitor/vmstat.1.txt":             vmstatText,
			"mariadb-10.11-base/point-query.2.txt": fxPoint2,
			"mariadb-10.11-base/point-query.4.txt": fxPoint4,
		},
		wantSteps: map[string][]string{"mariadb-10.11-base": {"point-query@2", "point-query@4"}},
		want: []string{
			"note: skipped 2 files that are not sysbench runs: 1 iostat output, 1 vmstat output (-v lists them)",
			"note: cell cpu-monitor: no sysbench run among its 2 files; nothing written",
		},
		maxErrLines: 0,
	}, {
		name: "stray files say what they are",
		files: map[string]any{
			"mariadb-10.11-base/point-query.2.txt": fxPoint2,
			"mariadb-10.11-base/o.vm.dop2":         vmstatText,
			"mariadb-10.11-base/o.io.dop2":         iostatText,
			"mariadb-10.11-base/options.1.txt":     myCnfText,
			"mariadb-10.11-base/notes.1.txt":       readmeText,
			"mariadb-10.11-base/empty.1.txt":       "",
			"mariadb-10.11-base/prepare.1.txt":     fxPrepare,
			"mariadb-10.11-base/insert.2.txt":      fxKilled,
			// FATAL lines alone are still sysbench's: a failed run.
			"mariadb-10.11-base/delete.2.txt": "FATAL: unable to connect to MySQL server on host 'db', port 3306\n",
		},
		wantSteps: map[string][]string{"mariadb-10.11-base": {"point-query@2"}},
		want: []string{
			"note: skipped 6 files that are not sysbench runs: 1 MySQL/MariaDB option file, 1 empty file, 1 iostat output, 1 not benchmark output, 1 sysbench prepare output, 1 vmstat output (-v lists them)",
			// A sysbench run without its final report is what it was,
			// in one line per kind of skip.
			"note: skipped 1 sysbench run without a final report (was it killed?): ",
			"mariadb-10.11-base/insert.2.txt\n",
			"note: skipped 1 sysbench run that failed: ",
			"mariadb-10.11-base/delete.2.txt (sysbench failed, line 1: FATAL: unable to connect to MySQL server on host 'db', port 3306)\n",
		},
		notWant:     []string{"o.vm.dop2: no final report", "o.io.dop2", "options.1.txt", "notes.1.txt"},
		maxErrLines: 0,
	}, {
		name:  "stray files listed with -v",
		files: map[string]any{"mariadb-10.11-base/point-query.2.txt": fxPoint2, "mariadb-10.11-base/o.vm.dop2": vmstatText},
		args:  []string{"-v"},
		want:  []string{"note: skipped 1 file that is not a sysbench run: 1 vmstat output"},
		// The layout, the one detail line and the step's name.
		maxErrLines: 4,
		wantSteps:   map[string][]string{"mariadb-10.11-base": {"point-query@2"}},
	}, {
		name:        "thousands of names that do not match",
		files:       manyNames,
		wantSteps:   map[string][]string{"mariadb-10.11-base": {"point-query@2"}},
		want:        []string{"note: 2000 files whose names do not match the layout were not read, e.g. mariadb-10.11-base/sb.r.qps.0.csv (-v lists them)"},
		maxErrLines: 0,
	}, {
		name:        "names that do not match, listed with -v",
		files:       manyNames,
		args:        []string{"--verbose"},
		wantSteps:   map[string][]string{"mariadb-10.11-base": {"point-query@2"}},
		want:        []string{"note: 2000 files whose names do not match the layout were not read"},
		maxErrLines: 2003,
	}, {
		// A template that drops the range makes two files one step: the
		// error names both.
		name: "two files for one step",
		files: map[string]any{
			"mysql-8.0.40/sb.o.read-only.range10.pk1.dop2":  fxPoint2,
			"mysql-8.0.40/sb.o.read-only.range100.pk1.dop2": fxPoint2,
		},
		args:     []string{"--pattern", `^sb\.o\.(?P<step>[^.]+)\.range(?P<range>[0-9]+)\.pk1\.dop(?P<threads>[0-9]+)$`, "--step-template", "{step}"},
		wantErr:  "sb.o.read-only.range10.pk1.dop2 and ",
		wantErr2: "sb.o.read-only.range100.pk1.dop2 are both step read-only at 2 threads",
	}, {
		name:    "no sysbench run at all",
		files:   map[string]any{"cpu-monitor/vmstat.1.txt": vmstatText},
		wantErr: "no sysbench run imported: 1 file read, 1 not a sysbench run",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, tc.files)
			out := filepath.Join(t.TempDir(), "out")
			stdout, stderr, err := runCmd(t, noCluster{}, append([]string{"import", dir, "--out", out, "--warmup", "1"}, tc.args...)...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), tc.wantErr2) {
					t.Fatalf("error %v, want one containing %q and %q", err, tc.wantErr, tc.wantErr2)
				}
				if docs := readDocs(t, out); len(docs) != 0 {
					t.Errorf("wrote %d documents on error", len(docs))
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\nstderr:\n%s", err, stderr)
			}
			got := map[string][]string{}
			for name, d := range readDocs(t, out) {
				got[name] = stepNames(d)
			}
			if d := cmp.Diff(tc.wantSteps, got); d != "" {
				t.Errorf("documents (-want +got):\n%s\nstdout:\n%s", d, stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(stdout, w) {
					t.Errorf("stdout has %q:\n%s", w, stdout)
				}
			}
			if n := strings.Count(stderr, "\n"); n > tc.maxErrLines {
				t.Errorf("stderr has %d lines, want at most %d:\n%.2000s", n, tc.maxErrLines, stderr)
			}
			if tc.maxErrLines > 0 && !strings.Contains(stderr, filepath.Join(dir, "mariadb-10.11-base")) {
				t.Errorf("stderr names no file:\n%.2000s", stderr)
			}
		})
	}
}

// publishedArgs import testdata/published: one folder per server version,
// sysbench outputs named sb.o.<step>[.pre|.warm].range<N>.pk1.dop<threads>
// beside vmstat, iostat and my.cnf files.
var publishedArgs = []string{
	"--pattern", `^sb\.o\.(?P<step>[^.]+)(?P<suffix>\.pre|\.warm)?\.range(?P<range>[0-9]+)\.pk1\.dop(?P<threads>[0-9]+)$`,
	"--step-template", "{step}_range={range}{suffix}|{step}{suffix}",
	"--rows-per-scan", "1000000", "--warmup", "1",
}

func TestImportPublishedLayout(t *testing.T) {
	out := t.TempDir()
	stdout, stderr, err := runCmd(t, noCluster{}, append([]string{"import", "testdata/published", "--out", out}, publishedArgs...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	docs := readDocs(t, out)
	var cells []string
	for c := range docs {
		cells = append(cells, c)
	}
	sort.Strings(cells)
	if d := cmp.Diff([]string{"mysql-8.0.40", "mysql-8.4.3", "mysql-9.1.0"}, cells); d != "" {
		t.Fatalf("cells (-want +got):\n%s\n%s", d, stdout)
	}
	// Catalog names where the catalog knows the step (the range only where
	// it names the step), the first alternative where it does not.
	want := []string{"point-query.pre@2", "read-write_range=10@2", "scan@2", "read-only_range=10@2",
		"point-query@2", "point-query@4", "read-only_range=100.warm@8"}
	for _, c := range cells {
		if d := cmp.Diff(want, stepNames(docs[c])); d != "" {
			t.Errorf("%s steps (-want +got):\n%s", c, d)
		}
	}
	if !strings.Contains(stdout, "note: 10 files whose names do not match --pattern were not read") {
		t.Errorf("no summary of the other tools' files:\n%s", stdout)
	}
	// scan is rows/s in the catalog: steady scans/s × rows per table.
	raw, err := os.ReadFile("testdata/published/mysql-9.1.0/sb.o.scan.range100.pk1.dop2")
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sysbench.ParseString(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	ss, err := sb.SteadyState(1)
	if err != nil {
		t.Fatal(err)
	}
	scan := docs["mysql-9.1.0"].Steps[2]
	if scan.RowsPerSecond == nil || *scan.RowsPerSecond != ss.QPS*1e6 {
		t.Errorf("scan rows/s %v, want %v (steady %v scans/s × 1e6 rows)", scan.RowsPerSecond, ss.QPS*1e6, ss.QPS)
	}
}

func TestImportScanUnit(t *testing.T) {
	scanFile := "mariadb-10.11-base/scan.2.txt"
	cases := []struct {
		name  string
		files map[string]any
		args  []string
		// rowsPerTable is what the steady scans/s are multiplied by; 0:
		// the scan is not imported.
		rowsPerTable float64
		want         string
	}{
		{name: "flag", files: map[string]any{scanFile: fxPoint2}, args: []string{"--rows-per-scan", "250000"}, rowsPerTable: 250000},
		{name: "prepare output beside it", files: map[string]any{scanFile: fxPoint2, "mariadb-10.11-base/prepare.0.txt": fxPrepare}, rowsPerTable: 10000},
		{name: "the script's own count", files: map[string]any{scanFile: "dbbench scan: 5000 rows per table\n" + mustRead(t, fxPoint2)},
			args: []string{"--rows-per-scan", "250000"}, rowsPerTable: 5000},
		{name: "no row count", files: map[string]any{scanFile: fxPoint2, "mariadb-10.11-base/point-query.2.txt": fxPoint2},
			want: "note: skipped 1 sysbench run reported in rows/s with no row count (no --table-size on its command line, no prepare output; give --rows-per-scan, the rows per table): "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, tc.files)
			out := t.TempDir()
			stdout, stderr, err := runCmd(t, noCluster{}, append([]string{"import", dir, "--out", out, "--warmup", "1"}, tc.args...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			d := readDocs(t, out)["mariadb-10.11-base"]
			if d == nil {
				t.Fatalf("no document:\n%s", stdout)
			}
			var scan *results.StepResult
			for i := range d.Steps {
				if d.Steps[i].Step == "scan" {
					scan = &d.Steps[i]
				}
			}
			if tc.rowsPerTable == 0 {
				if scan != nil {
					t.Errorf("scan imported without a row count: %+v", scan)
				}
				if !strings.Contains(stdout, tc.want) {
					t.Errorf("stdout lacks %q:\n%s", tc.want, stdout)
				}
				return
			}
			if scan == nil || scan.RowsPerSecond == nil {
				t.Fatalf("scan %+v: no rows/s\n%s", scan, stdout)
			}
			if want := scan.SteadyQPS * tc.rowsPerTable; *scan.RowsPerSecond != want {
				t.Errorf("rows/s %v, want %v", *scan.RowsPerSecond, want)
			}
		})
	}
}

func mustRead(t *testing.T, f fixture) string {
	t.Helper()
	b, err := os.ReadFile(string(f))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestImportValidate(t *testing.T) {
	dir := writeTree(t, map[string]any{"mariadb-10.11-base/point-query.2.txt": fxPoint2})
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--step-template", "{step}_range={size}"}, `--step-template "{step}_range={size}": {size} is not a named group of the pattern of the layout <step>[.<threads>][.txt|.log|.out] (groups: step, threads)`},
		{[]string{"--pattern", `^(?P<step>.+)\.(?P<threads>[0-9]+)\.txt$`, "--step-template", "{step}_range={size}"},
			`--step-template "{step}_range={size}": {size} is not a named group of --pattern (groups: step, threads)`},
		{[]string{"--step-template", "{step}|"}, `--step-template "{step}|": alternative 2 is empty`},
		{[]string{"--rows-per-scan", "-1"}, "--rows-per-scan -1: must not be negative"},
	}
	for _, tc := range cases {
		_, _, err := runCmd(t, noCluster{}, append([]string{"import", dir, "--out", t.TempDir()}, tc.args...)...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// FuzzIdentify: identify reads any bytes without panicking, and whatever
// it says of a file is one of its kinds.
func FuzzIdentify(f *testing.F) {
	for _, s := range []string{vmstatText, iostatText, myCnfText, readmeText, "", "\x00\x01", "shared_buffers = 1GB\n"} {
		f.Add([]byte(s))
	}
	known := map[fileKind]bool{kindVmstat: true, kindIostat: true, kindMpstat: true, kindMyCnf: true, kindPgConf: true,
		kindEmpty: true, kindBinary: true, kindUnknown: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		if k := identify(data); !known[k] {
			t.Fatalf("identify(%q) = %q, not a known kind", data, k)
		}
	})
}

func TestIdentify(t *testing.T) {
	cases := []struct {
		text string
		want fileKind
	}{
		{vmstatText, kindVmstat},
		{iostatText, kindIostat},
		{"Linux 6.1.0 (bench1) \t11/20/2024 \t_x86_64_\t(8 CPU)\n\n10:00:01 AM  CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle\n", kindMpstat},
		{myCnfText, kindMyCnf},
		{"[mariadb-11.4]\ninnodb_buffer_pool_size=1G\n", kindMyCnf},
		{"# postgresql.conf\nshared_buffers = 8GB\n", kindPgConf},
		{" \n\t\n", kindEmpty},
		{"PK\x03\x04\x00\x00", kindBinary},
		{readmeText, kindUnknown},
	}
	for _, tc := range cases {
		if got := identify([]byte(tc.text)); got != tc.want {
			t.Errorf("identify(%.40q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
