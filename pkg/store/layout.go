package store

import (
	"fmt"
	"strings"

	"github.com/dbbench/dbbench/pkg/site"
)

// The object names of the layout. They are part of the stored format: never
// rename one, only add new ones (docs/results-store.md).
const (
	// ObjectResult is a cell's full results document (results.FormFull).
	ObjectResult = "result.json"
	// ObjectSeries is a cell's per-second series as CSV, one row per sample.
	ObjectSeries = "series.csv"
	// ObjectProvenance is a cell's provenance bundle (ProvenanceBundle).
	ObjectProvenance = "provenance.json"
	// ObjectAgentLog and ObjectServerLog are a cell's logs, when given.
	ObjectAgentLog  = "agent.log"
	ObjectServerLog = "server.log"
	// ObjectRunIdentity records which run object (namespace, UID) owns a run
	// directory, so that a reused run name cannot mix two runs' cells.
	ObjectRunIdentity = "run.json"
	// ObjectManifest is a run's manifest (results.Manifest).
	ObjectManifest = "manifest.json"
	// ObjectReport is a run's HTML report, when given: the page the
	// suite's site links by that name.
	ObjectReport = site.ReportFile
)

// Reserved segment names. Escaped names never start with "_", so these cannot
// collide with a real suite, run or cell name.
const (
	// NoSuite is the suite segment of runs without a suite.
	NoSuite = "_nosuite"
	// emptySegment stands for an empty run or cell name, which valid
	// documents never have; it keeps the layout functions total.
	emptySegment = "_empty"
)

// MaxKeyBytes is S3's limit on a key's length.
const MaxKeyBytes = 1024

// Layout maps (suite, run, cell, object) to keys:
//
//	<prefix>/<suite>/<run>/manifest.json
//	<prefix>/<suite>/<run>/<cell>/result.json
//
// Prefix is used as given apart from its slashes: leading, trailing and
// repeated slashes are dropped, so "bench/", "/bench" and "bench" are the same
// prefix, and an empty prefix puts the suites at the bucket's root. Suite,
// run and cell names are one segment each, escaped by EscapeSegment.
type Layout struct {
	Prefix string
}

// prefix returns the cleaned prefix with a trailing slash, or "".
func (l Layout) prefix() string {
	var parts []string
	for _, p := range strings.Split(l.Prefix, "/") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "/") + "/"
}

// SuitePrefix is the key prefix of every run of suite, ending in "/".
func (l Layout) SuitePrefix(suite string) string {
	return l.prefix() + SuiteSegment(suite) + "/"
}

// RunPrefix is the key prefix of a run's objects, ending in "/".
func (l Layout) RunPrefix(suite, run string) string {
	return l.SuitePrefix(suite) + EscapeSegment(run) + "/"
}

// CellPrefix is the key prefix of a cell's objects, ending in "/".
func (l Layout) CellPrefix(suite, run, cell string) string {
	return l.RunPrefix(suite, run) + EscapeSegment(cell) + "/"
}

// RunKey is the key of a run-level object (ObjectManifest, ObjectReport).
func (l Layout) RunKey(suite, run, object string) string {
	return l.RunPrefix(suite, run) + object
}

// CellKey is the key of a cell-level object (ObjectResult, ObjectSeries, ...).
func (l Layout) CellKey(suite, run, cell, object string) string {
	return l.CellPrefix(suite, run, cell) + object
}

// SuiteSegment is suite's segment: NoSuite when empty, else EscapeSegment.
func SuiteSegment(suite string) string {
	if suite == "" {
		return NoSuite
	}
	return EscapeSegment(suite)
}

// EscapeSegment makes name one key segment that is safe on every
// S3-compatible server, including those that map keys to file paths:
// ASCII letters, digits, "-", "." and "_" are kept; every other byte
// (UTF-8 bytes of non-ASCII letters included) becomes %XX with upper-case
// hex; a leading "." or "_" is escaped too, so that no segment is "." or
// "..", hidden, or one of the reserved "_" names. The result is a function of
// name alone and never changes: keys written years ago stay findable. An
// empty name becomes "_empty".
func EscapeSegment(name string) string {
	if name == "" {
		return emptySegment
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if isPlain(c) && (i != 0 || (c != '.' && c != '_')) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func isPlain(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_'
}

// UnescapeSegment inverts EscapeSegment (and SuiteSegment: NoSuite and
// "_empty" give ""). It refuses a segment that EscapeSegment cannot have
// produced, so that a foreign object under the prefix is not mistaken for a
// run.
func UnescapeSegment(seg string) (string, error) {
	if seg == NoSuite || seg == emptySegment {
		return "", nil
	}
	if seg == "" {
		return "", fmt.Errorf("empty key segment")
	}
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if c != '%' {
			if !isPlain(c) || (i == 0 && (c == '.' || c == '_')) {
				return "", fmt.Errorf("key segment %q: byte %q at %d is not escaped", seg, c, i)
			}
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(seg) || !isUpperHex(seg[i+1]) || !isUpperHex(seg[i+2]) {
			return "", fmt.Errorf("key segment %q: bad escape at %d", seg, i)
		}
		v := unhex(seg[i+1])<<4 | unhex(seg[i+2])
		if isPlain(v) && (i != 0 || (v != '.' && v != '_')) {
			return "", fmt.Errorf("key segment %q: %%%c%c escapes a plain byte", seg, seg[i+1], seg[i+2])
		}
		b.WriteByte(v)
		i += 2
	}
	return b.String(), nil
}

func isUpperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'A' + 10
}

// The objects of a suite's triage and site. Part of the stored format,
// like the run objects: never rename one.
const (
	// ObjectVerdict is a run's regression verdict (triage.Verdict),
	// written before its manifest.
	ObjectVerdict = "verdict.json"
	// ObjectVerdictJUnit is the same verdict as JUnit XML, one test case
	// per judged (cell, step, threads, metric) (pkg/verdictformat).
	ObjectVerdictJUnit = "junit.xml"
	// AcksSegment is the directory of a suite's acknowledgements, one
	// <name>.json (triage.Ack) each. It starts with "_", so ListRuns never
	// takes it for a run.
	AcksSegment = "_acks"
	// ObjectSiteIndex is the suite's site: <prefix>/<suite>/index.html,
	// beside the runs' directories, whose report.html it links.
	ObjectSiteIndex = site.FileIndex
	// ObjectSiteData is the site's data (site.Index) as JSON, beside it.
	ObjectSiteData = site.FileData
)

// AckKey is the key of an acknowledgement:
//
//	<prefix>/<suite>/_acks/<name>.json
func (l Layout) AckKey(suite, name string) string {
	return l.AcksPrefix(suite) + EscapeSegment(name) + ".json"
}

// AcksPrefix is the key prefix of a suite's acknowledgements.
func (l Layout) AcksPrefix(suite string) string {
	return l.SuitePrefix(suite) + AcksSegment + "/"
}

// SuiteKey is the key of a suite-level object (ObjectSiteIndex,
// ObjectSiteData).
func (l Layout) SuiteKey(suite, object string) string {
	return l.SuitePrefix(suite) + object
}

// BisectionsPrefix is the key prefix of a suite's bisections.
func (l Layout) BisectionsPrefix(suite string) string {
	return l.SuitePrefix(suite) + BisectionsSegment + "/"
}
