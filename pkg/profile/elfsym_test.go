package profile

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// buildBinary compiles src with g++ into dir/name (exported symbols in
// .dynsym: -rdynamic), optionally stripped of .symtab as distributions
// ship their servers; the test skips without g++.
func buildBinary(t *testing.T, dir, name, src string, strip bool) string {
	t.Helper()
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ is not installed")
	}
	cpp := filepath.Join(dir, name+".cc")
	if err := os.WriteFile(cpp, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "usr", "sbin", name)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"-O0", "-fPIE", "-pie", "-rdynamic", "-o", out, cpp}
	if strip {
		args = append(args, "-s")
	}
	if b, err := exec.Command("g++", args...).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, b)
	}
	return out
}

const serverSource = `
namespace innobase { int log_write_up_to(int lsn, bool flush) { return lsn * (flush ? 2 : 1); } }
extern "C" int do_command(int x) { return innobase::log_write_up_to(x, x > 3); }
static int internal_only(int x) { return x + 1; }
int main(int argc, char**) { return do_command(argc) + internal_only(argc); }
`

// symbolAt is a symbol's address range as the ELF file says it.
func symbolAt(t *testing.T, path, name string) (start, end uint64) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.DynamicSymbols()
	for _, s := range syms {
		if s.Name == name {
			return s.Value, s.Value + s.Size
		}
	}
	t.Fatalf("%s has no dynamic symbol %s", path, name)
	return 0, 0
}

func TestELFSymbols(t *testing.T) {
	root := t.TempDir()
	for _, strip := range []bool{false, true} {
		name := "mariadbd"
		if strip {
			name = "mariadbd-stripped"
		}
		bin := buildBinary(t, root, name, serverSource, strip)
		dso := "/usr/sbin/" + name
		s := &ELFSymbols{Root: root}
		start, end := symbolAt(t, bin, "_ZN8innobase15log_write_up_toEib")
		for _, tc := range []struct {
			addr uint64
			want string
			ok   bool
		}{
			{start, "innobase::log_write_up_to(int, bool)", true},
			{end - 1, "innobase::log_write_up_to(int, bool)", true},
			{end + 0x100000, "", false},
		} {
			got, ok := s.Resolve(dso, tc.addr)
			if got != tc.want || ok != tc.ok {
				t.Errorf("stripped %v: Resolve(%#x) = %q, %v; want %q, %v", strip, tc.addr, got, ok, tc.want, tc.ok)
			}
		}
		ds, _ := symbolAt(t, bin, "do_command")
		if got, ok := s.Resolve(dso, ds+1); !ok || got != "do_command" {
			t.Errorf("stripped %v: do_command resolved as %q, %v", strip, got, ok)
		}
	}
	s := &ELFSymbols{Root: root}
	for _, dso := range []string{"/usr/sbin/none", "[vdso]", "[kernel.kallsyms]", ""} {
		if got, ok := s.Resolve(dso, 0x1000); ok {
			t.Errorf("Resolve(%q) = %q", dso, got)
		}
	}
}

// Frames perf left without a symbol are named from the binary under the
// server's root; frames it named keep their name.
func TestFoldPerfScriptResolvesUnknownFrames(t *testing.T) {
	root := t.TempDir()
	bin := buildBinary(t, root, "mariadbd", serverSource, true)
	start, _ := symbolAt(t, bin, "_ZN8innobase15log_write_up_toEib")
	cmd, _ := symbolAt(t, bin, "do_command")
	script := strings.Join([]string{
		"mariadbd  7/151  4822.93: cpu-clock: ",
		"\t           8f091 pthread_rwlock_unlock (/usr/lib/x86_64-linux-gnu/libc.so.6)",
		"\t" + hex(start+2) + " [unknown] (/usr/sbin/mariadbd)",
		"\t" + hex(cmd+3) + " [unknown] (/usr/sbin/mariadbd)",
		"\t          ffffff [unknown] (/usr/sbin/mariadbd)",
		"",
	}, "\n")
	p, err := FoldPerfScript(strings.NewReader(script), FoldOptions{Resolve: (&ELFSymbols{Root: root}).Resolve})
	if err != nil {
		t.Fatal(err)
	}
	want := "[mariadbd];do_command;innobase::log_write_up_to(int, bool);pthread_rwlock_unlock 1\n"
	if got := p.Folded(); got != want {
		t.Fatalf("folded %q, want %q", got, want)
	}
}

func hex(v uint64) string { return strconv.FormatUint(v, 16) }
