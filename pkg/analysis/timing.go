package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
)

// CellTiming is what the orchestration-overhead report needs about a cell:
// when it started and ended (the controller's view), how long the agent
// spent loading data, and when each (step, threads) pair ran.
type CellTiming struct {
	Cell       string
	Start, End time.Time
	// DatabaseNode and ClientNode are where the cell's server and client
	// ran ("" when unknown).
	DatabaseNode, ClientNode string
	// Block is the cell's block in a blocked run (0: not blocked).
	Block int
	// LoadSeconds is the load phase (prepare, index, warm-up step, flush).
	LoadSeconds float64
	// Ready is when the server first answered at the SQL level (the
	// agent's start of measurement; zero when unknown).
	Ready time.Time
	// FlushSeconds are the engine flushes between steps that the method
	// declares (after read-write_range=100), the post-load flush left out
	// (it is in LoadSeconds).
	FlushSeconds float64
	Steps        []StepTiming
}

// StepTiming is one (step, threads) pair as the agent ran it.
type StepTiming struct {
	Step    string
	Threads int
	Start   time.Time
	// ConfiguredSeconds is the step's configured time (warm-up included);
	// ElapsedSeconds what sysbench measured (0 when unknown).
	ConfiguredSeconds float64
	ElapsedSeconds    float64
	// FlushSeconds is the declared flush after the step (0: none).
	FlushSeconds float64
}

// CellOverhead is the orchestration overhead of one cell.
type CellOverhead struct {
	Cell string
	// Start and End bound the cell; DatabaseNode and ClientNode say where
	// it ran: side by side, they show which cells ran at once and where.
	Start, End               time.Time
	DatabaseNode, ClientNode string
	// Block is the cell's block (0: not blocked).
	Block int
	// WallSeconds is End − Start; OverheadSeconds is wall time minus the
	// load and the configured step time: pod scheduling and start-up, the
	// server's initialisation, the SQL-level wait, result writes and the
	// controller's reaction times.
	// FlushSeconds are the declared flushes between steps, which the
	// overhead leaves out like the load: they are the method's, not the
	// orchestration's.
	WallSeconds, LoadSeconds, StepSeconds, FlushSeconds, OverheadSeconds float64
	// ReadySeconds is the part of the start-up before the server answered
	// at the SQL level: the pods' scheduling and start and the server's
	// initialisation. NaN when unknown.
	ReadySeconds Num
	// StartupSeconds and FinishSeconds split the overhead where it goes:
	// from the cell's start to its first step, less the load (the pods'
	// scheduling and start, the server's initialisation, the SQL-level
	// wait), and from the last step's end to the cell's end (result
	// writes, the controller's reaction); the rest is the gaps between
	// steps and steps running longer than configured. NaN when the steps'
	// start times are unknown.
	StartupSeconds, FinishSeconds Num
	// MaxGapSeconds and MeanGapSeconds are the idle time between one step's
	// end and the next step's start, inside the agent.
	MaxGapSeconds, MeanGapSeconds float64
	Steps                         int
}

