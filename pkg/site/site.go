// Package site builds a suite's static site: one index page per suite
// (every step × threads series of the last runs as a chart with its change
// points by status, the noise band, the acknowledged points, what else
// changed at each change point, the latest verdict) beside the runs'
// report.html and the bisections' pages, which it links. Everything is in
// the page (inline CSS and SVG, no script, nothing fetched), so the
// bucket, any static host or a copy on disk serves it.
//
// Build and Render are pure functions of what the object store holds
// (manifests, verdicts, acknowledgements, bisection summaries), which
// store.ReadSuite reads. The package has no Kubernetes imports.
package site

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/attribution"
	"github.com/dbbench/dbbench/pkg/changepoint"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/triage"
)

// IndexSchemaV1 identifies version 1 of the site's data (site.json).
const IndexSchemaV1 = "dbbench.io/suite-site/v1"

// Defaults of Options.
const (
	DefaultLastRuns  = 30
	DefaultMaxCharts = 24
)

// Options tune Build.
type Options struct {
	// LastRuns is how many of the newest runs the site charts (and looks
	// for change points in); 0 means DefaultLastRuns.
	LastRuns int
	// Now is the generation time printed on the page.
	Now time.Time
}

// Input is what the object store holds of a suite.
type Input struct {
	Suite string
	// Runs are the manifests of the suite's runs, any order.
	Runs []*results.Manifest
	// Verdicts are the runs' verdicts by run name (runs judged with
	// spec.regression); Reports the runs with a report.html.
	Verdicts map[string]triage.Verdict
	Reports  map[string]bool
	// Bisections are the suite's bisection summaries.
	Bisections []Bisection
	// Acks are the suite's acknowledgements.
	Acks []triage.Ack
	// Settings, when set, returns a cell's effective server settings of a
	// run (its provenance), to name the variables behind a changed
	// settings digest; nil, or a nil map, leaves the digest.
	Settings func(run, cell string) map[string]string
	// Notes say what the store held that could not be read (a corrupt or
	// foreign object): shown on the page, never an error.
	Notes []string
}

// Bisection is what the site shows of a bisection (its bisection.json).
type Bisection struct {
	Name string `json:"name"`
	// Run is the run whose verdict started it.
	Run        string     `json:"run,omitempty"`
	Localized  string     `json:"localized"`
	Reason     string     `json:"reason,omitempty"`
	FirstBad   string     `json:"firstBad,omitempty"`
	LastGood   string     `json:"lastGood,omitempty"`
	Confidence string     `json:"confidence,omitempty"`
	Completed  *time.Time `json:"completionTime,omitempty"`
	// Report is true when its report.html is there.
	Report bool `json:"report"`
}

// Index is the site's content: what the page draws and site.json holds.
type Index struct {
	SchemaVersion string    `json:"schemaVersion"`
	Suite         string    `json:"suite"`
	GeneratedAt   time.Time `json:"generatedAt"`
	// RunsInSuite counts the suite's readable runs; Runs are the charted
	// ones, oldest first.
	RunsInSuite  int             `json:"runsInSuite"`
	Runs         []Run           `json:"runs"`
	Series       []Series        `json:"series"`
	ChangePoints []ChangePoint   `json:"changePoints"`
	Latest       *triage.Verdict `json:"latest,omitempty"`
	Bisections   []Bisection     `json:"bisections,omitempty"`
	Acks         []triage.Ack    `json:"acks,omitempty"`
	Notes        []string        `json:"notes,omitempty"`
}

// Run is one charted run.
type Run struct {
	Name string    `json:"name"`
	Time time.Time `json:"time"`
	// Report is true when the run's report.html is there.
	Report bool `json:"report"`
	// Verdict is the Regressed condition ("True Regressed"), "" without.
	Verdict string `json:"verdict,omitempty"`
	// Failed counts the cells that did not succeed.
	Failed int    `json:"failed,omitempty"`
	Cells  []Cell `json:"cells"`
}

// Cell is what a run's cell ran: its build and where.
type Cell struct {
	Name          string `json:"name"`
	Combination   string `json:"combination"`
	Image         string `json:"image,omitempty"`
	ImageDigest   string `json:"imageDigest,omitempty"`
	ServerVersion string `json:"serverVersion,omitempty"`
	Node          string `json:"node,omitempty"`
	Kernel        string `json:"kernel,omitempty"`
}

