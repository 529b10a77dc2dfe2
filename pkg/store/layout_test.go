package store

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLayoutKeys(t *testing.T) {
	tests := []struct {
		name                     string
		prefix, suite, run, cell string
		object                   string
		want                     string
	}{
		{"plain", "bench", "standard", "nightly-2026-11-21", "mariadb-10-11-base-r1", ObjectResult,
			"bench/standard/nightly-2026-11-21/mariadb-10-11-base-r1/result.json"},
		{"prefix with trailing slash", "bench/", "standard", "r", "c", ObjectSeries, "bench/standard/r/c/series.csv"},
		{"prefix with leading and repeated slashes", "/team//bench/", "standard", "r", "c", ObjectSeries, "team/bench/standard/r/c/series.csv"},
		{"empty prefix", "", "standard", "r", "c", ObjectResult, "standard/r/c/result.json"},
		{"slash-only prefix", "/", "standard", "r", "c", ObjectResult, "standard/r/c/result.json"},
		{"empty suite", "p", "", "r", "c", ObjectProvenance, "p/_nosuite/r/c/provenance.json"},
		{"suite named like the reserved one", "p", "_nosuite", "r", "c", ObjectResult, "p/%5Fnosuite/r/c/result.json"},
		{"slash in a name stays one segment", "p", "a/b", "r/../x", "c", ObjectResult, "p/a%2Fb/r%2F..%2Fx/c/result.json"},
		{"dot segments", "p", ".", "..", ".hidden", ObjectResult, "p/%2E/%2E./%2Ehidden/result.json"},
		{"spaces, plus, percent, colon", "p", "tpc c", "run+1", "50%:x", ObjectAgentLog, "p/tpc%20c/run%2B1/50%25%3Ax/agent.log"},
		{"unicode", "p", "étude", "r", "c", ObjectResult, "p/%C3%A9tude/r/c/result.json"},
		{"underscore inside is plain", "p", "s_1", "r_1", "c_1", ObjectResult, "p/s_1/r_1/c_1/result.json"},
		{"upper case kept", "p", "Standard", "R", "C", ObjectResult, "p/Standard/R/C/result.json"},
		{"empty cell never collides with a real name", "p", "s", "r", "", ObjectResult, "p/s/r/_empty/result.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Layout{Prefix: tt.prefix}
			if got := l.CellKey(tt.suite, tt.run, tt.cell, tt.object); got != tt.want {
				t.Errorf("CellKey(%q, %q, %q, %q) with prefix %q = %q, want %q", tt.suite, tt.run, tt.cell, tt.object, tt.prefix, got, tt.want)
			}
			cellPrefix := l.CellPrefix(tt.suite, tt.run, tt.cell)
			if !strings.HasPrefix(tt.want, cellPrefix) || !strings.HasPrefix(cellPrefix, l.RunPrefix(tt.suite, tt.run)) ||
				!strings.HasPrefix(l.RunPrefix(tt.suite, tt.run), l.SuitePrefix(tt.suite)) {
				t.Errorf("prefixes do not nest: suite %q run %q cell %q", l.SuitePrefix(tt.suite), l.RunPrefix(tt.suite, tt.run), cellPrefix)
			}
		})
	}
}

func TestLayoutRunKey(t *testing.T) {
	l := Layout{Prefix: "results/"}
	if got, want := l.RunKey("standard", "nightly", ObjectManifest), "results/standard/nightly/manifest.json"; got != want {
		t.Errorf("RunKey = %q, want %q", got, want)
	}
	if got, want := l.RunKey("", "nightly", ObjectReport), "results/_nosuite/nightly/report.html"; got != want {
		t.Errorf("RunKey = %q, want %q", got, want)
	}
	if got, want := l.SuitePrefix("standard"), "results/standard/"; got != want {
		t.Errorf("SuitePrefix = %q, want %q", got, want)
	}
}

// Keys written years ago must stay findable: these exact strings are the
// stored format.
func TestEscapeSegmentIsStable(t *testing.T) {
	for in, want := range map[string]string{
		"mariadb-10.11-base-r1": "mariadb-10.11-base-r1",
		"a b":                   "a%20b",
		"_x":                    "%5Fx",
		"x_":                    "x_",
		".":                     "%2E",
		"..":                    "%2E.",
		"a/b\\c":                "a%2Fb%5Cc",
		"~":                     "%7E",
		"\x00":                  "%00",
	} {
		if got := EscapeSegment(in); got != want {
			t.Errorf("EscapeSegment(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnescapeSegmentRefusesForeignNames(t *testing.T) {
	for _, seg := range []string{"", "a b", "%2", "%zz", "%2f", "%41", "_x", ".x", "a/b", "%"} {
		if got, err := UnescapeSegment(seg); err == nil {
			t.Errorf("UnescapeSegment(%q) = %q, want an error", seg, got)
		}
	}
	for seg, want := range map[string]string{NoSuite: "", "_empty": "", "%5Fnosuite": "_nosuite", "%2E.": ".."} {
		if got, err := UnescapeSegment(seg); err != nil || got != want {
			t.Errorf("UnescapeSegment(%q) = %q, %v; want %q", seg, got, err, want)
		}
	}
}

func FuzzSegmentRoundTrip(f *testing.F) {
	for _, s := range []string{"standard", "_nosuite", "..", "a/b", "étude", "50%", "\xff", "_empty", " "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		seg := EscapeSegment(name)
		if strings.Contains(seg, "/") || seg == "." || seg == ".." || seg == "" {
			t.Fatalf("EscapeSegment(%q) = %q is not one safe segment", name, seg)
		}
		if !utf8.ValidString(seg) || strings.ContainsFunc(seg, func(r rune) bool { return r > 0x7e || r < 0x21 }) {
			t.Fatalf("EscapeSegment(%q) = %q is not printable ASCII", name, seg)
		}
		got, err := UnescapeSegment(seg)
		if err != nil {
			t.Fatalf("UnescapeSegment(EscapeSegment(%q) = %q): %v", name, seg, err)
		}
		if got != name {
			t.Fatalf("round trip of %q gave %q (via %q)", name, got, seg)
		}
		// And the other way: a segment that unescapes has exactly one
		// spelling.
		if back, err := UnescapeSegment(name); err == nil && name != NoSuite && name != emptySegment && EscapeSegment(back) != name {
			t.Fatalf("segment %q unescapes to %q, which escapes to %q", name, back, EscapeSegment(back))
		}
	})
}

// The triage and site keys sit under the suite beside its runs, in
// directories and names no escaped run name can take.
func TestLayoutSuiteKeys(t *testing.T) {
	l := Layout{Prefix: "team/bench"}
	for _, tt := range []struct{ got, want string }{
		{l.AckKey("nightly", "slow-commits"), "team/bench/nightly/_acks/slow-commits.json"},
		{l.AckKey("nightly 21/11", "_x"), "team/bench/nightly%2021%2F11/_acks/%5Fx.json"},
		{l.AcksPrefix(""), "team/bench/_nosuite/_acks/"},
		{l.SuiteKey("nightly", ObjectSiteIndex), "team/bench/nightly/index.html"},
		{l.SuiteKey("nightly", ObjectSiteData), "team/bench/nightly/site.json"},
		{l.RunKey("nightly", "n1", ObjectVerdict), "team/bench/nightly/n1/verdict.json"},
		{l.BisectionsPrefix("nightly"), "team/bench/nightly/_bisections/"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
