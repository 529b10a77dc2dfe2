package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dbbench/dbbench/pkg/results"
)

// The content types of the objects the store writes.
const (
	contentTypeJSON = "application/json"
	contentTypeHTML = "text/html; charset=utf-8"
	contentTypeXML  = "application/xml"
)

// Uploader is what the controller needs to move a run's results out of the
// cluster; *Store implements it. The contract is an outbox: the caller keeps
// its in-cluster copy (the results ConfigMap) until a call returns nil, and
// calls again later when it returns an error for which Retryable is true.
// Calls are idempotent, so calling again after a partial upload only writes
// what is missing or different.
type Uploader interface {
	UploadCell(ctx context.Context, doc *results.Document, extras CellExtras) ([]Object, error)
	UploadRun(ctx context.Context, m *results.Manifest, extras RunExtras) ([]Object, error)
	Uploaded(ctx context.Context, key string) (bool, error)
}

// Reader reads results back, for reports, run history and change-point
// detection across runs; *Store implements it.
type Reader interface {
	ListRuns(ctx context.Context, suite string) ([]*results.Manifest, error)
	GetManifest(ctx context.Context, suite, run string) (*results.Manifest, error)
	GetCellDocument(ctx context.Context, suite, run, cell string) (*results.Document, error)
}

var (
	_ Uploader = (*Store)(nil)
	_ Reader   = (*Store)(nil)
)

// CellExtras are a cell's optional objects.
type CellExtras struct {
	// AgentLog becomes agent.log, ServerLog server.log, when not empty.
	AgentLog  []byte
	ServerLog []byte
}

// RunExtras are a run's optional objects.
type RunExtras struct {
	// ReportHTML becomes report.html when not empty.
	ReportHTML []byte
	// Verdict becomes verdict.json (triage.Verdict) when not empty.
	Verdict []byte
	// VerdictJUnit becomes junit.xml when not empty.
	VerdictJUnit []byte
}

type pending struct {
	name, contentType string
	data              []byte
}

// CellKeys are the keys UploadCell writes for doc (series.csv only when a
// step has a series, the logs only when given), in upload order.
func (s *Store) CellKeys(doc *results.Document, extras CellExtras) ([]string, error) {
	objs, err := cellObjects(doc, extras)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = s.layout.CellKey(doc.Run.Suite, doc.Run.Name, doc.Cell.Name, o.name)
	}
	return keys, nil
}

// cellObjects encodes a cell's objects; result.json comes last, so that its
// presence means the cell's other objects are there too.
func cellObjects(doc *results.Document, extras CellExtras) ([]pending, error) {
	if doc.Form != results.FormFull {
		return nil, fmt.Errorf("cell %q: form is %q; the object store keeps the %q form", doc.Cell.Name, doc.Form, results.FormFull)
	}
	result, err := results.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("cell %q: %w", doc.Cell.Name, err)
	}
	prov, err := marshalJSON(NewProvenanceBundle(doc))
	if err != nil {
		return nil, err
	}
	var out []pending
	if csv, ok := EncodeSeriesCSV(doc); ok {
		out = append(out, pending{ObjectSeries, "text/csv; charset=utf-8", csv})
	}
	out = append(out, pending{ObjectProvenance, contentTypeJSON, prov})
	if len(extras.AgentLog) > 0 {
		out = append(out, pending{ObjectAgentLog, "text/plain; charset=utf-8", extras.AgentLog})
	}
	if len(extras.ServerLog) > 0 {
		out = append(out, pending{ObjectServerLog, "text/plain; charset=utf-8", extras.ServerLog})
	}
	return append(out, pending{ObjectResult, contentTypeJSON, result}), nil
}

