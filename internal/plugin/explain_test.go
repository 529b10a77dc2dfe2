package plugin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/results"
)

// withProfile gives step@threads of d a profile of the given folded stacks.
func withProfile(d *results.Document, step string, threads int, folded string, samples int64) *results.Document {
	for i := range d.Steps {
		s := &d.Steps[i]
		if s.Step == step && s.Threads == threads {
			s.Profile = &results.Profile{Tool: results.ProfileToolPerf, Event: "cpu-clock", FrequencyHz: 99, Seconds: 10,
				Samples: samples, Folded: folded, PassQPS: s.SteadyQPS * 0.97}
		}
	}
	return d
}

// The profiles of the explain tests: "after" spends a quarter of its time
// checksumming under write.
const (
	foldedBefore = "main;read;parse 50\nmain;write;copy 50\n"
	foldedAfter  = "main;read;parse 75\nmain;write;copy 75\nmain;write;crc32 50\n"
)

// explainRuns writes two runs, before and after, whose point-query at 1
// thread has a profile on the 11.4 cell; the run "both" has profiles on
// both cells (before's on 10.11, after's on 11.4).
func explainRuns(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, r := range []struct {
		run    string
		folded string
	}{{"before", foldedBefore}, {"after", foldedAfter}} {
		docs := twoCells(r.run, "s", t0, 1)
		withProfile(docs[1], "point-query", 1, r.folded, 100)
		if r.run == "after" {
			docs[1].Steps[1].Profile.Samples = 200
		}
		writeDocs(t, filepath.Join(root, r.run), docs...)
	}
	docs := twoCells("both", "s", t0, 1)
	withProfile(docs[0], "point-query", 1, foldedBefore, 100)
	withProfile(docs[1], "point-query", 1, foldedAfter, 200)
	writeDocs(t, filepath.Join(root, "both"), docs...)
	return root
}

func TestExplainFromDir(t *testing.T) {
	root := explainRuns(t)
	tests := []struct {
		name       string
		args       []string
		wantOut    []string
		wantErr    string
		wantFirst  string
		wantChange float64
	}{
		{
			name: "two runs, the profiled cell found",
			args: []string{"before", "after", "--step", "point-query"},
			wantOut: []string{
				"Where the CPU went: point-query, 1 threads, before/mariadb-11-4-base (A) -> after/mariadb-11-4-base (B), by self share",
				"1  crc32     0.00      25.00     +25.00    0.00      25.00     +25.00",
				"A: 100 samples; profiled pass 1197 QPS vs 1234 measured (-3 %",
			},
			wantFirst: "crc32", wantChange: 0.25,
		},
		{
			name:      "two cells of one run, inclusive",
			args:      []string{"both/mariadb-10-11-base", "both/mariadb-11-4-base", "--step", "point-query", "--threads", "1", "--rank", "inclusive", "-o", "json"},
			wantFirst: "crc32", wantChange: 0.25,
		},
		{name: "no step", args: []string{"before", "after"}, wantErr: "--step is required"},
		{name: "unprofiled step", args: []string{"before", "after", "--step", "update-one"},
			wantErr: "before: no profile of step update-one (profiles come from spec.workload.profile; docs/explain.md); it has: mariadb-11-4-base point-query@1"},
		{name: "two profiled cells", args: []string{"both", "after", "--step", "point-query"},
			wantErr: "both: cells mariadb-10-11-base, mariadb-11-4-base have profiles of step point-query: name one as both/CELL"},
		{name: "no such cell", args: []string{"before/nope", "after", "--step", "point-query"}, wantErr: "before/nope: run before has no cell nope"},
		{name: "no such threads", args: []string{"before", "after", "--step", "point-query", "--threads", "8"},
			wantErr: "before/mariadb-11-4-base step point-query: no profile at 8 threads (profiled: [1])"},
		{name: "bad rank", args: []string{"before", "after", "--step", "point-query", "--rank", "total"}, wantErr: `--rank "total": must be self or inclusive`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runCmd(t, noCluster{}, append([]string{"explain", "--from-dir", root}, tt.args...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkContains(t, "explain", out, out, tt.wantOut)
			if strings.Contains(strings.Join(tt.args, " "), "-o json") {
				var res ExplainResult
				if err := json.Unmarshal([]byte(out), &res); err != nil {
					t.Fatalf("-o json: %v\n%s", err, out)
				}
				if len(res.Changes) == 0 || res.Changes[0].Function != tt.wantFirst || res.Changes[0].InclusiveDelta != tt.wantChange {
					t.Errorf("changes = %+v, want %s first with +%v", res.Changes, tt.wantFirst, tt.wantChange)
				}
				if res.A.Cell != "mariadb-10-11-base" || res.B.Cell != "mariadb-11-4-base" || res.B.Samples != 200 {
					t.Errorf("sides = %+v / %+v", res.A, res.B)
				}
			}
		})
	}
}

// --svg writes the flame graph and --html a page with the table and it.
func TestExplainWritesSVGAndHTML(t *testing.T) {
	root := explainRuns(t)
	dir := t.TempDir()
	svg, page := filepath.Join(dir, "pq.svg"), filepath.Join(dir, "pq.html")
	_, errOut, err := runCmd(t, noCluster{}, "explain", "--from-dir", root, "before", "after", "--step", "point-query", "--svg", svg, "--html", page)
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, "stderr", errOut, errOut, []string{"wrote " + svg, "wrote " + page})
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	// crc32 is new in B: the largest change, the strongest red.
	checkContains(t, "the SVG", string(b), "", []string{"<svg", `crc32: B 50 samples (25.00%), A 0.00%, change +25.00 points</title><rect`, `fill="rgb(255,0,0)"`})
	h, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, "the HTML page", string(h), "", []string{"<td>crc32</td>", "<svg", "Differential flame graph"})
	if strings.Contains(string(h), "<?xml") {
		t.Error("the HTML page embeds the SVG's XML declaration")
	}
}

