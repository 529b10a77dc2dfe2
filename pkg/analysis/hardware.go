package analysis

import (
	"fmt"
	"slices"
	"strings"
)

// HWColumns are the hardware-efficiency columns, in the studies' order.
var HWColumns = []string{"cpu/o", "cs/o", "r/o", "rKB/o", "wKB/o", "o/s"}

// hwDecimals is how many decimals the absolute block prints per column.
var hwDecimals = []int{6, 3, 3, 3, 3, 0}

// HWOptions select a hardware-efficiency table.
type HWOptions struct {
	Step string
	// Threads as in RelativeOptions.
	Threads int
	// Cells are the rows in order; nil means every cell that has the step.
	// The first row is the "first result" the relative block divides by.
	Cells []string
	// Base, when set, moves that cell to the first row.
	Base string
}

// HWRow is one cell's absolute figures; a nil value was not measured.
type HWRow struct {
	Cell   string     `json:"cell"`
	Values []*float64 `json:"values"`
}

// HWRelRow is one cell's figures divided by the first row's.
type HWRelRow struct {
	Cell   string  `json:"cell"`
	Ratios []Ratio `json:"ratios"`
}

// HWTable is the hardware efficiency of one step: an absolute block (rows =
// cells, columns HWColumns) and a block relative to the first result, which
// leaves the first row out (it would be all ones).
type HWTable struct {
	Step     string     `json:"step"`
	Threads  int        `json:"threads"`
	Columns  []string   `json:"columns"`
	Absolute []HWRow    `json:"absolute"`
	Relative []HWRelRow `json:"relative"`
	// NoHardware lists cells that have the step but no hardware figures.
	NoHardware []string `json:"noHardware,omitempty"`

	// The disk figures per database volume, when any cell has them: the
	// columns are VolumeColumnsPer for each volume in VolumeNames, rows
	// the same cells in the same order.
	VolumeNames    []string   `json:"volumeNames,omitempty"`
	VolumeAbsolute []HWRow    `json:"volumeAbsolute,omitempty"`
	VolumeRelative []HWRelRow `json:"volumeRelative,omitempty"`
	// VolumeDevices is, per cell, "volume=device" for each volume, so a
	// reader sees which disks the figures are.
	VolumeDevices map[string][]string `json:"volumeDevices,omitempty"`
	// SharedDevice lists the cells whose volumes share a device: their
	// per-volume figures are the device's for all of them, not a split.
	SharedDevice []string `json:"sharedDevice,omitempty"`
}

// VolumeColumnsPer are the per-volume disk columns, repeated per volume.
var VolumeColumnsPer = []string{"r/o", "rKB/o", "wKB/o", "io/o"}

var volumeDecimals = []int{3, 3, 3, 3}

