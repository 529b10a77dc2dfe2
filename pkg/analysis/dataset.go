package analysis

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/dbbench/dbbench/pkg/results"
)

// CellMeta identifies one cell: one (engine, version, config variant,
// repeat) combination of a run.
type CellMeta struct {
	// Name is the cell's unique name in its dataset; reports print it.
	Name string `json:"name"`
	// Database is the user's label for the database entry ("mariadb").
	Database string `json:"database,omitempty"`
	Engine   string `json:"engine,omitempty"`
	Version  string `json:"version,omitempty"`
	Config   string `json:"config,omitempty"`
	// Repeat numbers repeats of the same combination (from 0 in results
	// documents).
	Repeat int `json:"repeat"`
	// Block is the block the cell ran in (results cell.block, from 1; 0:
	// not blocked). The cells of a block ran one after another on one
	// node, so relative tables pair two combinations' repeats block by
	// block. Block numbers are unique within a dataset (Merge renumbers
	// them), so cells of different runs never share a block.
	Block int `json:"block,omitempty"`
}

var repeatSuffix = regexp.MustCompile(`-r[0-9]+$`)

// Combination is the identity that repeats of one cell share: database (or
// engine), version and config joined by "-" when the version is known,
// otherwise the name without a trailing "-r<N>". Repeat statistics and run
// histories match cells by it.
func (c CellMeta) Combination() string {
	if c.Version == "" {
		return repeatSuffix.ReplaceAllString(c.Name, "")
	}
	db := c.Database
	if db == "" {
		db = c.Engine
	}
	parts := []string{}
	for _, p := range []string{db, c.Version, c.Config} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "-")
}

// Hardware is the per-operation efficiency of the database node for one
// observation (methodology §4). A nil field was not measured; it is never
// read as zero.
type Hardware struct {
	CPUPerOp     *float64 `json:"cpuPerOp,omitempty"`     // cpu/o
	CSPerOp      *float64 `json:"csPerOp,omitempty"`      // cs/o
	ReadsPerOp   *float64 `json:"readsPerOp,omitempty"`   // r/o
	ReadKBPerOp  *float64 `json:"readKbPerOp,omitempty"`  // rKB/o
	WriteKBPerOp *float64 `json:"writeKbPerOp,omitempty"` // wKB/o
	// OpsPerSecond is the divisor q ("o/s"); 0 means "use the
	// observation's QPS".
	OpsPerSecond float64 `json:"opsPerSecond,omitempty"`
	// Volumes are the disk figures per database volume (data, log), when
	// the results split them.
	Volumes []VolumeHW `json:"volumes,omitempty"`
}

// VolumeHW is the disk activity per operation of the device behind one
// database volume (results.VolumeIO).
type VolumeHW struct {
	Name   string `json:"name"`
	Device string `json:"device,omitempty"`
	// SharedDevice: another volume is on the same device, so the figures
	// are the device's for both, not a split.
	SharedDevice bool     `json:"sharedDevice,omitempty"`
	ReadsPerOp   *float64 `json:"readsPerOp,omitempty"`   // r/o
	ReadKBPerOp  *float64 `json:"readKbPerOp,omitempty"`  // rKB/o
	WriteKBPerOp *float64 `json:"writeKbPerOp,omitempty"` // wKB/o
	IOsPerOp     *float64 `json:"iosPerOp,omitempty"`     // io/o
}

// TimeSeries is a per-interval throughput series of one observation.
type TimeSeries struct {
	// IntervalSeconds is the length of one sample (1 for sysbench
	// --report-interval=1; more for a downsampled compact document).
	IntervalSeconds float64 `json:"intervalSeconds"`
	// WarmupSeconds are dropped from the start before any statistic.
	WarmupSeconds float64 `json:"warmupSeconds"`
	// Values are the samples, warm-up included.
	Values []float64 `json:"values"`
}

