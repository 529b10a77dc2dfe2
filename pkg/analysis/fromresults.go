package analysis

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dbbench/dbbench/pkg/results"
)

// FromDocuments builds a dataset from results documents (full or compact),
// one cell per document, in the order given. A step that failed (its Error
// is set) is left out and noted; its ratios then show as missing. The QPS of
// a step is its steady-state QPS, or its rows/s for steps reported as rows/s
// (scan). Series come from the full form's series or the compact form's
// encoded QPS.
func FromDocuments(name string, docs []*results.Document) (*Dataset, error) {
	ds := NewDataset(name)
	for i, d := range docs {
		if d == nil {
			return nil, fmt.Errorf("document %d is nil", i)
		}
		if d.SchemaVersion != results.SchemaV1 {
			return nil, &results.UnsupportedVersionError{Got: d.SchemaVersion, Want: results.SchemaV1}
		}
		c := CellMeta{Name: d.Cell.Name, Database: d.Cell.Database, Engine: d.Cell.Engine,
			Version: d.Cell.Version, Config: d.Cell.Config, Repeat: d.Cell.Repeat, Block: d.Cell.Block}
		if err := ds.AddCell(c); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if cc := d.Provenance.ConfigCheck; cc != nil && len(cc.Unverified) > 0 {
			u := UnverifiedSettings{Cell: c.Name, Config: c.Config}
			for _, s := range cc.Unverified {
				u.Settings = append(u.Settings, UnverifiedSetting{Name: s.Name, Line: s.Line, Requested: s.Requested, Reason: s.Reason})
			}
			ds.Unverified = append(ds.Unverified, u)
		}
		if d.Status.Outcome == results.OutcomeFailed {
			ds.Notes = append(ds.Notes, fmt.Sprintf("cell %s failed: %s", c.Name, d.Status.Error))
		}
		if ext := d.Provenance.External; ext != nil {
			ds.Notes = append(ds.Notes, externalNotes(c.Name, d.Provenance.ServerVersion, ext)...)
		}
		for _, s := range d.Steps {
			if s.Error != "" {
				ds.Notes = append(ds.Notes, fmt.Sprintf("cell %s step %s (%d threads) failed: %s", c.Name, s.Step, s.Threads, s.Error))
				continue
			}
			series, err := seriesOf(s)
			if err != nil {
				ds.Notes = append(ds.Notes, fmt.Sprintf("cell %s step %s (%d threads): series unreadable: %v", c.Name, s.Step, s.Threads, err))
			}
			o := Observation{Cell: c.Name, Step: s.Step, Threads: s.Threads, QPS: s.SteadyQPS, TPS: s.SteadyTPS, Series: series}
			if s.RowsPerSecond != nil {
				o.QPS = *s.RowsPerSecond
			}
			if q := s.Quality; s.Invalid() {
				v := InvalidValue{Cell: c.Name, Step: s.Step, Threads: s.Threads, QPS: o.QPS, Reasons: q.Reasons,
					StallSeconds: q.StallSeconds, WindowSeconds: q.WindowSeconds, Attempts: q.Attempts, Series: series}
				if err := ds.AddInvalid(v); err != nil {
					return nil, fmt.Errorf("document %d (cell %s): %w", i, c.Name, err)
				}
				ds.Notes = append(ds.Notes, v.Note())
				continue
			}
			o.Latency = latencyOf(s)
			if h := s.Hardware; h != nil {
				o.HW = &Hardware{CPUPerOp: h.CPUPerOp, CSPerOp: h.ContextSwitchesPerOp, ReadsPerOp: h.ReadsPerOp,
					ReadKBPerOp: h.ReadKBPerOp, WriteKBPerOp: h.WriteKBPerOp, OpsPerSecond: h.OpsPerSecond}
				for _, v := range h.Volumes {
					o.HW.Volumes = append(o.HW.Volumes, VolumeHW{Name: v.Name, Device: v.Device, SharedDevice: v.SharedDevice,
						ReadsPerOp: v.ReadsPerOp, ReadKBPerOp: v.ReadKBPerOp, WriteKBPerOp: v.WriteKBPerOp, IOsPerOp: v.IOsPerOp})
				}
			}
			if ct := s.Counters; ct != nil && len(ct.PerOp) > 0 {
				o.Counters = ct.PerOp
			}
			if err := ds.Add(o); err != nil {
				return nil, fmt.Errorf("document %d (cell %s): %w", i, c.Name, err)
			}
		}
	}
	return ds, nil
}

// seriesOf is a step's throughput over time: the full form's series (on
// its regular grid: a late report stands for each second it covered), or
// the compact form's encoded QPS; nil when it has neither.
func seriesOf(s results.StepResult) (*TimeSeries, error) {
	switch {
	case s.Series != nil && len(s.Series.QPS) > 0:
		return &TimeSeries{IntervalSeconds: s.Series.IntervalSeconds, WarmupSeconds: s.WarmupSeconds, Values: s.Series.Regular(s.Series.QPS)}, nil
	case s.EncodedQPS != nil:
		v, err := s.EncodedQPS.Decode()
		if err != nil || len(v) == 0 {
			return nil, err
		}
		return &TimeSeries{IntervalSeconds: s.EncodedQPS.ResolutionSeconds, WarmupSeconds: s.WarmupSeconds, Values: v}, nil
	}
	return nil, nil
}

