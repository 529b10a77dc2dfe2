package analysis

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Table is a rendered report block: what text, Markdown and CSV output
// print. Reports build Tables from their structs (the structs are what JSON
// output carries).
type Table struct {
	// ID is a stable machine name ("relative.t1", "groups.t1.cell").
	ID    string
	Title string
	// Columns are the header; Rows hold the cells as printed.
	Columns []string
	Rows    [][]string
	// Notes are printed under the table (missing data, definitions).
	Notes []string
}

// Format is an output format of tables.
type Format string

const (
	FormatTable    Format = "table"
	FormatMarkdown Format = "markdown"
	FormatCSV      Format = "csv"
	FormatJSON     Format = "json"
)

// ParseFormat checks an -o value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatTable, FormatMarkdown, FormatCSV, FormatJSON:
		return f, nil
	case "":
		return FormatTable, nil
	}
	return "", fmt.Errorf("output format %q: must be one of table, markdown, csv, json", s)
}

// WriteTables renders tables in a text format (table, markdown or csv); JSON
// is written by the caller from the report structs.
func WriteTables(w io.Writer, f Format, tables []Table) error {
	for i, t := range tables {
		if i > 0 && f != FormatCSV {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		var err error
		switch f {
		case FormatTable, "":
			err = t.WriteText(w)
		case FormatMarkdown:
			err = t.WriteMarkdown(w)
		case FormatCSV:
			err = t.WriteCSV(w)
		default:
			err = fmt.Errorf("format %q is not a table format", f)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// WriteText prints the title, the columns aligned with two spaces between
// them, and the notes.
func (t Table) WriteText(w io.Writer) error {
	var b strings.Builder
	if t.Title != "" {
		b.WriteString(t.Title + "\n")
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.Columns, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	for _, n := range t.Notes {
		b.WriteString("note: " + n + "\n")
	}
	// tabwriter pads the last column too; trim trailing blanks per line.
	lines := strings.Split(b.String(), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

// WriteMarkdown prints a GitHub-flavoured Markdown table under a heading.
func (t Table) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	if t.Title != "" {
		b.WriteString("### " + mdEscape(t.Title) + "\n\n")
	}
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n")
	}
	row(t.Columns)
	b.WriteString("|")
	for range t.Columns {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
	if len(t.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.Notes {
			b.WriteString("- " + mdEscape(n) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// WriteCSV prints one CSV record per row, each prefixed by the table ID, so
// several tables can share a file and still be split apart; the header row
// comes first with "table" as its first field.
func (t Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append([]string{"table"}, t.Columns...)); err != nil {
		return err
	}
	for _, r := range t.Rows {
		if err := cw.Write(append([]string{t.ID}, r...)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
