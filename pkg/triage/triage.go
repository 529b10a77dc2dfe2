// Package triage is what people decide about a suite's change points:
// acknowledgements (a change is known, with a reason and a link; or it is
// invalid, not a real change), which change a given acknowledgement
// covers, and the verdict documents that record, per run, what was
// reported and what was acknowledged. The controller, the kubectl plugin
// and the suite's site share it; it has no Kubernetes imports.
package triage

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/dbbench/dbbench/pkg/results"
)

// AckSchemaV1 identifies version 1 of an acknowledgement document
// (<suite>/_acks/<name>.json in the object store).
const AckSchemaV1 = "dbbench.io/ack/v1"

// Resolution is what an acknowledgement says of the change.
type Resolution string

const (
	// ResolutionAcknowledged: the change is real and known (a bug filed,
	// a bisection running, an expected cost of a feature).
	ResolutionAcknowledged Resolution = "Acknowledged"
	// ResolutionInvalid: the change is not real (noise, a broken node, a
	// run that measured something else).
	ResolutionInvalid Resolution = "Invalid"
)

// Ack is one acknowledgement. Empty Cell, Step and Metric and a zero
// Threads match every value: an Ack naming only a run covers that run's
// whole verdict.
type Ack struct {
	SchemaVersion string `json:"schemaVersion"`
	// Name, Namespace and UID are the BenchmarkAck object's.
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	UID       string `json:"uid,omitempty"`
	Suite     string `json:"suite"`
	// Run is a run of the changed level: the change point's first run,
	// or a later run whose verdict reported the change.
	Run     string `json:"run"`
	Cell    string `json:"cell,omitempty"`
	Step    string `json:"step,omitempty"`
	Threads int    `json:"threads,omitempty"`
	// Metric is Throughput, P95Latency or P99Latency.
	Metric     string     `json:"metric,omitempty"`
	Resolution Resolution `json:"resolution"`
	Reason     string     `json:"reason"`
	// Link is where the change is followed (a bug, a pull request);
	// Bisection names a BenchmarkBisection of the change.
	Link      string    `json:"link,omitempty"`
	Bisection string    `json:"bisection,omitempty"`
	CreatedAt time.Time `json:"createdAt,omitzero"`
}

// Scope is what the ack covers, for people: "update-index@1 of run
// night-6" or "the verdict of run night-7".
func (a Ack) Scope() string {
	var parts []string
	if a.Cell != "" {
		parts = append(parts, a.Cell)
	}
	switch {
	case a.Step != "" && a.Threads > 0:
		parts = append(parts, fmt.Sprintf("%s@%d", a.Step, a.Threads))
	case a.Step != "":
		parts = append(parts, a.Step)
	case a.Threads > 0:
		parts = append(parts, fmt.Sprintf("every step@%d", a.Threads))
	}
	if a.Metric != "" {
		parts = append(parts, a.Metric)
	}
	if len(parts) == 0 {
		return "the changes of run " + a.Run
	}
	return strings.Join(parts, " ") + " from run " + a.Run
}

// MarshalAck encodes an acknowledgement document.
func MarshalAck(a Ack) ([]byte, error) {
	a.SchemaVersion = AckSchemaV1
	if err := a.validate(); err != nil {
		return nil, err
	}
	return json.MarshalIndent(a, "", "  ")
}

// UnmarshalAck decodes one, refusing another schema version or a
// document without its required fields.
func UnmarshalAck(data []byte) (Ack, error) {
	var a Ack
	if err := decode(data, AckSchemaV1, &a); err != nil {
		return Ack{}, err
	}
	return a, a.validate()
}

func (a Ack) validate() error {
	var missing []string
	for _, f := range []struct{ name, v string }{{"name", a.Name}, {"suite", a.Suite}, {"run", a.Run}, {"reason", a.Reason}} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("acknowledgement %q: %s required", a.Name, strings.Join(missing, ", "))
	}
	if a.Resolution != ResolutionAcknowledged && a.Resolution != ResolutionInvalid {
		return fmt.Errorf("acknowledgement %q: resolution %q is not %s or %s", a.Name, a.Resolution, ResolutionAcknowledged, ResolutionInvalid)
	}
	return nil
}

