// Package workload is the sysbench step catalog that dbbench runs: the
// standard 32-step microbenchmark suite (and its 42-step variant with `.pre`
// read steps before the writes), in the fixed order that the methodology
// requires, because the steps run on the same data and are not independent.
//
// It has no Kubernetes dependencies: the operator, the agent and the reports
// all read step names, groups and durations from here.
package workload

import (
	"fmt"
	"sort"
	"strings"
)

// Group classifies a step for the group summaries users publish.
type Group string

const (
	// GroupPoint is point queries.
	GroupPoint Group = "point"
	// GroupRangeNoAgg is range queries without aggregation ("range, part 1").
	GroupRangeNoAgg Group = "range-noagg"
	// GroupRangeAgg is range queries with aggregation ("range, part 2").
	GroupRangeAgg Group = "range-agg"
	// GroupWrite is writes.
	GroupWrite Group = "write"
)

// Groups lists the standard groups in report order.
var Groups = []Group{GroupPoint, GroupRangeNoAgg, GroupRangeAgg, GroupWrite}

// Phase is where a step sits in a cell's fixed sequence.
type Phase string

const (
	PhasePreWrite  Phase = "read-before-writes" // the optional `.pre` steps
	PhaseWrite     Phase = "write-heavy"
	PhasePostWrite Phase = "read-after-writes"
	PhaseInsDel    Phase = "delete-insert"
	PhaseTPCC      Phase = "tpcc"
	PhaseCustom    Phase = "custom"
)

// DurationClass says which configured duration a step runs for.
type DurationClass string

const (
	ReadDuration  DurationClass = "read"
	WriteDuration DurationClass = "write"
)

// Step is one entry of the catalog.
type Step struct {
	// Name is the step's stable identifier, as reports and seeds print it.
	Name string
	// Group is the report group.
	Group Group
	// Phase is the step's place in the sequence.
	Phase Phase
	// Duration is which configured duration applies.
	Duration DurationClass
	// QueriesPerEvent counts SQL statements per sysbench event (BEGIN and
	// COMMIT included), for cross-checking QPS against TPS.
	QueriesPerEvent int
	// Script is the sysbench Lua script: a bare name ("oltp_point_select") is
	// one that stock sysbench ships; a "dbbench/" prefix is one of ours.
	Script string
	// Args are the script's extra options.
	Args []string
	// RowsPerSecond marks steps reported as rows/s rather than queries/s.
	RowsPerSecond bool
	// FlushAfter asks for the engine's flush (InnoDB dirty pages, VACUUM +
	// CHECKPOINT) after the step, as the reference method does after the
	// heaviest write step.
	FlushAfter bool
	// SQL describes what one event does, for docs and `kubectl explain`.
	SQL string
}

// PreSuffix marks the `.pre` copy of a read step that the 42-step variant runs
// before the writes.
const PreSuffix = ".pre"

// Set names a predefined list of steps.
type Set string

const (
	// SetStandard is the 32 reported steps in their order.
	SetStandard Set = "standard"
	// SetExtended is the older 42-step variant: the 32 steps plus `.pre`
	// copies of 10 read steps run before the writes.
	SetExtended Set = "extended"
)

// TPCCStep is the name of the TPC-C step (configured separately).
const TPCCStep = "tpcc"

// The pgbench steps (PostgreSQL only): pgbench's built-in TPC-B-like
// script (writes) and its select-only script (reads), on pgbench's own
// tables (workload.pgbench.scale), run by the pgbench binary rather than
// sysbench.
const (
	PgbenchTPCBStep   = "pgbench-tpcb"
	PgbenchSelectStep = "pgbench-select"
)

// PgbenchBuiltin is pgbench's -b name of a pgbench step, "" for any other
// step.
func PgbenchBuiltin(step string) string {
	switch step {
	case PgbenchTPCBStep:
		return "tpcb-like"
	case PgbenchSelectStep:
		return "select-only"
	}
	return ""
}

func w(name string, qpe int, script string, args ...string) Step {
	return Step{Name: name, Group: GroupWrite, Phase: PhaseWrite, Duration: WriteDuration, QueriesPerEvent: qpe, Script: script, Args: args}
}