// FromManifest builds a dataset from a run manifest's per-cell QPS summary
// (no hardware figures, no series). Cells without a summary are kept, so
// their steps show as missing.
func FromManifest(m *results.Manifest) (*Dataset, error) {
	if m.SchemaVersion != results.ManifestSchemaV1 {
		return nil, &results.UnsupportedVersionError{Got: m.SchemaVersion, Want: results.ManifestSchemaV1}
	}
	ds := NewDataset(m.Run.Name)
	for _, mc := range m.Cells {
		c := CellMeta{Name: mc.Name, Database: mc.Database, Engine: mc.Engine, Version: mc.Version, Config: mc.Config,
			Repeat: mc.Repeat, Block: mc.Block}
		if err := ds.AddCell(c); err != nil {
			return nil, err
		}
		if len(mc.QPS) == 0 && len(mc.Invalid) == 0 {
			ds.Notes = append(ds.Notes, fmt.Sprintf("cell %s (%s) has no results in the manifest", mc.Name, mc.Phase))
		}
		// Maps have no order: sort steps by the catalog order, then name.
		// Invalid results have no value in the manifest, only reasons.
		steps := SortedKeys(mc.QPS)
		for _, s := range SortedKeys(mc.Invalid) {
			if _, ok := mc.QPS[s]; !ok {
				steps = append(steps, s)
			}
		}
		sortSteps(steps)
		for _, s := range steps {
			threads := SortedKeys(mc.QPS[s])
			for th := range mc.Invalid[s] {
				if !slices.Contains(threads, th) {
					threads = append(threads, th)
				}
			}
			slices.Sort(threads)
			for _, th := range threads {
				if reasons, bad := mc.Invalid[s][th]; bad {
					v := InvalidValue{Cell: mc.Name, Step: s, Threads: th, Reasons: reasons}
					if err := ds.AddInvalid(v); err != nil {
						return nil, err
					}
					ds.Notes = append(ds.Notes, v.Note())
					continue
				}
				q := mc.QPS[s][th]
				if rps, ok := mc.RowsPerSecond[s][th]; ok {
					q = rps
				}
				if err := ds.Add(Observation{Cell: mc.Name, Step: s, Threads: th, QPS: q}); err != nil {
					return nil, err
				}
			}
		}
	}
	return ds, nil
}

// sortedKeys are m's keys in order (steps by the catalog's order).
func SortedKeys[K string | int, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	if ss, ok := any(out).([]string); ok {
		sortSteps(ss)
	}
	return out
}

// ReadResult decodes one results file: a cell document or a run manifest,
// told apart by schemaVersion. Anything else — another schema version, a
// JSON file that is not a results document — is an error that says what was
// found (*results.UnsupportedVersionError for a version mismatch).
func ReadResult(data []byte) (*results.Document, *results.Manifest, error) {
	var head struct {
		SchemaVersion *string `json:"schemaVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	v := ""
	if head.SchemaVersion != nil {
		v = *head.SchemaVersion
	}
	switch {
	case v == results.ManifestSchemaV1:
		m, err := results.UnmarshalManifest(data)
		return nil, m, err
	case v == results.SchemaV1:
		d, err := results.Unmarshal(data)
		return d, nil, err
	case strings.HasPrefix(v, "dbbench.io/results-manifest/"):
		return nil, nil, &results.UnsupportedVersionError{Got: v, Want: results.ManifestSchemaV1}
	}
	return nil, nil, &results.UnsupportedVersionError{Got: v, Want: results.SchemaV1}
}

// IsUnsupportedVersion reports whether err is a schema-version refusal.
func IsUnsupportedVersion(err error) bool {
	var u *results.UnsupportedVersionError
	return errors.As(err, &u)
}

// externalNotes say that a cell ran on a server dbbench did not start
// (databases[].external), which of the fresh-server method's guarantees its
// figures lack, and whether its own database was left behind.
func externalNotes(cell, serverVersion string, ext *results.ExternalTarget) []string {
	v := serverVersion
	if v == "" {
		v = "version unknown"
	}
	out := []string{fmt.Sprintf("cell %s ran on external server %s (%s), not a fresh server of its own; not guaranteed: %s",
		cell, ext.Endpoint, v, strings.Join(ext.NotGuaranteed, ", "))}
	if !ext.Dropped {
		why := ext.DropError
		if why == "" {
			why = "the agent ended before its drop"
		}
		out = append(out, fmt.Sprintf("cell %s left its database %s on %s: %s", cell, ext.Database, ext.Endpoint, why))
	}
	return out
}