// A compact document that left the stacks out says where the full one is.
func TestExplainOmittedStacks(t *testing.T) {
	root := explainRuns(t)
	docs := twoCells("compact", "s", t0, 1)
	withProfile(docs[1], "point-query", 1, "", 100)
	docs[1].Steps[1].Profile.FoldedOmitted = true
	writeDocs(t, filepath.Join(root, "compact"), docs...)
	_, _, err := runCmd(t, noCluster{}, "explain", "--from-dir", root, "before", "compact", "--step", "point-query")
	if want := "the compact document left the stacks out to fit its ConfigMap; read the run's full document from the object store (--from-s3)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// compare --html adds, for the profiles both runs have of a cell, explain's
// table and flame graph; without profiles it adds no such section.
func TestCompareHTMLHasProfiles(t *testing.T) {
	root := explainRuns(t)
	page := filepath.Join(t.TempDir(), "cmp.html")
	if _, _, err := runCmd(t, noCluster{}, "compare", "--from-dir", root, "before", "after", "--html", page); err != nil {
		t.Fatal(err)
	}
	h, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, "the compare page", string(h), "", []string{
		"Where the CPU went (on-CPU profiles, from unmeasured passes)",
		"Where the CPU went: point-query, 1 threads, before/mariadb-11-4-base (A) -&gt; after/mariadb-11-4-base (B), by self share",
		"<td>crc32</td>", `crc32: B 50 samples (25.00%), A 0.00%, change +25.00 points`,
	})
	if strings.Contains(string(h), "<?xml") {
		t.Error("the page embeds the SVG's XML declaration")
	}
	plain := filepath.Join(root, "plain")
	writeDocs(t, filepath.Join(plain, "x"), twoCells("x", "s", t0, 1)...)
	writeDocs(t, filepath.Join(plain, "y"), twoCells("y", "s", t0, 1)...)
	if _, _, err := runCmd(t, noCluster{}, "compare", "--from-dir", plain, "x", "y", "--html", page); err != nil {
		t.Fatal(err)
	}
	if h, _ := os.ReadFile(page); strings.Contains(string(h), "Where the CPU went") {
		t.Error("a compare without profiles has a profiles section")
	}
}

// bisect status --explain compares the last good point (t2) with the first
// bad one (t3), from the round's cells of their point databases.
func TestBisectStatusExplainsTheFirstBad(t *testing.T) {
	b := &dbbenchv1alpha1.BenchmarkBisection{
		TypeMeta:   metav1.TypeMeta{APIVersion: "dbbench.io/v1alpha1", Kind: "BenchmarkBisection"},
		ObjectMeta: metav1.ObjectMeta{Name: "find-it", Namespace: "bench"},
		Status: dbbenchv1alpha1.BenchmarkBisectionStatus{
			Conditions: []metav1.Condition{{Type: "Localized", Status: "True", Reason: "Localized", Message: "t3", LastTransitionTime: metav1.Now()}},
			FirstBad:   "t3", RoundCount: 2,
			Rounds: []dbbenchv1alpha1.BisectionRound{
				{Index: 0, Run: "find-it-r0", Points: []int32{0, 4}, Finished: true},
				{Index: 1, Run: "find-it-r1", Points: []int32{2, 3}, Finished: true},
			},
			Points: []dbbenchv1alpha1.BisectionPointStatus{
				{Index: 0, Name: "t1", Verdict: "Good"}, {Index: 1, Name: "t1.5", Verdict: "Failed"},
				{Index: 2, Name: "t2", Verdict: "Good"}, {Index: 3, Name: "t3", Verdict: "Bad"}, {Index: 4, Name: "t4", Verdict: "Bad"},
			},
		},
	}
	steps := []string{"update-index@1", "point-query@1"}
	qps := map[string]float64{"update-index@1": 100, "point-query@1": 1000}
	var docs []*results.Document
	for _, p := range []struct {
		db, folded string
	}{{"p2", foldedBefore}, {"p3", foldedAfter}} {
		d := doc("find-it-r1", "", p.db+"-t-base-r0", "t", t0, qps, steps...)
		d.Cell.Database = p.db
		docs = append(docs, withProfile(d, "update-index", 1, p.folded, map[string]int64{"p2": 100, "p3": 200}[p.db]))
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if err != nil {
		t.Fatal(err)
	}
	cells, cms := cellCMs(t, "find-it-r1", docs)
	clients, c := bisectCluster(t, &unstructured.Unstructured{Object: obj}, runObj("find-it-r1", "", t0, "Succeeded", cells))
	for _, cm := range cms {
		if _, err := c.Core.CoreV1().ConfigMaps("bench").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err := runCmd(t, clients, "bisect", "status", "find-it", "--explain")
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, "bisect status --explain", out, out, []string{
		"t3 (first bad) against t2 (last good): Where the CPU went: update-index, 1 threads, find-it-r1/p2-t-base-r0 (A) -> find-it-r1/p3-t-base-r0 (B)",
		"1  crc32     0.00      25.00     +25.00",
	})
	if strings.Contains(out, "point-query, 1 threads") {
		t.Errorf("explained point-query, which neither point profiled:\n%s", out)
	}
	// Without --explain, no such table.
	out, _, err = runCmd(t, clients, "bisect", "status", "find-it")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "Where the CPU went") {
		t.Errorf("status without --explain explains:\n%s", out)
	}
}