// Series is one (combination, step, threads) throughput series.
type Series struct {
	Combination string    `json:"combination"`
	Step        string    `json:"step"`
	Threads     int       `json:"threads"`
	Runs        []string  `json:"runs"`
	Values      []float64 `json:"values"`
	// NoiseCV is the run-to-run noise the detector estimated (the band
	// drawn is each level's mean ± 2 × NoiseCV × mean).
	NoiseCV float64 `json:"noiseCV"`
	// ChangePoints index Index.ChangePoints.
	ChangePoints []int `json:"changePoints,omitempty"`
	// EnvironmentChanges are the runs (indices into Runs) whose
	// environment differs from the run before them, with what changed.
	EnvironmentChanges []EnvironmentChange `json:"environmentChanges,omitempty"`
}

// EnvironmentChange is a run of a series whose environment (or build)
// differs from the previous run's.
type EnvironmentChange struct {
	Index       int                  `json:"index"`
	Run         string               `json:"run"`
	Environment []attribution.Change `json:"environment,omitempty"`
	Build       []attribution.Change `json:"build,omitempty"`
}

// Triage states of a change point.
const (
	StateOpen         = "open"
	StateAcknowledged = "acknowledged"
	StateInvalid      = "invalid"
)

// ChangePoint is one change point of a series with its triage.
type ChangePoint struct {
	Series      int    `json:"series"`
	Combination string `json:"combination"`
	Step        string `json:"step"`
	Threads     int    `json:"threads"`
	// Run is the first run of the new level, LastBefore the run before.
	Run        string `json:"run"`
	LastBefore string `json:"lastBefore"`
	// Index is Run's position in the series.
	Index         int     `json:"index"`
	Before        float64 `json:"before"`
	After         float64 `json:"after"`
	ChangePercent float64 `json:"changePercent"`
	PValue        float64 `json:"pValue"`
	// Status is confirmed or suspected (changepoint.Status, lower case).
	Status string `json:"status"`
	// Worse is true for a slowdown.
	Worse bool `json:"worse"`
	// Attribution is what else changed across it.
	Attribution attribution.Attribution `json:"attribution"`
	// State is open, acknowledged or invalid; Ack the covering ack.
	State string      `json:"state"`
	Ack   *triage.Ack `json:"ack,omitempty"`
	// Bisections name the bisections of the change (from the verdicts
	// that reported it and the ack).
	Bisections []string `json:"bisections,omitempty"`
}

