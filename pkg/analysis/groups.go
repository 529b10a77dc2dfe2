package analysis

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/dbbench/dbbench/pkg/workload"
)

// Grouping assigns steps to report groups. It is data: the catalog's four
// groups are the default (CatalogGrouping), and users supply their own with
// ParseGrouping (for example the five groups of older studies, which split
// point and range queries into "part 1" and "part 2").
type Grouping struct {
	Name   string     `json:"name,omitempty"`
	Groups []GroupDef `json:"groups"`
}

// GroupDef is one group: a name and the steps in it. A step entry may be a
// shell-style pattern ("points-*", "random-points_range=*"), matched with
// path.Match.
type GroupDef struct {
	Name  string   `json:"name"`
	Steps []string `json:"steps"`
}

// catalogTitles are the group names the recent studies print.
var catalogTitles = map[workload.Group]string{
	workload.GroupPoint:      "point",
	workload.GroupRangeNoAgg: "range, part 1",
	workload.GroupRangeAgg:   "range, part 2",
	workload.GroupWrite:      "writes",
}

// CatalogGrouping is the step catalog's four groups: point queries, range
// queries without aggregation (part 1), with aggregation (part 2), writes.
// The 42-step variant's `.pre` copies belong to their step's group.
func CatalogGrouping() Grouping {
	g := Grouping{Name: "catalog"}
	idx := map[workload.Group]int{}
	for _, grp := range workload.Groups {
		idx[grp] = len(g.Groups)
		g.Groups = append(g.Groups, GroupDef{Name: catalogTitles[grp]})
	}
	for _, s := range workload.Extended() {
		i := idx[s.Group]
		g.Groups[i].Steps = append(g.Groups[i].Steps, s.Name)
	}
	return g
}

// Validate checks names, patterns and duplicates.
func (g Grouping) Validate() error {
	if len(g.Groups) == 0 {
		return fmt.Errorf("grouping %q: no groups", g.Name)
	}
	seen := map[string]bool{}
	for i, d := range g.Groups {
		if strings.TrimSpace(d.Name) == "" {
			return fmt.Errorf("grouping %q: groups[%d]: name must be set", g.Name, i)
		}
		if seen[d.Name] {
			return fmt.Errorf("grouping %q: group %q appears twice", g.Name, d.Name)
		}
		seen[d.Name] = true
		if len(d.Steps) == 0 {
			return fmt.Errorf("grouping %q: group %q has no steps", g.Name, d.Name)
		}
		for _, s := range d.Steps {
			if _, err := path.Match(s, ""); err != nil {
				return fmt.Errorf("grouping %q: group %q: step pattern %q: %v", g.Name, d.Name, s, err)
			}
		}
	}
	return nil
}

// GroupOf returns the first group whose steps match step.
func (g Grouping) GroupOf(step string) (string, bool) {
	for _, d := range g.Groups {
		for _, p := range d.Steps {
			if p == step {
				return d.Name, true
			}
			if ok, _ := path.Match(p, step); ok {
				return d.Name, true
			}
		}
	}
	return "", false
}

// Names returns the group names in order.
func (g Grouping) Names() []string {
	out := make([]string, len(g.Groups))
	for i, d := range g.Groups {
		out[i] = d.Name
	}
	return out
}

// ParseGrouping reads a grouping as JSON (a Grouping object) or as text, one
// group per line:
//
//	# older studies' five groups
//	point, part 1: point-query, points-covered-*, hot-points
//	writes: update-*, write-only, read-write_range=*, delete, insert
//
// The group name runs to the first colon; steps are separated by commas or
// blanks. Blank lines and lines starting with # are ignored.
func ParseGrouping(r io.Reader) (Grouping, error) {
	data, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return Grouping{}, fmt.Errorf("reading grouping: %w", err)
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		var g Grouping
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&g); err != nil {
			return Grouping{}, fmt.Errorf("grouping JSON: %w", err)
		}
		return g, g.Validate()
	}
	var g Grouping
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, steps, ok := strings.Cut(line, ":")
		if !ok {
			return Grouping{}, fmt.Errorf("grouping line %d %q: want \"group name: step, step, ...\"", n, line)
		}
		d := GroupDef{Name: strings.TrimSpace(name)}
		d.Steps = strings.FieldsFunc(steps, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		g.Groups = append(g.Groups, d)
	}
	if err := sc.Err(); err != nil {
		return Grouping{}, err
	}
	return g, g.Validate()
}

// GroupStat is the summary of one cell's relative values in one group.
// Missing steps are left out of the statistics and counted.
type GroupStat struct {
	Summary
	// Missing counts the group's steps without a ratio, Invalid those of
	// them whose value the quality gate marked invalid.
	Missing int `json:"missing"`
	Invalid int `json:"invalid,omitempty"`
	// Marked is how many of the group's ratios carry a noise marker
	// (RelativeTable.Inference) and WithinNoise how many of those are
	// MarkerNoise: the averages above mix ratios that are noise with
	// ratios that may not be.
	Marked      int `json:"marked,omitempty"`
	WithinNoise int `json:"withinNoise,omitempty"`
}

// GroupTable holds the group statistics of every cell of a relative table.
type GroupTable struct {
	Base     string     `json:"base"`
	Threads  int        `json:"threads"`
	Grouping string     `json:"grouping"`
	Stddev   StddevKind `json:"stddev"`
	Groups   []string   `json:"groups"`
	Cells    []string   `json:"cells"`
	// Stats[i][j] is cell i, group j.
	Stats [][]GroupStat `json:"stats"`
	// Members[j] lists the steps of group j present in the table.
	Members [][]string `json:"members"`
	// Ungrouped are the table's steps that no group claims.
	Ungrouped []string `json:"ungrouped,omitempty"`
}

