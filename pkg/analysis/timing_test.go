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
		Cell: "maria-11.8-default", Start: at(0), End: at(106), LoadSeconds: 20, DatabaseNode: "node-2", Ready: at(7.5), FlushSeconds: 6,
		Steps: []StepTiming{
			// Out of order on purpose: the report sorts by start.
			{Step: "point-query", Threads: 2, Start: at(57.5), ConfiguredSeconds: 20, ElapsedSeconds: 20},
			// A declared flush of 6 s after it: not a gap, not overhead.
			{Step: "point-query", Threads: 1, Start: at(30), ConfiguredSeconds: 20, ElapsedSeconds: 21, FlushSeconds: 6},
			{Step: "insert", Threads: 1, Start: at(78), ConfiguredSeconds: 20}, // elapsed unknown
		},
	}}
	got, err := Overheads(cells)
	if err != nil {
		t.Fatal(err)
	}
	o := got[0]
	want := CellOverhead{Cell: "maria-11.8-default", WallSeconds: 106, LoadSeconds: 20, StepSeconds: 60, FlushSeconds: 6, OverheadSeconds: 20,
		MaxGapSeconds: 0.5, MeanGapSeconds: 0.5, Steps: 3}
	// gaps: 57.5 − (30 + 21 + 6) = 0.5; 78 − (57.5 + 20) = 0.5
	for name, pair := range map[string][2]float64{
		"wall": {o.WallSeconds, want.WallSeconds}, "steps": {o.StepSeconds, want.StepSeconds}, "overhead": {o.OverheadSeconds, want.OverheadSeconds},
		"flush": {o.FlushSeconds, want.FlushSeconds}, "to ready": {float64(o.ReadySeconds), 7.5},
		"max gap": {o.MaxGapSeconds, want.MaxGapSeconds}, "mean gap": {o.MeanGapSeconds, want.MeanGapSeconds},
		// start-up: 30 − 0 − 20 (load); finish: 106 − (78 + 20).
		"start-up": {float64(o.StartupSeconds), 10}, "finish": {float64(o.FinishSeconds), 8},
	} {
		if math.Abs(pair[0]-pair[1]) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, pair[0], pair[1])
		}
	}
	tab := OverheadTable(got)
	if len(tab.Rows) != 1 || tab.Rows[0][4] != "6.0" || tab.Rows[0][5] != "20.0" {
		t.Fatalf("table %+v", tab)
	}
	if r := tab.Rows[0][6:9]; r[0] != "7.5" || r[1] != "10.0" || r[2] != "8.0" {
		t.Errorf("to ready, start-up, finish = %v, want 7.5 10.0 8.0", r)
	}
	// Where and when: the client's node unknown.
	if r := tab.Rows[0][12:]; r[0] != "00:00:00" || r[1] != "00:01:46" || r[2] != "node-2" || r[3] != "?" {
		t.Errorf("start, end, database node, client node = %v, want 00:00:00 00:01:46 node-2 ?", r)
	}
	if len(tab.Columns) != 16 {
		t.Errorf("an unblocked run's table has %d columns, want 16 (no block column)", len(tab.Columns))
	}
	// A blocked run's cells say their block.
	cells[0].Block = 2
	blocked, err := Overheads(append(cells, CellTiming{Cell: "maria-10.11-default", Start: at(100), End: at(190), Block: 2}))
	if err != nil {
		t.Fatal(err)
	}
	tab = OverheadTable(blocked)
	if n := len(tab.Columns); n != 17 || tab.Columns[16] != "block" || tab.Rows[0][16] != "2" || tab.Rows[1][16] != "2" {
		t.Errorf("blocked table columns %v, rows %v: want a block column with 2, 2", tab.Columns, tab.Rows)
	}
	if _, err := Overheads([]CellTiming{{Cell: "x", Start: at(10), End: at(5)}}); err == nil {
		t.Error("a cell that ended before it started was accepted")
	}
}