// HWEfficiency builds the table for one step. Cells without the step are
// left out; a cell with the step but no hardware figures still gives its o/s
// and "missing" for the rest.
func HWEfficiency(ds *Dataset, opts HWOptions) (*HWTable, error) {
	threads, err := resolveThreads(ds, opts.Threads)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(ds.steps, opts.Step) {
		return nil, fmt.Errorf("step %q: %w in dataset %q (steps: %s)", opts.Step, ErrNoSuchStep, ds.Name, listNames(ds.Steps(), 8))
	}
	cells := opts.Cells
	if cells == nil {
		for _, c := range ds.cells {
			if _, ok := ds.Get(c.Name, opts.Step, threads); ok {
				cells = append(cells, c.Name)
			}
		}
	}
	for _, c := range cells {
		if err := ds.checkCell("cell", c); err != nil {
			return nil, err
		}
	}
	if opts.Base != "" {
		if err := ds.checkCell("base", opts.Base); err != nil {
			return nil, err
		}
		i := slices.Index(cells, opts.Base)
		if i < 0 {
			return nil, fmt.Errorf("base %q has no result for step %q at %d threads", opts.Base, opts.Step, threads)
		}
		cells = append([]string{opts.Base}, slices.Delete(slices.Clone(cells), i, i+1)...)
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("step %q at %d threads: no cell has a result: %w", opts.Step, threads, ErrEmpty)
	}
	t := &HWTable{Step: opts.Step, Threads: threads, Columns: HWColumns}
	for _, c := range cells {
		row := HWRow{Cell: c, Values: make([]*float64, len(HWColumns))}
		if o, ok := ds.Get(c, opts.Step, threads); ok {
			q := o.QPS
			if h := o.HW; h != nil {
				row.Values[0], row.Values[1], row.Values[2], row.Values[3], row.Values[4] =
					h.CPUPerOp, h.CSPerOp, h.ReadsPerOp, h.ReadKBPerOp, h.WriteKBPerOp
				if h.OpsPerSecond > 0 {
					q = h.OpsPerSecond
				}
			} else {
				t.NoHardware = append(t.NoHardware, c)
			}
			row.Values[5] = &q
		}
		t.Absolute = append(t.Absolute, row)
	}
	t.addVolumes(ds, cells, opts.Step, threads)
	first := t.Absolute[0]
	for _, row := range t.Absolute[1:] {
		rr := HWRelRow{Cell: row.Cell, Ratios: make([]Ratio, len(HWColumns))}
		for k := range HWColumns {
			rr.Ratios[k] = DivideOpt(row.Values[k], first.Values[k])
		}
		t.Relative = append(t.Relative, rr)
	}
	return t, nil
}

