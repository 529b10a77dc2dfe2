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
)

// SchemaV1 identifies version 1 of the summary document.
const SchemaV1 = "dbbench.io/bisection-summary/v1"

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
	// FirstBad is the culprit, when localized.
	FirstBad       string                                 `json:"firstBad,omitempty"`
	Rule           Rule                                   `json:"rule"`
	Endpoints      *dbbenchv1alpha1.BisectionEndpoints    `json:"endpoints,omitempty"`
	Points         []dbbenchv1alpha1.BisectionPointStatus `json:"points"`
	Rounds         []dbbenchv1alpha1.BisectionRound       `json:"rounds"`
	Changes        []dbbenchv1alpha1.BisectionChange      `json:"changes,omitempty"`
	CellsUsed      int32                                  `json:"cellsUsed"`
	StartTime      *time.Time                             `json:"startTime,omitempty"`
	CompletionTime *time.Time                             `json:"completionTime,omitempty"`
	Spec           dbbenchv1alpha1.BenchmarkBisectionSpec `json:"spec"`
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
		Localized: string(metav1.ConditionUnknown), FirstBad: st.FirstBad,
		Rule:      Rule{Parallelism: b.Spec.Parallelism, Repeats: b.Spec.Repeats, MaxCells: b.Spec.MaxCells},
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

// Chart is the chart of a bisection's points.
func Chart(b *dbbenchv1alpha1.BenchmarkBisection) analysis.BisectionChart {
	st := &b.Status
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.NaN()
		}
		return v
	}
	c := analysis.BisectionChart{Title: "dbbench bisection: " + b.Name, FirstBad: -1}
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
		c.Points = append(c.Points, analysis.BisectionPoint{
			Name: p.Name, Verdict: string(p.Verdict), Ratio: num(p.Ratio), Low: num(p.RatioLow), High: num(p.RatioHigh), Note: string(p.Reason),
		})
	}
	return c
}

// HTML is the page of Chart(b).
func HTML(b *dbbenchv1alpha1.BenchmarkBisection) ([]byte, error) {
	var buf bytes.Buffer
	if err := analysis.WriteBisectionHTML(&buf, Chart(b)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