// GroupStats summarises each cell's relative values per group: average,
// median, min, max and stddev (of the kind asked; "" means sample). The
// statistics use the unrounded ratios, not the 2-decimal text.
func GroupStats(t *RelativeTable, g Grouping, kind StddevKind) (*GroupTable, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if err := kind.Validate(); err != nil {
		return nil, err
	}
	if kind == "" {
		kind = StddevSample
	}
	gt := &GroupTable{Base: t.Base, Threads: t.Threads, Grouping: g.Name, Stddev: kind,
		Groups: g.Names(), Cells: t.Cells, Members: make([][]string, len(g.Groups))}
	gi := map[string]int{}
	for j, n := range gt.Groups {
		gi[n] = j
	}
	stepGroup := make([]int, len(t.Steps))
	for i, s := range t.Steps {
		name, ok := g.GroupOf(s)
		if !ok {
			stepGroup[i] = -1
			gt.Ungrouped = append(gt.Ungrouped, s)
			continue
		}
		stepGroup[i] = gi[name]
		gt.Members[gi[name]] = append(gt.Members[gi[name]], s)
	}
	vals := make([][]float64, len(gt.Groups))
	for c := range t.Cells {
		missing, invalid := make([]int, len(gt.Groups)), make([]int, len(gt.Groups))
		marked, noise := make([]int, len(gt.Groups)), make([]int, len(gt.Groups))
		for j := range vals {
			vals[j] = vals[j][:0]
		}
		for i := range t.Steps {
			j := stepGroup[i]
			if j < 0 {
				continue
			}
			r := t.Ratios[i][c]
			if r.IsMissing() {
				missing[j]++
				if r.State == RatioInvalid {
					invalid[j]++
				}
				continue
			}
			vals[j] = append(vals[j], r.Value)
			if i < len(t.Inference) && t.Inference[i] != nil && t.Inference[i][c] != nil {
				marked[j]++
				if t.Inference[i][c].Marker == MarkerNoise {
					noise[j]++
				}
			}
		}
		row := make([]GroupStat, len(gt.Groups))
		for j := range row {
			row[j] = GroupStat{Summary: Summarize(vals[j], kind), Missing: missing[j], Invalid: invalid[j], Marked: marked[j], WithinNoise: noise[j]}
		}
		gt.Stats = append(gt.Stats, row)
	}
	return gt, nil
}

// Tables renders one table per cell, laid out like the studies' summary
// tables: rows average, median, min, max, stddev; one column per group.
func (gt *GroupTable) Tables() []Table {
	var out []Table
	for i, c := range gt.Cells {
		t := Table{
			ID:      fmt.Sprintf("groups.t%d.%s", gt.Threads, c),
			Title:   fmt.Sprintf("Group statistics of QPS(%s) / QPS(%s), %d threads", c, gt.Base, gt.Threads),
			Columns: append([]string{""}, gt.Groups...),
		}
		stats := gt.Stats[i]
		for _, line := range []struct {
			label string
			get   func(GroupStat) Num
		}{
			{"average", func(s GroupStat) Num { return s.Average }},
			{"median", func(s GroupStat) Num { return s.Median }},
			{"min", func(s GroupStat) Num { return s.Min }},
			{"max", func(s GroupStat) Num { return s.Max }},
			{"stddev", func(s GroupStat) Num { return s.Stddev }},
		} {
			row := []string{line.label}
			for _, s := range stats {
				row = append(row, line.get(s).Format(2))
			}
			t.Rows = append(t.Rows, row)
		}
		nrow := []string{"steps"}
		wrow, anyMarked := []string{"within noise (" + string(MarkerNoise) + ")"}, false
		for _, s := range stats {
			nrow = append(nrow, fmt.Sprint(s.N))
			wrow = append(wrow, fmt.Sprintf("%d of %d", s.WithinNoise, s.Marked))
			anyMarked = anyMarked || s.Marked > 0
		}
		t.Rows = append(t.Rows, nrow)
		if anyMarked {
			t.Rows = append(t.Rows, wrow)
			t.Notes = append(t.Notes, "within noise: how many of the group's marked ratios are marked "+string(MarkerNoise)+" in the relative table; the statistics above include them")
		}
		t.Notes = append(t.Notes, "stddev is the "+gt.Stddev.Label())
		for j, s := range stats {
			switch {
			case s.Invalid > 0 && s.Invalid == s.Missing:
				t.Notes = append(t.Notes, fmt.Sprintf("%s: %d step(s) invalid, left out of the statistics", gt.Groups[j], s.Invalid))
			case s.Invalid > 0:
				t.Notes = append(t.Notes, fmt.Sprintf("%s: %d step(s) missing, %d of them invalid, left out of the statistics", gt.Groups[j], s.Missing, s.Invalid))
			case s.Missing > 0:
				t.Notes = append(t.Notes, fmt.Sprintf("%s: %d step(s) missing, left out of the statistics", gt.Groups[j], s.Missing))
			}
		}
		if len(gt.Ungrouped) > 0 {
			t.Notes = append(t.Notes, "in no group: "+listNames(gt.Ungrouped, 8))
		}
		out = append(out, t)
	}
	return out
}
