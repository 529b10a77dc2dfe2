package benchmarkrun

import (
	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/matrix"
)

// A blocked run (spec.placement.blocks: Repeats) runs each block's cells
// one after another, in matrix order (which matrix.Expand already reverses
// in even blocks), on the node of the block's cells before: so each cell
// and the base cell of its block ran on one node, close in time, and their
// ratio is free of the node's speed. Different blocks run side by side up
// to placement.maxParallelCells.

// blockSchedule says, for each cell of a pass (statuses[i] is cells[i]'s),
// whether a pending cell must wait for its turn in its block (another of
// the block's cells is starting or running, or one before it in the
// block's order has not started), and the node its database pod is pinned
// to: the node of the latest cell before it in its block that has one, ""
// for a block's first cell and for cells not in a block. A cell whose own
// last failure was its node's (NodeLost) or its pod's placement
// (DatabaseNotReady, which an unschedulable pod ends with) is not pinned:
// its retry goes where the scheduler puts it, and the block's later cells
// follow it there.
func blockSchedule(cells []matrix.Cell, statuses []dbbenchv1alpha1.CellStatus) (wait []bool, pin []string) {
	wait, pin = make([]bool, len(cells)), make([]string, len(cells))
	busy := map[int32]bool{}
	for i, c := range cells {
		if c.Block > 0 && active(statuses[i].Phase) {
			busy[c.Block] = true
		}
	}
	waiting := map[int32]bool{}
	node := map[int32]string{}
	for i, c := range cells {
		b, cs := c.Block, statuses[i]
		if b == 0 {
			continue
		}
		if cs.Phase == dbbenchv1alpha1.CellPending {
			wait[i] = busy[b] || waiting[b]
			waiting[b] = true
		}
		if cs.Reason != dbbenchv1alpha1.ReasonNodeLost && cs.Reason != dbbenchv1alpha1.ReasonDatabaseNotReady {
			pin[i] = node[b]
		}
		if cs.Node != "" {
			node[b] = cs.Node
		}
	}
	return wait, pin
}

// active reports a cell that holds a parallel slot.
func active(ph dbbenchv1alpha1.CellPhase) bool {
	return ph == dbbenchv1alpha1.CellStarting || ph == dbbenchv1alpha1.CellRunning
}
