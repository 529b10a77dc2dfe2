package store

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strconv"

	"github.com/dbbench/dbbench/pkg/results"
)

// ProvenanceSchemaV1 identifies version 1 of the provenance bundle.
const ProvenanceSchemaV1 = "dbbench.io/store-provenance/v1"

// RunIdentitySchemaV1 identifies version 1 of the run identity object.
const RunIdentitySchemaV1 = "dbbench.io/store-run/v1"

// ProvenanceBundle is a cell's provenance.json: what the numbers were
// measured on (effective server settings, config text, images, nodes) and
// every command line run, passwords redacted. It repeats parts of the results
// document so that "what exactly did this cell run?" is one small object.
type ProvenanceBundle struct {
	SchemaVersion string             `json:"schemaVersion"`
	Run           results.Run        `json:"run"`
	Cell          results.Cell       `json:"cell"`
	Provenance    results.Provenance `json:"provenance"`
	// Commands are the load commands, then each step's, in run order.
	Commands []CommandLine `json:"commands"`
}

// CommandLine is one command a cell ran.
type CommandLine struct {
	// Phase is "load" or "step".
	Phase   string   `json:"phase"`
	Step    string   `json:"step,omitempty"`
	Threads int      `json:"threads,omitempty"`
	Argv    []string `json:"argv"`
}

// RunIdentity is a run's run.json: which run object owns the directory.
type RunIdentity struct {
	SchemaVersion string `json:"schemaVersion"`
	Name          string `json:"name"`
	Namespace     string `json:"namespace,omitempty"`
	UID           string `json:"uid,omitempty"`
	Suite         string `json:"suite,omitempty"`
}

// sameRun reports whether two identities are the same run object. An empty
// UID or namespace (imported studies, local runs) matches anything.
func (a RunIdentity) sameRun(b RunIdentity) bool {
	eq := func(x, y string) bool { return x == "" || y == "" || x == y }
	return a.Name == b.Name && eq(a.UID, b.UID) && eq(a.Namespace, b.Namespace)
}

func runIdentity(r results.Run) RunIdentity {
	return RunIdentity{SchemaVersion: RunIdentitySchemaV1, Name: r.Name, Namespace: r.Namespace, UID: r.UID, Suite: r.Suite}
}

// NewProvenanceBundle collects d's provenance and command lines. The
// commands are passed through results.RedactCommand again, in case a writer
// forgot.
func NewProvenanceBundle(d *results.Document) *ProvenanceBundle {
	p := &ProvenanceBundle{SchemaVersion: ProvenanceSchemaV1, Run: d.Run, Cell: d.Cell, Provenance: d.Provenance, Commands: []CommandLine{}}
	if p.Provenance.ServerSettingsSHA256 == "" && len(p.Provenance.ServerSettings) > 0 {
		p.Provenance.ServerSettingsSHA256 = results.SettingsDigest(p.Provenance.ServerSettings)
	}
	if d.Load != nil {
		for _, c := range d.Load.Commands {
			p.Commands = append(p.Commands, CommandLine{Phase: "load", Argv: results.RedactCommand(c)})
		}
	}
	for _, s := range d.Steps {
		if len(s.Command) > 0 {
			p.Commands = append(p.Commands, CommandLine{Phase: "step", Step: s.Step, Threads: s.Threads, Argv: results.RedactCommand(s.Command)})
		}
	}
	return p
}

// SeriesHeader is the header row of series.csv. Columns are only ever added
// at the end.
var SeriesHeader = []string{"step", "threads", "t_seconds", "qps", "tps", "latency_ms", "latency_percentile", "errors_per_second", "reconnects_per_second"}

// EncodeSeriesCSV writes every step's per-second series as CSV: the header,
// then one row per sample, steps in run order. t_seconds is the end of the
// sample's interval from the step's start ((i+1)×interval, as sysbench's
// "[ 1s ]" labels), warm-up included; numbers are the shortest decimal that
// round-trips the float64. ok is false when no step has a series (the
// compact form, or a cell that failed before measuring).
func EncodeSeriesCSV(d *results.Document) (data []byte, ok bool) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(SeriesHeader)
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	at := func(col []float64, i int) string {
		if i < len(col) {
			return f(col[i])
		}
		return ""
	}
	for _, s := range d.Steps {
		sr := s.Series
		if sr == nil {
			continue
		}
		for i := range sr.QPS {
			ok = true
			_ = w.Write([]string{s.Step, strconv.Itoa(s.Threads), f(float64(i+1) * sr.IntervalSeconds),
				f(sr.QPS[i]), at(sr.TPS, i), at(sr.LatencyMs, i), f(sr.LatencyPercentile),
				at(sr.ErrorsPerSecond, i), at(sr.ReconnectsPerSecond, i)})
		}
	}
	w.Flush()
	return buf.Bytes(), ok
}

// marshalJSON is json.Marshal, which is deterministic (map keys sorted), so
// the same value always gives the same object.
func marshalJSON(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
