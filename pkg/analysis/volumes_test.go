package analysis

import (
	"strings"
	"testing"
)

func pf(v float64) *float64 { return &v }

// The hardware-efficiency table grows an "I/O by volume" block when the
// results split disk figures by volume, compares it to the first result,
// and says so when the volumes share a device instead of reading the
// repeated figures as a split.
func TestHWEfficiencyVolumes(t *testing.T) {
	ds := NewDataset("vol")
	add := func(cell string, vols ...VolumeHW) {
		t.Helper()
		o := Observation{Cell: cell, Step: "write-only", Threads: 1, QPS: 1000, HW: &Hardware{CPUPerOp: pf(0.01), Volumes: vols}}
		if vols == nil {
			o.HW = nil
		}
		if err := ds.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	// Listed log first: the table puts data first anyway.
	add("apart", VolumeHW{Name: "log", Device: "loop0", ReadsPerOp: pf(0), ReadKBPerOp: pf(0), WriteKBPerOp: pf(2), IOsPerOp: pf(0.5)},
		VolumeHW{Name: "data", Device: "vda", ReadsPerOp: pf(0.1), ReadKBPerOp: pf(1.6), WriteKBPerOp: pf(4), IOsPerOp: pf(0.3)})
	add("shared", VolumeHW{Name: "data", Device: "vda", SharedDevice: true, ReadsPerOp: pf(0.2), ReadKBPerOp: pf(3.2), WriteKBPerOp: pf(6), IOsPerOp: pf(1)},
		VolumeHW{Name: "log", Device: "vda", SharedDevice: true, ReadsPerOp: pf(0.2), ReadKBPerOp: pf(3.2), WriteKBPerOp: pf(6), IOsPerOp: pf(1)})
	add("old")
	hw, err := HWEfficiency(ds, HWOptions{Step: "write-only", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(hw.VolumeNames, ",") != "data,log" {
		t.Fatalf("volume names %v", hw.VolumeNames)
	}
	if strings.Join(hw.SharedDevice, ",") != "shared" {
		t.Errorf("shared-device cells %v", hw.SharedDevice)
	}
	tables := hw.Tables()
	if len(tables) != 4 {
		t.Fatalf("%d tables, want hardware absolute+relative and volumes absolute+relative", len(tables))
	}
	abs, rel := tables[2], tables[3]
	wantCols := "data r/o,data rKB/o,data wKB/o,data io/o,log r/o,log rKB/o,log wKB/o,log io/o,devices,cell"
	if got := strings.Join(abs.Columns, ","); got != wantCols {
		t.Errorf("columns %s", got)
	}
	tests := []struct {
		table *Table
		row   int
		want  string
	}{
		{&abs, 0, "0.100 1.600 4.000 0.300 0.000 0.000 2.000 0.500 data=vda log=loop0 apart"},
		{&abs, 1, "0.200 3.200 6.000 1.000 0.200 3.200 6.000 1.000 data=vda log=vda shared"},
		{&abs, 2, "missing missing missing missing missing missing missing missing  old"},
		{&rel, 0, "shared"},
	}
	for _, tt := range tests {
		got := strings.Join(tt.table.Rows[tt.row], " ")
		if tt.table == &rel {
			// Ratios to the first result: data r/o doubled, log wKB/o tripled.
			if r := tt.table.Rows[tt.row]; r[0] != "2.00" || r[6] != "3.00" || r[len(r)-1] != tt.want {
				t.Errorf("relative row %v", r)
			}
			continue
		}
		if got != tt.want {
			t.Errorf("absolute row %d = %q, want %q", tt.row, got, tt.want)
		}
	}
	if notes := strings.Join(abs.Notes, "\n"); !strings.Contains(notes, "shared device: the volumes of shared") || !strings.Contains(notes, "not a split") {
		t.Errorf("notes %q", notes)
	}
	// Without volumes anywhere, the table is as before: two blocks.
	plain := NewDataset("plain")
	if err := plain.Add(Observation{Cell: "a", Step: "write-only", Threads: 1, QPS: 5, HW: &Hardware{CPUPerOp: pf(1)}}); err != nil {
		t.Fatal(err)
	}
	if hw, err := HWEfficiency(plain, HWOptions{Step: "write-only", Threads: 1}); err != nil || len(hw.Tables()) != 2 {
		t.Errorf("plain table: %v, %v", hw, err)
	}
}
