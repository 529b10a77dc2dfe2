package profile

import (
	"bytes"
	"encoding/xml"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// perfScript is `perf script` output of three samples as perf 6.1 prints
// it: a kernel stack under a libc call, a C++ frame with spaces, a frame
// with only a DSO, a frame with neither, and a sample without frames.
const perfScript = `mariadbd  9524/9530 [001] 23441.509759:    2004008 cpu-clock: 
	ffffffff81a852ea security_file_permission+0x2a ([kernel.kallsyms])
	ffffffff816b58cd vfs_read+0x7d ([kernel.kallsyms])
	           f82ad read+0xd (/usr/lib/x86_64-linux-gnu/libc.so.6)
	            ae77 do_command(THD*, bool)+0x1f (/usr/sbin/mariadbd)
	    55c2e3b87918 [unknown] ([unknown])

one connection  9524/9531 23441.519502:    2004008 cpu-clock: 
	          172473 my_hash_sort+0x3 (/usr/sbin/mariadbd)
	            ae77 do_command(THD*, bool)+0x1f (/usr/sbin/mariadbd)
	            1234 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)

mariadbd  9524/9530 [000] 23441.521502:    2004008 cpu-clock: 
	          172473 my_hash_sort+0x3 (/usr/sbin/mariadbd)
	            ae77 do_command(THD*, bool)+0x1f (/usr/sbin/mariadbd)
	            1234 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)

mariadbd  9524/9532 [000] 23441.531502:    2004008 cpu-clock: 

`

func TestFoldPerfScript(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		opts    FoldOptions
		want    string
		wantErr string
	}{
		{
			name: "default",
			in:   perfScript,
			want: "[libc.so.6];do_command(THD*, bool);my_hash_sort 2\n" +
				"[mariadbd] 1\n" +
				"do_command(THD*, bool);read;vfs_read;security_file_permission 1\n",
		},
		{
			name: "kernel suffix and one command",
			in:   perfScript,
			opts: FoldOptions{Comm: []string{"one connection"}, KernelSuffix: true},
			want: "[libc.so.6];do_command(THD*, bool);my_hash_sort 1\n",
		},
		{
			name: "kernel suffix",
			in:   perfScript,
			opts: FoldOptions{Comm: []string{"mariadbd"}, KernelSuffix: true},
			want: "[libc.so.6];do_command(THD*, bool);my_hash_sort 1\n" +
				"[mariadbd] 1\n" +
				"do_command(THD*, bool);read;vfs_read_[k];security_file_permission_[k] 1\n",
		},
		{
			name: "no trailing blank line",
			in:   "x 1/2 1.0: 1 cpu-clock:\n\t1 f+0x1 (a)",
			want: "f 1\n",
		},
		{
			name: "semicolon in a symbol",
			in:   "x 1 1.0: 1 cpu-clock:\n\t1 a;b+0x1 (a)\n",
			want: "a:b 1\n",
		},
		{
			name:    "frame before header",
			in:      "\t1 f+0x1 (a)\n",
			wantErr: "line 1: a frame before any sample header",
		},
		{
			name:    "frame without address",
			in:      "x 1 1.0: 1 cpu-clock:\n\tzz f (a)\n",
			wantErr: "line 2: frame",
		},
		{
			name:    "header without pid",
			in:      "x y: cpu-clock:\n",
			wantErr: "line 1: sample header",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := FoldPerfScript(strings.NewReader(tt.in), tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, p.Folded()); diff != "" {
				t.Errorf("folded (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFolded(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      string
		wantTotal int64
		wantErr   string
	}{
		{name: "sums repeats and skips blanks", in: "a;b 2\n\na;c 1\na;b 3\r\n", want: "a;b 5\na;c 1\n", wantTotal: 6},
		{name: "spaces in frames", in: "f(int, char) 4\n", want: "f(int, char) 4\n", wantTotal: 4},
		{name: "no count", in: "a;b 2\na;b\n", wantErr: "folded line 2"},
		{name: "zero count", in: "a 0\n", wantErr: "line 1: count \"0\" is not a positive integer"},
		{name: "empty frame", in: "a;;b 1\n", wantErr: "line 1: stack \"a;;b\" has an empty frame"},
		{name: "count only", in: " 3\n", wantErr: "folded line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParseFoldedString(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, p.Folded()); diff != "" {
				t.Errorf("folded (-want +got):\n%s", diff)
			}
			if p.Total() != tt.wantTotal {
				t.Errorf("total = %d, want %d", p.Total(), tt.wantTotal)
			}
		})
	}
}

func mustFolded(t *testing.T, s string) *Profile {
	t.Helper()
	p, err := ParseFoldedString(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTrim(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		maxBytes    int
		want        string
		wantRemoved int
		wantDropped int64
	}{
		{name: "fits", in: "a 1\nb 2\n", maxBytes: 8, want: "a 1\nb 2\n"},
		{name: "keeps the heaviest", in: "a 1\nb 5\nc 3\n", maxBytes: 8, want: "b 5\nc 3\n", wantRemoved: 1, wantDropped: 1},
		{name: "skips a long one to keep a short one", in: "long;stack 9\nb 5\nc 3\n", maxBytes: 8, want: "b 5\nc 3\n", wantRemoved: 1, wantDropped: 9},
		{name: "nothing fits", in: "a 1\n", maxBytes: 2, want: "", wantRemoved: 1, wantDropped: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustFolded(t, tt.in)
			total := p.Total()
			if got := p.Trim(tt.maxBytes); got != tt.wantRemoved {
				t.Errorf("removed = %d, want %d", got, tt.wantRemoved)
			}
			if diff := cmp.Diff(tt.want, p.Folded()); diff != "" {
				t.Errorf("folded (-want +got):\n%s", diff)
			}
			if p.Dropped != tt.wantDropped || p.Total() != total {
				t.Errorf("dropped = %d, total = %d; want %d and the total unchanged (%d)", p.Dropped, p.Total(), tt.wantDropped, total)
			}
		})
	}
}

func TestShares(t *testing.T) {
	tests := []struct {
		name string
		in   string
		drop int64
		want map[string]Share
	}{
		{
			name: "self and inclusive",
			in:   "main;a;b 2\nmain;a 1\nmain;c 1\n",
			want: map[string]Share{
				"main": {Self: 0, Inclusive: 1},
				"a":    {Self: 0.25, Inclusive: 0.75},
				"b":    {Self: 0.5, Inclusive: 0.5},
				"c":    {Self: 0.25, Inclusive: 0.25},
			},
		},
		{
			name: "recursion counts once",
			in:   "f;f;f 1\ng 1\n",
			want: map[string]Share{"f": {Self: 0.5, Inclusive: 0.5}, "g": {Self: 0.5, Inclusive: 0.5}},
		},
		{
			name: "dropped samples are in the denominator",
			in:   "f 1\n",
			drop: 3,
			want: map[string]Share{"f": {Self: 0.25, Inclusive: 0.25}},
		},
		{name: "empty", in: "", want: map[string]Share{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustFolded(t, tt.in)
			p.Dropped = tt.drop
			if diff := cmp.Diff(tt.want, p.Shares(), cmpFloat); diff != "" {
				t.Errorf("shares (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpFloat = cmp.Comparer(func(x, y float64) bool { return math.Abs(x-y) < 1e-9 })

func TestDiff(t *testing.T) {
	// B spends a quarter of its time in crc32 under write, which A did
	// not; everything else shrinks in proportion.
	a := mustFolded(t, "main;read;parse 50\nmain;write;copy 50\n")
	b := mustFolded(t, "main;read;parse 75\nmain;write;copy 75\nmain;write;crc32 50\n")
	tests := []struct {
		name      string
		by        RankBy
		wantOrder []string
		wantFirst Change
	}{
		{
			name: "self",
			by:   RankSelf,
			// crc32 +0.25; copy and parse -0.125; main, read, write 0.
			wantOrder: []string{"crc32", "copy", "parse", "main", "read", "write"},
			wantFirst: Change{Function: "crc32", B: Share{Self: 0.25, Inclusive: 0.25}, SelfDelta: 0.25, InclusiveDelta: 0.25},
		},
		{
			name: "inclusive",
			by:   RankInclusive,
			// crc32 +0.25; write +0.125, copy, parse, read -0.125; main 0.
			wantOrder: []string{"crc32", "copy", "parse", "read", "write", "main"},
			wantFirst: Change{Function: "crc32", B: Share{Self: 0.25, Inclusive: 0.25}, SelfDelta: 0.25, InclusiveDelta: 0.25},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diff(a, b, tt.by)
			var order []string
			for _, c := range got {
				order = append(order, c.Function)
			}
			if diff := cmp.Diff(tt.wantOrder, order); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFirst, got[0], cmpFloat); diff != "" {
				t.Errorf("first (-want +got):\n%s", diff)
			}
			if r := Rank(got, "crc32"); r != 1 {
				t.Errorf("Rank(crc32) = %d, want 1", r)
			}
			if r := Rank(got, "absent"); r != 0 {
				t.Errorf("Rank(absent) = %d, want 0", r)
			}
		})
	}
}

// svgFrame is a drawn frame: its tooltip and rectangle.
type svgFrame struct {
	Title string `xml:"title"`
	Rect  struct {
		Width float64 `xml:"width,attr"`
		Fill  string  `xml:"fill,attr"`
	} `xml:"rect"`
}

func parseSVG(t *testing.T, data []byte) map[string]svgFrame {
	t.Helper()
	var doc struct {
		G []svgFrame `xml:"g"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the SVG is not XML: %v\n%s", err, data)
	}
	out := map[string]svgFrame{}
	for _, g := range doc.G {
		out[strings.SplitN(g.Title, ":", 2)[0]] = g
	}
	return out
}

func TestWriteDiffSVG(t *testing.T) {
	a := mustFolded(t, "main;read;parse 50\nmain;write;copy 50\nmain;gone 20\n")
	b := mustFolded(t, "main;read;parse 75\nmain;write;copy 75\nmain;write;crc32<T&> 50\n")
	var buf bytes.Buffer
	if err := WriteDiffSVG(&buf, a, b, SVGOptions{Title: "A <vs> B", Width: 1020}); err != nil {
		t.Fatal(err)
	}
	frames := parseSVG(t, buf.Bytes())
	red := regexp.MustCompile(`^rgb\(255,(\d+),(\d+)\)$`)
	blue := regexp.MustCompile(`^rgb\((\d+),(\d+),255\)$`)
	tests := []struct {
		frame     string
		wantWidth float64 // B's samples × 1000 px / 200 samples
		wantFill  *regexp.Regexp
		wantFull  bool // the largest change: saturated
	}{
		{frame: "all", wantWidth: 1000, wantFill: regexp.MustCompile(`^rgb\(235,235,235\)$`)},
		{frame: "crc32<T&>", wantWidth: 250, wantFill: red, wantFull: true},
		{frame: "write", wantWidth: 625, wantFill: red},
		// parse: 50/120 of A, 75/200 of B.
		{frame: "parse", wantWidth: 375, wantFill: blue},
		// main is under every sample of both.
		{frame: "main", wantWidth: 1000, wantFill: regexp.MustCompile(`^rgb\(235,235,235\)$`)},
	}
	for _, tt := range tests {
		t.Run(tt.frame, func(t *testing.T) {
			f, ok := frames[tt.frame]
			if !ok {
				t.Fatalf("no frame %q in the SVG", tt.frame)
			}
			if math.Abs(f.Rect.Width-tt.wantWidth) > 0.1 {
				t.Errorf("width = %v, want %v", f.Rect.Width, tt.wantWidth)
			}
			if !tt.wantFill.MatchString(f.Rect.Fill) {
				t.Errorf("fill = %q, want %v", f.Rect.Fill, tt.wantFill)
			}
			if tt.wantFull && f.Rect.Fill != "rgb(255,0,0)" {
				t.Errorf("fill = %q, want the saturated rgb(255,0,0)", f.Rect.Fill)
			}
		})
	}
	if _, ok := frames["gone"]; ok {
		t.Errorf("frame %q exists only in A but was drawn", "gone")
	}
	// Swapped, the path that grew shrinks.
	b2 := mustFolded(t, "main;read;parse 10\nmain;write;copy 10\n")
	buf.Reset()
	if err := WriteDiffSVG(&buf, b, b2, SVGOptions{}); err != nil {
		t.Fatal(err)
	}
	if f := parseSVG(t, buf.Bytes())["write"]; !blue.MatchString(f.Rect.Fill) {
		t.Errorf("write (62.5%% of A, 50%% of B) fill = %q, want blue", f.Rect.Fill)
	}
}

func TestFitLabel(t *testing.T) {
	tests := []struct {
		name  string
		width float64
		want  string
	}{
		{name: "my_hash_sort", width: 200, want: "my_hash_sort"},
		{name: "my_hash_sort", width: 48, want: "my_h.."},
		{name: "my_hash_sort", width: 20, want: ""},
	}
	for _, tt := range tests {
		if got := fitLabel(tt.name, tt.width); got != tt.want {
			t.Errorf("fitLabel(%q, %v) = %q, want %q", tt.name, tt.width, got, tt.want)
		}
	}
}

func FuzzParseFolded(f *testing.F) {
	f.Add("a;b 1\nc 2\n")
	f.Add("a;;b 1")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseFoldedString(s)
		if err != nil {
			return
		}
		// What parses prints back to the same profile.
		q, err := ParseFoldedString(p.Folded())
		if err != nil {
			t.Fatalf("re-parsing %q: %v", p.Folded(), err)
		}
		if q.Folded() != p.Folded() {
			t.Fatalf("round trip changed %q to %q", p.Folded(), q.Folded())
		}
	})
}

func FuzzFoldPerfScript(f *testing.F) {
	f.Add(perfScript)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := FoldPerfScript(strings.NewReader(s), FoldOptions{})
		if err != nil {
			return
		}
		if _, err := ParseFoldedString(p.Folded()); err != nil {
			t.Fatalf("folded output does not parse: %v\n%s", err, p.Folded())
		}
	})
}
