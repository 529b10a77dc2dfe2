package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/dbbench/dbbench/pkg/site"
	"github.com/dbbench/dbbench/pkg/triage"
)

// ReadSuite reads what the suite's site is built from: every readable
// run manifest (ListRuns), the verdicts and report presence of the newest
// lastRuns runs, the bisections' summaries, the acknowledgements, and a
// reader of the cells' effective settings (provenance.json, read only for
// the runs around a change of the settings' digest). A corrupt or foreign
// object is skipped with a note in the input, never an error; an error
// means the store itself could not be read (unreachable, refused
// credentials, no such bucket).
//
// Requests: one LIST of the suite and one GET per run's manifest (as the
// regression verdict's history reads them), one GET (verdict.json) and
// one HEAD (report.html) per charted run, one LIST of the bisections and
// a GET and a HEAD per bisection, one LIST and a GET per acknowledgement.
func (s *Store) ReadSuite(ctx context.Context, suite string, lastRuns int) (site.Input, error) {
	in := site.Input{Suite: suite, Verdicts: map[string]triage.Verdict{}, Reports: map[string]bool{}}
	runs, err := s.ListRuns(ctx, suite)
	var le *ListError
	switch {
	case errors.As(err, &le):
		keys := make([]string, 0, len(le.Failed))
		for k := range le.Failed {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			in.Notes = append(in.Notes, fmt.Sprintf("%s skipped: %v", s.URL(k), le.Failed[k]))
		}
	case err != nil:
		return in, err
	}
	in.Runs = runs
	if lastRuns <= 0 {
		lastRuns = site.DefaultLastRuns
	}
	window := runs
	if len(window) > lastRuns {
		window = window[len(window)-lastRuns:]
	}
	for _, m := range window {
		run := m.Run.Name
		key := s.layout.RunKey(suite, run, ObjectVerdict)
		data, err := s.Get(ctx, key)
		switch {
		case errors.Is(err, ErrNotFound):
		case fatal(err):
			return in, err
		case err != nil:
			in.Notes = append(in.Notes, fmt.Sprintf("%s skipped: %v", s.URL(key), err))
		default:
			v, err := triage.UnmarshalVerdict(data)
			if err != nil || v.Run != run {
				if err == nil {
					err = fmt.Errorf("names run %q", v.Run)
				}
				in.Notes = append(in.Notes, fmt.Sprintf("%s skipped: %v", s.URL(key), err))
				break
			}
			in.Verdicts[run] = v
		}
		ok, err := s.exists(ctx, s.layout.RunKey(suite, run, ObjectReport))
		if err != nil {
			return in, err
		}
		in.Reports[run] = ok
	}
	if in.Bisections, err = s.readBisections(ctx, suite, &in.Notes); err != nil {
		return in, err
	}
	acks, notes, err := s.readAcks(ctx, suite)
	if err != nil {
		return in, err
	}
	in.Acks, in.Notes = acks, append(in.Notes, notes...)
	in.Settings = s.settingsReader(ctx, suite)
	return in, nil
}

// fatal reports whether err is the store's fault (unreachable, refused)
// rather than the object's.
func fatal(err error) bool {
	return errors.Is(err, ErrTransient) || errors.Is(err, ErrAuth)
}

// exists is one HEAD; false when the key is not there.
func (s *Store) exists(ctx context.Context, key string) (bool, error) {
	_, err := s.Stat(ctx, key)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotFound):
		return false, nil
	case fatal(err):
		return false, err
	}
	return false, nil
}

