package triage

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/dbbench/dbbench/pkg/attribution"
)

// VerdictSchemaV1 identifies version 1 of a run's verdict document
// (<suite>/<run>/verdict.json in the object store).
const VerdictSchemaV1 = "dbbench.io/run-verdict/v1"

// Verdict is a run's regression verdict as the object store keeps it:
// the Regressed condition, the pairs it reported and those it left out
// because they were acknowledged, with what changed around each. It is
// what the suite's site reads; the run's status says the same in the
// cluster.
type Verdict struct {
	SchemaVersion string `json:"schemaVersion"`
	Run           string `json:"run"`
	Suite         string `json:"suite,omitempty"`
	// Against is spec.regression.against: ChangePoints, PreviousRun, Run.
	Against string `json:"against"`
	// Status, Reason and Message are the Regressed condition's.
	Status     string   `json:"status"`
	Reason     string   `json:"reason"`
	Message    string   `json:"message"`
	ComparedTo []string `json:"comparedTo,omitempty"`
	// Regressed are the reported pairs, Acknowledged those an ack
	// covered.
	Regressed    []VerdictPair `json:"regressed,omitempty"`
	Acknowledged []VerdictPair `json:"acknowledged,omitempty"`
	// MaxPValue and MinMagnitude (a fraction: 0.05 is 5 %) are the
	// change-point rule a verdict against change points judged with, so
	// that whatever draws the suite's change points (the site) finds them
	// by the same rule. Absent for other verdicts and in documents
	// written before them.
	MaxPValue    float64 `json:"maxPValue,omitempty"`
	MinMagnitude float64 `json:"minMagnitude,omitempty"`
	// Bisection names the BenchmarkBisection the verdict started.
	Bisection string    `json:"bisection,omitempty"`
	JudgedAt  time.Time `json:"judgedAt,omitzero"`
	// Cases are every judged (cell, step, threads, metric) with its
	// result: the verdict's test cases, as its JUnit and markdown forms
	// list them (pkg/verdictformat). The controller keeps them in the run's
	// results ConfigMap; absent from documents written before them and from
	// verdicts that compared nothing (no history, an analysis that failed).
	Cases []VerdictCase `json:"cases,omitempty"`
	// CasesLeftOut counts the cases a size limit left out of Cases (the
	// passed ones first): a results ConfigMap holds at most 900 KiB.
	CasesLeftOut int `json:"casesLeftOut,omitempty"`
}

// CaseResult is what a verdict found for one case.
type CaseResult string

// The results of a case. Regressed is a failure of the verdict;
// Acknowledged changed the wrong way but a BenchmarkAck covers it;
// Suspected moved in this run only, not confirmed by a later one
// (against change points); Passed is none of these.
const (
	CasePassed       CaseResult = "Passed"
	CaseRegressed    CaseResult = "Regressed"
	CaseAcknowledged CaseResult = "Acknowledged"
	CaseSuspected    CaseResult = "Suspected"
)

// VerdictCase is one judged (cell, step, threads, metric) of a verdict.
type VerdictCase struct {
	Cell    string `json:"cell"`
	Step    string `json:"step"`
	Threads int    `json:"threads"`
	// Metric is the API's name: Throughput, P95Latency, P99Latency.
	Metric string     `json:"metric"`
	Result CaseResult `json:"result"`
	// Before and After are the metric's levels (QPS, or ms) where the
	// verdict measured both; ChangePercent is 100 × (After/Before − 1).
	Before        string `json:"before,omitempty"`
	After         string `json:"after,omitempty"`
	ChangePercent string `json:"changePercent,omitempty"`
	// PValue is the test's (after the correction, against a run or the
	// baseline; the change point's, against change points).
	PValue string `json:"pValue,omitempty"`
	// Method says how the case was tested, for people ("paired by block
	// (5 blocks)", "change points over 12 runs").
	Method string `json:"method,omitempty"`
	// Message says what was found, for a case that did not pass.
	Message string `json:"message,omitempty"`
}

// Name is the case's name in a test report: "step@threads metric".
func (c VerdictCase) Name() string {
	return fmt.Sprintf("%s@%d %s", c.Step, c.Threads, c.Metric)
}

// VerdictPair is one (cell, step, threads) of a verdict and its change.
type VerdictPair struct {
	Cell          string `json:"cell"`
	Step          string `json:"step"`
	Threads       int    `json:"threads"`
	Metric        string `json:"metric,omitempty"`
	Before        string `json:"before,omitempty"`
	After         string `json:"after,omitempty"`
	ChangePercent string `json:"changePercent,omitempty"`
	// Since and LastBefore bound the change (against change points).
	Since      string `json:"since,omitempty"`
	LastBefore string `json:"lastBefore,omitempty"`
	// CoincidesWith is what changed in the environment across the change,
	// BuildChanged what changed in the build; EnvironmentOnly says the
	// build did not change (attribution.Attribute).
	CoincidesWith   []attribution.Change `json:"coincidesWith,omitempty"`
	BuildChanged    []attribution.Change `json:"buildChanged,omitempty"`
	EnvironmentOnly bool                 `json:"environmentOnly,omitempty"`
	// Ack, Resolution and AckReason name the acknowledgement that covered
	// the pair (Acknowledged only).
	Ack        string     `json:"ack,omitempty"`
	Resolution Resolution `json:"resolution,omitempty"`
	AckReason  string     `json:"ackReason,omitempty"`
}

// String is "cell step@threads -31.2%".
func (p VerdictPair) String() string {
	s := fmt.Sprintf("%s %s@%d", p.Cell, p.Step, p.Threads)
	if p.Metric != "" && p.Metric != "Throughput" {
		s += " " + p.Metric
	}
	if p.ChangePercent != "" {
		s += " " + p.ChangePercent + "%"
	}
	return s
}

// MarshalVerdict encodes a verdict document.
func MarshalVerdict(v Verdict) ([]byte, error) {
	v.SchemaVersion = VerdictSchemaV1
	if v.Run == "" {
		return nil, fmt.Errorf("verdict: run required")
	}
	return json.MarshalIndent(v, "", "  ")
}

// UnmarshalVerdict decodes one, refusing another schema version.
func UnmarshalVerdict(data []byte) (Verdict, error) {
	var v Verdict
	if err := decode(data, VerdictSchemaV1, &v); err != nil {
		return Verdict{}, err
	}
	if v.Run == "" {
		return Verdict{}, fmt.Errorf("verdict: run required")
	}
	return v, nil
}
