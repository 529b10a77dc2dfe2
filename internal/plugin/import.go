package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
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
// last dot ("point-query_16.txt").
const DefaultFilePattern = `^(?P<step>.+?)[._](?:t|dop|threads)?(?P<threads>[0-9]+)(?:\.(?:txt|log|out))?$`

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
	// Verbose lists every file skipped instead of summarising them.
	Verbose     bool
	filePattern *regexp.Regexp
	cellPattern *regexp.Regexp
	templates   []string
	genericiooptions.IOStreams
}

// templateField is one {group} of --step-template.
var templateField = regexp.MustCompile(`\{([^{}]*)\}`)

// NewCmdImport builds `kubectl dbbench import DIR`.
func NewCmdImport(streams genericiooptions.IOStreams) *cobra.Command {
	o := &ImportOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "import DIR",
		Short: "Turn saved sysbench output files into dbbench results documents",
		Long: `Turn saved sysbench output (1.0 or 1.1, one file per step and thread count)
into dbbench results documents (schema v1, full form), one per cell, which
report, compare and history then read with --from-dir.

Expected layout: one directory per cell under DIR, one file per step and
concurrency inside it:

  DIR/mariadb-10.11-base/point-query.16.txt
  DIR/mariadb-10.11-base/read-write_range=100.16.txt
  DIR/mysql-8.0.36-default/point-query.t16.log

The file name gives the step and the thread count (--pattern, a regular
expression with the named groups step and threads, and optionally cell);
without a threads group, sysbench's "Number of threads:" line is used.
--step-template builds the step from several groups ("{step}_range={range}");
alternatives separated by "|" are tried in order and the first that names a
catalog step wins (else the first). --step-map renames steps
(oltp_point_select=point-query). The cell directory's name gives engine,
version and config (--cell-pattern, named groups engine, version, config); a
name it does not match becomes the version, with --engine as the engine.
Files directly in DIR form one cell named after DIR.

Files that are not sysbench runs (other tools' output, configs, prepare
output) and names the pattern does not match are skipped with one summary
line each (-v lists them); a cell with no sysbench run is not written. A
sysbench run without a final report (a killed run) is skipped with a note.

Throughput is the steady state of the per-second samples (--report-interval)
after --warmup seconds, or sysbench's final "queries:" figure when the file
has no interval lines. Steps the catalog reports in rows/s (scan) are
imported in rows/s: scans/s times the rows per table, from the script's
"dbbench scan: N rows per table" line, else a sysbench prepare output among
the cell's files, else --rows-per-scan.`,
		Example: `  kubectl dbbench import ./old-results --out ./imported
  kubectl dbbench import ./logs --pattern '^sb\.(?P<step>[^.]+)\.dop(?P<threads>[0-9]+)$' --step-map oltp_point_select=point-query
  # one folder per server version, sb.o.<step>[.pre|.warm].range<N>.pk1.dop<threads> beside vmstat/iostat files
  kubectl dbbench import ./study --out ./imported --rows-per-scan 1000000 \
    --pattern '^sb\.o\.(?P<step>[^.]+)(?P<suffix>\.pre|\.warm)?\.range(?P<range>[0-9]+)\.pk1\.dop(?P<threads>[0-9]+)$' \
    --step-template '{step}_range={range}{suffix}|{step}{suffix}'
  kubectl dbbench report --from-dir ./imported`,
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
	fs.StringVar(&o.FilePattern, "pattern", DefaultFilePattern, "Regular expression for file names, with named groups step and threads (and optionally cell).")
	fs.StringVar(&o.StepTemplate, "step-template", "", `Step name built from the pattern's named groups, e.g. "{step}_range={range}"; "|" separates alternatives, the first that names a catalog step wins (default: the step group).`)
	fs.StringVar(&o.CellPattern, "cell-pattern", DefaultCellPattern, "Regular expression for cell directory names, with named groups engine, version, config.")
	fs.StringToStringVar(&o.StepMap, "step-map", nil, "Rename steps: old=new[,old=new...].")
	fs.StringVar(&o.Engine, "engine", "unknown", "Engine of cells whose name the cell pattern does not match.")
	fs.Float64Var(&o.Warmup, "warmup", 10, "Seconds of per-second samples dropped before the steady-state throughput.")
	fs.Float64Var(&o.RowsPerScan, "rows-per-scan", 0, "Rows per table, to import rows/s steps (scan) in rows/s when the files do not say.")
	fs.BoolVarP(&o.Verbose, "verbose", "v", false, "List every skipped file on stderr, not only the summary.")
	return cmd
}