// readBisections reads the suite's bisection summaries; what is not one
// is noted.
func (s *Store) readBisections(ctx context.Context, suite string, notes *[]string) ([]site.Bisection, error) {
	prefix := s.layout.BisectionsPrefix(suite)
	entries, err := s.list(ctx, prefix, false)
	if err != nil {
		return nil, err
	}
	var out []site.Bisection
	for _, e := range entries {
		if !isDir(e) {
			*notes = append(*notes, fmt.Sprintf("%s skipped: not a bisection's directory", s.URL(e)))
			continue
		}
		seg := strings.TrimSuffix(strings.TrimPrefix(e, prefix), "/")
		name, err := UnescapeSegment(seg)
		if err != nil {
			*notes = append(*notes, fmt.Sprintf("%s skipped: %v", s.URL(e), err))
			continue
		}
		key := s.layout.BisectionKey(suite, name, ObjectBisectionSummary)
		data, err := s.Get(ctx, key)
		switch {
		case errors.Is(err, ErrNotFound):
			continue // still uploading: the summary is written last
		case fatal(err):
			return nil, err
		case err != nil:
			*notes = append(*notes, fmt.Sprintf("%s skipped: %v", s.URL(key), err))
			continue
		}
		b, err := site.DecodeBisection(data)
		if err != nil {
			*notes = append(*notes, fmt.Sprintf("%s skipped: %v", s.URL(key), err))
			continue
		}
		b.Name = name // the directory names it
		if b.Report, err = s.exists(ctx, s.layout.BisectionKey(suite, name, ObjectReport)); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// ReadAcks reads the suite's acknowledgements (<suite>/_acks/*.json). What
// cannot be read is skipped and said in the notes; the error is the
// store's (unreachable, refused).
func (s *Store) ReadAcks(ctx context.Context, suite string) ([]triage.Ack, []string, error) {
	return s.readAcks(ctx, suite)
}

func (s *Store) readAcks(ctx context.Context, suite string) ([]triage.Ack, []string, error) {
	keys, err := s.List(ctx, s.layout.AcksPrefix(suite))
	if err != nil {
		return nil, nil, err
	}
	var acks []triage.Ack
	var notes []string
	for _, k := range keys {
		if path.Ext(k) != ".json" {
			notes = append(notes, fmt.Sprintf("%s skipped: not an acknowledgement (<name>.json)", s.URL(k)))
			continue
		}
		data, err := s.Get(ctx, k)
		switch {
		case errors.Is(err, ErrNotFound):
			continue // deleted since the listing
		case fatal(err):
			return nil, nil, err
		case err != nil:
			notes = append(notes, fmt.Sprintf("%s skipped: %v", s.URL(k), err))
			continue
		}
		a, err := triage.UnmarshalAck(data)
		if err == nil && a.Suite != suite {
			err = fmt.Errorf("acknowledges suite %q", a.Suite)
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s skipped: %v", s.URL(k), err))
			continue
		}
		acks = append(acks, a)
	}
	return acks, notes, nil
}

// settingsReader returns a reader of a cell's effective settings from its
// provenance.json, each read once; nil maps where there are none.
func (s *Store) settingsReader(ctx context.Context, suite string) func(run, cell string) map[string]string {
	var mu sync.Mutex
	cache := map[string]map[string]string{}
	return func(run, cell string) map[string]string {
		k := run + "\x00" + cell
		mu.Lock()
		defer mu.Unlock()
		if m, ok := cache[k]; ok {
			return m
		}
		var b ProvenanceBundle
		m := map[string]string(nil)
		if data, err := s.Get(ctx, s.layout.CellKey(suite, run, cell, ObjectProvenance)); err == nil {
			if err := json.Unmarshal(data, &b); err == nil && b.SchemaVersion == ProvenanceSchemaV1 {
				m = b.Provenance.ServerSettings
			}
		}
		cache[k] = m
		return m
	}
}

// PutAck stores an acknowledgement at <suite>/_acks/<name>.json.
func (s *Store) PutAck(ctx context.Context, a triage.Ack) (Object, error) {
	data, err := triage.MarshalAck(a)
	if err != nil {
		return Object{}, &Error{Op: opEncode, Bucket: s.bucket, Key: s.layout.AckKey(a.Suite, a.Name), Kind: KindPermanent, Err: err}
	}
	return s.Put(ctx, s.layout.AckKey(a.Suite, a.Name), data, contentTypeJSON)
}

// GetAck reads one acknowledgement (ErrNotFound when there is none).
func (s *Store) GetAck(ctx context.Context, suite, name string) (triage.Ack, error) {
	return getDecoded(ctx, s, s.layout.AckKey(suite, name), triage.UnmarshalAck)
}

// PublishSite writes the suite's site files (site.Files) beside its runs:
// the data first, the page last.
func (s *Store) PublishSite(ctx context.Context, suite string, files map[string][]byte) ([]Object, error) {
	var objs []pending
	if d, ok := files[site.FileData]; ok {
		objs = append(objs, pending{ObjectSiteData, contentTypeJSON, d})
	}
	if p, ok := files[site.FileIndex]; ok {
		objs = append(objs, pending{ObjectSiteIndex, contentTypeHTML, p})
	}
	return s.putAll(ctx, objs, func(name string) string { return s.layout.SuiteKey(suite, name) })
}
