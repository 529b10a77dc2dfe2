package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/results"
	"github.com/dbbench/dbbench/pkg/sysbench"
	"github.com/dbbench/dbbench/pkg/workload"
)

// DefaultFilePattern matches "<step>.<threads>[.txt|.log|.out]"; the
// threads may be written t16, dop16 or threads16, and "_" may stand for the
// last dot ("point-query_16.txt"). "<step>.txt|.log|.out" matches too: the
// thread count then comes from the file.
const DefaultFilePattern = `^(?P<step>.+?)(?:[._](?:t|dop|threads)?(?P<threads>[0-9]+)(?:\.(?:txt|log|out))?|\.(?:txt|log|out))$`

// DefaultCellPattern reads engine, version and config from a cell
// directory's name: "mariadb-10.11-base", "postgres-16.4".
const DefaultCellPattern = `^(?P<engine>mysql|mariadb|postgres)-(?P<version>[0-9][^-]*)(?:-(?P<config>.+))?$`

// ImportOptions are the options of `import`.
type ImportOptions struct {
	Dir         string
	Out         string
	RunName     string
	Suite       string
	FilePattern string
	CellPattern string
	StepMap     map[string]string
	// StepTemplate builds a step name from the pattern's named groups:
	// "{step}_range={range}", with "|" between alternatives.
	StepTemplate string
	Engine       string
	Warmup       float64
	// RowsPerScan is the rows per table that turn a rows/s step's scans/s
	// into rows/s when the files do not say.
	RowsPerScan float64
	// Verbose lists every file skipped instead of summarising them, and
	// says the layout and how it named each step.
	Verbose     bool
	filePattern *regexp.Regexp
	cellPattern *regexp.Regexp
	templates   []string
	// layout is the one --pattern gives or the files show; entries are
	// the files under Dir.
	layout  importLayout
	entries []importEntry
	// named is what each file name (its thread count a "*") or pgbench
	// transaction type was named, for -v.
	named map[string]string
	genericiooptions.IOStreams
}

// templateField is one {group} of --step-template.
var templateField = regexp.MustCompile(`\{([^{}]*)\}`)

