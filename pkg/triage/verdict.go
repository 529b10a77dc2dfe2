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
