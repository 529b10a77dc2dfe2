// Package profile reads, compares and draws on-CPU profiles as folded
// stacks: one line per distinct call stack, frames from the root to the
// leaf joined by ';', then the number of samples ("main;run;hash 42"), the
// format flame graph tools exchange. It folds `perf script` output itself,
// normalises a profile to each function's share of the samples (self and
// inclusive), ranks the functions whose share changed most between two
// profiles and renders a differential flame graph as SVG. It has no
// Kubernetes imports: a database engineer can use it on perf output alone.
package profile

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Separator joins the frames of a folded stack.
const Separator = ";"

// Stack is one distinct call stack and its samples.
type Stack struct {
	// Frames run from the root (outermost caller) to the leaf (the
	// function on CPU).
	Frames []string
	Count  int64
}

// Key is the stack's folded form without the count.
func (s Stack) Key() string { return strings.Join(s.Frames, Separator) }

// Profile is a set of folded stacks.
type Profile struct {
	// Stacks are sorted by Key, each stack once.
	Stacks []Stack
	// Dropped counts samples whose stacks were removed to fit a size
	// budget (Trim). They are in Total, so the shares of the stacks kept
	// are still shares of everything sampled.
	Dropped int64
}

// Total is the number of samples, dropped ones included.
func (p *Profile) Total() int64 {
	t := p.Dropped
	for _, s := range p.Stacks {
		t += s.Count
	}
	return t
}

// fromCounts builds a profile from counts per folded key.
func fromCounts(counts map[string]int64) *Profile {
	p := &Profile{Stacks: make([]Stack, 0, len(counts))}
	for k, n := range counts {
		if n > 0 {
			p.Stacks = append(p.Stacks, Stack{Frames: strings.Split(k, Separator), Count: n})
		}
	}
	sort.Slice(p.Stacks, func(i, j int) bool { return p.Stacks[i].Key() < p.Stacks[j].Key() })
	return p
}

// ParseFolded reads folded stacks: per line, the frames joined by ';', a
// space, and a positive sample count. Blank lines are skipped; a stack that
// appears twice is summed. An error names the line.
func ParseFolded(r io.Reader) (*Profile, error) {
	counts := map[string]int64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		i := strings.LastIndexByte(text, ' ')
		if i <= 0 {
			return nil, fmt.Errorf("folded line %d: want \"frame;frame count\", got %q", line, text)
		}
		n, err := strconv.ParseInt(text[i+1:], 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("folded line %d: count %q is not a positive integer", line, text[i+1:])
		}
		stack := strings.TrimSpace(text[:i])
		if stack == "" || strings.Contains(stack, Separator+Separator) || strings.HasPrefix(stack, Separator) || strings.HasSuffix(stack, Separator) {
			return nil, fmt.Errorf("folded line %d: stack %q has an empty frame", line, stack)
		}
		counts[stack] += n
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("folded line %d: %w", line+1, err)
	}
	return fromCounts(counts), nil
}

// ParseFoldedString is ParseFolded of a string.
func ParseFoldedString(s string) (*Profile, error) { return ParseFolded(strings.NewReader(s)) }

// Folded writes the stacks one per line, sorted, as ParseFolded reads them.
// Dropped samples are not written (they have no stack).
func (p *Profile) Folded() string {
	var b strings.Builder
	for _, s := range p.Stacks {
		b.WriteString(s.Key())
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(s.Count, 10))
		b.WriteByte('\n')
	}
	return b.String()
}

// Trim keeps the stacks with the most samples whose folded lines fit in
// maxBytes, and counts the others' samples in Dropped. Ties keep the
// stack that sorts first, so the result does not depend on map order.
// It returns the number of stacks removed.
func (p *Profile) Trim(maxBytes int) int {
	if len(p.Folded()) <= maxBytes {
		return 0
	}
	order := make([]int, len(p.Stacks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return p.Stacks[order[a]].Count > p.Stacks[order[b]].Count })
	keep := make([]bool, len(p.Stacks))
	size := 0
	for _, i := range order {
		s := p.Stacks[i]
		n := len(s.Key()) + 1 + len(strconv.FormatInt(s.Count, 10)) + 1
		if size+n > maxBytes {
			continue
		}
		size += n
		keep[i] = true
	}
	kept := p.Stacks[:0]
	removed := 0
	for i, s := range p.Stacks {
		if keep[i] {
			kept = append(kept, s)
			continue
		}
		p.Dropped += s.Count
		removed++
	}
	p.Stacks = kept
	return removed
}