// NewCmdImport builds `kubectl dbbench import DIR`.
func NewCmdImport(streams genericiooptions.IOStreams) *cobra.Command {
	o := &ImportOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "import DIR",
		Short: "Turn saved sysbench or pgbench output into dbbench results documents",
		Long: `Turn saved benchmark output into dbbench results documents (schema v1, full
form), one per cell, which report, compare and history then read with
--from-dir. One directory per cell under DIR (its name gives engine, version
and config: mysql-8.0.40, mariadb-10.11-base), the runs inside it.

Without --pattern the layout is recognised from the files (-v says which,
and what each step was named):

  sb.o.<step>[.pre|.warm|.warmpre].range<N>.pk1.dop<threads>
      what the scripts behind the published sysbench studies write, beside
      vmstat, iostat and my.cnf files; the catalog's names (read-only_range=10,
      point-query, scan.warm)
  pgbench output under any name
      steps pgbench-tpcb-like, pgbench-simple-update, pgbench-select-only
      (pgbench-<script> for a script file), threads from "number of clients:"
  <step>.<threads>[.txt|.log|.out] or <step>.txt
      sysbench output: point-query.16.txt, read-write_range=100.t16.log

Threads the name does not give come from the file (the command line's
--threads, sysbench's "Number of threads:"). --pattern, a regular expression
with the named groups step and threads (and optionally cell), reads any other
naming; --step-template builds the step from several groups
("{step}_range={range}{suffix}"); alternatives separated by "|" are tried in
order and the first that names a catalog step, or a catalog step's .pre or
.warm copy, wins (else the first). --step-map renames steps
(oltp_point_select=point-query). --cell-pattern reads other directory names
(named groups engine, version, config); a name it does not match becomes the
version, with --engine as the engine. Files directly in DIR form one cell
named after DIR.

Files that are not runs (other tools' output, configs, prepare output), names
the layout does not match, and runs that cannot be imported (killed, failed)
are skipped with one summary line per kind (-v lists them); a cell with no
run is not written. A note says when step names are not the catalog's.

Throughput is the steady state of the per-second samples (sysbench's
--report-interval, pgbench's -P) after --warmup seconds, or the final figure
when the file has none. Steps the catalog reports in rows/s (scan, and its
.pre and .warm copies) are imported in rows/s: scans/s times the rows per
table, from the script's "dbbench scan: N rows per table" line, else the
command line's --table-size, else a sysbench prepare output among the cell's
files, else --rows-per-scan.`,
		Example: `  # a published study's folder, or pgbench logs: no flag needed
  kubectl dbbench import ./study --out ./imported -v
  kubectl dbbench report --from-dir ./imported
  # anything else
  kubectl dbbench import ./logs --out ./imported --pattern '^sb\.(?P<step>[^.]+)\.dop(?P<threads>[0-9]+)$' --step-map oltp_point_select=point-query`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Out, "out", "", "Directory to write the documents to (required; created if absent).")
	fs.StringVar(&o.RunName, "run", "", "Run name recorded in the documents (default: DIR's name).")
	fs.StringVar(&o.Suite, "suite", "", "Suite recorded in the documents, for history.")
	fs.StringVar(&o.FilePattern, "pattern", "", "Regular expression for file names, with named groups step and threads (and optionally cell) (default: the layout the files show).")
	fs.StringVar(&o.StepTemplate, "step-template", "", `Step name built from the pattern's named groups, e.g. "{step}_range={range}"; "|" separates alternatives, the first that names a catalog step wins (default: the layout's, else the step group).`)
	fs.StringVar(&o.CellPattern, "cell-pattern", DefaultCellPattern, "Regular expression for cell directory names, with named groups engine, version, config.")
	fs.StringToStringVar(&o.StepMap, "step-map", nil, "Rename steps: old=new[,old=new...].")
	fs.StringVar(&o.Engine, "engine", "unknown", "Engine of cells whose name the cell pattern does not match.")
	fs.Float64Var(&o.Warmup, "warmup", 10, "Seconds of per-second samples dropped before the steady-state throughput.")
	fs.Float64Var(&o.RowsPerScan, "rows-per-scan", 0, "Rows per table, to import rows/s steps (scan) in rows/s when the files do not say.")
	fs.BoolVarP(&o.Verbose, "verbose", "v", false, "Say the layout and each step's name, and list every skipped file, on stderr.")
	return cmd
}

// Complete compiles the patterns and fills defaults.
func (o *ImportOptions) Complete(args []string) error {
	o.Dir = args[0]
	if o.RunName == "" {
		o.RunName = filepath.Base(filepath.Clean(o.Dir))
	}
	var err error
	if o.FilePattern != "" {
		if o.filePattern, err = regexp.Compile(o.FilePattern); err != nil {
			return fmt.Errorf("--pattern: %w", err)
		}
	}
	if o.cellPattern, err = regexp.Compile(o.CellPattern); err != nil {
		return fmt.Errorf("--cell-pattern: %w", err)
	}
	if o.StepTemplate != "" {
		o.templates = strings.Split(o.StepTemplate, "|")
	}
	return nil
}

// Validate checks the flags, and chooses the layout: --pattern's, else the
// one the files show.
func (o *ImportOptions) Validate() error {
	if o.Out == "" {
		return errors.New("--out is required")
	}
	if o.cellPattern.SubexpIndex("version") < 0 {
		return fmt.Errorf("--cell-pattern %q has no named group (?P<version>...)", o.CellPattern)
	}
	if o.Warmup < 0 || math.IsNaN(o.Warmup) {
		return fmt.Errorf("--warmup %v: must not be negative", o.Warmup)
	}
	if o.RowsPerScan < 0 || math.IsNaN(o.RowsPerScan) || math.IsInf(o.RowsPerScan, 0) {
		return fmt.Errorf("--rows-per-scan %v: must not be negative", o.RowsPerScan)
	}
	if st, err := os.Stat(o.Dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: not a directory", o.Dir)
	}
	var err error
	if o.entries, err = o.listEntries(); err != nil {
		return err
	}
	if o.filePattern != nil {
		o.layout = importLayout{Name: "--pattern " + o.FilePattern, Pattern: o.FilePattern, Explicit: true}
	} else {
		o.layout = detectLayout(o.entries)
		o.filePattern = regexp.MustCompile(o.layout.Pattern)
	}
	if len(o.templates) == 0 && o.layout.Template != "" {
		o.templates = strings.Split(o.layout.Template, "|")
	}
	if !o.layout.Pgbench && len(o.templates) == 0 && o.filePattern.SubexpIndex("step") < 0 {
		return fmt.Errorf("--pattern %q has no named group (?P<step>...)", o.FilePattern)
	}
	return o.validateTemplate()
}