// Build computes the site's index from what the store holds.
func Build(in Input, opts Options) (*Index, error) {
	if opts.LastRuns <= 0 {
		opts.LastRuns = DefaultLastRuns
	}
	idx := &Index{SchemaVersion: IndexSchemaV1, Suite: in.Suite, GeneratedAt: opts.Now.UTC(), Notes: in.Notes,
		Bisections: in.Bisections, Acks: in.Acks, Series: []Series{}, ChangePoints: []ChangePoint{}}
	runs := slices.Clone(in.Runs)
	sort.SliceStable(runs, func(i, j int) bool {
		if !runs[i].UpdatedAt.Equal(runs[j].UpdatedAt) {
			return runs[i].UpdatedAt.Before(runs[j].UpdatedAt)
		}
		return runs[i].Run.Name < runs[j].Run.Name
	})
	idx.RunsInSuite = len(runs)
	if len(runs) > opts.LastRuns {
		runs = runs[len(runs)-opts.LastRuns:]
	}
	byName := map[string]*results.Manifest{}
	var hist []analysis.HistoryRun
	for _, m := range runs {
		byName[m.Run.Name] = m
		idx.Runs = append(idx.Runs, runEntry(m, in))
		ds, err := analysis.FromManifest(m)
		if err != nil {
			idx.Notes = append(idx.Notes, fmt.Sprintf("run %s left out: %v", m.Run.Name, err))
			continue
		}
		hist = append(hist, analysis.HistoryRun{Name: m.Run.Name, Time: m.UpdatedAt, Data: ds})
	}
	for i := len(idx.Runs) - 1; i >= 0 && idx.Latest == nil; i-- {
		if v, ok := in.Verdicts[idx.Runs[i].Name]; ok {
			idx.Latest = &v
		}
	}
	if len(hist) == 0 {
		return idx, nil
	}
	h, err := analysis.History(hist, analysis.HistoryOptions{ChangePoint: changePointRule(idx.Latest)})
	if err != nil {
		return nil, fmt.Errorf("suite %s: %w", in.Suite, err)
	}
	order := triage.NewOrder(h.Runs)
	for _, hs := range h.Series {
		s := Series{Combination: hs.Combination, Step: hs.Step, Threads: hs.Threads, Runs: hs.Runs, Values: hs.Values,
			NoiseCV: finite(changepoint.EstimateNoiseCV(hs.Values))}
		snaps := snapshots(hs, byName, in.Settings)
		for i := 1; i < len(snaps); i++ {
			if snaps[i] == nil || snaps[i-1] == nil {
				continue
			}
			// A value one of the few runs before had (nodes taking turns)
			// is not marked: only a value new to the series is.
			a := attribution.Attribute([]attribution.Snapshot{*snaps[i-1]}, []attribution.Snapshot{*snaps[i]}).
				WithoutReturns(earlierSnapshots(snaps[:i-1]))
			if len(a.Environment) > 0 || len(a.Build) > 0 {
				s.EnvironmentChanges = append(s.EnvironmentChanges, EnvironmentChange{Index: i, Run: hs.Runs[i], Environment: a.Environment, Build: a.Build})
			}
		}
		for k, c := range hs.ChangePoints {
			cp := ChangePoint{Series: len(idx.Series), Combination: hs.Combination, Step: hs.Step, Threads: hs.Threads,
				Run: c.Run, Index: c.Index, Before: c.MeanBefore, After: c.MeanAfter, ChangePercent: c.ChangePercent,
				PValue: finite(c.PValue), Status: strings.ToLower(string(c.Status)), Worse: c.Worse, State: StateOpen}
			if c.Index > 0 {
				cp.LastBefore = hs.Runs[c.Index-1]
			}
			var before, after []attribution.Snapshot
			for i, sn := range snaps {
				switch {
				case sn == nil:
				case i < c.Index:
					before = append(before, *sn)
				default:
					after = append(after, *sn)
				}
			}
			cp.Attribution = attribution.Attribute(before, after)
			ch := triage.Change{Cell: cellName(byName[c.Run], hs.Combination), Combination: hs.Combination, Step: hs.Step,
				Threads: hs.Threads, LastBefore: cp.LastBefore, Since: cp.Run}
			if k+1 < len(hs.ChangePoints) {
				ch.Until = hs.ChangePoints[k+1].Run
			}
			if a, ok := triage.Match(in.Acks, ch, order); ok {
				cp.Ack = &a
				cp.State = StateAcknowledged
				if a.Resolution == triage.ResolutionInvalid {
					cp.State = StateInvalid
				}
				if a.Bisection != "" {
					cp.Bisections = append(cp.Bisections, a.Bisection)
				}
			}
			cp.Bisections = appendNew(cp.Bisections, bisectionsOf(in.Verdicts, h.Runs, ch)...)
			s.ChangePoints = append(s.ChangePoints, len(idx.ChangePoints))
			idx.ChangePoints = append(idx.ChangePoints, cp)
		}
		idx.Series = append(idx.Series, s)
	}
	return idx, nil
}

// runEntry is a run's row.
func runEntry(m *results.Manifest, in Input) Run {
	r := Run{Name: m.Run.Name, Time: m.UpdatedAt, Report: in.Reports[m.Run.Name], Cells: []Cell{}}
	if v, ok := in.Verdicts[m.Run.Name]; ok {
		r.Verdict = strings.TrimSpace(v.Status + " " + v.Reason)
	}
	for _, c := range m.Cells {
		if c.Phase != results.ManifestPhaseSucceeded {
			r.Failed++
		}
		e := Cell{Name: c.Name, Combination: combination(c.Cell), Image: c.Image, ImageDigest: c.ImageDigest, ServerVersion: c.ServerVersion}
		if c.Environment != nil {
			e.Node, e.Kernel = c.Environment.Node, c.Environment.Kernel
		}
		r.Cells = append(r.Cells, e)
	}
	return r
}

func combination(c results.Cell) string {
	return analysis.CellMeta{Name: c.Name, Database: c.Database, Engine: c.Engine, Version: c.Version, Config: c.Config}.Combination()
}

// cellName is the first cell of m of the combination ("" if none).
func cellName(m *results.Manifest, comb string) string {
	if c := cellOf(m, comb); c != nil {
		return c.Name
	}
	return ""
}

func cellOf(m *results.Manifest, comb string) *results.ManifestCell {
	if m == nil {
		return nil
	}
	for i := range m.Cells {
		if combination(m.Cells[i].Cell) == comb {
			return &m.Cells[i]
		}
	}
	return nil
}

