package profile

import (
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strings"
)

// SVGOptions tune WriteDiffSVG.
type SVGOptions struct {
	// Title heads the image; Subtitle goes under it.
	Title, Subtitle string
	// Width of the image in pixels (default 1200).
	Width int
	// MinWidth hides frames narrower than this many pixels (default 0.3),
	// which keeps the file small; their samples still widen their parents.
	MinWidth float64
}

// SVG geometry: frame height and the font's average glyph width, used to
// decide how much of a name fits in a frame.
const (
	frameHeight = 16
	fontSize    = 12
	glyphWidth  = 7.0
	padX        = 10
	headerY     = 50
	footerY     = 20
)

// node is a frame in the merged call tree: the samples of the path from
// the root to it in B and in A.
type node struct {
	name     string
	a, b     int64
	children map[string]*node
}

func (n *node) child(name string) *node {
	if n.children == nil {
		n.children = map[string]*node{}
	}
	c, ok := n.children[name]
	if !ok {
		c = &node{name: name}
		n.children[name] = c
	}
	return c
}

func (n *node) sortedChildren() []*node {
	out := make([]*node, 0, len(n.children))
	for _, c := range n.children {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// diffTree merges both profiles' stacks into one tree.
func diffTree(a, b *Profile) *node {
	root := &node{name: "all"}
	add := func(p *Profile, count func(*node, int64)) {
		for _, s := range p.Stacks {
			n := root
			count(n, s.Count)
			for _, f := range s.Frames {
				n = n.child(f)
				count(n, s.Count)
			}
		}
	}
	add(a, func(n *node, c int64) { n.a += c })
	add(b, func(n *node, c int64) { n.b += c })
	return root
}

// WriteDiffSVG draws a differential flame graph of A to B: B's stacks,
// each frame as wide as its samples in B, coloured by how the share of
// samples under that exact call path changed from A to B (red: grew in B,
// blue: shrank, white: unchanged; the strongest colour is the largest
// change in the graph). Shares, not counts, are compared. Paths that
// exist only in A have no width in B and are not drawn: the table of
// Diff lists them. Each frame's tooltip gives both shares.
func WriteDiffSVG(w io.Writer, a, b *Profile, opts SVGOptions) error {
	if opts.Width <= 0 {
		opts.Width = 1200
	}
	if opts.MinWidth <= 0 {
		opts.MinWidth = 0.3
	}
	root := diffTree(a, b)
	ta, tb := float64(a.Total()), float64(b.Total())
	share := func(c int64, t float64) float64 {
		if t == 0 {
			return 0
		}
		return float64(c) / t
	}
	delta := func(n *node) float64 { return share(n.b, tb) - share(n.a, ta) }

	// The depth and the largest change among the frames that will be
	// drawn set the height and the colour scale.
	scale := float64(opts.Width-2*padX) / math.Max(tb, 1)
	depth, maxDelta := 0, 0.0
	var measure func(n *node, d int)
	measure = func(n *node, d int) {
		if float64(n.b)*scale < opts.MinWidth {
			return
		}
		depth = max(depth, d)
		if d > 0 {
			maxDelta = math.Max(maxDelta, math.Abs(delta(n)))
		}
		for _, c := range n.children {
			measure(c, d+1)
		}
	}
	measure(root, 0)
	height := headerY + (depth+1)*frameHeight + footerY

	var sb strings.Builder
	fmt.Fprintf(&sb, `<?xml version="1.0" standalone="no"?>
<svg version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg">
<style>text{font-family:Verdana,sans-serif;font-size:%dpx;fill:#000}.h{font-size:17px}.s{font-size:12px;fill:#555}rect{stroke:#fff;stroke-width:0.5}</style>
<rect x="0" y="0" width="%d" height="%d" fill="#f8f8f8"/>
`, opts.Width, height, opts.Width, height, fontSize, opts.Width, height)
	title := opts.Title
	if title == "" {
		title = "Differential flame graph"
	}
	fmt.Fprintf(&sb, `<text class="h" x="%d" y="22" text-anchor="middle">%s</text>
`, opts.Width/2, html.EscapeString(title))
	sub := opts.Subtitle
	if sub == "" {
		sub = "width: samples in B; red: share grew in B, blue: shrank (darkest: the largest change)"
	}
	fmt.Fprintf(&sb, `<text class="s" x="%d" y="40" text-anchor="middle">%s</text>
`, opts.Width/2, html.EscapeString(sub))

	var draw func(n *node, x float64, d int)
	draw = func(n *node, x float64, d int) {
		w := float64(n.b) * scale
		if w < opts.MinWidth {
			return
		}
		y := height - footerY - (d+1)*frameHeight
		dl := 0.0
		if d > 0 {
			dl = delta(n)
		}
		fmt.Fprintf(&sb, `<g><title>%s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`,
			html.EscapeString(tooltip(n, ta, tb, dl)), x, y, w, frameHeight-1, diffColour(dl, maxDelta))
		if label := fitLabel(n.name, w); label != "" {
			fmt.Fprintf(&sb, `<text x="%.1f" y="%d">%s</text>`, x+3, y+frameHeight-4, html.EscapeString(label))
		}
		sb.WriteString("</g>\n")
		cx := x
		for _, c := range n.sortedChildren() {
			draw(c, cx, d+1)
			cx += float64(c.b) * scale
		}
	}
	draw(root, padX, 0)
	sb.WriteString("</svg>\n")
	_, err := io.WriteString(w, sb.String())
	return err
}

func tooltip(n *node, ta, tb, d float64) string {
	pct := func(c int64, t float64) float64 {
		if t == 0 {
			return 0
		}
		return 100 * float64(c) / t
	}
	return fmt.Sprintf("%s: B %d samples (%.2f%%), A %.2f%%, change %+.2f points",
		n.name, n.b, pct(n.b, tb), pct(n.a, ta), 100*d)
}

// diffColour maps a change to a colour: white for none, red for growth and
// blue for shrinkage, saturated in proportion to |d| / maxDelta.
func diffColour(d, maxDelta float64) string {
	if maxDelta <= 0 || d == 0 {
		return "rgb(235,235,235)"
	}
	t := math.Min(math.Abs(d)/maxDelta, 1)
	v := int(math.Round(235 * (1 - t)))
	if d > 0 {
		return fmt.Sprintf("rgb(255,%d,%d)", v, v)
	}
	return fmt.Sprintf("rgb(%d,%d,255)", v, v)
}

// fitLabel is as much of name as fits in width pixels ("" when not even
// three characters do), cut with "..".
func fitLabel(name string, width float64) string {
	fit := int((width - 6) / glyphWidth)
	if fit < 3 {
		return ""
	}
	r := []rune(name)
	if len(r) <= fit {
		return name
	}
	return string(r[:fit-2]) + ".."
}
