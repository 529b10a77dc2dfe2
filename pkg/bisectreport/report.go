// Package bisectreport turns a BenchmarkBisection's status into what is
// kept of it: the summary document the object store holds
// (bisection.json) and the HTML chart of its points, which the controller
// uploads and `kubectl dbbench bisect status --html` writes.
package bisectreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/reporthtml"
	"github.com/dbbench/dbbench/pkg/site"
)

// SchemaV1 identifies version 1 of the summary document. The suite's site
// reads the document and declares the name, since it may not depend on the
// API types this package builds it from.
const SchemaV1 = site.BisectionSchemaV1

// Summary is a finished bisection as the object store keeps it: what was
// searched, every point's verdict with its ratio to good and interval, the
// rounds, the changes found and the first bad point. Figures are the
// status's decimal strings, so the document says exactly what the status
// said.
type Summary struct {
	SchemaVersion string `json:"schemaVersion"`
	Name          string `json:"name"`
	Namespace     string `json:"namespace,omitempty"`
	UID           string `json:"uid,omitempty"`
	// Suite is the suite of the run the bisection copied ("" for none);
	// Run that run's name, when it referenced one.
	Suite string `json:"suite,omitempty"`
	Run   string `json:"run,omitempty"`
	// Localized is the condition's status (True, False), Reason and
	// Message its reason and message.
	Localized string `json:"localized"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
	// FirstBad is the culprit, when localized, LastGood the build before
	// it, and Confidence the probability that FirstBad is the first bad
	// build (Likely: the builds that hold it, when Ambiguous).
	FirstBad   string   `json:"firstBad,omitempty"`
	LastGood   string   `json:"lastGood,omitempty"`
	Confidence string   `json:"confidence,omitempty"`
	Likely     []string `json:"likely,omitempty"`
	// Judged is the decision rule the search used.
	Judged *dbbenchv1alpha1.BisectionRule `json:"judged,omitempty"`
	// Explanation and Environment are the status's.
	Explanation    *dbbenchv1alpha1.BisectionExplanation        `json:"explanation,omitempty"`
	Environment    []dbbenchv1alpha1.BisectionEnvironmentChange `json:"environment,omitempty"`
	Rule           Rule                                         `json:"rule"`
	Endpoints      *dbbenchv1alpha1.BisectionEndpoints          `json:"endpoints,omitempty"`
	Points         []dbbenchv1alpha1.BisectionPointStatus       `json:"points"`
	Rounds         []dbbenchv1alpha1.BisectionRound             `json:"rounds"`
	Changes        []dbbenchv1alpha1.BisectionChange            `json:"changes,omitempty"`
	CellsUsed      int32                                        `json:"cellsUsed"`
	StartTime      *time.Time                                   `json:"startTime,omitempty"`
	CompletionTime *time.Time                                   `json:"completionTime,omitempty"`
	Spec           dbbenchv1alpha1.BenchmarkBisectionSpec       `json:"spec"`
}

// Rule is the search's parameters as given in the spec (defaults from the
// referenced run are in the controller's messages).
type Rule struct {
	Parallelism int32 `json:"parallelism"`
	Repeats     int32 `json:"repeats"`
	MaxCells    int32 `json:"maxCells"`
}

// NewSummary is b's summary; suite is the suite of the run it copied.
func NewSummary(b *dbbenchv1alpha1.BenchmarkBisection, suite string) *Summary {
	st := &b.Status
	s := &Summary{
		SchemaVersion: SchemaV1, Name: b.Name, Namespace: b.Namespace, UID: string(b.UID), Suite: suite,
		Localized: string(metav1.ConditionUnknown), FirstBad: st.FirstBad, LastGood: st.LastGood, Confidence: st.Confidence, Likely: st.Likely,
		Judged: st.Rule, Explanation: st.Explanation, Environment: st.Environment,
		Rule:      Rule{Parallelism: b.Spec.CandidatesPerRound(), Repeats: b.Spec.CellsPerPoint(), MaxCells: b.Spec.CellBudget()},
		Endpoints: st.Endpoints, Points: st.Points, Rounds: st.Rounds, Changes: st.Changes, CellsUsed: st.CellsUsed,
		Spec: b.Spec,
	}
	if s.Points == nil {
		s.Points = []dbbenchv1alpha1.BisectionPointStatus{}
	}
	if s.Rounds == nil {
		s.Rounds = []dbbenchv1alpha1.BisectionRound{}
	}
	if b.Spec.RunRef != nil {
		s.Run = b.Spec.RunRef.Name
	}
	if c := meta.FindStatusCondition(st.Conditions, dbbenchv1alpha1.BisectionConditionLocalized); c != nil {
		s.Localized, s.Reason, s.Message = string(c.Status), c.Reason, c.Message
	}
	if st.StartTime != nil {
		t := st.StartTime.UTC()
		s.StartTime = &t
	}
	if st.CompletionTime != nil {
		t := st.CompletionTime.UTC()
		s.CompletionTime = &t
	}
	return s
}

// Marshal encodes the summary, indented for people reading the bucket.
func (s *Summary) Marshal() ([]byte, error) {
	return json.MarshalIndent(s, "", "  ")
}

// Extra is what a bisection's page shows beyond its status: the verdict
// that started it, where the regressed run's report is, and the
// explanation's differential flame graph.
type Extra struct {
	// RegressedRun is the run whose verdict started the bisection, Verdict
	// that verdict's message, Since and LastBefore the runs around its
	// change point (against ChangePoints).
	RegressedRun, Verdict, Since, LastBefore string
	// RunReport is the href of the regressed run's report, relative to
	// the bisection's page.
	RunReport string
	// FlameGraph is the SVG of explain.Explanation.FlameGraph.
	FlameGraph []byte
	// SuiteSite is the relative link to the suite's site (its
	// index.html), when the bisection's page is beside the suite's runs.
	SuiteSite string
}

// Chart is the chart of a bisection's points, with its chain (x), the
// probabilities, the environment and the explanation.
func Chart(b *dbbenchv1alpha1.BenchmarkBisection, x Extra) reporthtml.BisectionChart {
	st := &b.Status
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	c := reporthtml.BisectionChart{Title: "dbbench bisection: " + b.Name, FirstBad: -1}
	if ep := st.Endpoints; ep != nil {
		c.Key = ep.Key
	}
	if cond := meta.FindStatusCondition(st.Conditions, dbbenchv1alpha1.BisectionConditionLocalized); cond != nil {
		c.Summary = fmt.Sprintf("Localized=%s (%s): %s", cond.Status, cond.Reason, cond.Message)
	}
	for i, p := range st.Points {
		if st.FirstBad != "" && p.Name == st.FirstBad {
			c.FirstBad = i
			if p.Key != "" {
				c.Key = p.Key
			}
		}
		c.Points = append(c.Points, reporthtml.BisectionPoint{
			Name: p.Name, Verdict: string(p.Verdict), Ratio: num(p.Ratio), Low: num(p.RatioLow), High: num(p.RatioHigh), Note: string(p.Reason),
		})
	}
	if x.RegressedRun != "" {
		line := "Run " + x.RegressedRun + " regressed"
		if x.Verdict != "" {
			line += ": " + x.Verdict
		}
		c.Chain = append(c.Chain, line)
	}
	if x.Since != "" {
		c.Chain = append(
			c.Chain,
			fmt.Sprintf(
				"The change point: %s is the first run of the new level, %s the last run before it; their builds are this search's bad and good points.",
				x.Since,
				x.LastBefore,
			),
		)
	}
	if r := st.Rule; r != nil {
		c.Chain = append(
			c.Chain,
			fmt.Sprintf(
				"Judged as the verdict judges: worse by %d %% (magnitudeRule %s), maxPValue %s, correction %s, metrics %v; a build is named at probability %s or more.",
				r.MinMagnitudePercent,
				r.MagnitudeRule,
				r.MaxPValue,
				r.Correction,
				r.Metrics,
				r.Confidence,
			),
		)
	}
	if x.RunReport != "" {
		c.Links = append(c.Links, reporthtml.Link{Label: "Report of run " + x.RegressedRun, Href: x.RunReport})
	}
	if x.SuiteSite != "" {
		c.Links = append(c.Links, reporthtml.Link{Label: "The suite's site: every run, change point and acknowledgement", Href: x.SuiteSite})
	}
	c.Tables = append(c.Tables, probabilityTable(st))
	if t, ok := environmentTable(st); ok {
		c.Tables = append(c.Tables, t)
	}
	c.Tables = append(c.Tables, explanationTables(st)...)
	if len(x.FlameGraph) > 0 && st.Explanation != nil {
		c.FlameGraph = x.FlameGraph
		c.FlameGraphTitle = fmt.Sprintf(
			"Where the server's CPU went: %s against %s, %s at %d threads",
			st.FirstBad,
			st.LastGood,
			st.Explanation.Step,
			st.Explanation.ProfileThreads,
		)
	}
	return c
}

// probabilityTable lists the builds with a probability of being the first
// bad one.
func probabilityTable(st *dbbenchv1alpha1.BenchmarkBisectionStatus) analysis.Table {
	t := analysis.Table{
		ID:      "bisection.probability",
		Title:   "Probability that each build is the first bad one",
		Columns: []string{"point", "probability", "verdict", "runs"},
	}
	for _, p := range st.Points {
		if p.Probability != "" {
			t.Rows = append(t.Rows, []string{p.Name, p.Probability, string(p.Verdict), strconv.Itoa(int(p.Runs))})
		}
	}
	t.Notes = append(
		t.Notes,
		"Under the model of docs/bisect.md: one change, a level per side, a shift per round shared by every build measured in it, log-normal noise between cells. Builds not listed hold less than 0.001.",
	)
	return t
}

// environmentTable lists the rounds in which every build measured
// differently.
func environmentTable(st *dbbenchv1alpha1.BenchmarkBisectionStatus) (analysis.Table, bool) {
	t := analysis.Table{
		ID:      "bisection.environment",
		Title:   "Rounds in which the environment changed",
		Columns: []string{"round", "shift %", "key", "regression held", "bad/good before", "bad/good in round"},
	}
	for _, e := range st.Environment {
		t.Rows = append(t.Rows, []string{strconv.Itoa(int(e.Round)), e.ShiftPercent, e.Key, strconv.FormatBool(e.Held), e.RatioBefore, e.RatioIn})
	}
	return t, len(t.Rows) > 0
}

// explanationTables are the explanation's counters and functions.
func explanationTables(st *dbbenchv1alpha1.BenchmarkBisectionStatus) []analysis.Table {
	ex := st.Explanation
	if ex == nil {
		return nil
	}
	var out []analysis.Table
	where := fmt.Sprintf("%s@%d", ex.Step, ex.Threads)
	if len(ex.Counters) > 0 {
		t := analysis.Table{
			ID:      "bisection.counters",
			Title:   fmt.Sprintf("Engine counters per operation that moved most: %s against %s, %s", st.FirstBad, st.LastGood, where),
			Columns: []string{"counter", st.LastGood, st.FirstBad, "ratio"},
		}
		for _, c := range ex.Counters {
			t.Rows = append(t.Rows, []string{c.Name, c.LastGood, c.FirstBad, c.Ratio})
		}
		t.Notes = append(t.Notes, "Means over each build's cells of the step's counters per operation (docs/explain.md).")
		out = append(out, t)
	}
	if len(ex.Functions) > 0 {
		t := analysis.Table{
			ID: "bisection.functions",
			Title: fmt.Sprintf(
				"Functions whose share of the server's CPU moved most: %s against %s, %s at %d threads",
				st.FirstBad,
				st.LastGood,
				ex.Step,
				ex.ProfileThreads,
			),
			Columns: []string{"function", "self % " + st.LastGood, "self % " + st.FirstBad, "change (points)"},
		}
		for _, f := range ex.Functions {
			t.Rows = append(t.Rows, []string{f.Function, f.LastGoodSelfPercent, f.FirstBadSelfPercent, f.ChangePoints})
		}
		out = append(out, t)
	}
	if len(ex.Notes) > 0 && len(out) > 0 {
		out[len(out)-1].Notes = append(out[len(out)-1].Notes, ex.Notes...)
	}
	return out
}

// HTML is the page of Chart(b, x).
func HTML(b *dbbenchv1alpha1.BenchmarkBisection, x Extra) ([]byte, error) {
	var buf bytes.Buffer
	if err := reporthtml.WriteBisectionHTML(&buf, Chart(b, x)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