// snapshots are the series' runs' snapshots of its combination (nil where
// a run lacks it).
func snapshots(hs analysis.HistorySeries, byName map[string]*results.Manifest, settings func(run, cell string) map[string]string) []*attribution.Snapshot {
	out := make([]*attribution.Snapshot, len(hs.Runs))
	for i, r := range hs.Runs {
		c := cellOf(byName[r], hs.Combination)
		if c == nil {
			continue
		}
		s := attribution.FromManifestCell(r, c)
		if settings != nil {
			s.Settings = settings(r, c.Name)
		}
		out[i] = &s
	}
	return out
}

// earlierSnapshots are the recorded snapshots among the last
// attribution.Side of snaps.
func earlierSnapshots(snaps []*attribution.Snapshot) []attribution.Snapshot {
	var out []attribution.Snapshot
	for _, s := range snaps[max(0, len(snaps)-attribution.Side):] {
		if s != nil {
			out = append(out, *s)
		}
	}
	return out
}

// bisectionsOf are the bisections named by the verdicts that reported ch
// (its cell, step and threads, with the same first run).
func bisectionsOf(verdicts map[string]triage.Verdict, runs []string, ch triage.Change) []string {
	var out []string
	for _, r := range runs {
		v, ok := verdicts[r]
		if !ok || v.Bisection == "" {
			continue
		}
		for _, p := range v.Regressed {
			if (p.Cell == ch.Cell || p.Cell == ch.Combination) && p.Step == ch.Step && p.Threads == ch.Threads && p.Since == ch.Since {
				out = appendNew(out, v.Bisection)
			}
		}
	}
	return out
}

func appendNew(xs []string, ys ...string) []string {
	for _, y := range ys {
		if !slices.Contains(xs, y) {
			xs = append(xs, y)
		}
	}
	return xs
}

// segments are the levels of a series between its change points: [start,
// end) index ranges with their mean.
func (s Series) segments(cps []ChangePoint) [][3]float64 {
	cuts := make([]int, 0, len(s.ChangePoints)+1)
	for _, i := range s.ChangePoints {
		cuts = append(cuts, cps[i].Index)
	}
	sort.Ints(cuts)
	cuts = append(cuts, len(s.Values))
	var out [][3]float64
	start := 0
	for _, end := range cuts {
		if end <= start {
			continue
		}
		sum := 0.0
		for _, v := range s.Values[start:end] {
			sum += v
		}
		out = append(out, [3]float64{float64(start), float64(end), sum / float64(end-start)})
		start = end
	}
	return out
}

// open reports whether a change point still asks for attention: a
// slowdown nobody triaged.
func (c ChangePoint) open() bool { return c.State == StateOpen && c.Worse }

// AckCommand is the kubectl command that acknowledges the change point.
func (c ChangePoint) AckCommand(suite string) string {
	return fmt.Sprintf("kubectl dbbench ack %s --run %s --cell %s --step %s --threads %d --reason '…'", suite, c.Run, c.Combination, c.Step, c.Threads)
}

// finite guards the JSON encoding against NaN p-values.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// BisectionSchemaV1 is the bisection summary's schema, whose fields the
// site reads; bisectreport, which writes the summary, uses it as its
// SchemaV1.
const BisectionSchemaV1 = "dbbench.io/bisection-summary/v1"

// DecodeBisection reads what the site shows of a bisection.json,
// refusing another schema version or a document without a name.
func DecodeBisection(data []byte) (Bisection, error) {
	var head struct {
		SchemaVersion string `json:"schemaVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Bisection{}, fmt.Errorf("not a JSON document: %w", err)
	}
	if head.SchemaVersion != BisectionSchemaV1 {
		return Bisection{}, &results.UnsupportedVersionError{Got: head.SchemaVersion, Want: BisectionSchemaV1}
	}
	var b Bisection
	if err := json.Unmarshal(data, &b); err != nil {
		return Bisection{}, err
	}
	if b.Name == "" {
		return Bisection{}, fmt.Errorf("bisection summary without a name")
	}
	b.Report = false // the store says, not the document
	return b, nil
}

// changePointRule is the detector's options for the site's change points:
// the defaults with the change-point rule of the suite's newest verdict
// (its MaxPValue and MinMagnitude, recorded by verdicts against change
// points), so that the site marks the changes the verdicts judged by; the
// defaults alone without a verdict that records a rule.
func changePointRule(latest *triage.Verdict) *changepoint.Options {
	opts := changepoint.DefaultOptions()
	if latest == nil {
		return &opts
	}
	if latest.MaxPValue > 0 && latest.MaxPValue < 1 {
		opts.MaxPValue = latest.MaxPValue
	}
	if latest.MinMagnitude > 0 {
		opts.MinMagnitude = latest.MinMagnitude
	}
	return &opts
}