func r(name string, g Group, qpe int, script string, args ...string) Step {
	return Step{Name: name, Group: g, Phase: PhasePostWrite, Duration: ReadDuration, QueriesPerEvent: qpe, Script: script, Args: args}
}

// standard is the reported catalog in run order; see docs/workload.md.
var standard = func() []Step {
	s := []Step{
		w("update-inlist", 1, "dbbench/update", "--update-kind=inlist", "--inlist-size=10"),
		w("update-index", 1, "oltp_update_index"),
		w("update-nonindex", 1, "oltp_update_non_index"),
		w("update-one", 1, "dbbench/update", "--update-kind=one"),
		w("update-zipf", 1, "dbbench/update", "--update-kind=zipf", "--zipf-exp=0.8"),
		w("write-only", 6, "oltp_write_only"),
		w("read-write_range=10", 20, "oltp_read_write", "--range-size=10"),
		w("read-write_range=100", 20, "oltp_read_write", "--range-size=100"),
		r("scan", GroupRangeNoAgg, 1, "dbbench/scan"),
		r("read-only_range=10", GroupRangeAgg, 16, "oltp_read_only", "--range-size=10"),
		r("read-only_range=100", GroupRangeAgg, 16, "oltp_read_only", "--range-size=100"),
		r("read-only_range=10000", GroupRangeAgg, 16, "oltp_read_only", "--range-size=10000"),
		r("read-only-simple", GroupRangeAgg, 13, "dbbench/read_only", "--query=simple", "--range-size=1000"),
		r("read-only-sum", GroupRangeAgg, 13, "dbbench/read_only", "--query=sum", "--range-size=1000"),
		r("read-only-order", GroupRangeAgg, 13, "dbbench/read_only", "--query=order", "--range-size=1000"),
		r("read-only-distinct", GroupRangeAgg, 13, "dbbench/read_only", "--query=distinct", "--range-size=1000"),
		r("read-only-count", GroupRangeAgg, 1, "dbbench/read_only", "--query=count", "--range-size=1000", "--no-trx"),
		r("point-query", GroupPoint, 1, "oltp_point_select"),
		r("random-points_range=10", GroupPoint, 1, "dbbench/points", "--points=random", "--inlist-size=10"),
		r("random-points_range=100", GroupPoint, 1, "dbbench/points", "--points=random", "--inlist-size=100"),
		r("random-points_range=1000", GroupPoint, 1, "dbbench/points", "--points=random", "--inlist-size=1000"),
		r("hot-points", GroupPoint, 1, "dbbench/points", "--points=hot", "--inlist-size=100"),
		r("points-covered-pk", GroupPoint, 1, "dbbench/points", "--points=covered-pk", "--inlist-size=100"),
		r("points-notcovered-pk", GroupPoint, 1, "dbbench/points", "--points=notcovered-pk", "--inlist-size=100"),
		r("range-covered-pk", GroupRangeNoAgg, 1, "dbbench/range", "--range-kind=covered-pk", "--range-size=100"),
		r("range-notcovered-pk", GroupRangeNoAgg, 1, "dbbench/range", "--range-kind=notcovered-pk", "--range-size=100"),
		r("points-covered-si", GroupPoint, 1, "dbbench/points", "--points=covered-si", "--inlist-size=100"),
		r("points-notcovered-si", GroupPoint, 1, "dbbench/points", "--points=notcovered-si", "--inlist-size=100"),
		r("range-covered-si", GroupRangeNoAgg, 1, "dbbench/range", "--range-kind=covered-si", "--range-size=100"),
		r("range-notcovered-si", GroupRangeNoAgg, 1, "dbbench/range", "--range-kind=notcovered-si", "--range-size=100"),
		w("delete", 1, "oltp_delete"),
		w("insert", 1, "oltp_insert"),
	}
	for i := range s {
		s[i].SQL = stepSQL[s[i].Name]
		switch s[i].Name {
		case "write-only":
			// The reference method runs write-only for the read duration.
			s[i].Duration = ReadDuration
		case "read-write_range=100":
			s[i].FlushAfter = true
		case "scan":
			s[i].RowsPerSecond = true
		case "delete", "insert":
			s[i].Phase = PhaseInsDel
		}
	}
	return s
}()

