// Package matrix expands a BenchmarkRun into its cells: one per (database,
// version, config variant, repeat), in a deterministic order, with
// deterministic names for the cell and its child objects. The thread sweep
// and the steps run inside a cell, so they do not multiply cells.
package matrix

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/workload"
)

// DefaultConfigName names the implicit variant of a database without configs.
const DefaultConfigName = "default"

// Cell is one combination of the matrix.
type Cell struct {
	// Index is the cell's position in the matrix order (0-based).
	Index int
	// Name is the human name used in status and reports:
	// <database>-<version>-<config>[-r<repeat>].
	Name string
	// Combination is Name without the repeat: the cells of one
	// combination are repeats of each other.
	Combination string
	// ObjectBase prefixes the names of the cell's child objects. It is a
	// DNS-1035 label of at most MaxObjectBaseLen characters, unique per run
	// and run UID.
	ObjectBase string

	Database *dbbenchv1alpha1.DatabaseSpec
	Config   dbbenchv1alpha1.ConfigVariant
	Version  string
	// Repeat is 1-based.
	Repeat int32
	// Block is the block the cell runs in (spec.placement.blocks: its
	// repeat), 0 when the run is not blocked.
	Block int32
	// Image is the database image with {version} substituted.
	Image string
	// Preflight marks the pre-flight check of a (database, version, config)
	// pair (PreflightCells): a cell whose agent stops after checking that
	// the server answers with the variant's settings.
	Preflight bool
}

// MaxObjectBaseLen leaves room for suffixes such as "-client-a10" within the
// 63-character limit of label values and Service names.
const MaxObjectBaseLen = 47

// DefaultImage returns the official image template of an engine.
func DefaultImage(e dbbenchv1alpha1.Engine) string {
	return string(e) + ":{version}"
}

// Expand returns the run's cells: Rounds(run) repeats of every combination.
// Repeats are the outermost loop so that repeats of one combination are
// spread over the run's duration instead of running back to back (drift in
// the environment then shows as spread rather than as a difference between
// versions); then databases, versions and config variants in spec order.
// With workload.precision or placement.blocks every second round runs in
// the reverse order (A B C, C B A, ...), so that a linear drift adds the
// same to every combination's mean over each pair of rounds and cancels in
// their ratios; a blocked run's block runs its cells in this order.
func Expand(run *dbbenchv1alpha1.BenchmarkRun) []Cell {
	return ExpandRounds(run, Rounds(run))
}

// ExpandRounds returns the cells of the run's first rounds repeats, in
// Expand's order.
func ExpandRounds(run *dbbenchv1alpha1.BenchmarkRun, rounds int32) []Cell {
	rounds = max(rounds, 1)
	reverse := run.Spec.Workload.Precision != nil || run.Spec.Placement.Blocked()
	var block int32
	var cells []Cell
	for rep := int32(1); rep <= rounds; rep++ {
		if run.Spec.Placement.Blocked() {
			block = rep
		}
		var round []Cell
		for i := range run.Spec.Databases {
			db := &run.Spec.Databases[i]
			for _, version := range Versions(db) {
				for _, cfg := range Configs(db) {
					comb := fmt.Sprintf("%s-%s-%s", db.Name, version, cfg.Name)
					name := comb
					if Repeated(run) {
						name = fmt.Sprintf("%s-r%d", name, rep)
					}
					image := db.Image
					if image == "" && db.External == nil && db.Template == nil {
						image = DefaultImage(db.Engine)
					}
					round = append(round, Cell{
						Name:        name,
						Combination: comb,
						ObjectBase:  ObjectBase(run.Name, string(run.UID), name),
						Database:    db,
						Config:      cfg,
						Version:     version,
						Repeat:      rep,
						Block:       block,
						Image:       strings.ReplaceAll(image, "{version}", version),
					})
				}
			}
		}
		if reverse && rep%2 == 0 {
			slices.Reverse(round)
		}
		for _, c := range round {
			c.Index = len(cells)
			cells = append(cells, c)
		}
	}
	return cells
}

// Repeated reports whether the run's cell names carry their repeat
// (-r<repeat>): with workload.repeats above 1 or with workload.precision.
func Repeated(run *dbbenchv1alpha1.BenchmarkRun) bool {
	return run.Spec.Workload.Repeats > 1 || run.Spec.Workload.Precision != nil
}

// Rounds is how many repeats of every combination the run has now:
// workload.repeats, or with workload.precision the rounds the controller
// has added (status.precision.rounds), at least minRepeats and at most
// maxRepeats. The status is the record of that decision, so every reader
// of the run (the controller after a restart, the kubectl plugin) expands
// the same cells.
func Rounds(run *dbbenchv1alpha1.BenchmarkRun) int32 {
	p := run.Spec.Workload.Precision
	if p == nil {
		return run.Spec.Workload.RepeatsPerCell()
	}
	n := p.Min()
	if st := run.Status.Precision; st != nil && st.Rounds > n {
		n = st.Rounds
	}
	return min(n, p.Max())
}

// MaxRounds is the most repeats the run can have: workload.repeats, or
// workload.precision.maxRepeats.
func MaxRounds(run *dbbenchv1alpha1.BenchmarkRun) int32 {
	if p := run.Spec.Workload.Precision; p != nil {
		return p.Max()
	}
	return run.Spec.Workload.RepeatsPerCell()
}

