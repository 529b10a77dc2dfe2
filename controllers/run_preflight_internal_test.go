package controllers

import (
	"testing"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
)

func TestPreflightSkipReason(t *testing.T) {
	tests := []struct {
		name         string
		enabled      bool
		pairs, cells int
		maxParallel  int32
		want         dbbenchv1alpha1.PreflightSkipReason
	}{
		{name: "disabled", enabled: false, pairs: 4, cells: 40, maxParallel: 1, want: dbbenchv1alpha1.PreflightDisabled},
		{name: "one pair, repeated", enabled: true, pairs: 1, cells: 10, maxParallel: 1, want: dbbenchv1alpha1.PreflightSinglePair},
		{name: "one pair, at once", enabled: true, pairs: 1, cells: 2, maxParallel: 4, want: dbbenchv1alpha1.PreflightSinglePair},
		{name: "every cell its own pair, all at once", enabled: true, pairs: 10, cells: 10, maxParallel: 10, want: dbbenchv1alpha1.PreflightAllCellsAtOnce},
		{name: "fewer cells than slots", enabled: true, pairs: 2, cells: 4, maxParallel: 8, want: dbbenchv1alpha1.PreflightAllCellsAtOnce},
		{name: "one cell waits for a slot", enabled: true, pairs: 10, cells: 11, maxParallel: 10, want: ""},
		{name: "serial cells", enabled: true, pairs: 2, cells: 4, maxParallel: 1, want: ""},
		{name: "pairs side by side, cells in waves", enabled: true, pairs: 2, cells: 4, maxParallel: 3, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := preflightSkipReason(tt.enabled, tt.pairs, tt.cells, tt.maxParallel); got != tt.want {
				t.Errorf("preflightSkipReason(%v, %d pairs, %d cells, %d slots) = %q, want %q", tt.enabled, tt.pairs, tt.cells, tt.maxParallel, got, tt.want)
			}
		})
	}
}
