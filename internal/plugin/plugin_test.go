package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/agentapi"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// doc builds a valid full document; qps maps "step@threads" to QPS.
func doc(run, suite, cell, version string, start time.Time, qps map[string]float64, order ...string) *results.Document {
	d := &results.Document{SchemaVersion: results.SchemaV1, Form: results.FormFull,
		Run:       results.Run{Name: run, Namespace: "bench", Suite: suite},
		Cell:      results.Cell{Name: cell, Database: "mariadb", Engine: "mariadb", Version: version, Config: "base", Attempt: 1},
		StartedAt: start, Status: results.Status{Outcome: results.OutcomeSucceeded}}
	for _, k := range order {
		step, th, _ := strings.Cut(k, "@")
		threads, err := strconv.Atoi(th)
		if err != nil {
			panic(fmt.Sprintf("test data: threads %q: %v", th, err))
		}
		q := qps[k]
		d.Steps = append(d.Steps, results.StepResult{Step: step, Threads: threads, DurationSeconds: 60,
			SteadyQPS: q, SteadyTPS: q, FinalQPS: q, LatencyAvgMs: 1, LatencyMaxMs: 3})
	}
	return d
}

func writeDocs(t *testing.T, dir string, docs ...*results.Document) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		b, err := results.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d.Cell.Name+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// twoCells is a small run: 10.11 is the base, 11.4 is faster on points,
// lacks insert, and update-one's base is 0.
func twoCells(run, suite string, start time.Time, scale float64) []*results.Document {
	steps := []string{"update-one@1", "point-query@1", "insert@1"}
	a := doc(run, suite, "mariadb-10-11-base", "10.11", start, map[string]float64{"update-one@1": 0, "point-query@1": 1000, "insert@1": 400}, steps...)
	b := doc(run, suite, "mariadb-11-4-base", "11.4", start.Add(time.Hour), map[string]float64{"update-one@1": 50, "point-query@1": 1234 * scale}, steps[:2]...)
	return []*results.Document{a, b}
}

func runCmd(t *testing.T, clients Clients, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewCmdDBBenchWithClients(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, clients)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// checkContains fails the test for every string of wants that text lacks,
// showing shown (the output as the command printed it) and naming what
// printed it.
func checkContains(t *testing.T, what, text, shown string, wants []string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, shown)
		}
	}
}

type noCluster struct{}

func (noCluster) Cluster() (*Cluster, error) {
	return nil, fmt.Errorf("no cluster in this test")
}

const wantReport = `Relative throughput: QPS(cell) / QPS(mariadb-10-11-base), 1 threads (> 1 is faster)
step         base qps  mariadb-11-4-base
update-one   0.00      inf
point-query  1000.00   1.23
insert       400.00    missing
note: mariadb-11-4-base has no result for insert (shown as missing)
note: one run per cell: the ratios have no confidence interval (repeat the cells for 95 % intervals; docs/noise.md)

Group statistics of QPS(mariadb-11-4-base) / QPS(mariadb-10-11-base), 1 threads
         point  range, part 1  range, part 2  writes
average  1.23   n/a            n/a            inf
median   1.23   n/a            n/a            inf
min      1.23   n/a            n/a            inf
max      1.23   n/a            n/a            inf
stddev   n/a    n/a            n/a            n/a
steps    1      0              0              1
note: stddev is the stddev (sample, n-1)
note: writes: 1 step(s) missing, left out of the statistics
`

