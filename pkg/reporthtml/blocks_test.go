package reporthtml

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/dbbench/dbbench/pkg/analysis"
)

// TestPairedNotes: a table whose ratios are paired by block says so in
// its notes and its chart's caption, and names the paired ratios when
// others are not.
func TestPairedNotes(t *testing.T) {
	node := []float64{0.7, 1.0, 1.3, 0.9}
	ds := analysis.NewDataset("blocked")
	for _, v := range []struct {
		version string
		factor  float64
	}{{"10.11", 1}, {"11.4", 0.9}, {"11.8", 1.1}} {
		for k, m := range node {
			name := fmt.Sprintf("maria-%s-base-r%d", v.version, k)
			block := k + 1
			if v.version == "11.8" {
				block = 0
			}
			if err := ds.AddCell(analysis.CellMeta{Name: name, Database: "maria", Engine: "mariadb", Version: v.version, Config: "base", Repeat: k, Block: block}); err != nil {
				t.Fatal(err)
			}
			if err := ds.Add(analysis.Observation{Cell: name, Step: "point-query", Threads: 1, QPS: 1000 * v.factor * m * (1 + 0.01*float64(k%2))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name      string
		cells     []string
		want, not []string
	}{
		{"all paired", []string{"maria-11.4-base"},
			[]string{"QPS(combination) / QPS(maria-10.11-base) in each block, geometric mean over the blocks, 1 threads", "note: ratios are paired by block; runs per column", "note: paired by block (4 blocks): the ratio is the geometric mean of the per-block ratios and [low, high] its 95 % interval"},
			[]string{"Fieller", "(maria-11.4-base point-query)", "mean QPS(combination)"}},
		{"mixed", []string{"maria-11.4-base", "maria-11.8-base"},
			[]string{"mean QPS(combination) / mean QPS(maria-10.11-base)", "note: ratios are of the means over repeats, or paired by block; runs", "by Fieller's method", "note: paired by block (4 blocks) (maria-11.4-base point-query): the ratio"},
			[]string{"geometric mean over the blocks"}},
		{"none paired", []string{"maria-11.8-base"},
			[]string{"mean QPS(combination) / mean QPS(maria-10.11-base)", "note: ratios are of the means over repeats; runs", "by Fieller's method"},
			[]string{"paired"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rel, err := analysis.Relative(ds, analysis.RelativeOptions{ByCombination: true, Cells: tt.cells})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := rel.Table().WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			text := buf.String()
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("text lacks %q:\n%s", w, text)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(text, n) {
					t.Errorf("text has %q:\n%s", n, text)
				}
			}
			caption := "Ratios paired by block (cells run one after another on one node) are the geometric means of the per-block ratios"
			if svg := barChart("point-query", rel, []int{0}); strings.Contains(svg, caption) != (tt.name != "none paired") {
				t.Errorf("caption paired sentence present %v, want %v:\n%s", strings.Contains(svg, caption), tt.name != "none paired", svg)
			}
		})
	}
}