// decode reads data as a document of schema want.
func decode(data []byte, want string, v any) error {
	var head struct {
		SchemaVersion string `json:"schemaVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("not a JSON document: %w", err)
	}
	if head.SchemaVersion != want {
		return &results.UnsupportedVersionError{Got: head.SchemaVersion, Want: want}
	}
	return json.Unmarshal(data, v)
}

// Change is a change point, or a regression against a run, as the acks
// are matched to it.
type Change struct {
	// Cell is the cell's name; Combination, when known, its database,
	// version and config without the repeat (histories match cells by
	// it): an ack may name either.
	Cell, Combination string
	Step              string
	Threads           int
	// Metric is Throughput, P95Latency or P99Latency ("" is Throughput).
	Metric string
	// LastBefore is the last run before the change (against a run: the
	// baseline), Since the first run of the new level (against a run: the
	// judged run).
	LastBefore, Since string
	// Until is the first run of the series' next change, "" when this is
	// its latest: the new level lasts from Since to the run before Until.
	Until string
}

// Order is the position of each run of a suite in time order.
type Order map[string]int

// NewOrder numbers runs in the order given.
func NewOrder(runs []string) Order {
	o := make(Order, len(runs))
	for i, r := range runs {
		o[r] = i
	}
	return o
}

// Covers reports whether a covers c. The fields a names must match (a
// cell by name or combination); its run must lie on the change's new
// level: after the change's last run before it and, when a later change
// is known (c.Until), before that one. An ack of a run covers the change
// that led to the run's level, never a later change (whose last run
// before is at or after the ack's run) nor an earlier one. A run the
// order does not know (out of the compared window, or another suite's)
// covers nothing.
func Covers(a Ack, c Change, order Order) bool {
	if a.Cell != "" && a.Cell != c.Cell && a.Cell != c.Combination {
		return false
	}
	if (a.Step != "" && a.Step != c.Step) || (a.Threads != 0 && a.Threads != c.Threads) {
		return false
	}
	if a.Metric != "" && a.Metric != metricOrDefault(c.Metric) {
		return false
	}
	at, ok := order[a.Run]
	if !ok {
		return false
	}
	if until, ok := order[c.Until]; ok && at >= until {
		return false
	}
	if before, ok := order[c.LastBefore]; ok {
		return at > before
	}
	// No known run before the change: the ack must name its first run.
	return a.Run == c.Since
}

func metricOrDefault(m string) string {
	if m == "" {
		return "Throughput"
	}
	return m
}

// Match returns the first of acks (in name order) that covers c.
func Match(acks []Ack, c Change, order Order) (Ack, bool) {
	sorted := append([]Ack(nil), acks...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, a := range sorted {
		if Covers(a, c, order) {
			return a, true
		}
	}
	return Ack{}, false
}

// The values of NotFoundError.What: the part of an acknowledgement the
// suite does not have.
const (
	WhatSuite   = "suite"
	WhatRun     = "run"
	WhatCell    = "cell"
	WhatStep    = "step"
	WhatThreads = "threads"
)

// NotFoundError says what an acknowledgement names that the suite does
// not have.
type NotFoundError struct {
	// What is one of the What constants (WhatSuite ...); Name the value
	// asked for; Run the run a cell, step or threads was looked for in;
	// Known what there is.
	What, Name string
	Suite, Run string
	Known      []string
}

func (e *NotFoundError) Error() string {
	var msg string
	switch e.What {
	case WhatSuite:
		msg = fmt.Sprintf("suite %q has no runs", e.Name)
	case WhatRun:
		msg = fmt.Sprintf("run %q is not a run of suite %q", e.Name, e.Suite)
	default:
		msg = fmt.Sprintf("%s %q is not measured by run %q of suite %q", e.What, e.Name, e.Run, e.Suite)
	}
	if len(e.Known) > 0 {
		msg += fmt.Sprintf(" (%s: %s)", plural(e.What), listFew(e.Known, 8))
	}
	return msg
}

func plural(what string) string {
	switch what {
	case WhatSuite:
		return "runs"
	case WhatThreads:
		return "thread counts there"
	}
	return what + "s there"
}

func listFew(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:n], ", ") + fmt.Sprintf(", and %d more", len(xs)-n)
}

// ErrNotFound is what every *NotFoundError matches with errors.Is.
var ErrNotFound = errors.New("not found")

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Check says what a names that the suite's runs (their manifests, any
// order) do not have: the suite itself (no runs), the run, the cell, the
// step or the thread count, in that order. nil when everything exists.
func Check(a Ack, runs []*results.Manifest) error {
	if len(runs) == 0 {
		return &NotFoundError{What: WhatSuite, Name: a.Suite, Suite: a.Suite}
	}
	var m *results.Manifest
	names := make([]string, 0, len(runs))
	for _, r := range runs {
		names = append(names, r.Run.Name)
		if r.Run.Name == a.Run {
			m = r
		}
	}
	if m == nil {
		return &NotFoundError{What: WhatRun, Name: a.Run, Suite: a.Suite, Known: names}
	}
	cells, steps, threads := map[string]bool{}, map[string]bool{}, map[int]bool{}
	var cellNames []string
	for _, c := range m.Cells {
		comb := combination(c.Cell)
		if a.Cell != "" && a.Cell != c.Name && a.Cell != comb {
			cellNames = append(cellNames, c.Name)
			continue
		}
		cells[c.Name] = true
		for step, by := range c.QPS {
			steps[step] = true
			if a.Step != "" && step != a.Step {
				continue
			}
			for th := range by {
				threads[th] = true
			}
		}
	}
	if a.Cell != "" && len(cells) == 0 {
		return &NotFoundError{What: WhatCell, Name: a.Cell, Suite: a.Suite, Run: a.Run, Known: cellNames}
	}
	if a.Step != "" && !steps[a.Step] {
		return &NotFoundError{What: WhatStep, Name: a.Step, Suite: a.Suite, Run: a.Run, Known: sortedKeys(steps)}
	}
	if a.Threads != 0 && !threads[a.Threads] {
		var known []string
		for th := range threads {
			known = append(known, fmt.Sprint(th))
		}
		sort.Slice(known, func(i, j int) bool {
			return len(known[i]) < len(known[j]) || len(known[i]) == len(known[j]) && known[i] < known[j]
		})
		return &NotFoundError{What: WhatThreads, Name: fmt.Sprint(a.Threads), Suite: a.Suite, Run: a.Run, Known: known}
	}
	return nil
}

// combination is a cell's name without its repeat: database, version and
// config (analysis.CellMeta.Combination's rule).
func combination(c results.Cell) string {
	db := c.Database
	if db == "" {
		db = c.Engine
	}
	var parts []string
	for _, p := range []string{db, c.Version, c.Config} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if c.Version == "" || len(parts) == 0 {
		return repeatSuffix(c.Name)
	}
	return strings.Join(parts, "-")
}

// repeatSuffix drops a trailing "-r<N>".
func repeatSuffix(name string) string {
	i := strings.LastIndex(name, "-r")
	if i < 0 || i+2 == len(name) || strings.Trim(name[i+2:], "0123456789") != "" {
		return name
	}
	return name[:i]
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