func TestReportFromDir(t *testing.T) {
	dir := t.TempDir()
	writeDocs(t, dir, twoCells("nightly-1", "nightly", t0, 1)...)
	out, _, err := runCmd(t, noCluster{}, "report", "--from-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(wantReport, out); d != "" {
		t.Errorf("report (-want +got):\n%s", d)
	}
	// Markdown and CSV carry the same cells.
	md, _, err := runCmd(t, noCluster{}, "report", "--from-dir", dir, "-o", "markdown")
	if err != nil || !strings.Contains(md, "| point-query | 1000.00 | 1.23 |") || !strings.Contains(md, "| insert | 400.00 | missing |") {
		t.Errorf("markdown: %v\n%s", err, md)
	}
	csv, _, err := runCmd(t, noCluster{}, "report", "--from-dir", dir, "-o", "csv")
	if err != nil || !strings.Contains(csv, "relative.t1,update-one,0.00,inf\n") {
		t.Errorf("csv: %v\n%s", err, csv)
	}
	js, _, err := runCmd(t, noCluster{}, "report", "--from-dir", dir, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Relative []struct {
			Ratios [][]any `json:"ratios"`
		} `json:"relative"`
	}
	if err := json.Unmarshal([]byte(js), &parsed); err != nil {
		t.Fatalf("json: %v\n%s", err, js)
	}
	if d := cmp.Diff([][]any{{"inf"}, {1.234}, {nil}}, parsed.Relative[0].Ratios); d != "" {
		t.Errorf("json ratios (-want +got):\n%s", d)
	}
	// --base flips the division; an unknown base is a clear error.
	out, _, err = runCmd(t, noCluster{}, "report", "--from-dir", dir, "--base", "mariadb-11-4-base")
	if err != nil || !strings.Contains(out, "update-one   50.00     0.00") {
		t.Errorf("--base: %v\n%s", err, out)
	}
	_, _, err = runCmd(t, noCluster{}, "report", "--from-dir", dir, "--base", "mysql-9")
	if err == nil || !strings.Contains(err.Error(), `base "mysql-9": no such cell`) {
		t.Errorf("unknown base: %v", err)
	}
}

