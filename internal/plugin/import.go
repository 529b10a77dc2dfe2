package plugin

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
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
	Engine      string
	Warmup      float64
	filePattern *regexp.Regexp
	cellPattern *regexp.Regexp
	genericiooptions.IOStreams
}

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
--step-map renames steps (oltp_point_select=point-query). The cell
directory's name gives engine, version and config (--cell-pattern, named
groups engine, version, config); a name it does not match becomes the
version, with --engine as the engine. Files directly in DIR form one cell
named after DIR.

Throughput is the steady state of the per-second samples (--report-interval)
after --warmup seconds, or sysbench's final "queries:" figure when the file
has no interval lines. A file without a final report (a killed run) is
skipped with a warning.`,
		Example: `  kubectl dbbench import ./old-results --out ./imported
  kubectl dbbench import ./logs --pattern '^sb\.(?P<step>[^.]+)\.dop(?P<threads>[0-9]+)$' --step-map oltp_point_select=point-query
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
	fs.StringVar(&o.CellPattern, "cell-pattern", DefaultCellPattern, "Regular expression for cell directory names, with named groups engine, version, config.")
	fs.StringToStringVar(&o.StepMap, "step-map", nil, "Rename steps: old=new[,old=new...].")
	fs.StringVar(&o.Engine, "engine", "unknown", "Engine of cells whose name the cell pattern does not match.")
	fs.Float64Var(&o.Warmup, "warmup", 10, "Seconds of per-second samples dropped before the steady-state throughput.")
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
	return nil
}

// Validate checks the flags.
func (o *ImportOptions) Validate() error {
	if o.Out == "" {
		return errors.New("--out is required")
	}
	if o.filePattern.SubexpIndex("step") < 0 {
		return fmt.Errorf("--pattern %q has no named group (?P<step>...)", o.FilePattern)
	}
	if o.cellPattern.SubexpIndex("version") < 0 {
		return fmt.Errorf("--cell-pattern %q has no named group (?P<version>...)", o.CellPattern)
	}
	if o.Warmup < 0 || math.IsNaN(o.Warmup) {
		return fmt.Errorf("--warmup %v: must not be negative", o.Warmup)
	}
	if st, err := os.Stat(o.Dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: not a directory", o.Dir)
	}
	return nil
}

type importFile struct {
	path, cell, step string
	threads          int
	mtime            time.Time
}

// Run imports every cell and prints a summary.
func (o *ImportOptions) Run() error {
	files, err := o.scan()
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%s: no file matches --pattern %s", o.Dir, o.FilePattern)
	}
	byCell := map[string][]importFile{}
	var cells []string
	for _, f := range files {
		if _, ok := byCell[f.cell]; !ok {
			cells = append(cells, f.cell)
		}
		byCell[f.cell] = append(byCell[f.cell], f)
	}
	sort.Strings(cells)
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	summary := analysis.Table{Title: fmt.Sprintf("Imported %s into %s", o.Dir, o.Out),
		Columns: []string{"cell", "engine", "version", "config", "steps", "skipped", "sysbench", "file"}}
	for _, cell := range cells {
		doc, skipped, err := o.cellDocument(cell, byCell[cell])
		if err != nil {
			return err
		}
		data, err := results.Marshal(doc)
		if err != nil {
			return fmt.Errorf("cell %s: %w", cell, err)
		}
		out := filepath.Join(o.Out, cell+".json")
		if err := os.WriteFile(out, data, 0o644); err != nil {
			return err
		}
		summary.Rows = append(summary.Rows, []string{cell, doc.Cell.Engine, doc.Cell.Version, doc.Cell.Config,
			strconv.Itoa(len(doc.Steps)), strconv.Itoa(len(skipped)), doc.Provenance.SysbenchVersion, out})
		summary.Notes = append(summary.Notes, skipped...)
	}
	return summary.WriteText(o.IOStreams.Out)
}

// scan lists the files under Dir that match the pattern.
func (o *ImportOptions) scan() ([]importFile, error) {
	var out []importFile
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
			fmt.Fprintf(o.ErrOut, "skipping %s: name does not match --pattern\n", path)
			return nil
		}
		f := importFile{path: path, cell: filepath.Base(filepath.Dir(path))}
		if filepath.Dir(path) == root {
			f.cell = filepath.Base(root)
		}
		if i := o.filePattern.SubexpIndex("cell"); i >= 0 && m[i] != "" {
			f.cell = m[i]
		}
		f.step = m[o.filePattern.SubexpIndex("step")]
		if n, ok := o.StepMap[f.step]; ok {
			f.step = n
		}
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
	return out, err
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

// cellDocument parses a cell's files into one full results document.
func (o *ImportOptions) cellDocument(cell string, files []importFile) (*results.Document, []string, error) {
	pos := map[string]int{}
	for i, s := range workload.Extended() {
		pos[s.Name] = i + 1
	}
	var skipped []string
	doc := &results.Document{SchemaVersion: results.SchemaV1, Form: results.FormFull,
		Run: results.Run{Name: o.RunName, Suite: o.Suite}, Cell: o.cellMeta(cell),
		Status: results.Status{Outcome: results.OutcomeSucceeded}}
	var last time.Time
	for _, f := range files {
		step, sbVersion, err := o.stepResult(f)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("skipped %s: %v", f.path, err))
			fmt.Fprintf(o.ErrOut, "skipping %s: %v\n", f.path, err)
			continue
		}
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
		return nil, nil, fmt.Errorf("cell %s: no readable sysbench output (%d file(s) skipped)", cell, len(skipped))
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
	for i := 1; i < len(doc.Steps); i++ {
		if doc.Steps[i].Step == doc.Steps[i-1].Step && doc.Steps[i].Threads == doc.Steps[i-1].Threads {
			return nil, nil, fmt.Errorf("cell %s: two files for step %s at %d threads", cell, doc.Steps[i].Step, doc.Steps[i].Threads)
		}
	}
	return doc, skipped, nil
}

// stepResult parses one sysbench output file.
func (o *ImportOptions) stepResult(f importFile) (*results.StepResult, string, error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, "", err
	}
	defer fh.Close()
	out, err := sysbench.Parse(fh)
	if err != nil {
		return nil, "", err
	}
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
	if s.LatencyMaxMs < s.LatencyAvgMs {
		s.LatencyMaxMs = s.LatencyAvgMs
	}
	v := ""
	if out.Version != nil {
		v = out.Version.String()
	}
	return s, v, nil
}