// Steady returns the samples after the warm-up: a sample is kept when it
// starts at or after WarmupSeconds.
func (s *TimeSeries) Steady() []float64 {
	if s == nil {
		return nil
	}
	if !(s.IntervalSeconds > 0) {
		return s.Values
	}
	skip := 0
	for skip < len(s.Values) && float64(skip)*s.IntervalSeconds < s.WarmupSeconds-1e-9 {
		skip++
	}
	return s.Values[skip:]
}

// Observation is one measured (cell, step, threads).
type Observation struct {
	Cell    string `json:"cell"`
	Step    string `json:"step"`
	Threads int    `json:"threads"`
	// QPS is the throughput relative tables compare: steady-state queries
	// per second (rows per second for steps reported as rows/s).
	QPS float64 `json:"qps"`
	// TPS is transactions per second, when known.
	TPS float64 `json:"tps,omitempty"`
	// HW is the hardware efficiency, when measured.
	HW *Hardware `json:"hw,omitempty"`
	// Counters are the engine's counters per operation by name, when read
	// (results.Counters.PerOp).
	Counters map[string]float64 `json:"counters,omitempty"`
	// Series is the throughput over time, when kept.
	Series *TimeSeries `json:"series,omitempty"`
	// Latency is the response time, when recorded (latency.go).
	Latency *Latency `json:"latency,omitempty"`
}

type obsKey struct {
	cell, step string
	threads    int
}

// Dataset is the input of every report: cells in report order and their
// observations. Build it with NewDataset, AddCell and Add, or with
// FromDocuments / FromManifest. It is not safe for concurrent writes.
type Dataset struct {
	// Name labels the dataset (the run's name).
	Name string
	// Notes record what the adapters skipped (failed steps, unreadable
	// series), so reports can say so.
	Notes []string
	// Unverified are, per cell, the settings of its config variant that the
	// server could not confirm (results provenance.configCheck.unverified):
	// the cell ran, but these may not have been in effect.
	Unverified []UnverifiedSettings

	cells   []CellMeta
	cellIdx map[string]int
	obs     []Observation
	idx     map[obsKey]int
	// invalid are the values the quality gate marked invalid: their
	// (cell, step, threads) has no observation, so nothing computes with
	// them, and tables show them as invalid rather than missing.
	invalid    []InvalidValue
	invalidIdx map[obsKey]int
	steps      []string
	stepIdx    map[string]int
	// cellThreads are each cell's distinct thread counts, unsorted.
	cellThreads map[string][]int
}

// NewDataset returns an empty dataset.
func NewDataset(name string) *Dataset {
	return &Dataset{Name: name, cellIdx: map[string]int{}, idx: map[obsKey]int{}, invalidIdx: map[obsKey]int{},
		stepIdx: map[string]int{}, cellThreads: map[string][]int{}}
}

// Errors of dataset construction and report options; test with errors.Is.
var (
	ErrNoSuchCell    = errors.New("no such cell")
	ErrDuplicate     = errors.New("duplicate")
	ErrInvalid       = errors.New("invalid observation")
	ErrEmpty         = errors.New("no data")
	ErrNoSuchStep    = errors.New("no such step")
	ErrNoThreadCount = errors.New("no such thread count")
)

// AddCell appends a cell; its name must be new and non-empty.
func (d *Dataset) AddCell(c CellMeta) error {
	if c.Name == "" {
		return fmt.Errorf("cell: name must be set: %w", ErrInvalid)
	}
	if _, dup := d.cellIdx[c.Name]; dup {
		return fmt.Errorf("cell %q: %w cell name", c.Name, ErrDuplicate)
	}
	d.cellIdx[c.Name] = len(d.cells)
	d.cells = append(d.cells, c)
	return nil
}

