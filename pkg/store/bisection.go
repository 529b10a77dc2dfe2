package store

import (
	"context"

	"github.com/dbbench/dbbench/pkg/site"
)

// The objects of a bisection's directory. Part of the stored format, like
// the run objects: never rename one.
const (
	// BisectionsSegment is the directory of a suite's bisections. It starts
	// with "_", which no escaped run name does, so ListRuns never takes it
	// for a run.
	BisectionsSegment = site.BisectionsDir
	// ObjectBisectionSummary is a bisection's summary document (points,
	// verdicts, ratios, intervals, rounds, culprit).
	ObjectBisectionSummary = "bisection.json"
	// ObjectBisectionIdentity records which BenchmarkBisection object
	// (namespace, UID) owns a bisection directory.
	ObjectBisectionIdentity = "identity.json"
)

// BisectionPrefix is the key prefix of a bisection's objects, ending in "/":
//
//	<prefix>/<suite>/_bisections/<bisection>/
func (l Layout) BisectionPrefix(suite, bisection string) string {
	return l.SuitePrefix(suite) + BisectionsSegment + "/" + EscapeSegment(bisection) + "/"
}

// BisectionKey is the key of a bisection's object.
func (l Layout) BisectionKey(suite, bisection, object string) string {
	return l.BisectionPrefix(suite, bisection) + object
}

// BisectionObjects are what UploadBisection writes.
type BisectionObjects struct {
	// Suite is the suite the bisection's runs belong to ("" for none),
	// Name, Namespace and UID the BenchmarkBisection object's.
	Suite, Name, Namespace, UID string
	// Summary becomes bisection.json; it is required.
	Summary []byte
	// ReportHTML becomes report.html when not empty.
	ReportHTML []byte
}

// UploadBisection uploads a finished bisection's report (when given) and
// then its summary under <prefix>/<suite>/_bisections/<name>/, so that the
// summary's presence means the report is there too. The directory's
// identity.json is checked first: a directory of another bisection object
// of the same name is a KindConflict error. Same outbox contract as
// UploadCell: idempotent, nothing returned unless every object is stored.
func (s *Store) UploadBisection(ctx context.Context, b BisectionObjects) ([]Object, error) {
	key := func(name string) string { return s.layout.BisectionKey(b.Suite, b.Name, name) }
	if len(b.Summary) == 0 {
		return nil, &Error{Op: opEncode, Bucket: s.bucket, Key: key(ObjectBisectionSummary), Kind: KindPermanent, Err: errEmptySummary}
	}
	id := RunIdentity{SchemaVersion: RunIdentitySchemaV1, Name: b.Name, Namespace: b.Namespace, UID: b.UID, Suite: b.Suite}
	if err := s.claim(ctx, key(ObjectBisectionIdentity), id, "bisection"); err != nil {
		return nil, err
	}
	var objs []pending
	if len(b.ReportHTML) > 0 {
		objs = append(objs, pending{ObjectReport, contentTypeHTML, b.ReportHTML})
	}
	objs = append(objs, pending{ObjectBisectionSummary, contentTypeJSON, b.Summary})
	return s.putAll(ctx, objs, key)
}