// stepSQL is what one event of each step runs (sbtest is the event's
// table, ? a random value); the scripts' headers (lua/dbbench/*.lua, and
// sysbench's own oltp_*.lua) have the details.
var stepSQL = map[string]string{
	"update-inlist":            "UPDATE sbtest SET c=? WHERE id IN (10 random ids)",
	"update-index":             "UPDATE sbtest SET k=k+1 WHERE id=? (k is indexed)",
	"update-nonindex":          "UPDATE sbtest SET c=? WHERE id=? (c is not indexed)",
	"update-one":               "UPDATE sbtest SET c=? WHERE id=1 (one hot row)",
	"update-zipf":              "UPDATE sbtest SET c=? WHERE id=? (ids zipfian, exponent 0.8)",
	"write-only":               "BEGIN; an indexed and a non-indexed UPDATE, DELETE and re-INSERT of one row; COMMIT",
	"read-write_range=10":      "BEGIN; 10 point SELECTs, 4 range SELECTs over 10 ids (plain, SUM, ORDER BY, DISTINCT), the write-only writes; COMMIT",
	"read-write_range=100":     "as read-write_range=10, the ranges over 100 ids",
	"scan":                     "SELECT * FROM sbtest WHERE LENGTH(c) < 0 (a full scan that returns nothing; reported as rows/s)",
	"read-only_range=10":       "BEGIN; 10 point SELECTs, 4 range SELECTs over 10 ids (plain, SUM, ORDER BY, DISTINCT); COMMIT",
	"read-only_range=100":      "as read-only_range=10, the ranges over 100 ids",
	"read-only_range=10000":    "as read-only_range=10, the ranges over 10,000 ids",
	"read-only-simple":         "BEGIN; 10 point SELECTs; SELECT c FROM sbtest WHERE id BETWEEN ? AND ?+1000; COMMIT",
	"read-only-sum":            "BEGIN; 10 point SELECTs; SELECT SUM(k) over 1,000 ids; COMMIT",
	"read-only-order":          "BEGIN; 10 point SELECTs; SELECT c over 1,000 ids ORDER BY c; COMMIT",
	"read-only-distinct":       "BEGIN; 10 point SELECTs; SELECT DISTINCT c over 1,000 ids ORDER BY c; COMMIT",
	"read-only-count":          "SELECT count(c) FROM sbtest WHERE id BETWEEN ? AND ?+1000 (autocommit)",
	"point-query":              "SELECT c FROM sbtest WHERE id=?",
	"random-points_range=10":   "SELECT c FROM sbtest WHERE id IN (10 random ids)",
	"random-points_range=100":  "SELECT c FROM sbtest WHERE id IN (100 random ids)",
	"random-points_range=1000": "SELECT c FROM sbtest WHERE id IN (1,000 random ids)",
	"hot-points":               "SELECT c FROM sbtest WHERE id IN (100 fixed ids in the middle of the table)",
	"points-covered-pk":        "SELECT id FROM sbtest WHERE id IN (100 random ids) (the primary key covers it)",
	"points-notcovered-pk":     "SELECT id, c FROM sbtest WHERE id IN (100 random ids)",
	"range-covered-pk":         "SELECT id FROM sbtest WHERE id BETWEEN ? AND ?+100",
	"range-notcovered-pk":      "SELECT id, c FROM sbtest WHERE id BETWEEN ? AND ?+100",
	"points-covered-si":        "SELECT k FROM sbtest WHERE k IN (100 random values) (the secondary index covers it)",
	"points-notcovered-si":     "SELECT k, c FROM sbtest WHERE k IN (100 random values)",
	"range-covered-si":         "SELECT k FROM sbtest WHERE k BETWEEN ? AND ?+100",
	"range-notcovered-si":      "SELECT k, c FROM sbtest WHERE k BETWEEN ? AND ?+100",
	"delete":                   "DELETE FROM sbtest WHERE id=?",
	"insert":                   "INSERT INTO sbtest (id, k, c, pad) VALUES (…) (new ids)",
}