// validateTemplate checks that every {group} of --step-template is a named
// group of --pattern.
func (o *ImportOptions) validateTemplate() error {
	var groups []string
	for _, g := range o.filePattern.SubexpNames() {
		if g != "" {
			groups = append(groups, g)
		}
	}
	of := "--pattern"
	if !o.layout.Explicit {
		of = "the pattern of the layout " + o.layout.Name
	}
	for i, alt := range o.templates {
		if alt == "" {
			return fmt.Errorf("--step-template %q: alternative %d is empty", o.StepTemplate, i+1)
		}
		if !templateField.MatchString(alt) {
			return fmt.Errorf("--step-template %q: alternative %d has no {group}", o.StepTemplate, i+1)
		}
		for _, m := range templateField.FindAllStringSubmatch(alt, -1) {
			if o.filePattern.SubexpIndex(m[1]) < 0 {
				return fmt.Errorf("--step-template %q: {%s} is not a named group of %s (groups: %s)",
					o.StepTemplate, m[1], of, strings.Join(groups, ", "))
			}
		}
	}
	return nil
}

// rename applies --step-map.
func (o *ImportOptions) rename(s string) string {
	if n, ok := o.StepMap[s]; ok {
		return n
	}
	return s
}

// stepName is the step a matched file name gives: the step group, or the
// first --step-template alternative that names a catalog step or a
// catalog step's .pre/.warm/.warmpre copy (else the first alternative),
// renamed by --step-map. One rule names every suffixed step: the range
// only where the catalog names the step (read-only_range=100.warm,
// point-query.warm, point-query.pre).
func (o *ImportOptions) stepName(m []string) string {
	if len(o.templates) == 0 {
		if i := o.filePattern.SubexpIndex("step"); i >= 0 {
			return o.rename(m[i])
		}
		return ""
	}
	first := ""
	for i, alt := range o.templates {
		name := o.rename(templateField.ReplaceAllStringFunc(alt, func(f string) string {
			return m[o.filePattern.SubexpIndex(f[1:len(f)-1])]
		}))
		if i == 0 {
			first = name
		}
		if knownStep(name) {
			return name
		}
	}
	return first
}

type importFile struct {
	path, cell, step string
	// key is the name with its thread count a "*", for -v's step names.
	key     string
	threads int
	mtime   time.Time
}

// parsedFile is one matched file after reading: a sysbench run (out set,
// kind empty), a pgbench run (pg set), something else (kind set), or a run
// that failed to parse (err set).
type parsedFile struct {
	importFile
	raw  []byte
	out  *sysbench.Output
	pg   *pgbenchOutput
	kind fileKind
	err  error
}

// tool is the client that wrote the run.
func (f parsedFile) tool() string {
	if f.pg != nil {
		return toolPgbench
	}
	return toolSysbench
}

// importTally counts what the import skipped, for its summary lines.
type importTally struct {
	tool      string
	read      int
	kinds     map[fileKind]int
	strays    int
	failed    int
	unmatched []string
	pattern   string
	skips     []skippedRun
}

// skipKind is a reason a run was not imported; runs skipped for one kind
// share one summary line.
type skipKind struct {
	// phrase follows "skipped N sysbench runs"; "{its}" becomes its or
	// their.
	phrase string
	// detailed: each run's error says more than the phrase (a line).
	detailed bool
}

var (
	skipKilled     = skipKind{phrase: "without a final report (was it killed?)"}
	skipFailed     = skipKind{phrase: "that failed", detailed: true}
	skipUnreadable = skipKind{phrase: "that could not be read", detailed: true}
	skipNoSQL      = skipKind{phrase: "with no SQL statistics (not a database test)"}
	skipNoThreads  = skipKind{phrase: "with no thread count in the name or the output"}
	skipNoRows     = skipKind{phrase: "reported in rows/s with no row count (no --table-size on {its} command line, no prepare output; give --rows-per-scan, the rows per table)"}
)

// skipError is why one run was not imported.
type skipError struct {
	kind   skipKind
	detail string
}