// preflightPrefix keeps the objects of a pair's pre-flight apart from those
// of the pair's cells (whose name is the pair's when there is one repeat).
const preflightPrefix = "pf-"

// PreflightCells returns one cell per (database, version, config variant)
// pair, in matrix order, for the run's pre-flight: the first repeat's cell,
// named <database>-<version>-<config> and with its own child objects.
func PreflightCells(run *dbbenchv1alpha1.BenchmarkRun) []Cell {
	var out []Cell
	for _, c := range Expand(run) {
		// An external target has no server start to check and no config
		// variant: its cells' own connection wait is the check. A
		// templated target's server is its operator's: the wait for its
		// ready condition is the check.
		if c.Repeat != 1 || c.External() || c.Templated() {
			continue
		}
		c.Index = len(out)
		c.Name = fmt.Sprintf("%s-%s-%s", c.Database.Name, c.Version, c.Config.Name)
		c.ObjectBase = ObjectBase(run.Name, string(run.UID), preflightPrefix+c.Name)
		c.Preflight = true
		out = append(out, c)
	}
	return out
}

// ExternalVersion is the version label of an external target's cells (cell
// <database>-external-default): its real version is what the server
// reports, recorded in the results' provenance.
const ExternalVersion = "external"

// Versions returns a database's versions, or ExternalVersion for an
// external target.
func Versions(db *dbbenchv1alpha1.DatabaseSpec) []string {
	if db.External != nil {
		return []string{ExternalVersion}
	}
	return db.Versions
}

// External reports whether the cell's database is an external target (no
// database pod, Service or config of dbbench's).
func (c Cell) External() bool { return c.Database != nil && c.Database.External != nil }

// Templated reports whether the cell's database is created per cell from
// databases[].template. Once the object is ready the controller gives the
// cell an external view of it (External is then true as well).
func (c Cell) Templated() bool { return c.Database != nil && c.Database.Template != nil }

// Configs returns a database's config variants, or the implicit "default"
// (server defaults) when it declares none.
func Configs(db *dbbenchv1alpha1.DatabaseSpec) []dbbenchv1alpha1.ConfigVariant {
	if len(db.Configs) == 0 {
		return []dbbenchv1alpha1.ConfigVariant{{Name: DefaultConfigName}}
	}
	return db.Configs
}

// BaselineName returns the name of the baseline cell: spec.baseline, with
// omitted parts taken from the first version, config and repeat; or the
// first cell of the matrix.
func BaselineName(run *dbbenchv1alpha1.BenchmarkRun) string {
	b := run.Spec.Baseline
	if b == nil {
		cells := Expand(run)
		if len(cells) == 0 {
			return ""
		}
		return cells[0].Name
	}
	for i := range run.Spec.Databases {
		db := &run.Spec.Databases[i]
		if db.Name != b.Database {
			continue
		}
		version := b.Version
		if vs := Versions(db); version == "" && len(vs) > 0 {
			version = vs[0]
		}
		config := b.Config
		if config == "" {
			config = Configs(db)[0].Name
		}
		name := fmt.Sprintf("%s-%s-%s", db.Name, version, config)
		if Repeated(run) {
			rep := b.Repeat
			if rep < 1 {
				rep = 1
			}
			name = fmt.Sprintf("%s-r%d", name, rep)
		}
		return name
	}
	return ""
}

// Steps returns the step names a cell runs, in order: spec.workload.steps, or
// the step set's names.
func Steps(w dbbenchv1alpha1.WorkloadSpec) ([]string, error) {
	if len(w.Steps) > 0 {
		return append([]string(nil), w.Steps...), nil
	}
	steps, err := workload.BySet(workload.Set(w.StepSet))
	if err != nil {
		return nil, fmt.Errorf("workload.stepSet: %w", err)
	}
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.Name
	}
	return names, nil
}

// ObjectBase builds the child-object name prefix of a cell: the run name and
// cell name, sanitised to a DNS-1035 label and truncated, plus a short hash of
// the run UID and cell name so that truncation never makes two cells (or a
// re-created run with the same name) collide.
func ObjectBase(runName, runUID, cellName string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(runUID))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(cellName))
	suffix := fmt.Sprintf("%05x", h.Sum32()&0xfffff)
	run := truncate(sanitize(runName), 20)
	cell := truncate(sanitize(cellName), MaxObjectBaseLen-len(run)-len(suffix)-2)
	parts := []string{run, cell, suffix}
	out := strings.Join(nonEmpty(parts), "-")
	if out[0] < 'a' || out[0] > 'z' {
		out = "c" + out[:len(out)-1]
	}
	return out
}

// sanitize lowercases and replaces every character outside [a-z0-9-] by '-',
// collapsing runs of '-'.
func sanitize(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
		if !ok {
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = true
			continue
		}
		b.WriteRune(r)
		dash = false
	}
	return strings.Trim(b.String(), "-")
}

func truncate(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) > n {
		s = s[:n]
	}
	return strings.Trim(s, "-")
}

func nonEmpty(in []string) []string {
	out := in[:0]
	for _, s := range in {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
