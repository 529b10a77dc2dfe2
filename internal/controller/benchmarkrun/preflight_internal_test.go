package benchmarkrun

import (
	"testing"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
)

func TestPreflightSkipReason(t *testing.T) {
	tests := []struct {
		name         string
		enabled      bool
		pairs, cells int
		firstWave    int
		want         dbbenchv1alpha1.PreflightSkipReason
	}{
		{name: "disabled", enabled: false, pairs: 4, cells: 40, firstWave: 1, want: dbbenchv1alpha1.PreflightDisabled},
		{name: "one pair, repeated", enabled: true, pairs: 1, cells: 10, firstWave: 1, want: dbbenchv1alpha1.PreflightSinglePair},
		{name: "one pair, at once", enabled: true, pairs: 1, cells: 2, firstWave: 4, want: dbbenchv1alpha1.PreflightSinglePair},
		{name: "every cell its own pair, all at once", enabled: true, pairs: 10, cells: 10, firstWave: 10, want: dbbenchv1alpha1.PreflightAllCellsAtOnce},
		{name: "one cell waits for a slot", enabled: true, pairs: 10, cells: 11, firstWave: 10, want: ""},
		{name: "serial cells", enabled: true, pairs: 2, cells: 4, firstWave: 1, want: ""},
		{name: "blocks run their cells one after another", enabled: true, pairs: 2, cells: 4, firstWave: 2, want: ""},
		{name: "pairs side by side, cells in waves", enabled: true, pairs: 2, cells: 4, firstWave: 3, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := preflightSkipReason(tt.enabled, tt.pairs, tt.cells, tt.firstWave); got != tt.want {
				t.Errorf("preflightSkipReason(%v, %d pairs, %d cells, %d at once) = %q, want %q", tt.enabled, tt.pairs, tt.cells, tt.firstWave, got, tt.want)
			}
		})
	}
}

func TestFirstWave(t *testing.T) {
	cells := func(blocks ...int32) []matrix.Cell {
		out := make([]matrix.Cell, len(blocks))
		for i, b := range blocks {
			out[i] = matrix.Cell{Block: b}
		}
		return out
	}
	tests := []struct {
		name        string
		cells       []matrix.Cell
		maxParallel int32
		want        int
	}{
		{"unblocked, fewer cells than slots", cells(0, 0, 0), 8, 3},
		{"unblocked, more cells than slots", cells(0, 0, 0, 0), 2, 2},
		{"two blocks of two", cells(1, 1, 2, 2), 8, 2},
		{"three blocks, two slots", cells(1, 1, 2, 2, 3, 3), 2, 2},
		{"blocks of one cell each", cells(1, 2, 3), 4, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := firstWave(tt.cells, tt.maxParallel); got != tt.want {
				t.Errorf("firstWave = %d, want %d", got, tt.want)
			}
		})
	}
}