func (k skipKind) err(detail string) error { return &skipError{kind: k, detail: detail} }

func (e *skipError) Error() string {
	if e.detail != "" {
		return e.detail
	}
	return strings.ReplaceAll(e.kind.phrase, "{its}", "its")
}

// asSkip classifies any error of reading a run.
func asSkip(err error) *skipError {
	var se *skipError
	var fatal *sysbench.FatalError
	var pf *pgbenchFailed
	switch {
	case errors.As(err, &se):
		return se
	case errors.As(err, &fatal), errors.As(err, &pf):
		return &skipError{kind: skipFailed, detail: err.Error()}
	case errors.Is(err, errPgbenchKilled):
		return &skipError{kind: skipKilled}
	}
	return &skipError{kind: skipUnreadable, detail: err.Error()}
}

// skippedRun is one run that was not imported.
type skippedRun struct {
	path, tool string
	why        *skipError
}

// Run imports every cell and prints a summary.
func (o *ImportOptions) Run() error {
	files, unmatched := o.scan()
	if o.Verbose {
		fmt.Fprintf(o.ErrOut, "layout: %s (%s)\n", o.layout.Name, o.layoutCount(len(files)))
	}
	for _, u := range unmatched {
		if o.Verbose {
			fmt.Fprintf(o.ErrOut, "skipping %s: name does not match %s\n", filepath.Join(o.Dir, u), o.layout.patternName())
		}
	}
	if len(files) == 0 {
		return fmt.Errorf("%s: no file matches %s %s (%d file(s) do not)", o.Dir, o.layout.patternName(), o.filePattern, len(unmatched))
	}
	tally := importTally{tool: o.layout.tool(), read: len(files), kinds: map[fileKind]int{}, unmatched: unmatched, pattern: o.layout.patternName()}
	byCell := map[string][]parsedFile{}
	var cells []string
	for _, f := range files {
		if _, ok := byCell[f.cell]; !ok {
			cells = append(cells, f.cell)
		}
		p := o.read(f)
		if p.kind != "" {
			tally.kinds[p.kind]++
			tally.strays++
			if o.Verbose {
				fmt.Fprintf(o.ErrOut, "skipping %s: not a %s run (%s)\n", f.path, tally.tool, p.kind)
			}
		}
		byCell[f.cell] = append(byCell[f.cell], p)
	}
	sort.Strings(cells)
	summary := analysis.Table{Title: fmt.Sprintf("Imported %s into %s", o.Dir, o.Out),
		Columns: []string{"cell", "engine", "version", "config", "steps", "skipped", tally.tool, "file"}}
	summary.Notes = append(summary.Notes, fmt.Sprintf("layout: %s (%s; -v shows each step's name)", o.layout.Name, o.layoutCount(len(files))))
	type outDoc struct {
		path string
		data []byte
	}
	var docs []outDoc
	steps := map[string]bool{}
	for _, cell := range cells {
		doc, client, skipped, err := o.cellDocument(cell, byCell[cell])
		if err != nil {
			return err
		}
		tally.failed += len(skipped)
		tally.skips = append(tally.skips, skipped...)
		if doc == nil {
			// Files beside the cell folders (a README) are no cell of
			// their own: the summary of skipped files counts them.
			beside := cell == filepath.Base(filepath.Clean(o.Dir)) && len(cells) > 1
			if !beside || len(skipped) > 0 {
				summary.Notes = append(summary.Notes, fmt.Sprintf("cell %s: no %s run among its %d files; nothing written", cell, tally.tool, len(byCell[cell])))
			}
			continue
		}
		data, err := results.Marshal(doc)
		if err != nil {
			return fmt.Errorf("cell %s: %w", cell, err)
		}
		for _, s := range doc.Steps {
			steps[s.Step] = true
		}
		out := filepath.Join(o.Out, cell+".json")
		docs = append(docs, outDoc{out, data})
		summary.Rows = append(summary.Rows, []string{cell, doc.Cell.Engine, doc.Cell.Version, doc.Cell.Config,
			strconv.Itoa(len(doc.Steps)), strconv.Itoa(len(skipped)), client, out})
	}
	summary.Notes = append(summary.Notes, tally.summary()...)
	if n := unknownStepsNote(steps); n != "" {
		summary.Notes = append(summary.Notes, n)
	}
	if o.Verbose && len(o.named) > 0 {
		keys := make([]string, 0, len(o.named))
		for k := range o.named {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintln(o.ErrOut, "step names:")
		for _, k := range keys {
			fmt.Fprintf(o.ErrOut, "  %s -> %s\n", k, o.named[k])
		}
	}
	if len(docs) == 0 {
		return fmt.Errorf("%s: no %s run imported: %s", o.Dir, tally.tool, tally.counts())
	}
	// Write only once every cell has been read, so a refused import leaves
	// no partial output behind.
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	for _, d := range docs {
		if err := os.WriteFile(d.path, d.data, 0o644); err != nil {
			return err
		}
	}
	return summary.WriteText(o.IOStreams.Out)
}

// layoutCount says how many files the layout matched.
func (o *ImportOptions) layoutCount(matched int) string {
	if matched == len(o.entries) {
		return fmt.Sprintf("%d %s", matched, plural(matched, "file", "files"))
	}
	return fmt.Sprintf("%d of %d files", matched, len(o.entries))
}

// unknownStepsNote says which imported step names the catalog does not
// know (a suffixed copy of a catalog step and pgbench's steps count as
// known): reports cannot group or order them, which a raw file name
// mistaken for a step would otherwise only show as n/a groups.
func unknownStepsNote(steps map[string]bool) string {
	var unknown []string
	for s := range steps {
		if !knownStep(s) && !strings.HasPrefix(s, PgbenchStepPrefix) {
			unknown = append(unknown, s)
		}
	}
	if len(unknown) == 0 {
		return ""
	}
	sort.Strings(unknown)
	hint := "(rename them with --step-map old=new, or build them with --pattern and --step-template)"
	if len(unknown) == len(steps) {
		return fmt.Sprintf("none of the %d step names is in the step catalog: %s; reports will not group them %s",
			len(steps), listSteps(unknown, 5), hint)
	}
	return fmt.Sprintf("%d of %d step names %s not in the step catalog: %s; reports will not group %s %s", len(unknown), len(steps),
		plural(len(unknown), "is", "are"), listSteps(unknown, 5), plural(len(unknown), "it", "them"), hint)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// summary is one line per kind of skip: the files that are not runs by
// what they look like, the names the layout did not match, and the runs
// that could not be imported by why.
func (t importTally) summary() []string {
	var out []string
	if t.strays > 0 {
		kinds := make([]string, 0, len(t.kinds))
		for k := range t.kinds {
			kinds = append(kinds, string(k))
		}
		sort.Strings(kinds)
		for i, k := range kinds {
			kinds[i] = fmt.Sprintf("%d %s", t.kinds[fileKind(k)], k)
		}
		out = append(out, fmt.Sprintf("skipped %d %s: %s (-v lists them)", t.strays,
			plural(t.strays, "file that is not a "+t.tool+" run", "files that are not "+t.tool+" runs"), strings.Join(kinds, ", ")))
	}
	if n := len(t.unmatched); n > 0 {
		out = append(out, fmt.Sprintf("%d %s %s %s not read, e.g. %s (-v lists them)", n,
			plural(n, "file whose name does not match", "files whose names do not match"), t.pattern, plural(n, "was", "were"), t.unmatched[0]))
	}
	type group struct {
		tool string
		kind skipKind
		runs []skippedRun
	}
	var groups []*group
	for _, s := range t.skips {
		var g *group
		for _, h := range groups {
			if h.tool == s.tool && h.kind == s.why.kind {
				g = h
			}
		}
		if g == nil {
			g = &group{tool: s.tool, kind: s.why.kind}
			groups = append(groups, g)
		}
		g.runs = append(g.runs, s)
	}
	const shown = 3
	for _, g := range groups {
		n := len(g.runs)
		var items []string
		for _, r := range g.runs[:min(n, shown)] {
			if g.kind.detailed {
				items = append(items, fmt.Sprintf("%s (%s)", r.path, r.why.detail))
			} else {
				items = append(items, r.path)
			}
		}
		sep := ", "
		if g.kind.detailed {
			sep = "; "
		}
		line := fmt.Sprintf("skipped %d %s %s: %s", n, g.tool+plural(n, " run", " runs"),
			strings.ReplaceAll(g.kind.phrase, "{its}", plural(n, "its", "their")), strings.Join(items, sep))
		if n > shown {
			line += fmt.Sprintf(" and %d more (-v lists them)", n-shown)
		}
		out = append(out, line)
	}
	return out
}

// counts says what was read when nothing could be imported.
func (t importTally) counts() string {
	s := fmt.Sprintf("%d %s read", t.read, plural(t.read, "file", "files"))
	if t.strays > 0 {
		s += fmt.Sprintf(", %d not a %s run", t.strays, t.tool)
	}
	if t.failed > 0 {
		s += fmt.Sprintf(", %d %s %s could not be imported", t.failed, t.tool, plural(t.failed, "run", "runs"))
	}
	if n := len(t.unmatched); n > 0 {
		s += fmt.Sprintf("; %d %s not match %s", n, plural(n, "name does", "names do"), t.pattern)
	}
	return s
}

// scan lists the files the layout matches, and the paths (relative to Dir)
// of those it does not.
func (o *ImportOptions) scan() ([]importFile, []string) {
	var out []importFile
	var unmatched []string
	o.named = map[string]string{}
	for _, e := range o.entries {
		m := o.filePattern.FindStringSubmatch(e.name)
		if m == nil {
			unmatched = append(unmatched, e.rel)
			continue
		}
		f := importFile{path: e.path, cell: e.cell, mtime: e.mtime}
		if i := o.filePattern.SubexpIndex("cell"); i >= 0 && m[i] != "" {
			f.cell = m[i]
		}
		f.step = o.stepName(m)
		if i := o.filePattern.SubexpIndex("threads"); i >= 0 && m[i] != "" {
			f.threads, _ = strconv.Atoi(m[i])
		}
		if f.step != "" {
			f.key = threadsKey(e.name, o.filePattern)
		}
		out = append(out, f)
	}
	return out, unmatched
}

// read parses one file and says what it is.
func (o *ImportOptions) read(f importFile) parsedFile {
	p := parsedFile{importFile: f}
	if p.raw, p.err = os.ReadFile(f.path); p.err != nil {
		return p
	}
	if isPgbench(p.raw) {
		p.pg, p.err = parsePgbench(p.raw)
		step, _ := pgbenchStep(p.pg.Script)
		if p.pg.Script != "" {
			p.step = o.rename(step)
			o.named[p.pg.Script] = p.step
		} else if p.step == "" {
			p.step = o.rename(step)
		}
		return p
	}
	p.out, p.err = sysbench.Parse(bytes.NewReader(p.raw))
	var fatal *sysbench.FatalError
	switch {
	case !isSysbench(p.out) && !errors.As(p.err, &fatal):
		p.kind, p.err = identify(p.raw), nil
	case p.err == nil && p.out.Final == nil && len(p.out.Intervals) == 0 && len(p.out.Prepared) > 0:
		p.kind = kindPrepare
	case f.key != "":
		o.named[f.key] = f.step
	}
	return p
}

func (o *ImportOptions) cellMeta(cell string) results.Cell {
	c := results.Cell{Name: cell, Engine: o.Engine, Version: cell, Attempt: 1}
	if m := o.cellPattern.FindStringSubmatch(cell); m != nil {
		get := func(name string) string {
			if i := o.cellPattern.SubexpIndex(name); i >= 0 {
				return m[i]
			}
			return ""
		}
		if e := get("engine"); e != "" {
			c.Engine = e
		}
		if v := get("version"); v != "" {
			c.Version = v
		}
		c.Config = get("config")
	}
	c.Database = c.Engine
	return c
}

// scanRowsLine is what dbbench's scan script prints with --scan-report=on.
var scanRowsLine = regexp.MustCompile(`(?m)^dbbench scan: ([0-9]+(?:\.[0-9]+)?) rows per table`)

// preparedRows is the mean rows per table of the cell's sysbench prepare
// outputs; 0 without one.
func preparedRows(files []parsedFile) float64 {
	var rows, tables int64
	for _, f := range files {
		if f.kind != kindPrepare {
			continue
		}
		for _, t := range f.out.Prepared {
			rows += t.Rows
			tables++
		}
	}
	if tables == 0 {
		return 0
	}
	return float64(rows) / float64(tables)
}

// cellDocument parses a cell's files into one full results document; nil
// when none of them is a run that could be imported. client is the
// benchmark client's version; skipped are the runs that could not be
// imported.
func (o *ImportOptions) cellDocument(cell string, files []parsedFile) (*results.Document, string, []skippedRun, error) {
	pos := map[string]int{}
	for i, s := range workload.Extended() {
		pos[s.Name] = i + 1
	}
	var skipped []skippedRun
	doc := &results.Document{SchemaVersion: results.SchemaV1, Form: results.FormFull,
		Run: results.Run{Name: o.RunName, Suite: o.Suite}, Cell: o.cellMeta(cell),
		Status: results.Status{Outcome: results.OutcomeSucceeded}}
	prepared := preparedRows(files)
	from := map[string]string{} // step@threads -> file, to name both of a pair
	var last time.Time
	client, pgbench := "", false
	for _, f := range files {
		if f.kind != "" {
			continue
		}
		var step *results.StepResult
		var version string
		var err error
		if f.pg != nil && f.err == nil {
			step, err = o.pgbenchResult(f)
			version = f.pg.Version
		} else {
			step, version, err = o.stepResult(f, prepared)
		}
		if err != nil {
			s := skippedRun{path: f.path, tool: f.tool(), why: asSkip(err)}
			skipped = append(skipped, s)
			if o.Verbose {
				fmt.Fprintf(o.ErrOut, "skipping %s: %v\n", f.path, s.why)
			}
			continue
		}
		key := fmt.Sprintf("%s@%d", step.Step, step.Threads)
		if prev, dup := from[key]; dup {
			return nil, "", nil, fmt.Errorf("cell %s: %s and %s are both step %s at %d threads (see --pattern, --step-template)",
				cell, prev, f.path, step.Step, step.Threads)
		}
		from[key] = f.path
		if doc.StartedAt.IsZero() || f.mtime.Before(doc.StartedAt) {
			doc.StartedAt = f.mtime
		}
		if f.mtime.After(last) {
			last = f.mtime
		}
		if f.pg != nil {
			pgbench = true
			if version != "" {
				client = version
			}
			if v := f.pg.ServerVersion; v != "" {
				doc.Provenance.ServerVersion = v
			} else if doc.Provenance.ServerVersion == "" {
				// pgbench names the server only when it differs.
				doc.Provenance.ServerVersion = f.pg.Version
			}
		} else if version != "" {
			doc.Provenance.SysbenchVersion = version
			client = version
		}
		doc.Steps = append(doc.Steps, *step)
	}
	if len(doc.Steps) == 0 {
		return nil, "", skipped, nil
	}
	if pgbench && doc.Cell.Engine == "unknown" {
		doc.Cell.Engine, doc.Cell.Database = "postgres", "postgres"
	}
	doc.FinishedAt = &last
	// Files carry no run order: use the catalog's, then the name; threads
	// ascending.
	sort.SliceStable(doc.Steps, func(i, j int) bool {
		a, b := doc.Steps[i], doc.Steps[j]
		pa, pb := pos[a.Step], pos[b.Step]
		if pa == 0 {
			pa = math.MaxInt32
		}
		if pb == 0 {
			pb = math.MaxInt32
		}
		if pa != pb {
			return pa < pb
		}
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		return a.Threads < b.Threads
	})
	return doc, client, skipped, nil
}

// rowsPerTable is the table size that turns a rows/s step's scans/s into
// rows/s: the script's own count, else the command line's --table-size,
// else the cell's prepare output, else --rows-per-scan; 0 when none says.
func (o *ImportOptions) rowsPerTable(f parsedFile, prepared float64) float64 {
	if m := scanRowsLine.FindSubmatch(f.raw); m != nil {
		if v, err := strconv.ParseFloat(string(m[1]), 64); err == nil && v > 0 {
			return v
		}
	}
	if n, ok := f.out.Command.Int("table-size"); ok {
		return float64(n)
	}
	if prepared > 0 {
		return prepared
	}
	return o.RowsPerScan
}

// stepResult turns one parsed sysbench run into a step result.
func (o *ImportOptions) stepResult(f parsedFile, prepared float64) (*results.StepResult, string, error) {
	if f.err != nil {
		return nil, "", f.err
	}
	out := f.out
	if out.Final == nil {
		return nil, "", skipKilled.err("")
	}
	if out.Final.SQL == nil {
		return nil, "", skipNoSQL.err("")
	}
	threads := f.threads
	if n, ok := out.Command.Int("threads"); ok && threads == 0 {
		threads = int(n)
	}
	if threads == 0 {
		threads = out.Threads
	}
	if threads < 1 {
		return nil, "", skipNoThreads.err("")
	}
	var rows float64
	if cs, ok := catalogStep(f.step); ok && cs.RowsPerSecond {
		// sysbench counts scans; the catalog, and published scan figures,
		// count rows. A step's .pre and .warm copies are counted alike.
		if rows = o.rowsPerTable(f, prepared); rows == 0 {
			return nil, "", skipNoRows.err("")
		}
	}
	if out.Threads != 0 && out.Threads != threads {
		fmt.Fprintf(o.ErrOut, "warning: %s: name says %d threads, sysbench says %d; using %d\n", f.path, threads, out.Threads, threads)
	}
	sql, fin := out.Final.SQL, out.Final
	s := &results.StepResult{Step: f.step, Threads: threads,
		DurationSeconds: math.Round(fin.TotalTimeSeconds), ElapsedSeconds: &fin.TotalTimeSeconds,
		FinalQPS: sql.QueriesPerSec, FinalTPS: sql.TransactionsPerSec, Queries: sql.Queries, Transactions: sql.Transactions,
		LatencyAvgMs: fin.Latency.AvgMs, LatencyMaxMs: fin.Latency.MaxMs,
		Errors: sql.IgnoredErrors, ErrorsPerSecond: sql.IgnoredErrorsPerSec, Reconnects: sql.Reconnects, ReconnectsPerSecond: sql.ReconnectsPerSec,
		SteadyQPS: sql.QueriesPerSec, SteadyTPS: sql.TransactionsPerSec}
	if out.Command != nil {
		s.Command = results.RedactCommand(append([]string{toolSysbench}, out.Command.Args...))
	}
	if cs, ok := catalogStep(f.step); ok {
		s.Group = string(cs.Group)
	}
	if fin.Latency.MinMs > 0 || fin.Latency.AvgMs > 0 {
		v := fin.Latency.MinMs
		s.LatencyMinMs = &v
	}
	if v, ok := fin.Latency.Get(95); ok {
		s.LatencyP95Ms = &v
	}
	if v, ok := fin.Latency.Get(99); ok {
		s.LatencyP99Ms = &v
	}
	if len(out.Intervals) > 0 {
		warm := o.Warmup
		ss, err := out.SteadyState(warm)
		if errors.Is(err, sysbench.ErrWarmupTooLong) {
			fmt.Fprintf(o.ErrOut, "warning: %s: the %g s warm-up covers the whole series; using every sample\n", f.path, warm)
			warm = 0
			ss, err = out.SteadyState(0)
		}
		if err != nil {
			return nil, "", skipUnreadable.err(err.Error())
		}
		s.SteadyQPS, s.SteadyTPS, s.SteadySamples, s.WarmupSeconds = ss.QPS, ss.TPS, ss.Samples, warm
		iv := float64(out.ReportIntervalSeconds)
		if iv <= 0 {
			iv = 1
		}
		ser := &results.Series{IntervalSeconds: iv, LatencyPercentile: out.Intervals[0].LatencyPercentile}
		for _, in := range out.Intervals {
			ser.QPS = append(ser.QPS, in.QPS)
			ser.TPS = append(ser.TPS, in.TPS)
			ser.LatencyMs = append(ser.LatencyMs, in.LatencyMs)
			ser.ErrorsPerSecond = append(ser.ErrorsPerSecond, in.ErrorsPerSec)
			ser.ReconnectsPerSecond = append(ser.ReconnectsPerSecond, in.ReconnectsPerSec)
		}
		s.Series = ser
		sum := results.SummarizeSeries(ser.QPS[ss.Dropped:], iv)
		s.Summary = &sum
	}
	if rows > 0 {
		rps := s.SteadyQPS * rows
		s.RowsPerSecond = &rps
	}
	if s.LatencyMaxMs < s.LatencyAvgMs {
		s.LatencyMaxMs = s.LatencyAvgMs
	}
	v := ""
	if out.Version != nil {
		v = out.Version.String()
	}
	return s, v, nil
}
