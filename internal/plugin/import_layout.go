package plugin

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/dbbench/dbbench/pkg/workload"
)

// importLayout is a way results folders are laid out: which file names
// hold runs and how a name gives the step and the thread count. import
// recognises the common ones from the files when --pattern is not given.
type importLayout struct {
	// Name says the layout in notes and -v.
	Name string
	// Pattern matches the names of the files to read, with the named
	// groups of --pattern.
	Pattern string
	// Template is the --step-template the layout names steps with, "" for
	// the step group.
	Template string
	// Pgbench: every file is read, and the step and thread count come
	// from the pgbench output inside.
	Pgbench bool
	// Explicit is true for --pattern: notes then name the flag.
	Explicit bool
}

var (
	// layoutScripts is what the scripts behind the published sysbench
	// studies write (testdata/study/README.md): one folder per server
	// version, sb.o.<step>[.pre|.warm|.warmpre].range<N>.pk<0|1>.dop<T>.
	layoutScripts = importLayout{
		Name:     "sb.o.<step>[.pre|.warm|.warmpre].range<N>.pk<0|1>[.dop<threads>], the published sysbench studies' scripts",
		Pattern:  `^sb\.o\.(?P<step>[a-z][a-z0-9-]*)(?P<suffix>\.pre|\.warm|\.warmpre)?\.range(?P<range>[0-9]+)\.pk[01](?:\.dop(?P<threads>[0-9]+))?$`,
		Template: "{step}_range={range}{suffix}|{step}{suffix}",
	}
	// layoutPgbench is pgbench's output under any name.
	layoutPgbench = importLayout{Name: "pgbench output, any file name", Pattern: `^.+$`, Pgbench: true}
	// layoutDefault is "<step>.<threads>" and "<step>.txt" with sysbench
	// output in them.
	layoutDefault = importLayout{Name: "<step>[.<threads>][.txt|.log|.out]", Pattern: DefaultFilePattern}
)

// The benchmark clients whose output the importer reads.
const (
	toolSysbench = "sysbench"
	toolPgbench  = "pgbench"
)

// tool is the benchmark client whose runs the layout holds, for notes.
func (l importLayout) tool() string {
	if l.Pgbench {
		return toolPgbench
	}
	return toolSysbench
}

// patternName is how notes name the layout's pattern.
func (l importLayout) patternName() string {
	if l.Explicit {
		return "--pattern"
	}
	return "the layout"
}

// importEntry is one file under the import directory.
type importEntry struct {
	path, rel, name, cell string
	mtime                 time.Time
}

// listEntries lists the files of Dir and of its subdirectories (one level:
// the cells), with the cell each belongs to.
func (o *ImportOptions) listEntries() ([]importEntry, error) {
	var out []importEntry
	root := filepath.Clean(o.Dir)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && filepath.Dir(path) != root {
				return filepath.SkipDir // one level of cell directories
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		e := importEntry{path: path, rel: rel, name: d.Name(), cell: filepath.Base(filepath.Dir(path)),
			mtime: info.ModTime().UTC().Truncate(time.Second)}
		if filepath.Dir(path) == root {
			e.cell = filepath.Base(root)
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

// detectLayout chooses the layout of the files: the scripts' names when
// any file has one, else pgbench when any file holds pgbench output, else
// the default.
func detectLayout(entries []importEntry) importLayout {
	scripts := regexp.MustCompile(layoutScripts.Pattern)
	for _, e := range entries {
		if scripts.MatchString(e.name) {
			return layoutScripts
		}
	}
	for _, e := range entries {
		if head, err := readHead(e.path, 4096); err == nil && isPgbench(head) {
			return layoutPgbench
		}
	}
	return layoutDefault
}

// readHead reads the first n bytes of a file.
func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := io.ReadFull(f, buf)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = nil
	}
	return buf[:k], err
}

// knownStep reports whether a step name is the catalog's, or a catalog
// step with a suffix reports leave out (scan.warm, point-query.warmpre).
func knownStep(name string) bool {
	if _, ok := workload.Lookup(name); ok {
		return true
	}
	base, suffix := workload.SplitSuffix(name)
	if suffix == "" {
		return false
	}
	_, ok := workload.Lookup(base)
	return ok
}

// catalogStep is the catalog step a name is, or is a suffixed copy of,
// for its unit (rows/s) and group.
func catalogStep(name string) (workload.Step, bool) {
	if s, ok := workload.Lookup(name); ok {
		return s, true
	}
	base, _ := workload.SplitSuffix(name)
	return workload.Lookup(base)
}

// threadsKey is a file name with its thread count replaced by "*": the
// step's files at every thread count share it, for -v's step names.
func threadsKey(name string, re *regexp.Regexp) string {
	idx := re.FindStringSubmatchIndex(name)
	i := re.SubexpIndex("threads")
	if idx == nil || i < 0 || idx[2*i] < 0 {
		return name
	}
	return name[:idx[2*i]] + "*" + name[idx[2*i+1]:]
}

// listSteps lists names for a note: all of them up to limit, else the
// first ones and the count.
func listSteps(names []string, limit int) string {
	if len(names) <= limit {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:limit], ", ") + ", ..."
}