// Overheads computes each cell's orchestration overhead, in the cells' order.
func Overheads(cells []CellTiming) ([]CellOverhead, error) {
	out := make([]CellOverhead, 0, len(cells))
	for _, c := range cells {
		if c.End.Before(c.Start) || c.Start.IsZero() {
			return nil, fmt.Errorf("cell %s: no complete start and end times", c.Cell)
		}
		o := CellOverhead{Cell: c.Cell, Start: c.Start, End: c.End, DatabaseNode: c.DatabaseNode, ClientNode: c.ClientNode, Block: c.Block,
			WallSeconds: c.End.Sub(c.Start).Seconds(), LoadSeconds: c.LoadSeconds, FlushSeconds: c.FlushSeconds, Steps: len(c.Steps),
			ReadySeconds: Num(math.NaN())}
		if !c.Ready.IsZero() {
			o.ReadySeconds = Num(c.Ready.Sub(c.Start).Seconds())
		}
		steps := append([]StepTiming(nil), c.Steps...)
		sort.SliceStable(steps, func(i, j int) bool { return steps[i].Start.Before(steps[j].Start) })
		var gaps []float64
		for i, s := range steps {
			o.StepSeconds += s.ConfiguredSeconds
			if i == 0 || s.Start.IsZero() || steps[i-1].Start.IsZero() {
				continue
			}
			prev := steps[i-1]
			ran := prev.ElapsedSeconds
			if ran == 0 {
				ran = prev.ConfiguredSeconds
			}
			gap := s.Start.Sub(prev.Start).Seconds() - ran - prev.FlushSeconds
			if gap < 0 {
				gap = 0
			}
			gaps = append(gaps, gap)
		}
		o.OverheadSeconds = o.WallSeconds - o.LoadSeconds - o.StepSeconds - o.FlushSeconds
		o.StartupSeconds, o.FinishSeconds = Num(math.NaN()), Num(math.NaN())
		if n := len(steps); n > 0 && !steps[0].Start.IsZero() && !steps[n-1].Start.IsZero() {
			last := steps[n-1]
			ran := last.ElapsedSeconds
			if ran == 0 {
				ran = last.ConfiguredSeconds
			}
			o.StartupSeconds = Num(steps[0].Start.Sub(c.Start).Seconds() - o.LoadSeconds)
			o.FinishSeconds = Num(c.End.Sub(last.Start).Seconds() - ran - last.FlushSeconds)
		}
		if len(gaps) > 0 {
			var sum float64
			for _, g := range gaps {
				sum += g
				o.MaxGapSeconds = max(o.MaxGapSeconds, g)
			}
			o.MeanGapSeconds = sum / float64(len(gaps))
		}
		out = append(out, o)
	}
	return out, nil
}

// OverheadTable renders the overheads for people.
func OverheadTable(o []CellOverhead) Table {
	t := Table{
		ID:    "timing",
		Title: "Orchestration overhead per cell (wall − load − configured step time − declared flushes)",
		Columns: []string{"cell", "wall s", "load s", "steps s", "flush s", "overhead s", "to ready s", "start-up s", "finish s", "max gap s", "mean gap s", "steps",
			"start", "end", "database node", "client node"},
		Notes: []string{
			"overhead: pod scheduling and start, server initialisation, SQL-level wait, result writes, controller reaction; flush: the engine flushes the method declares between steps, left out of the overhead like the load",
			"to ready: cell start to the server's first answer at the SQL level (pods' scheduling and start, server initialisation); start-up: cell start to first step, less the load (to ready, then the server's provenance and the config check); finish: last step's end to cell end (result writes, controller reaction); the rest of the overhead is gaps and steps running long; start and end are whole seconds, so each of these is ± 1 s",
			"gap: idle time between one step's end and the next step's start inside the agent",
			"start, end: UTC; database node, client node: where the cell's server and its client (sysbench) ran, ? when unknown",
		},
	}
	node := func(n string) string {
		if n == "" {
			return "?"
		}
		return n
	}
	// A blocked run's table says which block each cell ran in: the
	// block's cells share a node and run one after another.
	blocked := slices.ContainsFunc(o, func(c CellOverhead) bool { return c.Block > 0 })
	if blocked {
		t.Columns = append(t.Columns, "block")
		t.Notes = append(t.Notes, "block: the cells of a block ran one after another on one node (spec.placement.blocks)")
	}
	for _, c := range o {
		row := []string{c.Cell, f1(c.WallSeconds), f1(c.LoadSeconds), f1(c.StepSeconds), f1(c.FlushSeconds), f1(c.OverheadSeconds),
			c.ReadySeconds.Format(1), c.StartupSeconds.Format(1), c.FinishSeconds.Format(1),
			fmt.Sprintf("%.2f", c.MaxGapSeconds), fmt.Sprintf("%.2f", c.MeanGapSeconds), fmt.Sprint(c.Steps),
			c.Start.UTC().Format(time.TimeOnly), c.End.UTC().Format(time.TimeOnly), node(c.DatabaseNode), node(c.ClientNode)}
		if blocked {
			row = append(row, fmt.Sprint(c.Block))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }
