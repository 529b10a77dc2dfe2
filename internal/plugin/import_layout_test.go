package plugin

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
)

// fxStudyPoint is one run of testdata/study: the scripts' layout, with the
// command line and CPU count before sysbench 1.1's output.
const fxStudyPoint fixture = "testdata/study/mysql-8.0.40/sb.o.point-query.range100.pk1.dop1"

// studySteps are the steps of each testdata/study cell as imported with no
// flags: catalog names, the suffix after the range where the catalog names
// one, catalog order, then the warm-ups by name.
var studySteps = []string{"point-query.pre@1", "update-index@1", "read-write_range=10@1", "read-write_range=100@1", "scan@1",
	"read-only_range=10@1", "read-only_range=10000@1", "point-query@1", "random-points_range=1000@1", "points-covered-si@1", "insert@1",
	"point-query.warm@8", "points-covered-si.warm@1", "scan.warm@1", "scan.warmpre@1"}

// TestImportStudyNoFlags: the scripts' layout imports with no flag to the
// catalog's step names, every suffix kept, scan and its warm-ups in rows/s
// from the command line's --table-size, and nothing on stderr.
func TestImportStudyNoFlags(t *testing.T) {
	out := t.TempDir()
	stdout, stderr, err := runCmd(t, noCluster{}, "import", "testdata/study", "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr:\n%s", stderr)
	}
	docs := readDocs(t, out)
	var cells []string
	for c := range docs {
		cells = append(cells, c)
	}
	sort.Strings(cells)
	if d := cmp.Diff([]string{"mysql-8.0.40", "mysql-8.4.3"}, cells); d != "" {
		t.Fatalf("cells (-want +got):\n%s\n%s", d, stdout)
	}
	for _, c := range cells {
		if d := cmp.Diff(studySteps, stepNames(docs[c])); d != "" {
			t.Errorf("%s steps (-want +got):\n%s", c, d)
		}
	}
	checkContains(t, "stdout", stdout, stdout, []string{
		"note: layout: sb.o.<step>[.pre|.warm|.warmpre].range<N>.pk<0|1>[.dop<threads>], the published sysbench studies' scripts (30 of 51 files; -v shows each step's name)",
		"note: 21 files whose names do not match the layout were not read, e.g. README.md (-v lists them)",
	})
	if strings.Contains(stdout, "step catalog") {
		t.Errorf("a note on unknown steps:\n%s", stdout)
	}
	d := docs["mysql-8.4.3"]
	if d.Cell.Engine != "mysql" || d.Cell.Version != "8.4.3" || d.Provenance.SysbenchVersion != "1.1.0-2ca9e3f" {
		t.Errorf("cell %+v, sysbench %q", d.Cell, d.Provenance.SysbenchVersion)
	}
	for _, s := range d.Steps {
		isScan := strings.HasPrefix(s.Step, "scan")
		if got := s.RowsPerSecond != nil; got != isScan {
			t.Errorf("%s: rows/s set = %v", s.Step, got)
			continue
		}
		raw := mustRead(t, fixture(filepath.Join("testdata/study/mysql-8.4.3", studyFile(s))))
		sb, err := sysbench.ParseString(raw)
		if err != nil {
			t.Fatal(err)
		}
		// No interval lines: the final queries/s, and the command line
		// stored with its password redacted.
		if s.SteadyQPS != sb.Final.SQL.QueriesPerSec || len(s.Command) == 0 || strings.Contains(strings.Join(s.Command, " "), "=pw") {
			t.Errorf("%s: steady %v, want %v; command %q", s.Step, s.SteadyQPS, sb.Final.SQL.QueriesPerSec, s.Command)
		}
		if isScan && *s.RowsPerSecond != s.SteadyQPS*1e6 {
			t.Errorf("%s: rows/s %v, want %v (scans/s × --table-size=1000000)", s.Step, *s.RowsPerSecond, s.SteadyQPS*1e6)
		}
	}
}