// preNames are the read steps the 42-step variant also runs before the writes.
var preNames = []string{
	"point-query", "random-points_range=100",
	"points-covered-pk", "points-notcovered-pk", "points-covered-si", "points-notcovered-si",
	"range-covered-pk", "range-notcovered-pk", "range-covered-si", "range-notcovered-si",
}

var byName = func() map[string]Step {
	m := make(map[string]Step, len(standard)+len(preNames))
	for _, s := range standard {
		m[s.Name] = s
	}
	for _, n := range preNames {
		s := m[n]
		s.Name = n + PreSuffix
		s.Phase = PhasePreWrite
		s.Args = append([]string(nil), s.Args...)
		m[s.Name] = s
	}
	return m
}()

// Standard returns the 32 reported steps in run order.
func Standard() []Step { return clone(standard) }

// Extended returns the 42-step variant: the `.pre` read steps, then the 32.
func Extended() []Step {
	out := make([]Step, 0, len(preNames)+len(standard))
	for _, n := range preNames {
		out = append(out, byName[n+PreSuffix])
	}
	return append(out, clone(standard)...)
}

// BySet returns the steps of a predefined set.
func BySet(set Set) ([]Step, error) {
	switch set {
	case SetStandard, "":
		return Standard(), nil
	case SetExtended:
		return Extended(), nil
	}
	return nil, fmt.Errorf("unknown step set %q (known: %s, %s)", set, SetStandard, SetExtended)
}

// Lookup finds a catalog step by name.
func Lookup(name string) (Step, bool) {
	s, ok := byName[name]
	return s, ok
}

// Names returns every catalog step name (the 32 and the `.pre` copies), sorted.
func Names() []string {
	out := make([]string, 0, len(byName))
	for n := range byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Resolve returns the named steps in the order given. It fails on the first
// unknown name and says which one, with the closest known names.
func Resolve(names []string) ([]Step, error) {
	out := make([]Step, 0, len(names))
	for i, n := range names {
		s, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("steps[%d]: %q is not in the step catalog%s", i, n, suggest(n))
		}
		out = append(out, s)
	}
	return out, nil
}

// UnreportedSuffixes mark the copies of a step that published tables leave
// out: the `.pre` runs before the writes, and the warm-ups (`.warm`, and
// `.warmpre`, the scripts' warm-up before the `.pre` steps).
var UnreportedSuffixes = []string{".warmpre", ".warm", PreSuffix}

// Reported reports whether a step belongs in published tables: the methodology
// leaves `.pre` and `.warm` (and `.warmpre`) steps out.
func Reported(name string) bool {
	_, suffix := SplitSuffix(name)
	return suffix == ""
}

// SplitSuffix splits a step name into the step and the suffix of
// UnreportedSuffixes it ends with ("scan.warm" is "scan", ".warm"); the
// suffix is empty when there is none.
func SplitSuffix(name string) (base, suffix string) {
	for _, s := range UnreportedSuffixes {
		if b, ok := strings.CutSuffix(name, s); ok && b != "" {
			return b, s
		}
	}
	return name, ""
}

// GroupOf returns the group of a step name, including `.pre` copies.
func GroupOf(name string) (Group, bool) {
	s, ok := byName[name]
	return s.Group, ok
}

// suggest names the catalog steps that share the longest prefix with name
// (at least 4 characters), the likely intended ones.
func suggest(name string) string {
	best, bestLen := []string(nil), 3
	for _, n := range Names() {
		l := commonPrefix(n, name)
		switch {
		case l > bestLen:
			best, bestLen = []string{n}, l
		case l == bestLen && best != nil:
			best = append(best, n)
		}
	}
	if len(best) == 0 || len(best) > 5 {
		return ""
	}
	return " (did you mean " + strings.Join(best, ", ") + "?)"
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func clone(in []Step) []Step {
	out := make([]Step, len(in))
	for i, s := range in {
		s.Args = append([]string(nil), s.Args...)
		out[i] = s
	}
	return out
}