// Complete compiles the patterns and fills defaults.
func (o *ImportOptions) Complete(args []string) error {
	o.Dir = args[0]
	if o.RunName == "" {
		o.RunName = filepath.Base(filepath.Clean(o.Dir))
	}
	var err error
	if o.filePattern, err = regexp.Compile(o.FilePattern); err != nil {
		return fmt.Errorf("--pattern: %w", err)
	}
	if o.cellPattern, err = regexp.Compile(o.CellPattern); err != nil {
		return fmt.Errorf("--cell-pattern: %w", err)
	}
	if o.StepTemplate != "" {
		o.templates = strings.Split(o.StepTemplate, "|")
	}
	return nil
}

// Validate checks the flags.
func (o *ImportOptions) Validate() error {
	if o.Out == "" {
		return errors.New("--out is required")
	}
	if o.StepTemplate == "" && o.filePattern.SubexpIndex("step") < 0 {
		return fmt.Errorf("--pattern %q has no named group (?P<step>...)", o.FilePattern)
	}
	if err := o.validateTemplate(); err != nil {
		return err
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
	return nil
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
	for i, alt := range o.templates {
		if alt == "" {
			return fmt.Errorf("--step-template %q: alternative %d is empty", o.StepTemplate, i+1)
		}
		if !templateField.MatchString(alt) {
			return fmt.Errorf("--step-template %q: alternative %d has no {group}", o.StepTemplate, i+1)
		}
		for _, m := range templateField.FindAllStringSubmatch(alt, -1) {
			if o.filePattern.SubexpIndex(m[1]) < 0 {
				return fmt.Errorf("--step-template %q: {%s} is not a named group of --pattern (groups: %s)",
					o.StepTemplate, m[1], strings.Join(groups, ", "))
			}
		}
	}
	return nil
}

// stepName is the step a matched file name gives: the step group, or the
// first --step-template alternative that names a catalog step (else the
// first alternative), renamed by --step-map.
func (o *ImportOptions) stepName(m []string) string {
	rename := func(s string) string {
		if n, ok := o.StepMap[s]; ok {
			return n
		}
		return s
	}
	if len(o.templates) == 0 {
		return rename(m[o.filePattern.SubexpIndex("step")])
	}
	first := ""
	for i, alt := range o.templates {
		name := rename(templateField.ReplaceAllStringFunc(alt, func(f string) string {
			return m[o.filePattern.SubexpIndex(f[1:len(f)-1])]
		}))
		if i == 0 {
			first = name
		}
		if _, ok := workload.Lookup(name); ok {
			return name
		}
	}
	return first
}

type importFile struct {
	path, cell, step string
	threads          int
	mtime            time.Time
}

// parsedFile is one matched file after reading: a sysbench run (out set,
// kind empty), something else (kind set), or a run that failed to parse.
type parsedFile struct {
	importFile
	raw  []byte
	out  *sysbench.Output
	kind fileKind
	err  error
}

// importTally counts what the import skipped, for its summary lines.
type importTally struct {
	read      int
	kinds     map[fileKind]int
	strays    int
	failed    int
	unmatched []string
}

// Run imports every cell and prints a summary.
func (o *ImportOptions) Run() error {
	files, unmatched, err := o.scan()
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%s: no file matches --pattern %s (%d file(s) do not)", o.Dir, o.FilePattern, len(unmatched))
	}
	tally := importTally{read: len(files), kinds: map[fileKind]int{}, unmatched: unmatched}
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
				fmt.Fprintf(o.ErrOut, "skipping %s: not a sysbench run (%s)\n", f.path, p.kind)
			}
		}
		byCell[f.cell] = append(byCell[f.cell], p)
	}
	sort.Strings(cells)
	summary := analysis.Table{Title: fmt.Sprintf("Imported %s into %s", o.Dir, o.Out),
		Columns: []string{"cell", "engine", "version", "config", "steps", "skipped", "sysbench", "file"}}
	type outDoc struct {
		path string
		data []byte
	}
	var docs []outDoc
	for _, cell := range cells {
		doc, skipped, err := o.cellDocument(cell, byCell[cell])
		if err != nil {
			return err
		}
		tally.failed += len(skipped)
		summary.Notes = append(summary.Notes, skipped...)
		if doc == nil {
			summary.Notes = append(summary.Notes, fmt.Sprintf("cell %s: no sysbench run among its %d files; nothing written", cell, len(byCell[cell])))
			continue
		}
		data, err := results.Marshal(doc)
		if err != nil {
			return fmt.Errorf("cell %s: %w", cell, err)
		}
		out := filepath.Join(o.Out, cell+".json")
		docs = append(docs, outDoc{out, data})
		summary.Rows = append(summary.Rows, []string{cell, doc.Cell.Engine, doc.Cell.Version, doc.Cell.Config,
			strconv.Itoa(len(doc.Steps)), strconv.Itoa(len(skipped)), doc.Provenance.SysbenchVersion, out})
	}
	summary.Notes = append(summary.Notes, tally.summary()...)
	if len(docs) == 0 {
		return fmt.Errorf("%s: no sysbench run imported: %s", o.Dir, tally.counts())
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

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// summary is one line per kind of skip: the files that are not sysbench
// runs by what they look like, and the names the pattern did not match.
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
			plural(t.strays, "file that is not a sysbench run", "files that are not sysbench runs"), strings.Join(kinds, ", ")))
	}
	if n := len(t.unmatched); n > 0 {
		out = append(out, fmt.Sprintf("%d %s --pattern %s not read, e.g. %s (-v lists them)", n,
			plural(n, "file whose name does not match", "files whose names do not match"), plural(n, "was", "were"), t.unmatched[0]))
	}
	return out
}