// studyFile is the file of testdata/study that holds step s.
func studyFile(s results.StepResult) string {
	name, suffix := s.Step, ""
	for _, x := range []string{".warmpre", ".warm", ".pre"} {
		if b, ok := strings.CutSuffix(name, x); ok {
			name, suffix = b, x
			break
		}
	}
	rng := "100"
	if b, r, ok := strings.Cut(name, "_range="); ok {
		name, rng = b, r
	} else if name == "random-points" {
		rng = "1000"
	}
	return "sb.o." + name + suffix + ".range" + rng + ".pk1.dop" + map[bool]string{true: "8", false: "1"}[s.Threads == 8]
}

// TestImportVerboseLayout: -v says which layout was recognised and what
// each step was named, once per step.
func TestImportVerboseLayout(t *testing.T) {
	_, stderr, err := runCmd(t, noCluster{}, "import", "testdata/study", "--out", t.TempDir(), "-v")
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, "stderr", stderr, stderr, []string{
		"layout: sb.o.<step>[.pre|.warm|.warmpre].range<N>.pk<0|1>[.dop<threads>], the published sysbench studies' scripts (30 of 51 files)\n",
		"step names:\n  sb.o.insert.range100.pk1.dop* -> insert\n",
		"  sb.o.point-query.warm.range100.pk1.dop* -> point-query.warm\n",
		"  sb.o.read-only.range10000.pk1.dop* -> read-only_range=10000\n",
		"  sb.o.scan.warmpre.range100.pk1.dop* -> scan.warmpre\n",
	})
	if n := strings.Count(stderr, "-> point-query.pre\n"); n != 1 {
		t.Errorf("point-query.pre named %d times:\n%s", n, stderr)
	}
}

// TestImportNamingRule: one naming rule for suffixed steps whatever names
// them (no flag, --step-template alone, the documented --pattern and
// --step-template): the range only where the catalog names the step, the
// suffix kept, and a step's .warm copy in the step's unit.
func TestImportNamingRule(t *testing.T) {
	files := map[string]any{
		"mysql-8.0.40/sb.o.point-query.warm.range100.pk1.dop8": fxPoint2,
		"mysql-8.0.40/sb.o.point-query.pre.range100.pk1.dop2":  fxPoint2,
		"mysql-8.0.40/sb.o.read-only.warm.range100.pk1.dop8":   fxPoint2,
		"mysql-8.0.40/sb.o.scan.warm.range100.pk1.dop2":        fxPoint2,
		"mysql-8.0.40/sb.o.scan.range100.pk1.dop2":             fxPoint2,
	}
	template := "{step}_range={range}{suffix}|{step}{suffix}"
	cases := []struct {
		name string
		args []string
	}{
		{"no flag", nil},
		{"--step-template alone", []string{"--step-template", template}},
		{"documented flags", []string{"--pattern", `^sb\.o\.(?P<step>[^.]+)(?P<suffix>\.pre|\.warm)?\.range(?P<range>[0-9]+)\.pk1\.dop(?P<threads>[0-9]+)$`,
			"--step-template", template}},
	}
	want := []string{"point-query.pre@2", "scan@2", "point-query.warm@8", "read-only_range=100.warm@8", "scan.warm@2"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, files)
			out := t.TempDir()
			stdout, stderr, err := runCmd(t, noCluster{}, append([]string{"import", dir, "--out", out, "--warmup", "1", "--rows-per-scan", "1000000"}, tc.args...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			d := readDocs(t, out)["mysql-8.0.40"]
			if d == nil {
				t.Fatalf("no document:\n%s", stdout)
			}
			if diff := cmp.Diff(want, stepNames(d)); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			for _, s := range d.Steps {
				if strings.HasPrefix(s.Step, "scan") && (s.RowsPerSecond == nil || *s.RowsPerSecond != s.SteadyQPS*1e6) {
					t.Errorf("%s: rows/s %v, want %v", s.Step, s.RowsPerSecond, s.SteadyQPS*1e6)
				}
			}
		})
	}
}

