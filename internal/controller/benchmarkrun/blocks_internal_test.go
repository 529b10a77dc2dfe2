package benchmarkrun

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
)

func TestBlockSchedule(t *testing.T) {
	const (
		pending   = dbbenchv1alpha1.CellPending
		starting  = dbbenchv1alpha1.CellStarting
		running   = dbbenchv1alpha1.CellRunning
		succeeded = dbbenchv1alpha1.CellSucceeded
		failed    = dbbenchv1alpha1.CellFailed
	)
	type cell struct {
		block  int32
		phase  dbbenchv1alpha1.CellPhase
		node   string
		reason dbbenchv1alpha1.FailureReason
	}
	tests := []struct {
		name     string
		cells    []cell
		wantWait []bool
		wantPin  []string
	}{
		{
			name:     "not blocked: nothing waits, nothing pinned",
			cells:    []cell{{0, pending, "", ""}, {0, running, "n1", ""}, {0, pending, "", ""}},
			wantWait: []bool{false, false, false}, wantPin: []string{"", "", ""},
		},
		{
			name:     "a new run: each block's first cell may start, the rest wait",
			cells:    []cell{{1, pending, "", ""}, {1, pending, "", ""}, {2, pending, "", ""}, {2, pending, "", ""}},
			wantWait: []bool{false, true, false, true}, wantPin: []string{"", "", "", ""},
		},
		{
			name:     "a block's running cell holds its next; the next is pinned to its node",
			cells:    []cell{{1, running, "n1", ""}, {1, pending, "", ""}, {2, succeeded, "n2", ""}, {2, pending, "", ""}},
			wantWait: []bool{false, true, false, false}, wantPin: []string{"", "n1", "", "n2"},
		},
		{
			name:     "a failed cell does not hold its block",
			cells:    []cell{{1, failed, "n1", dbbenchv1alpha1.ReasonConfigRejected}, {1, pending, "", ""}, {1, pending, "", ""}},
			wantWait: []bool{false, false, true}, wantPin: []string{"", "n1", "n1"},
		},
		{
			name:     "a block follows its latest node",
			cells:    []cell{{1, succeeded, "n1", ""}, {1, succeeded, "n3", dbbenchv1alpha1.ReasonNodeLost}, {1, pending, "", ""}},
			wantWait: []bool{false, false, false}, wantPin: []string{"", "", "n3"},
		},
		{
			name:     "a cell retried after its node was lost or its pod could not be placed is not pinned",
			cells:    []cell{{1, succeeded, "n1", ""}, {1, starting, "", dbbenchv1alpha1.ReasonNodeLost}, {2, succeeded, "n2", ""}, {2, running, "", dbbenchv1alpha1.ReasonDatabaseNotReady}},
			wantWait: []bool{false, false, false, false}, wantPin: []string{"", "", "", ""},
		},
		{
			name:     "a cell that failed before it had a node leaves the next unpinned",
			cells:    []cell{{1, failed, "", dbbenchv1alpha1.ReasonInvalidImage}, {1, pending, "", ""}},
			wantWait: []bool{false, false}, wantPin: []string{"", ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cells := make([]matrix.Cell, len(tt.cells))
			statuses := make([]dbbenchv1alpha1.CellStatus, len(tt.cells))
			for i, c := range tt.cells {
				cells[i] = matrix.Cell{Index: i, Block: c.block}
				statuses[i] = dbbenchv1alpha1.CellStatus{Phase: c.phase, Node: c.node, Reason: c.reason}
			}
			wait, pin := blockSchedule(cells, statuses)
			if d := cmp.Diff(tt.wantWait, wait); d != "" {
				t.Errorf("wait (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.wantPin, pin); d != "" {
				t.Errorf("pin (-want +got):\n%s", d)
			}
		})
	}
}