// addVolumes fills the per-volume block when any of the cells has volumes.
func (t *HWTable) addVolumes(ds *Dataset, cells []string, step string, threads int) {
	seen := map[string]bool{}
	for _, c := range cells {
		if o, ok := ds.Get(c, step, threads); ok && o.HW != nil {
			for _, v := range o.HW.Volumes {
				if !seen[v.Name] {
					seen[v.Name] = true
					t.VolumeNames = append(t.VolumeNames, v.Name)
				}
			}
		}
	}
	if len(t.VolumeNames) == 0 {
		return
	}
	// The data volume first, as in the storage spec; the rest by name.
	slices.SortFunc(t.VolumeNames, func(a, b string) int {
		if (a == "data") != (b == "data") {
			if a == "data" {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	n := len(VolumeColumnsPer)
	t.VolumeDevices = map[string][]string{}
	for _, c := range cells {
		row := HWRow{Cell: c, Values: make([]*float64, n*len(t.VolumeNames))}
		shared := false
		if o, ok := ds.Get(c, step, threads); ok && o.HW != nil {
			devs := make([]string, len(t.VolumeNames))
			for _, v := range o.HW.Volumes {
				i := slices.Index(t.VolumeNames, v.Name)
				k := i * n
				row.Values[k], row.Values[k+1], row.Values[k+2], row.Values[k+3] = v.ReadsPerOp, v.ReadKBPerOp, v.WriteKBPerOp, v.IOsPerOp
				dev := v.Device
				if dev == "" {
					dev = "unresolved"
				}
				devs[i] = v.Name + "=" + dev
				shared = shared || v.SharedDevice
			}
			for _, d := range devs {
				if d != "" {
					t.VolumeDevices[c] = append(t.VolumeDevices[c], d)
				}
			}
		}
		if shared {
			t.SharedDevice = append(t.SharedDevice, c)
		}
		t.VolumeAbsolute = append(t.VolumeAbsolute, row)
	}
	first := t.VolumeAbsolute[0]
	for _, row := range t.VolumeAbsolute[1:] {
		rr := HWRelRow{Cell: row.Cell, Ratios: make([]Ratio, len(row.Values))}
		for k := range row.Values {
			rr.Ratios[k] = DivideOpt(row.Values[k], first.Values[k])
		}
		t.VolumeRelative = append(t.VolumeRelative, rr)
	}
}

// volumeTables renders the per-volume block: absolute, and relative to the
// first result when there is more than one cell.
func (t *HWTable) volumeTables() []Table {
	if len(t.VolumeNames) == 0 {
		return nil
	}
	var cols []string
	for _, v := range t.VolumeNames {
		for _, c := range VolumeColumnsPer {
			cols = append(cols, v+" "+c)
		}
	}
	cols = append(cols, "devices", "cell")
	abs := Table{
		ID:      fmt.Sprintf("hw.t%d.%s.volumes.absolute", t.Threads, t.Step),
		Title:   fmt.Sprintf("I/O by volume: %s, %d threads --- absolute", t.Step, t.Threads),
		Columns: cols,
		Notes:   []string{"each volume's figures are those of the whole block device behind it (io/o: reads + writes per operation)"},
	}
	for _, r := range t.VolumeAbsolute {
		row := make([]string, 0, len(cols))
		for k, v := range r.Values {
			if v == nil {
				row = append(row, "missing")
			} else {
				row = append(row, FormatFloat(*v, volumeDecimals[k%len(volumeDecimals)]))
			}
		}
		abs.Rows = append(abs.Rows, append(row, strings.Join(t.VolumeDevices[r.Cell], " "), r.Cell))
	}
	if len(t.SharedDevice) > 0 {
		abs.Notes = append(abs.Notes, "shared device: the volumes of "+listNames(t.SharedDevice, 8)+
			" are on one device, so their columns repeat the device's figures; they are not a split between data and log")
	}
	out := make([]Table, 1, 2) // the absolute table, then maybe the relative one
	out[0] = abs
	if len(t.VolumeRelative) == 0 {
		return out
	}
	rel := Table{
		ID:      fmt.Sprintf("hw.t%d.%s.volumes.relative", t.Threads, t.Step),
		Title:   fmt.Sprintf("I/O by volume: %s, %d threads --- relative to first result (%s)", t.Step, t.Threads, t.VolumeAbsolute[0].Cell),
		Columns: append(slices.Clone(cols[:len(cols)-2]), "cell"),
		Notes:   []string{"0/0 is printed 1, x/0 inf; > 1 means more per operation"},
	}
	for _, r := range t.VolumeRelative {
		row := make([]string, 0, len(r.Ratios)+1)
		for _, v := range r.Ratios {
			row = append(row, v.String())
		}
		rel.Rows = append(rel.Rows, append(row, r.Cell))
	}
	return append(out, rel)
}

// Tables renders the two blocks. Columns follow the studies' layout: the
// six figures, then the cell name last.
func (t *HWTable) Tables() []Table {
	cols := append(append([]string(nil), HWColumns...), "cell")
	abs := Table{
		ID:      fmt.Sprintf("hw.t%d.%s.absolute", t.Threads, t.Step),
		Title:   fmt.Sprintf("Hardware efficiency: %s, %d threads --- absolute", t.Step, t.Threads),
		Columns: cols,
	}
	for _, r := range t.Absolute {
		row := make([]string, 0, len(cols))
		for k, v := range r.Values {
			if v == nil {
				row = append(row, "missing")
			} else {
				row = append(row, FormatFloat(*v, hwDecimals[k]))
			}
		}
		abs.Rows = append(abs.Rows, append(row, r.Cell))
	}
	if len(t.NoHardware) > 0 {
		abs.Notes = append(abs.Notes, "no hardware figures for "+listNames(t.NoHardware, 8))
	}
	rel := Table{
		ID:      fmt.Sprintf("hw.t%d.%s.relative", t.Threads, t.Step),
		Title:   fmt.Sprintf("Hardware efficiency: %s, %d threads --- relative to first result (%s)", t.Step, t.Threads, t.Absolute[0].Cell),
		Columns: cols,
		Notes:   []string{"0/0 is printed 1, x/0 inf; > 1 means more per operation (o/s: more throughput)"},
	}
	for _, r := range t.Relative {
		row := make([]string, 0, len(cols))
		for _, v := range r.Ratios {
			row = append(row, v.String())
		}
		rel.Rows = append(rel.Rows, append(row, r.Cell))
	}
	return append([]Table{abs, rel}, t.volumeTables()...)
}
