package analysis

import (
	"math"
	"testing"
	"time"
)

func TestOverheads(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	cells := []CellTiming{{
		Cell: "maria-11.8-default", Start: at(0), End: at(100), LoadSeconds: 20, DatabaseNode: "node-2",
		Steps: []StepTiming{
			// Out of order on purpose: the report sorts by start.
			{Step: "point-query", Threads: 2, Start: at(51.5), ConfiguredSeconds: 20, ElapsedSeconds: 20},
			{Step: "point-query", Threads: 1, Start: at(30), ConfiguredSeconds: 20, ElapsedSeconds: 21},
			{Step: "insert", Threads: 1, Start: at(72), ConfiguredSeconds: 20}, // elapsed unknown
		},
	}}
	got, err := Overheads(cells)
	if err != nil {
		t.Fatal(err)
	}
	o := got[0]
	want := CellOverhead{Cell: "maria-11.8-default", WallSeconds: 100, LoadSeconds: 20, StepSeconds: 60, OverheadSeconds: 20,
		MaxGapSeconds: 0.5, MeanGapSeconds: 0.5, Steps: 3}
	// gaps: 51.5 − (30 + 21) = 0.5; 72 − (51.5 + 20) = 0.5
	for name, pair := range map[string][2]float64{
		"wall": {o.WallSeconds, want.WallSeconds}, "steps": {o.StepSeconds, want.StepSeconds}, "overhead": {o.OverheadSeconds, want.OverheadSeconds},
		"max gap": {o.MaxGapSeconds, want.MaxGapSeconds}, "mean gap": {o.MeanGapSeconds, want.MeanGapSeconds},
		// start-up: 30 − 0 − 20 (load); finish: 100 − (72 + 20).
		"start-up": {float64(o.StartupSeconds), 10}, "finish": {float64(o.FinishSeconds), 8},
	} {
		if math.Abs(pair[0]-pair[1]) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, pair[0], pair[1])
		}
	}
	tab := OverheadTable(got)
	if len(tab.Rows) != 1 || tab.Rows[0][4] != "20.0" {
		t.Fatalf("table %+v", tab)
	}
	// Where and when: the client's node unknown.
	if r := tab.Rows[0][5:7]; r[0] != "10.0" || r[1] != "8.0" {
		t.Errorf("start-up, finish = %v, want 10.0 8.0", r)
	}
	if r := tab.Rows[0][10:]; r[0] != "00:00:00" || r[1] != "00:01:40" || r[2] != "node-2" || r[3] != "?" {
		t.Errorf("start, end, database node, client node = %v, want 00:00:00 00:01:40 node-2 ?", r)
	}
	if len(tab.Columns) != 14 {
		t.Errorf("an unblocked run's table has %d columns, want 14 (no block column)", len(tab.Columns))
	}
	// A blocked run's cells say their block.
	cells[0].Block = 2
	blocked, err := Overheads(append(cells, CellTiming{Cell: "maria-10.11-default", Start: at(100), End: at(190), Block: 2}))
	if err != nil {
		t.Fatal(err)
	}
	tab = OverheadTable(blocked)
	if n := len(tab.Columns); n != 15 || tab.Columns[14] != "block" || tab.Rows[0][14] != "2" || tab.Rows[1][14] != "2" {
		t.Errorf("blocked table columns %v, rows %v: want a block column with 2, 2", tab.Columns, tab.Rows)
	}
	if _, err := Overheads([]CellTiming{{Cell: "x", Start: at(10), End: at(5)}}); err == nil {
		t.Error("a cell that ended before it started was accepted")
	}
}