// TestImportThreadsFromFile: a name without the thread count takes it from
// the file: the command line's --threads, else sysbench's "Number of
// threads:".
func TestImportThreadsFromFile(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]any
		cell  string
		want  []string
	}{
		{"step and extension", map[string]any{"mariadb-10.11-base/point-query.txt": fxPoint2}, "mariadb-10.11-base", []string{"point-query@2"}},
		{"scripts' layout without .dop", map[string]any{"mysql-8.0.40/sb.o.point-query.range100.pk1": fxStudyPoint,
			"mysql-8.0.40/sb.o.point-query.range100.pk1.dop8": fxPoint4}, "mysql-8.0.40", []string{"point-query@1", "point-query@8"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, tc.files)
			out := t.TempDir()
			stdout, stderr, err := runCmd(t, noCluster{}, "import", dir, "--out", out, "--warmup", "1")
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			d := readDocs(t, out)[tc.cell]
			if d == nil {
				t.Fatalf("no document:\n%s", stdout)
			}
			if diff := cmp.Diff(tc.want, stepNames(d)); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}
}

// TestImportSkipSummaries: one summary line per kind of skip, whatever the
// number of folders, and a note when the names are not catalog steps.
func TestImportSkipSummaries(t *testing.T) {
	cases := []struct {
		name          string
		dir           string
		files         map[string]any
		args          []string
		want, notWant []string
		// lines is how many stdout lines contain its key.
		lines map[string]int
	}{{
		name: "scan without a row count in three folders",
		dir:  "testdata/published",
		args: []string{"--pattern", `^sb\.o\.(?P<step>[^.]+)(?P<suffix>\.pre|\.warm)?\.range(?P<range>[0-9]+)\.pk1\.dop(?P<threads>[0-9]+)$`,
			"--step-template", "{step}_range={range}{suffix}|{step}{suffix}"},
		want: []string{"note: skipped 3 sysbench runs reported in rows/s with no row count (no --table-size on their command line, no prepare output; give --rows-per-scan, the rows per table): " +
			"testdata/published/mysql-8.0.40/sb.o.scan.range100.pk1.dop2, testdata/published/mysql-8.4.3/sb.o.scan.range100.pk1.dop2, testdata/published/mysql-9.1.0/sb.o.scan.range100.pk1.dop2\n"},
		lines: map[string]int{"row count": 1},
	}, {
		name:  "no catalog step",
		files: map[string]any{"mysql-8.0.40/oltp_point_select.2.txt": fxPoint2, "mysql-8.0.40/oltp_read_only.2.txt": fxPoint2},
		want: []string{"note: none of the 2 step names is in the step catalog: oltp_point_select, oltp_read_only; reports will not group them " +
			"(rename them with --step-map old=new, or build them with --pattern and --step-template)\n"},
	}, {
		name: "some steps not in the catalog",
		files: map[string]any{"mysql-8.0.40/oltp_point_select.2.txt": fxPoint2, "mysql-8.0.40/point-query.2.txt": fxPoint2,
			"mysql-8.0.40/scan.warm.2.txt": "dbbench scan: 10 rows per table\n" + mustRead(t, fxPoint2)},
		want: []string{"note: 1 of 3 step names is not in the step catalog: oltp_point_select; reports will not group it"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir
			if dir == "" {
				dir = writeTree(t, tc.files)
			}
			stdout, stderr, err := runCmd(t, noCluster{}, append([]string{"import", dir, "--out", t.TempDir(), "--warmup", "1"}, tc.args...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			if stderr != "" {
				t.Errorf("stderr:\n%s", stderr)
			}
			checkContains(t, "stdout", stdout, stdout, tc.want)
			for key, n := range tc.lines {
				if got := strings.Count(stdout, key); got != n {
					t.Errorf("%d lines with %q, want %d:\n%s", got, key, n, stdout)
				}
			}
		})
	}
}