// Add records an observation. Its cell is added (by name only) if unknown.
// It refuses an empty step, threads < 1, a QPS that is negative, NaN or
// infinite, and a second observation of the same (cell, step, threads).
func (d *Dataset) Add(o Observation) error {
	where := fmt.Sprintf("cell %q step %q threads %d", o.Cell, o.Step, o.Threads)
	switch {
	case o.Step == "":
		return fmt.Errorf("%s: step must be set: %w", where, ErrInvalid)
	case o.Threads < 1:
		return fmt.Errorf("%s: threads must be at least 1: %w", where, ErrInvalid)
	case math.IsNaN(o.QPS) || math.IsInf(o.QPS, 0) || o.QPS < 0:
		return fmt.Errorf("%s: qps %v must be a finite number >= 0: %w", where, o.QPS, ErrInvalid)
	}
	if err := checkCounters(o); err != nil {
		return fmt.Errorf("%s: %v: %w", where, err, ErrInvalid)
	}
	k := obsKey{o.Cell, o.Step, o.Threads}
	if err := d.register(where, k); err != nil {
		return err
	}
	d.idx[k] = len(d.obs)
	d.obs = append(d.obs, o)
	return nil
}

// register makes k's cell, step and thread count known, refusing a second
// value (observation or invalid) for k.
func (d *Dataset) register(where string, k obsKey) error {
	_, dup := d.idx[k]
	_, dupInvalid := d.invalidIdx[k]
	if dup || dupInvalid {
		return fmt.Errorf("%s: %w observation", where, ErrDuplicate)
	}
	if _, ok := d.cellIdx[k.cell]; !ok {
		if err := d.AddCell(CellMeta{Name: k.cell}); err != nil {
			return err
		}
	}
	if _, ok := d.stepIdx[k.step]; !ok {
		d.stepIdx[k.step] = len(d.steps)
		d.steps = append(d.steps, k.step)
	}
	if !slices.Contains(d.cellThreads[k.cell], k.threads) {
		d.cellThreads[k.cell] = append(d.cellThreads[k.cell], k.threads)
	}
	return nil
}

// InvalidValue is a step result the quality gate marked invalid
// (results.Quality): measured and kept in its document, but not a value.
// A dataset holds it instead of an observation, so no table, statistic or
// verdict computes with it, and tables say "invalid" where it would be.
type InvalidValue struct {
	Cell    string `json:"cell"`
	Step    string `json:"step"`
	Threads int    `json:"threads"`
	// QPS is the flagged figure (0 when the source did not keep it: a
	// manifest lists invalid results without one), for the note only.
	QPS     float64                 `json:"qps,omitempty"`
	Reasons []results.QualityReason `json:"reasons"`
	// StallSeconds, WindowSeconds and Attempts are the verdict's, when
	// known.
	StallSeconds  float64 `json:"stallSeconds,omitempty"`
	WindowSeconds float64 `json:"windowSeconds,omitempty"`
	Attempts      int     `json:"attempts,omitempty"`
	// Series is its throughput over time, when kept: the evidence.
	Series *TimeSeries `json:"series,omitempty"`
}

// Note says what was left out and why, for a report's notes.
func (v InvalidValue) Note() string {
	why := make([]string, 0, len(v.Reasons))
	for _, r := range v.Reasons {
		if r == results.QualityStalled && v.StallSeconds > 0 {
			why = append(why, fmt.Sprintf("%s %s s of %s s", r, TrimFloat(math.Round(v.StallSeconds*10)/10), TrimFloat(v.WindowSeconds)))
			continue
		}
		why = append(why, string(r))
	}
	s := fmt.Sprintf("cell %s step %s (%d threads) is invalid (%s)", v.Cell, v.Step, v.Threads, strings.Join(why, ", "))
	if v.Attempts > 1 {
		s += fmt.Sprintf(" after %d runs", v.Attempts)
	}
	if v.QPS > 0 {
		s += fmt.Sprintf(": its %s QPS is not a value and is shown as invalid", FormatFloat(v.QPS, 1))
	} else {
		s += ": not a value, shown as invalid"
	}
	return s
}

// AddInvalid records an invalid value. Its cell, step and thread count
// become known, as with Add; a second value for the same (cell, step,
// threads) is refused.
func (d *Dataset) AddInvalid(v InvalidValue) error {
	where := fmt.Sprintf("cell %q step %q threads %d", v.Cell, v.Step, v.Threads)
	if v.Step == "" || v.Threads < 1 {
		return fmt.Errorf("%s: step must be set and threads at least 1: %w", where, ErrInvalid)
	}
	k := obsKey{v.Cell, v.Step, v.Threads}
	if err := d.register(where, k); err != nil {
		return err
	}
	d.invalidIdx[k] = len(d.invalid)
	d.invalid = append(d.invalid, v)
	return nil
}