// counts says what was read when nothing could be imported.
func (t importTally) counts() string {
	s := fmt.Sprintf("%d %s read", t.read, plural(t.read, "file", "files"))
	if t.strays > 0 {
		s += fmt.Sprintf(", %d not a sysbench run", t.strays)
	}
	if t.failed > 0 {
		s += fmt.Sprintf(", %d sysbench %s could not be imported", t.failed, plural(t.failed, "run", "runs"))
	}
	if n := len(t.unmatched); n > 0 {
		s += fmt.Sprintf("; %d %s not match --pattern", n, plural(n, "name does", "names do"))
	}
	return s
}

// scan lists the files under Dir that match the pattern, and the paths
// (relative to Dir) of those that do not.
func (o *ImportOptions) scan() ([]importFile, []string, error) {
	var out []importFile
	var unmatched []string
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
		m := o.filePattern.FindStringSubmatch(d.Name())
		if m == nil {
			rel, _ := filepath.Rel(root, path)
			unmatched = append(unmatched, rel)
			if o.Verbose {
				fmt.Fprintf(o.ErrOut, "skipping %s: name does not match --pattern\n", path)
			}
			return nil
		}
		f := importFile{path: path, cell: filepath.Base(filepath.Dir(path))}
		if filepath.Dir(path) == root {
			f.cell = filepath.Base(root)
		}
		if i := o.filePattern.SubexpIndex("cell"); i >= 0 && m[i] != "" {
			f.cell = m[i]
		}
		f.step = o.stepName(m)
		if i := o.filePattern.SubexpIndex("threads"); i >= 0 && m[i] != "" {
			f.threads, _ = strconv.Atoi(m[i])
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		f.mtime = info.ModTime().UTC().Truncate(time.Second)
		out = append(out, f)
		return nil
	})
	return out, unmatched, err
}

