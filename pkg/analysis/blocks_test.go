package analysis

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/inference"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/results/resultstest"
)

// blockedDataset has two combinations of one step, maria-10.11-base (the
// base) and maria-11.4-base, with one cell per value; blocks[i] is the
// block of value i (0: not blocked).
func blockedDataset(t *testing.T, base, col []float64, baseBlocks, colBlocks []int) *Dataset {
	t.Helper()
	ds := NewDataset("blocked")
	for _, side := range []struct {
		version string
		qps     []float64
		blocks  []int
	}{{"10.11", base, baseBlocks}, {"11.4", col, colBlocks}} {
		for i, q := range side.qps {
			name := fmt.Sprintf("maria-%s-base-r%d", side.version, i)
			c := CellMeta{Name: name, Database: "maria", Engine: "mariadb", Version: side.version, Config: "base", Repeat: i, Block: side.blocks[i]}
			if err := ds.AddCell(c); err != nil {
				t.Fatal(err)
			}
			if err := ds.Add(Observation{Cell: name, Step: "point-query", Threads: 1, QPS: q}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ds
}

// TestRelativePairsBlocks: a node effect of 0.7–1.3 shared by the two
// cells of each block hides a 10 % slowdown from the ratio of means (its
// interval contains 1), and the comparison by block finds it with a
// narrow interval. Pairing needs blocks on every cell of both sides and
// pairs only the blocks both sides measured.
func TestRelativePairsBlocks(t *testing.T) {
	node := []float64{0.7, 1.0, 1.3, 0.9}
	jitter := []float64{1.01, 0.99, 1.005, 0.995}
	var base, col []float64
	for k := range node {
		base = append(base, 1000*node[k])
		col = append(col, 900*node[k]*jitter[k])
	}
	// paired is the paired interval of the given pairs (indices into
	// base and col).
	paired := func(idx ...int) inference.Interval {
		var a, b []float64
		for _, i := range idx {
			a, b = append(a, base[i]), append(b, col[i])
		}
		iv, err := inference.PairedLogRatio(a, b, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		return iv
	}
	unpaired, err := inference.RatioOfMeans(base, col, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                  string
		col                   []float64
		baseBlocks, colBlocks []int
		want                  inference.Interval
		marker                Marker
		// tooFew: fewer than MinIntervalRuns runs or pairs on a side: no
		// interval, no test, marked "?" (want and marker unused).
		tooFew bool
	}{
		{"blocked", col, []int{1, 2, 3, 4}, []int{1, 2, 3, 4}, paired(0, 1, 2, 3), MarkerSignificant, false},
		// Blocks are paired by number, not by repeat.
		{"blocks in another order", []float64{col[2], col[0], col[3], col[1]}, []int{1, 2, 3, 4}, []int{3, 1, 4, 2}, paired(0, 1, 2, 3), MarkerSignificant, false},
		{"not blocked", col, []int{0, 0, 0, 0}, []int{0, 0, 0, 0}, unpaired, MarkerNoise, false},
		{"blocks on one side only", col, []int{1, 2, 3, 4}, []int{0, 0, 0, 0}, unpaired, MarkerNoise, false},
		{"one cell without a block", col, []int{1, 2, 3, 4}, []int{1, 2, 0, 4}, unpaired, MarkerNoise, false},
		// The column lost block 3: the three common blocks are paired.
		{"a block missing on one side", []float64{col[0], col[1], col[3]}, []int{1, 2, 3, 4}, []int{1, 2, 4}, paired(0, 1, 3), MarkerSignificant, false},
		{"one common block", col[:3], []int{1, 2, 3, 4}, []int{2, 5, 6}, mustRatioOfMeans(t, base, col[:3]), MarkerNoise, false},
		// Two blocks would be paired, one degree of freedom: too few.
		{"two blocks", col[:2], []int{1, 2, 3, 4}, []int{1, 2}, inference.Interval{}, "", true},
		{"two runs unpaired", col[:2], []int{1, 2, 3, 4}, []int{2, 5}, inference.Interval{}, "", true},
		{"two cells in one block", col, []int{1, 2, 3, 4}, []int{1, 1, 3, 4}, unpaired, MarkerNoise, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := blockedDataset(t, base, tt.col, tt.baseBlocks, tt.colBlocks)
			rel, err := Relative(ds, RelativeOptions{ByCombination: true})
			if err != nil {
				t.Fatal(err)
			}
			ri, ratio := rel.Inference[0][0], rel.Ratios[0][0].Value
			if ri == nil {
				t.Fatal("no interval")
			}
			if tt.tooFew {
				if !ri.TooFew || ri.Marker != MarkerUnconfirmed || !math.IsNaN(float64(ri.Low)) || !math.IsNaN(float64(ri.High)) {
					t.Errorf("inference %+v, want too few runs: no bounds, marked %q", ri, MarkerUnconfirmed)
				}
				if got := FormatWithInterval(rel.Ratios[0][0], ri); strings.Contains(got, "[") {
					t.Errorf("printed %q, want no interval", got)
				}
				if notes := strings.Join(rel.Table().Notes, "\n"); !strings.Contains(notes, "too few for an interval") {
					t.Errorf("notes do not say what is missing:\n%s", notes)
				}
				return
			}
			t.Logf("ratio %.4f [%.4f, %.4f] %s, n %d/%d, p %.3g", ratio, ri.Low, ri.High, ri.Method, ri.NBase, ri.N, ri.P)
			if float64(ri.Low) != tt.want.Low || float64(ri.High) != tt.want.High || ri.Method != tt.want.Method ||
				ri.NBase != tt.want.NA || ri.N != tt.want.NB || float64(ri.P) != tt.want.PRatioOne {
				t.Errorf("inference %+v, want %+v", ri, tt.want)
			}
			// The shown ratio is the centre of its interval: the paired
			// estimate, or the ratio of means.
			if ratio != tt.want.Estimate {
				t.Errorf("ratio %v, want the estimate %v", ratio, tt.want.Estimate)
			}
			if ri.Marker != tt.marker {
				t.Errorf("marker %q, want %q", ri.Marker, tt.marker)
			}
			if tt.want.Method == inference.MethodPairedLog {
				if ri.High-ri.Low > 0.05 || ri.High >= 1 {
					t.Errorf("paired interval [%v, %v]: want one narrower than 0.05 below 1", ri.Low, ri.High)
				}
			} else if !(float64(ri.Low) <= 1 && 1 <= float64(ri.High)) {
				t.Errorf("interval of the means [%v, %v] excludes 1: the node effect should hide the slowdown", ri.Low, ri.High)
			}
		})
	}
}

func mustRatioOfMeans(t *testing.T, a, b []float64) inference.Interval {
	t.Helper()
	iv, err := inference.RatioOfMeans(a, b, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	return iv
}

// TestBlocksFromResultsAndMerge: documents and manifests carry a cell's
// block into the dataset; Merge renumbers blocks so that two runs' cells
// are never paired (their blocks ran on unrelated nodes).
func TestBlocksFromResultsAndMerge(t *testing.T) {
	doc := func(version string, repeat, block int, qps float64) *results.Document {
		d := resultstest.Doc(fmt.Sprintf("maria-%s-base-r%d", version, repeat), version, repeat, map[string]float64{"point-query": qps}, "point-query")
		d.Cell.Block = block
		return d
	}
	var docs []*results.Document
	node := []float64{0.7, 1.0, 1.3}
	for k, m := range node {
		docs = append(docs, doc("10.11", k, k+1, 1000*m), doc("11.4", k, k+1, 900*m*(1+0.01*float64(k))))
	}
	ds, err := FromDocuments("r1", docs)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := ds.Cell("maria-11.4-base-r2"); c.Block != 3 {
		t.Errorf("document cell block %d, want 3", c.Block)
	}
	m := &results.Manifest{SchemaVersion: results.ManifestSchemaV1, Run: results.Run{Name: "r1"}}
	for _, d := range docs {
		m.Cells = append(m.Cells, results.NewManifestCell(d, string(d.Status.Outcome), "", ""))
	}
	fromManifest, err := FromManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := fromManifest.Cell("maria-11.4-base-r1"); c.Block != 2 {
		t.Errorf("manifest cell block %d, want 2", c.Block)
	}
	rel, err := Relative(fromManifest, RelativeOptions{ByCombination: true})
	if err != nil {
		t.Fatal(err)
	}
	if ri := rel.Inference[0][0]; ri == nil || ri.Method != inference.MethodPairedLog || ri.N != 3 {
		t.Errorf("manifest's blocked cells not paired: %+v", ri)
	}

	// Two runs merged: run-b's blocks follow run-a's, and comparing a
	// combination of one run with one of the other compares the means.
	a, b := ds, fromManifest
	a.Name, b.Name = "run-a", "run-b"
	merged, err := Merge("both", a, b)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := merged.Cell("run-b/maria-10.11-base-r0"); c.Block != 4 {
		t.Errorf("merged block %d, want 1 + run-a's 3", c.Block)
	}
	for _, tt := range []struct {
		base, col string
		method    inference.Method
	}{
		{"run-a/maria-10.11-base", "run-a/maria-11.4-base", inference.MethodPairedLog},
		{"run-a/maria-10.11-base", "run-b/maria-11.4-base", inference.MethodFieller},
	} {
		rel, err := Relative(merged, RelativeOptions{ByCombination: true, Base: tt.base, Cells: []string{tt.col}})
		if err != nil {
			t.Fatal(err)
		}
		if ri := rel.Inference[0][0]; ri == nil || ri.Method != tt.method || math.IsNaN(float64(ri.Low)) {
			t.Errorf("%s vs %s: %+v, want %s", tt.col, tt.base, ri, tt.method)
		}
	}
}