// Invalid returns the invalid value of (cell, step, threads).
func (d *Dataset) Invalid(cell, step string, threads int) (*InvalidValue, bool) {
	return lookup(d.invalid, d.invalidIdx, obsKey{cell, step, threads})
}

// lookup is the item of items that idx gives k.
func lookup[T any](items []T, idx map[obsKey]int, k obsKey) (*T, bool) {
	i, ok := idx[k]
	if !ok {
		return nil, false
	}
	return &items[i], true
}

// InvalidValues returns every invalid value in insertion order.
func (d *Dataset) InvalidValues() []InvalidValue { return append([]InvalidValue(nil), d.invalid...) }

// Cells returns the cells in report order.
func (d *Dataset) Cells() []CellMeta { return append([]CellMeta(nil), d.cells...) }

// CellNames returns the cell names in report order.
func (d *Dataset) CellNames() []string {
	out := make([]string, len(d.cells))
	for i, c := range d.cells {
		out[i] = c.Name
	}
	return out
}

// Cell returns the named cell.
func (d *Dataset) Cell(name string) (CellMeta, bool) {
	i, ok := d.cellIdx[name]
	if !ok {
		return CellMeta{}, false
	}
	return d.cells[i], true
}

// Get returns the observation of (cell, step, threads).
func (d *Dataset) Get(cell, step string, threads int) (*Observation, bool) {
	return lookup(d.obs, d.idx, obsKey{cell, step, threads})
}

// Observations returns every observation in insertion order.
func (d *Dataset) Observations() []Observation { return append([]Observation(nil), d.obs...) }

// Steps returns every step name in first-seen order (cells list their steps
// in run order, so this is the run order).
func (d *Dataset) Steps() []string { return append([]string(nil), d.steps...) }

// Threads returns the distinct thread counts, ascending.
func (d *Dataset) Threads() []int {
	var out []int
	for _, ts := range d.cellThreads {
		for _, t := range ts {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	sort.Ints(out)
	return out
}

// CellThreads returns the thread counts one cell measured, ascending.
func (d *Dataset) CellThreads(cell string) []int {
	out := slices.Clone(d.cellThreads[cell])
	sort.Ints(out)
	return out
}

// checkCell returns an error naming the known cells when name is unknown.
func (d *Dataset) checkCell(role, name string) error {
	if _, ok := d.cellIdx[name]; ok {
		return nil
	}
	return fmt.Errorf("%s %q: %w in dataset %q (cells: %s)", role, name, ErrNoSuchCell, d.Name, listNames(d.CellNames(), 8))
}

func listNames(names []string, limit int) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) > limit {
		return strings.Join(names[:limit], ", ") + fmt.Sprintf(", ... (%d in all)", len(names))
	}
	return strings.Join(names, ", ")
}

// Select returns a dataset of the named cells only, in the order given:
// how a report shows a subset of a run, or its cells in another order.
// Observations keep their insertion order; the notes are kept whole (they
// are text, not keyed by cell), the unverified settings of the cells left
// out are dropped.
func (d *Dataset) Select(names []string) (*Dataset, error) {
	for _, n := range names {
		if err := d.checkCell("cell", n); err != nil {
			return nil, err
		}
	}
	return d.subset(names, func(Observation) bool { return true })
}

// subset is the dataset of the named cells and the observations keep
// accepts.
func (d *Dataset) subset(names []string, keep func(Observation) bool) (*Dataset, error) {
	out := NewDataset(d.Name)
	kept := map[string]bool{}
	for _, n := range names {
		c, _ := d.Cell(n)
		if err := out.AddCell(c); err != nil {
			return nil, err
		}
		kept[n] = true
	}
	for _, o := range d.obs {
		if kept[o.Cell] && keep(o) {
			if err := out.Add(o); err != nil {
				return nil, err
			}
		}
	}
	for _, v := range d.invalid {
		if kept[v.Cell] && keep(Observation{Cell: v.Cell, Step: v.Step, Threads: v.Threads}) {
			if err := out.AddInvalid(v); err != nil {
				return nil, err
			}
		}
	}
	out.Notes = append([]string(nil), d.Notes...)
	for _, u := range d.Unverified {
		if kept[u.Cell] {
			out.Unverified = append(out.Unverified, u)
		}
	}
	return out, nil
}

