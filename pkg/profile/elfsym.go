package profile

import (
	"debug/elf"
	"errors"
	"path/filepath"
	"sort"
	"sync"

	"github.com/ianlancetaylor/demangle"
)

// ELFSymbols names the addresses perf could not, from the binaries
// themselves, read under Root: a profiled process's own filesystem
// (/proc/<pid>/root), which a profiler in a sidecar container can read
// with ptrace access alone, where perf would enter the process's mount
// namespace (CAP_SYS_ADMIN) or read its own files of the same path. The
// functions come from each binary's .symtab, or from its .dynsym when it
// is stripped (a distribution's server binary keeps the symbols it
// exports: MariaDB's SQL layer, PostgreSQL's whole backend); C++ names are
// demangled as perf prints them.
type ELFSymbols struct {
	// Root is the directory the binaries' paths are under ("" or "/": the
	// machine's own).
	Root string

	mu    sync.Mutex
	files map[string]*symbolTable
}

// symbolTable is one binary's functions by address.
type symbolTable struct {
	syms []elfSymbol // sorted by start
}

type elfSymbol struct {
	start, end uint64
	name       string
}

// Resolve names the function of dso (a path as the process saw it) that
// holds addr, an address relative to the binary as perf script prints
// it; ok is false when the binary cannot be read or no function holds it.
func (e *ELFSymbols) Resolve(dso string, addr uint64) (string, bool) {
	t := e.table(dso)
	if t == nil {
		return "", false
	}
	i := sort.Search(len(t.syms), func(i int) bool { return t.syms[i].start > addr }) - 1
	if i < 0 || addr >= t.syms[i].end {
		return "", false
	}
	return t.syms[i].name, true
}

func (e *ELFSymbols) table(dso string) *symbolTable {
	if dso == "" || dso[0] != '/' {
		return nil // [kernel.kallsyms], [vdso], [unknown]
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if t, seen := e.files[dso]; seen {
		return t
	}
	if e.files == nil {
		e.files = map[string]*symbolTable{}
	}
	t, err := readSymbols(filepath.Join(e.Root, dso))
	if err != nil {
		t = nil // not again for this file
	}
	e.files[dso] = t
	return t
}

// readSymbols reads a binary's function symbols: .symtab, else .dynsym.
func readSymbols(path string) (*symbolTable, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) || len(syms) == 0 {
		syms, err = f.DynamicSymbols()
	}
	if err != nil {
		return nil, err
	}
	t := &symbolTable{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 || s.Size == 0 || s.Section == elf.SHN_UNDEF {
			continue
		}
		t.syms = append(t.syms, elfSymbol{start: s.Value, end: s.Value + s.Size, name: demangle.Filter(s.Name, demangle.NoClones)})
	}
	if len(t.syms) == 0 {
		return nil, elf.ErrNoSymbols
	}
	sort.Slice(t.syms, func(i, j int) bool { return t.syms[i].start < t.syms[j].start })
	return t, nil
}
