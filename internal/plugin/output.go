package plugin

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/dbbench/dbbench/pkg/analysis"
	"github.com/dbbench/dbbench/pkg/reporthtml"
)

// OutputFlags are the flags every report-printing command shares.
type OutputFlags struct {
	Output        string
	HTML          string
	Base          string
	GroupingFile  string
	Stddev        string
	StallFraction float64
	LastSeconds   float64
	FromDir       string
	// AllSteps keeps the `.pre` and `.warm` steps reports leave out.
	AllSteps bool

	format   analysis.Format
	grouping *analysis.Grouping
}

// AddFlags registers the flags.
func (o *OutputFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&o.Output, "output", "o", "table", "Output format: table, markdown, csv or json.")
	fs.StringVar(&o.HTML, "html", "", "Also write a self-contained HTML report with charts to this file.")
	fs.StringVar(&o.Base, "base", "", "Cell every other cell is divided by (default: the run's baseline, else its first cell).")
	fs.StringVar(&o.GroupingFile, "groups", "", "File defining the report groups (\"name: step, step-*\" per line, or JSON); default: the catalog's 4 groups.")
	fs.StringVar(&o.Stddev, "stddev", "sample", "Standard deviation of the group statistics: sample (n-1) or population (n).")
	fs.Float64Var(&o.StallFraction, "stall-fraction", 0.5, "A second below this fraction of the median throughput is a stall.")
	fs.Float64Var(&o.LastSeconds, "last-seconds", 0, "Box-plot statistics over the last N seconds of each step (0: the whole step after warm-up).")
	fs.StringVar(&o.FromDir, "from-dir", "", "Read results files (*.json) from this directory instead of the cluster.")
	fs.BoolVar(&o.AllSteps, "all-steps", false, "Keep the .pre and .warm steps that reports leave out (a note lists them otherwise).")
}

// Complete parses the format and loads the grouping file.
func (o *OutputFlags) Complete() error {
	f, err := analysis.ParseFormat(o.Output)
	if err != nil {
		return err
	}
	o.format = f
	if o.GroupingFile != "" {
		fh, err := os.Open(o.GroupingFile)
		if err != nil {
			return fmt.Errorf("--groups: %w", err)
		}
		defer fh.Close()
		g, err := analysis.ParseGrouping(fh)
		if err != nil {
			return fmt.Errorf("--groups %s: %w", o.GroupingFile, err)
		}
		if g.Name == "" {
			g.Name = o.GroupingFile
		}
		o.grouping = &g
	}
	return nil
}

// Validate checks the values Complete did not.
func (o *OutputFlags) Validate() error {
	if err := analysis.StddevKind(o.Stddev).Validate(); err != nil {
		return fmt.Errorf("--stddev: %w", err)
	}
	if !(o.StallFraction > 0 && o.StallFraction < 1) {
		return fmt.Errorf("--stall-fraction %v: must be between 0 and 1", o.StallFraction)
	}
	if o.LastSeconds < 0 {
		return fmt.Errorf("--last-seconds %v: must not be negative", o.LastSeconds)
	}
	return nil
}

func (o *OutputFlags) reportOptions(base string) analysis.ReportOptions {
	if o.Base != "" {
		base = o.Base
	}
	return analysis.ReportOptions{Base: base, Grouping: o.grouping, Stddev: analysis.StddevKind(o.Stddev),
		Series:            analysis.SeriesOptions{StallFraction: o.StallFraction, LastSeconds: o.LastSeconds},
		IncludeUnreported: o.AllSteps}
}

// noteLeftOut says which steps the report left out and the flag that keeps
// them.
func noteLeftOut(r *analysis.Report) {
	if n := len(r.LeftOut); n > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("left out %d %s reports do not publish (.pre, .warm): %s (--all-steps keeps them)",
			n, plural(n, "step", "steps"), strings.Join(r.LeftOut, ", ")))
	}
}

// write prints tables in the chosen text format, or v as indented JSON.
// The formats that have no place for the tables' notes (csv, json) get
// them on errOut, one "note:" line each, so that no -o drops them silently.
func (o *OutputFlags) write(w, errOut io.Writer, tables []analysis.Table, v any) error {
	if o.format == analysis.FormatCSV || o.format == analysis.FormatJSON {
		for _, t := range tables {
			for _, n := range t.Notes {
				if _, err := fmt.Fprintf(errOut, "note: %s\n", n); err != nil {
					return err
				}
			}
		}
	}
	if o.format == analysis.FormatJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	return analysis.WriteTables(w, o.format, tables)
}

// writeHTML writes the HTML file when --html was given and says so on
// stderr.
func (o *OutputFlags) writeHTML(errOut io.Writer, r *analysis.Report, opts reporthtml.HTMLOptions) error {
	if o.HTML == "" {
		return nil
	}
	opts.Grouping = o.grouping
	f, err := os.Create(o.HTML)
	if err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	if err := reporthtml.WriteHTML(f, r, opts); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(errOut, "wrote %s\n", o.HTML)
	return nil
}

// ObjectOutputFlags give a command that shows an API object kubectl's
// object output (-o json|yaml|name|jsonpath=...|go-template=...) through
// cli-runtime's printers. Without -o the command keeps its own human view,
// as kubectl and kueuectl fall back to their table printer.
type ObjectOutputFlags struct {
	PrintFlags *genericclioptions.PrintFlags

	printer printers.ResourcePrinter
}

// NewObjectOutputFlags returns the flags with no format chosen.
func NewObjectOutputFlags() *ObjectOutputFlags {
	return &ObjectOutputFlags{PrintFlags: genericclioptions.NewPrintFlags("")}
}

// AddFlags registers -o/--output and the template flags.
func (o *ObjectOutputFlags) AddFlags(cmd *cobra.Command) { o.PrintFlags.AddFlags(cmd) }

// Complete builds the printer when a format was given; an unknown format is
// an error that lists the known ones.
func (o *ObjectOutputFlags) Complete() error {
	if o.PrintFlags.OutputFormat == nil || *o.PrintFlags.OutputFormat == "" {
		return nil
	}
	p, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return fmt.Errorf("--output: %w", err)
	}
	o.printer = p
	return nil
}

// Printer is the object printer, or nil for the command's own view.
func (o *ObjectOutputFlags) Printer() printers.ResourcePrinter { return o.printer }