// Merge combines datasets into one whose cells are named "<dataset>/<cell>"
// (and whose combinations are "<dataset>/<combination>"), in the order
// given; it is how two runs are compared side by side. Dataset
// names must be distinct and non-empty. Blocks are renumbered after the
// previous parts' (a part's block b becomes b plus the largest block of
// the parts before it), so that cells of different runs, which ran on
// unrelated nodes, are never paired as one block.
func Merge(name string, parts ...*Dataset) (*Dataset, error) {
	out := NewDataset(name)
	seen := map[string]bool{}
	blockOffset := 0
	for _, p := range parts {
		if p.Name == "" || seen[p.Name] {
			return nil, fmt.Errorf("merge: dataset names must be distinct and non-empty (got %q twice or empty): %w", p.Name, ErrDuplicate)
		}
		seen[p.Name] = true
		maxBlock := 0
		for _, c := range p.cells {
			c.Name = p.Name + "/" + c.Name
			if c.Block > 0 {
				maxBlock = max(maxBlock, c.Block)
				c.Block += blockOffset
			}
			// Keep combinations apart too, so repeats of one run are not
			// pooled with the other's.
			if c.Version != "" {
				if c.Database == "" {
					c.Database = c.Engine
				}
				c.Database = p.Name + "/" + c.Database
			}
			if err := out.AddCell(c); err != nil {
				return nil, err
			}
		}
		blockOffset += maxBlock
		for _, o := range p.obs {
			o.Cell = p.Name + "/" + o.Cell
			if err := out.Add(o); err != nil {
				return nil, err
			}
		}
		for _, v := range p.invalid {
			v.Cell = p.Name + "/" + v.Cell
			if err := out.AddInvalid(v); err != nil {
				return nil, err
			}
		}
		for _, n := range p.Notes {
			out.Notes = append(out.Notes, p.Name+": "+n)
		}
		for _, u := range p.Unverified {
			u.Cell = p.Name + "/" + u.Cell
			out.Unverified = append(out.Unverified, u)
		}
	}
	return out, nil
}

// UnverifiedSettings are the settings of one cell's config variant that the
// server could not confirm: options without a server variable, sections no
// server reads, include directives (results.ConfigCheck.Unverified).
type UnverifiedSettings struct {
	Cell     string              `json:"cell"`
	Config   string              `json:"config,omitempty"`
	Settings []UnverifiedSetting `json:"settings"`
}

// UnverifiedSetting is one setting the server could not confirm.
type UnverifiedSetting struct {
	Name string `json:"name"`
	// Line is the setting's line in the variant's text (0 when unknown).
	Line      int    `json:"line,omitempty"`
	Requested string `json:"requested,omitempty"`
	// Reason says why it could not be verified.
	Reason string `json:"reason,omitempty"`
}

// UnverifiedTable lists, per cell, the settings its server could not
// confirm, or returns false when every setting was verified.
func UnverifiedTable(us []UnverifiedSettings) (Table, bool) {
	t := Table{
		ID:      "config.unverified",
		Title:   "Config settings not verified (the server cannot report them; the cells ran, but these may not have been in effect)",
		Columns: []string{"cell", "config", "line", "setting", "requested", "why"},
	}
	for _, u := range us {
		for _, s := range u.Settings {
			line := ""
			if s.Line > 0 {
				line = fmt.Sprint(s.Line)
			}
			t.Rows = append(t.Rows, []string{u.Cell, u.Config, line, s.Name, s.Requested, s.Reason})
		}
	}
	return t, len(t.Rows) > 0
}