func TestReportHTMLAndGroups(t *testing.T) {
	dir := t.TempDir()
	writeDocs(t, dir, twoCells("nightly-1", "nightly", t0, 1)...)
	groups := filepath.Join(dir, "groups.txt")
	if err := os.WriteFile(groups, []byte("all points: point-*\nwrites: update-*, insert\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	out, errOut, err := runCmd(t, noCluster{}, "report", "--from-dir", dir, "--groups", groups, "--stddev", "population", "--html", html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "         all points  writes\n") || !strings.Contains(out, "stddev is the stddev (pop, n)") {
		t.Errorf("custom groups:\n%s", out)
	}
	page, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(page), `class="chart bars"`) || !strings.Contains(errOut, "wrote "+html) {
		t.Errorf("html: %v, stderr %q", err, errOut)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	writeDocs(t, dir, twoCells("r", "s", t0, 1)...)
	if err := os.WriteFile(filepath.Join(dir, "future.json"), []byte(`{"schemaVersion":"dbbench.io/results/v2"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCmd(t, noCluster{}, "report", "--from-dir", dir)
	if err == nil || !strings.Contains(err.Error(), "future.json") || !strings.Contains(err.Error(), `"dbbench.io/results/v2" is not "dbbench.io/results/v1"`) {
		t.Errorf("unknown schema version: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "a run name is required"},
		{[]string{"report", "--from-dir", dir, "-o", "yaml"}, `output format "yaml"`},
		{[]string{"report", "--from-dir", dir, "--stddev", "robust"}, "--stddev"},
		{[]string{"report", "--from-dir", t.TempDir()}, "no results documents"},
		{[]string{"compare", "a", "a", "--from-dir", dir}, "compare two different runs"},
		{[]string{"report", "x"}, "no cluster in this test"},
		{[]string{"import", dir}, "--out is required"},
	} {
		_, _, err := runCmd(t, noCluster{}, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestCompareFromDir(t *testing.T) {
	root := t.TempDir()
	writeDocs(t, filepath.Join(root, "before"), twoCells("before", "s", t0, 1)...)
	writeDocs(t, filepath.Join(root, "after"), twoCells("after", "s", t0.Add(24*time.Hour), 0.9)...)
	out, _, err := runCmd(t, noCluster{}, "compare", "before", "after", "--from-dir", root)
	if err != nil {
		t.Fatal(err)
	}
	want := `after vs before: QPS(after) / QPS(before) per cell, 1 threads (> 1: after is faster)
step         mariadb-10-11-base  mariadb-11-4-base
update-one   1                   1.00
point-query  1.00                0.90
insert       1.00                missing
note: before/mariadb-11-4-base has no result for insert (shown as missing)
`
	if !strings.HasPrefix(out, want) {
		t.Errorf("compare (-want +got):\n%s", cmp.Diff(want, out[:min(len(out), len(want)+200)]))
	}
	if !strings.Contains(out, "QPS(cell) / QPS(before/mariadb-10-11-base)") || !strings.Contains(out, "after/mariadb-11-4-base") {
		t.Errorf("merged report missing:\n%s", out)
	}
}

func TestHistoryFromDir(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 12; i++ {
		scale := 1.0
		if i >= 6 {
			scale = 0.8
		}
		name := fmt.Sprintf("nightly-%02d", i)
		docs := twoCells(name, "nightly", t0.Add(time.Duration(i)*24*time.Hour), scale*(1+0.002*float64(i%3)))
		writeDocs(t, filepath.Join(root, name), docs...)
	}
	writeDocs(t, filepath.Join(root, "other"), twoCells("other", "weekly", t0, 1)...)
	out, _, err := runCmd(t, noCluster{}, "history", "nightly", "--from-dir", root)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "History of 12 runs") || !strings.Contains(out, "mariadb-11.4-base  point-query  1        throughput  nightly-06") {
		t.Errorf("history:\n%s", out)
	}
	_, _, err = runCmd(t, noCluster{}, "history", "monthly", "--from-dir", root)
	if err == nil || !strings.Contains(err.Error(), `suites found: "nightly", "weekly"`) {
		t.Errorf("unknown suite: %v", err)
	}
}

// TestHistoryLatencyFromDir: with --metrics, p99 latency gets its own
// series; a rise from run 6 (QPS flat) is a regression, and throughput has
// no change point.
func TestHistoryLatencyFromDir(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 12; i++ {
		name := fmt.Sprintf("nightly-%02d", i)
		docs := twoCells(name, "nightly", t0.Add(time.Duration(i)*24*time.Hour), 1+0.002*float64(i%3))
		for _, d := range docs {
			for j := range d.Steps {
				p99 := 4 * (1 + 0.01*float64(i%3))
				if i >= 6 {
					p99 *= 1.5
				}
				d.Steps[j].LatencyP99Ms = &p99
			}
		}
		writeDocs(t, filepath.Join(root, name), docs...)
	}
	out, _, err := runCmd(t, noCluster{}, "history", "nightly", "--from-dir", root, "--metrics", "Throughput,P99Latency")
	if err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "confirmed") {
			changes = append(changes, strings.Join(strings.Fields(line), " "))
		}
	}
	// Every (cell, step) with a p99 changes at nightly-06, +50 %: insert of
	// one cell, point-query and update-one of both.
	if len(changes) != 5 {
		t.Fatalf("change rows %q, want 5:\n%s", changes, out)
	}
	for _, c := range changes {
		if !strings.Contains(c, "p99 latency nightly-06 confirmed") || !strings.HasSuffix(c, "regression") || !strings.Contains(c, "+50.") {
			t.Errorf("change row %q: want a confirmed p99 regression of +50 %% at nightly-06", c)
		}
	}
	if !strings.Contains(out, "latency is lower-is-better: a rise is a regression") {
		t.Errorf("no lower-is-better note:\n%s", out)
	}
	_, _, err = runCmd(t, noCluster{}, "history", "nightly", "--from-dir", root, "--metrics", "P50Latency")
	if err == nil || !strings.Contains(err.Error(), "--metrics") {
		t.Errorf("unknown metric: %v, want an error naming --metrics", err)
	}
}

func TestImport(t *testing.T) {
	out := t.TempDir()
	stdout, stderr, err := runCmd(t, noCluster{}, "import", "testdata/sysbench", "--out", out, "--warmup", "1",
		"--step-map", "oltp_point_select=point-query", "--run", "old-logs", "--suite", "archive")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	want := fmt.Sprintf(`Imported testdata/sysbench into %[1]s
cell                engine   version  config  steps  skipped  sysbench       file
mariadb-10.11-base  mariadb  10.11    base    4      0        1.0.20         %[1]s/mariadb-10.11-base.json
mysql-8.0-base      mysql    8.0      base    3      1        1.1.0-df89d34  %[1]s/mysql-8.0-base.json
note: layout: <step>[.<threads>][.txt|.log|.out] (8 files; -v shows each step's name)
note: skipped 1 sysbench run without a final report (was it killed?): testdata/sysbench/mysql-8.0-base/insert.2.txt
`, out)
	if d := cmp.Diff(want, stdout); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
	data, err := os.ReadFile(filepath.Join(out, "mariadb-10.11-base.json"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := results.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range d.Steps {
		names = append(names, fmt.Sprintf("%s@%d", s.Step, s.Threads))
	}
	if diff := cmp.Diff([]string{"read-write_range=10@2", "read-only_range=10@2", "point-query@2", "point-query@4"}, names); diff != "" {
		t.Errorf("steps in catalog order (-want +got):\n%s", diff)
	}
	// The steady QPS is sysbench's steady state after the warm-up, computed
	// independently here from the same file.
	raw, _ := os.ReadFile("testdata/sysbench/mariadb-10.11-base/point-query.4.txt")
	sb, err := sysbench.ParseString(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	ss, _ := sb.SteadyState(1)
	p := d.Steps[3]
	if p.SteadyQPS != ss.QPS || p.FinalQPS != sb.Final.SQL.QueriesPerSec || len(p.Series.QPS) != 9 || p.WarmupSeconds != 1 {
		t.Errorf("point-query@4: steady %v (want %v), final %v, %d samples", p.SteadyQPS, ss.QPS, p.FinalQPS, len(p.Series.QPS))
	}
	if d.Run.Name != "old-logs" || d.Run.Suite != "archive" || d.Provenance.SysbenchVersion != "1.0.20" {
		t.Errorf("run %+v, sysbench %q", d.Run, d.Provenance.SysbenchVersion)
	}
	// The imported documents feed the reports.
	rep, _, err := runCmd(t, noCluster{}, "report", "--from-dir", out)
	if err != nil || !strings.Contains(rep, "Relative throughput: QPS(cell) / QPS(mariadb-10.11-base), 4 threads") {
		t.Errorf("report of imported documents: %v\n%s", err, rep)
	}
}

// fakeCluster serves runs and ConfigMaps from fake clients.
type fakeCluster struct{ c *Cluster }

func (f fakeCluster) Cluster() (*Cluster, error) { return f.c, nil }

// runObj is a BenchmarkRun as the API server sends it, written out by hand
// so that the plugin's decoding is tested against the wire form.
func runObj(name, suite string, created time.Time, phase string, cells []dbbenchv1alpha1.CellStatus) *unstructured.Unstructured {
	cs := make([]any, len(cells))
	for i, c := range cells {
		b, _ := json.Marshal(c)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		cs[i] = m
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "dbbench.io/v1alpha1", "kind": "BenchmarkRun",
		"metadata": map[string]any{"name": name, "namespace": "bench", "creationTimestamp": created.Format(time.RFC3339)},
		"spec":     map[string]any{"suite": suite},
		"status": map[string]any{"phase": phase, "progress": fmt.Sprintf("%d/%d", len(cells), len(cells)), "cells": cs,
			"startTime": created.Format(time.RFC3339)},
	}}
}

func newFakeCluster(t *testing.T, runs []*unstructured.Unstructured, cms []*corev1.ConfigMap) Clients {
	t.Helper()
	scheme := runtime.NewScheme()
	objs := make([]runtime.Object, len(runs))
	for i, r := range runs {
		objs[i] = r
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{RunGVR: "BenchmarkRunList"}, objs...)
	core := fake.NewClientset()
	for _, cm := range cms {
		if _, err := core.CoreV1().ConfigMaps("bench").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return fakeCluster{&Cluster{Dynamic: dyn, Core: core, Namespace: "bench"}}
}

func cellCMs(t *testing.T, run string, docs []*results.Document) ([]dbbenchv1alpha1.CellStatus, []*corev1.ConfigMap) {
	var cells []dbbenchv1alpha1.CellStatus
	var cms []*corev1.ConfigMap
	for _, d := range docs {
		b, err := results.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		name := run + "-" + d.Cell.Name + "-results"
		cells = append(cells, dbbenchv1alpha1.CellStatus{Name: d.Cell.Name, Phase: dbbenchv1alpha1.CellSucceeded, StepsDone: int32(len(d.Steps)), StepsTotal: int32(len(d.Steps)), ResultConfigMap: name})
		cms = append(cms, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench"}, Data: map[string]string{agentapi.ResultKeyDocument: string(b)}})
	}
	return cells, cms
}

func TestClusterReportMatchesLocal(t *testing.T) {
	cells, cms := cellCMs(t, "nightly-1", twoCells("nightly-1", "nightly", t0, 1))
	clients := newFakeCluster(t, []*unstructured.Unstructured{runObj("nightly-1", "nightly", t0, "Succeeded", cells)}, cms)
	out, _, err := runCmd(t, clients, "report", "nightly-1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(wantReport, out); d != "" {
		t.Errorf("cluster report (-want +got):\n%s", d)
	}
	_, _, err = runCmd(t, clients, "report", "nightly-2")
	if err == nil || !strings.Contains(err.Error(), `benchmarkrun "nightly-2" not found in namespace "bench"`) {
		t.Errorf("missing run: %v", err)
	}
}

func TestClusterManifestFallback(t *testing.T) {
	m := &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: results.Run{Name: "r"}, UpdatedAt: t0, Baseline: "b",
		Cells: []results.ManifestCell{
			{Cell: results.Cell{Name: "a", Engine: "mysql", Version: "8.0", Attempt: 1}, Phase: "Succeeded", QPS: map[string]map[int]float64{"point-query": {1: 200}}},
			{Cell: results.Cell{Name: "b", Engine: "mysql", Version: "8.4", Attempt: 1}, Phase: "Succeeded", QPS: map[string]map[int]float64{"point-query": {1: 100}}},
		}}
	b, err := results.MarshalManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	cms := []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Name: "r-results", Namespace: "bench"}, Data: map[string]string{agentapi.RunResultKeyManifest: string(b)}}}
	clients := newFakeCluster(t, []*unstructured.Unstructured{runObj("r", "", t0, "Succeeded", []dbbenchv1alpha1.CellStatus{{Name: "a", Phase: dbbenchv1alpha1.CellSucceeded}, {Name: "b", Phase: dbbenchv1alpha1.CellSucceeded}})}, cms)
	out, _, err := runCmd(t, clients, "report", "r")
	if err != nil {
		t.Fatal(err)
	}
	// The manifest's baseline (b) is the base.
	if !strings.Contains(out, "QPS(cell) / QPS(b)") || !strings.Contains(out, "point-query  100.00    2.00") {
		t.Errorf("manifest report:\n%s", out)
	}
}

func TestClusterHistory(t *testing.T) {
	var runs []*unstructured.Unstructured
	var cms []*corev1.ConfigMap
	for i := 0; i < 10; i++ {
		name := fmt.Sprintf("n-%02d", i)
		scale := 1.0
		if i >= 5 {
			scale = 1.25
		}
		cells, c := cellCMs(t, name, twoCells(name, "nightly", t0.Add(time.Duration(i)*time.Hour), scale))
		runs = append(runs, runObj(name, "nightly", t0.Add(time.Duration(i)*time.Hour), "Succeeded", cells))
		cms = append(cms, c...)
	}
	runs = append(runs, runObj("x", "weekly", t0, "Succeeded", nil))
	clients := newFakeCluster(t, runs, cms)
	out, _, err := runCmd(t, clients, "history", "nightly", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Runs   []string `json:"runs"`
		Series []struct {
			Step         string `json:"step"`
			Combination  string `json:"combination"`
			ChangePoints []struct {
				Run           string  `json:"run"`
				ChangePercent float64 `json:"changePercent"`
			} `json:"changePoints"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(h.Runs) != 10 {
		t.Fatalf("runs %v", h.Runs)
	}
	found := false
	for _, s := range h.Series {
		if s.Step == "point-query" && s.Combination == "mariadb-11.4-base" {
			found = len(s.ChangePoints) == 1 && s.ChangePoints[0].Run == "n-05" && s.ChangePoints[0].ChangePercent > 24
		}
	}
	if !found {
		t.Errorf("no +25 %% change point at n-05:\n%s", out)
	}
}

func TestWatchOnce(t *testing.T) {
	cells := []dbbenchv1alpha1.CellStatus{
		{Name: "mariadb-10-11-base", Phase: dbbenchv1alpha1.CellSucceeded, StepsDone: 32, StepsTotal: 32},
		{Name: "mariadb-11-4-base", Phase: dbbenchv1alpha1.CellRunning, StepsDone: 8, StepsTotal: 32, CurrentStep: "point-query", Attempts: 2},
		{Name: "mysql-8-0-base", Phase: dbbenchv1alpha1.CellPending},
	}
	run := runObj("nightly-3", "nightly", t0, "Running", cells)
	_ = unstructured.SetNestedField(run.Object, "1/3", "status", "progress")
	_ = unstructured.SetNestedField(run.Object, "point-query", "status", "currentStep")
	clients := newFakeCluster(t, []*unstructured.Unstructured{run}, nil)
	out, _, err := runCmd(t, clients, "watch", "nightly-3", "--once", "--bar-width", "10")
	if err != nil {
		t.Fatal(err)
	}
	want := `run nightly-3: Running, 1/3 cells done, step point-query
  mariadb-10-11-base  Succeeded [##########] 100%  32/32
  mariadb-11-4-base   Running   [###.......]  25%  8/32  point-query  (attempt 2)
  mysql-8-0-base      Pending   [..........]   0%  0/0
`
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("watch (-want +got):\n%s", d)
	}
}

// A finished run's regressed pairs are listed with every metric they
// regressed on, latency with its unit.
func TestWatchRegressed(t *testing.T) {
	run := runObj("nightly-4", "nightly", t0, "Succeeded", []dbbenchv1alpha1.CellStatus{
		{Name: "mariadb-11-4-base", Phase: dbbenchv1alpha1.CellSucceeded, StepsDone: 2, StepsTotal: 2}})
	_ = unstructured.SetNestedField(run.Object, "1/1", "status", "progress")
	reg := map[string]any{
		"comparedTo": []any{"nightly-3"},
		"regressed": []any{
			map[string]any{"cell": "mariadb-11-4-base", "step": "update-index", "threads": int64(4),
				"metrics": []any{"Throughput", "P99Latency"},
				"metric":  "Throughput", "before": "1000.00", "after": "940.00", "changePercent": "-6.0", "method": "BetweenRuns",
				"alsoRegressed": []any{map[string]any{"metric": "P99Latency", "before": "2.500", "after": "6.250", "changePercent": "150.0", "method": "BetweenRuns"}}},
			map[string]any{"cell": "mariadb-11-4-base", "step": "point-query", "threads": int64(4),
				"before": "5000.00", "after": "4000.00", "changePercent": "-20.0"},
		},
	}
	_ = unstructured.SetNestedField(run.Object, reg, "status", "regression")
	clients := newFakeCluster(t, []*unstructured.Unstructured{run}, nil)
	out, _, err := runCmd(t, clients, "watch", "nightly-4", "--once", "--bar-width", "5")
	if err != nil {
		t.Fatal(err)
	}
	want := `run nightly-4: Succeeded, 1/1 cells done
  mariadb-11-4-base  Succeeded [#####] 100%  2/2
regressed against nightly-3:
  mariadb-11-4-base update-index@4  throughput -6.0 % (1000.00 → 940.00 QPS) BetweenRuns, p99 latency +150.0 % (2.500 → 6.250 ms) BetweenRuns
  mariadb-11-4-base point-query@4  throughput -20.0 % (5000.00 → 4000.00 QPS)
`
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("watch (-want +got):\n%s", d)
	}
}

func TestWatchUntilDone(t *testing.T) {
	run := runObj("r", "", t0, "Running", []dbbenchv1alpha1.CellStatus{{Name: "a", Phase: dbbenchv1alpha1.CellRunning, StepsDone: 1, StepsTotal: 2}})
	clients := newFakeCluster(t, []*unstructured.Unstructured{run}, nil)
	cl, _ := clients.Cluster()
	var out bytes.Buffer
	o := &WatchOptions{RunName: "r", Interval: time.Second, Width: 5, cluster: cl, IOStreams: genericiooptions.IOStreams{Out: &out}}
	polls := 0
	o.sleep = func(ctx context.Context, d time.Duration) error {
		polls++
		u, _ := cl.Dynamic.Resource(RunGVR).Namespace("bench").Get(ctx, "r", metav1.GetOptions{})
		_ = unstructured.SetNestedField(u.Object, "Succeeded", "status", "phase")
		_, err := cl.Dynamic.Resource(RunGVR).Namespace("bench").Update(ctx, u, metav1.UpdateOptions{})
		return err
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if polls != 1 || strings.Count(out.String(), "run r:") != 2 || !strings.Contains(out.String(), "run r: Succeeded") {
		t.Errorf("%d polls:\n%s", polls, out.String())
	}
}

func TestCompareRepeats(t *testing.T) {
	root := t.TempDir()
	for _, run := range []struct {
		name string
		qps  []float64
	}{{"before", []float64{1000, 1010, 990}}, {"after", []float64{900, 905, 895}}} {
		var docs []*results.Document
		for r, q := range run.qps {
			d := doc(run.name, "s", fmt.Sprintf("mariadb-11-4-base-r%d", r), "11.4", t0.Add(time.Duration(r)*time.Hour),
				map[string]float64{"point-query@1": q, "insert@1": 500 + float64(r)}, "point-query@1", "insert@1")
			d.Cell.Repeat = r
			docs = append(docs, d)
		}
		writeDocs(t, filepath.Join(root, run.name), docs...)
	}
	out, _, err := runCmd(t, noCluster{}, "compare", "before", "after", "--from-dir", root)
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, "compare", out, out, []string{
		"Repeats compared (Welch's t-test)",
		"point-query  1        before/mariadb-11.4-base  after/mariadb-11.4-base  3/3    1000.00  900.00  0.90",
		"slower",
		"insert       1        before/mariadb-11.4-base  after/mariadb-11.4-base  3/3    501.00   501.00  1.00",
		"within noise",
	})
	// Repeats of the two runs are not pooled in the merged report.
	if !strings.Contains(out, "before/mariadb-11.4-base  point-query  1        3  1000.00") {
		t.Errorf("merged repeats pooled:\n%s", out)
	}
}

// A run written by a newer controller, with fields this API version does not
// know, still reads; its results ConfigMap defaults to <run>-results until
// the status names one.
func TestRunFromNewerController(t *testing.T) {
	u := runObj("r", "nightly", t0, "Running", []dbbenchv1alpha1.CellStatus{{Name: "a", Phase: dbbenchv1alpha1.CellRunning}})
	_ = unstructured.SetNestedField(u.Object, "x", "spec", "fieldOfTomorrow")
	cells, _, _ := unstructured.NestedSlice(u.Object, "status", "cells")
	cells[0].(map[string]any)["somethingNew"] = int64(3)
	_ = unstructured.SetNestedSlice(u.Object, cells, "status", "cells")
	run, err := runFrom(u)
	if err != nil {
		t.Fatal(err)
	}
	if run.Spec.Suite != "nightly" || len(run.Status.Cells) != 1 || run.Status.Cells[0].Phase != dbbenchv1alpha1.CellRunning {
		t.Errorf("run %+v", run)
	}
	if got := resultsConfigMap(run); got != "r-results" {
		t.Errorf("results ConfigMap %q, want r-results", got)
	}
	run.Status.Results = &dbbenchv1alpha1.ResultsReference{ConfigMap: "named"}
	if got := resultsConfigMap(run); got != "named" {
		t.Errorf("results ConfigMap %q, want the status's", got)
	}
}