// read parses one file and says what it is.
func (o *ImportOptions) read(f importFile) parsedFile {
	p := parsedFile{importFile: f}
	if p.raw, p.err = os.ReadFile(f.path); p.err != nil {
		return p
	}
	p.out, p.err = sysbench.Parse(bytes.NewReader(p.raw))
	var fatal *sysbench.FatalError
	switch {
	case !isSysbench(p.out) && !errors.As(p.err, &fatal):
		p.kind, p.err = identify(p.raw), nil
	case p.err == nil && p.out.Final == nil && len(p.out.Intervals) == 0 && len(p.out.Prepared) > 0:
		p.kind = kindPrepare
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
// when none of them is a sysbench run that could be imported. skipped are
// notes on the sysbench runs that could not be.
func (o *ImportOptions) cellDocument(cell string, files []parsedFile) (*results.Document, []string, error) {
	pos := map[string]int{}
	for i, s := range workload.Extended() {
		pos[s.Name] = i + 1
	}
	var skipped []string
	doc := &results.Document{SchemaVersion: results.SchemaV1, Form: results.FormFull,
		Run: results.Run{Name: o.RunName, Suite: o.Suite}, Cell: o.cellMeta(cell),
		Status: results.Status{Outcome: results.OutcomeSucceeded}}
	prepared := preparedRows(files)
	from := map[string]string{} // step@threads -> file, to name both of a pair
	var last time.Time
	for _, f := range files {
		if f.kind != "" {
			continue
		}
		step, sbVersion, err := o.stepResult(f, prepared)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("skipped %s: %v", f.path, err))
			fmt.Fprintf(o.ErrOut, "skipping %s: %v\n", f.path, err)
			continue
		}
		key := fmt.Sprintf("%s@%d", step.Step, step.Threads)
		if prev, dup := from[key]; dup {
			return nil, nil, fmt.Errorf("cell %s: %s and %s are both step %s at %d threads (see --pattern, --step-template)",
				cell, prev, f.path, step.Step, step.Threads)
		}
		from[key] = f.path
		if doc.StartedAt.IsZero() || f.mtime.Before(doc.StartedAt) {
			doc.StartedAt = f.mtime
		}
		if f.mtime.After(last) {
			last = f.mtime
		}
		if sbVersion != "" {
			doc.Provenance.SysbenchVersion = sbVersion
		}
		doc.Steps = append(doc.Steps, *step)
	}
	if len(doc.Steps) == 0 {
		return nil, skipped, nil
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
	return doc, skipped, nil
}

// rowsPerTable is the table size that turns a rows/s step's scans/s into
// rows/s: the script's own count, else the cell's prepare output, else
// --rows-per-scan; 0 when none says.
func (o *ImportOptions) rowsPerTable(f parsedFile, prepared float64) float64 {
	if m := scanRowsLine.FindSubmatch(f.raw); m != nil {
		if v, err := strconv.ParseFloat(string(m[1]), 64); err == nil && v > 0 {
			return v
		}
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
		return nil, "", errors.New("no final report (was the run killed?)")
	}
	if out.Final.SQL == nil {
		return nil, "", errors.New("no SQL statistics (not a database test)")
	}
	threads := f.threads
	if threads == 0 {
		threads = out.Threads
	}
	if threads < 1 {
		return nil, "", errors.New("no thread count in the file name or the output")
	}
	var rows float64
	if cs, ok := workload.Lookup(f.step); ok && cs.RowsPerSecond {
		// sysbench counts scans; the catalog, and published scan figures,
		// count rows.
		if rows = o.rowsPerTable(f, prepared); rows == 0 {
			return nil, "", fmt.Errorf("%s is reported in rows/s and no row count was found (give --rows-per-scan, the rows per table)", f.step)
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
	if g, ok := workload.GroupOf(f.step); ok {
		s.Group = string(g)
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
			return nil, "", err
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
