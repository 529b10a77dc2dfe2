package profile

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// FoldOptions tune FoldPerfScript.
type FoldOptions struct {
	// Comm keeps only the samples of threads whose command name is one
	// of these (empty: all). `perf record -p` already limits the samples
	// to one process; this is for system-wide recordings.
	Comm []string
	// KernelSuffix appends "_[k]" to kernel frames, so a diff tells the
	// kernel's time apart from the server's.
	KernelSuffix bool
	// Resolve, when set, names the frames perf left without a symbol
	// ("[unknown]") from their DSO and address (ELFSymbols.Resolve); a
	// frame it cannot name keeps its DSO's name.
	Resolve func(dso string, addr uint64) (string, bool)
}

// unknownSymbol is how perf script names a frame without a symbol.
const unknownSymbol = "[unknown]"

// kernelDSO is the DSO perf script gives kernel frames.
const kernelDSO = "[kernel.kallsyms]"

// FoldPerfScript folds the text of `perf script` (its default fields, with
// call graphs: a header line per sample, then one line per frame from the
// leaf outwards, "ADDRESS SYMBOL+OFFSET (DSO)", and a blank line) into
// stacks of one sample each. Offsets are removed so a function is one
// frame; a frame without a symbol is named after its DSO ("[libc.so.6]"),
// and one without either is dropped. A sample without frames counts under
// its command name, so no sample is lost. Errors name the line.
func FoldPerfScript(r io.Reader, opts FoldOptions) (*Profile, error) {
	counts := map[string]int64{}
	keep := func(comm string) bool {
		if len(opts.Comm) == 0 {
			return true
		}
		for _, c := range opts.Comm {
			if c == comm {
				return true
			}
		}
		return false
	}
	var (
		inSample bool
		comm     string
		leafward []string // frames from the leaf outwards
	)
	flush := func() {
		if inSample && keep(comm) {
			frames := make([]string, 0, len(leafward))
			for i := len(leafward) - 1; i >= 0; i-- {
				frames = append(frames, leafward[i])
			}
			if len(frames) == 0 {
				frames = []string{"[" + comm + "]"}
			}
			counts[strings.Join(frames, Separator)]++
		}
		inSample, comm, leafward = false, "", leafward[:0]
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.TrimSpace(text) == "":
			flush()
		case strings.HasPrefix(text, "#"):
			// perf script's header comments (with --header).
		case text[0] == ' ' || text[0] == '\t':
			if !inSample {
				return nil, fmt.Errorf("perf script line %d: a frame before any sample header: %q", line, text)
			}
			f, err := parseFrame(strings.TrimSpace(text), opts)
			if err != nil {
				return nil, fmt.Errorf("perf script line %d: %w", line, err)
			}
			if f != "" {
				leafward = append(leafward, f)
			}
		default:
			flush()
			c, err := parseHeader(text)
			if err != nil {
				return nil, fmt.Errorf("perf script line %d: %w", line, err)
			}
			inSample, comm = true, c
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("perf script line %d: %w", line+1, err)
	}
	flush()
	return fromCounts(counts), nil
}

// parseHeader returns the command name of a sample header line,
// "COMM PID[/TID] [CPU] TIME: [PERIOD] EVENT: ...". The command name may
// contain spaces (thread names do), so it is everything before the first
// field that is all digits or digits/digits.
func parseHeader(text string) (string, error) {
	fields := strings.Fields(text)
	for i, f := range fields {
		if i > 0 && isPID(f) {
			// The thread name may contain ';', which would split frames.
			return strings.ReplaceAll(strings.Join(fields[:i], " "), Separator, ":"), nil
		}
	}
	return "", fmt.Errorf("sample header %q has no PID field after the command name", text)
}

func isPID(f string) bool {
	digits := func(s string) bool {
		if s == "" {
			return false
		}
		for _, r := range s {
			if r < '0' || r > '9' {
				return false
			}
		}
		return true
	}
	if a, b, ok := strings.Cut(f, "/"); ok {
		return digits(a) && digits(b)
	}
	return digits(f)
}

// parseFrame names the function of a frame line "ADDRESS SYMBOL+0xOFF
// (DSO)" (the symbol may contain spaces: C++ signatures). "" means the
// frame has neither symbol nor DSO and is dropped.
func parseFrame(text string, opts FoldOptions) (string, error) {
	addr, rest, ok := strings.Cut(text, " ")
	if !ok || !isHex(addr) {
		return "", fmt.Errorf("frame %q does not start with a hexadecimal address", text)
	}
	rest = strings.TrimSpace(rest)
	sym, dso := rest, ""
	if i := strings.LastIndex(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
		sym, dso = strings.TrimSpace(rest[:i]), rest[i+2:len(rest)-1]
	}
	if i := strings.LastIndex(sym, "+0x"); i > 0 && isHex(sym[i+3:]) {
		sym = sym[:i]
	}
	if sym == "" || sym == unknownSymbol {
		if dso == "" || dso == unknownSymbol {
			return "", nil
		}
		sym = "[" + path.Base(dso) + "]"
		if opts.Resolve != nil {
			if a, err := strconv.ParseUint(addr, 16, 64); err == nil {
				if name, ok := opts.Resolve(dso, a); ok {
					sym = name
				}
			}
		}
	}
	// ';' separates frames and a trailing " N" would read as a count.
	sym = strings.ReplaceAll(sym, Separator, ":")
	if opts.KernelSuffix && dso == kernelDSO {
		sym += "_[k]"
	}
	return sym, nil
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') && (r < 'A' || r > 'F') {
			return false
		}
	}
	return true
}