// UploadCell uploads a cell's full document and its derived objects
// (series.csv, provenance.json, the logs in extras) under
// <prefix>/<suite>/<run>/<cell>/, result.json last. It returns the confirmed
// objects only when every one of them is stored and verified; on any error it
// returns no objects, and the caller must treat the cell as not uploaded
// (keep its in-cluster copy; call again later if Retryable(err)). The run's
// run.json is checked first: a directory that belongs to another run object
// of the same name is a KindConflict error.
func (s *Store) UploadCell(ctx context.Context, doc *results.Document, extras CellExtras) ([]Object, error) {
	objs, err := cellObjects(doc, extras)
	if err != nil {
		return nil, &Error{Op: opEncode, Bucket: s.bucket, Key: s.layout.CellPrefix(doc.Run.Suite, doc.Run.Name, doc.Cell.Name), Kind: KindPermanent, Err: err}
	}
	if err := s.claimRun(ctx, doc.Run); err != nil {
		return nil, err
	}
	return s.putAll(ctx, objs, func(name string) string {
		return s.layout.CellKey(doc.Run.Suite, doc.Run.Name, doc.Cell.Name, name)
	})
}

// UploadRun uploads a run's report and verdict (when given) and then its manifest, under
// <prefix>/<suite>/<run>/. Upload the cells first: a run appears in ListRuns
// once its manifest is there. The manifest's size is not limited to a
// ConfigMap's. Same outbox contract as UploadCell.
func (s *Store) UploadRun(ctx context.Context, m *results.Manifest, extras RunExtras) ([]Object, error) {
	key := s.layout.RunKey(m.Run.Suite, m.Run.Name, ObjectManifest)
	data, err := marshalManifest(m)
	if err != nil {
		return nil, &Error{Op: opEncode, Bucket: s.bucket, Key: key, Kind: KindPermanent, Err: err}
	}
	if err := s.claimRun(ctx, m.Run); err != nil {
		return nil, err
	}
	var objs []pending
	if len(extras.ReportHTML) > 0 {
		objs = append(objs, pending{ObjectReport, contentTypeHTML, extras.ReportHTML})
	}
	if len(extras.Verdict) > 0 {
		objs = append(objs, pending{ObjectVerdict, contentTypeJSON, extras.Verdict})
	}
	if len(extras.VerdictJUnit) > 0 {
		objs = append(objs, pending{ObjectVerdictJUnit, contentTypeXML, extras.VerdictJUnit})
	}
	objs = append(objs, pending{ObjectManifest, contentTypeJSON, data})
	return s.putAll(ctx, objs, func(name string) string { return s.layout.RunKey(m.Run.Suite, m.Run.Name, name) })
}

func (s *Store) putAll(ctx context.Context, objs []pending, key func(string) string) ([]Object, error) {
	out := make([]Object, 0, len(objs))
	for _, p := range objs {
		o, err := s.Put(ctx, key(p.name), p.data, p.contentType)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// marshalManifest is results.MarshalManifest without the ConfigMap size
// limit.
func marshalManifest(m *results.Manifest) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if m.Cells == nil {
		cp := *m
		cp.Cells = []results.ManifestCell{}
		m = &cp
	}
	return json.Marshal(m)
}

// claimRun writes the run's run.json if absent, and refuses a directory that
// another run object (same name, other UID or namespace) owns.
func (s *Store) claimRun(ctx context.Context, r results.Run) error {
	return s.claim(ctx, s.layout.RunKey(r.Suite, r.Name, ObjectRunIdentity), runIdentity(r), "run")
}

// claim writes the identity want at key if absent, and refuses a directory
// whose identity is another object's (what names the kind, for the error).
func (s *Store) claim(ctx context.Context, key string, want RunIdentity, what string) error {
	data, err := s.Get(ctx, key)
	switch {
	case errors.Is(err, ErrNotFound):
		b, err := marshalJSON(want)
		if err != nil {
			return err
		}
		_, err = s.Put(ctx, key, b, contentTypeJSON)
		return err
	case err != nil:
		return err
	}
	var have RunIdentity
	if err := json.Unmarshal(data, &have); err != nil {
		return &Error{Op: "get", Bucket: s.bucket, Key: key, Kind: KindPermanent, Err: fmt.Errorf("decoding run identity: %w", err)}
	}
	if !have.sameRun(want) {
		return &Error{Op: "claim " + what, Bucket: s.bucket, Key: key, Kind: KindConflict,
			Err: fmt.Errorf("%s %q belongs to namespace %q uid %q, not namespace %q uid %q: %s names must be unique per suite in a bucket (delete the old objects or use another prefix)",
				what, want.Name, have.Namespace, have.UID, want.Namespace, want.UID, what)}
	}
	return nil
}
