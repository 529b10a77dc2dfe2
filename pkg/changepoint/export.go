package changepoint

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Interchange with other change-point tools, so results can be cross-checked:
//
//   - Apache Otava reads a CSV file with a header row, one row per run, a time
//     column, optional attribute columns (such as a commit or version) and one
//     numeric column per metric (see Otava's docs/CSV.md).
//   - Bencher ingests one Bencher Metric Format (BMF) JSON document per run:
//     {"<benchmark>": {"<measure>": {"value": <number>}}}.

// CSV column names used by WriteOtavaCSV and, by default, ReadOtavaCSV.
const (
	OtavaTimeColumn  = "time"
	OtavaLabelColumn = "label"
)

// otavaTimeLayout is RFC 3339, which Otava's date parser reads.
const otavaTimeLayout = time.RFC3339

// WriteOtavaCSV writes series in Otava's CSV input format: a header
// "time,label,<name>…", then one row per run. All series must have the same
// length; times (required, Otava needs them) and labels (optional) come from
// the first series that has them. To analyse the file with Otava, declare a
// csv test with time_column "time", attributes [label] and the series names as
// metrics.
func WriteOtavaCSV(w io.Writer, series []Series) error {
	if len(series) == 0 {
		return errors.New("changepoint: WriteOtavaCSV: no series")
	}
	n := len(series[0].Values)
	var times []time.Time
	var labels []string
	for _, s := range series {
		if err := checkSeries(s); err != nil {
			return err
		}
		if len(s.Values) != n {
			return fmt.Errorf("changepoint: WriteOtavaCSV: series %q has %d values, series %q has %d",
				s.Name, len(s.Values), series[0].Name, n)
		}
		if s.Name == "" || s.Name == OtavaTimeColumn || s.Name == OtavaLabelColumn {
			return fmt.Errorf("changepoint: WriteOtavaCSV: series name %q is empty or reserved", s.Name)
		}
		if times == nil && len(s.Times) > 0 {
			times = s.Times
		}
		if labels == nil && len(s.Labels) > 0 {
			labels = s.Labels
		}
	}
	if n > 0 && times == nil {
		return errors.New("changepoint: WriteOtavaCSV: no series has Times: Otava needs a time column")
	}
	cw := csv.NewWriter(w)
	header := []string{OtavaTimeColumn}
	if labels != nil {
		header = append(header, OtavaLabelColumn)
	}
	for _, s := range series {
		header = append(header, s.Name)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for i, t := range times {
		if y := t.UTC().Year(); y < 1 || y > 9999 {
			return fmt.Errorf("changepoint: WriteOtavaCSV: time %d (%v) is outside years 1-9999", i, t)
		}
	}
	row := make([]string, 0, len(header))
	for i := range n {
		row = append(row[:0], times[i].UTC().Format(otavaTimeLayout))
		if labels != nil {
			row = append(row, labels[i])
		}
		for _, s := range series {
			row = append(row, strconv.FormatFloat(s.Values[i], 'g', -1, 64))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadOtavaCSV reads a CSV file in Otava's input format. timeColumn names the
// time column ("" means "time"); it may hold RFC 3339 times, "2006-01-02
// 15:04:05[ -0700]", Otava's example form "2006.01.02 15:04:05 -0700", a date,
// or Unix seconds. Columns named "label", "commit" and "version" are
// attributes even when they look numeric (8.0); every other column whose
// non-empty cells all parse as finite numbers becomes a Series. The Labels
// come from the "label" column, else "commit", else "version", else the first
// other text column. Empty
// numeric cells are filled from the previous run (from the next one at the
// start), as Otava does; a numeric column with no value at all is an error.
func ReadOtavaCSV(r io.Reader, timeColumn string) ([]Series, error) {
	if timeColumn == "" {
		timeColumn = OtavaTimeColumn
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 0 // every row as long as the header
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("changepoint: ReadOtavaCSV: empty input, expected a header row")
		}
		return nil, fmt.Errorf("changepoint: ReadOtavaCSV: reading header: %w", err)
	}
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("changepoint: ReadOtavaCSV: %w", err)
	}
	timeIdx := -1
	seen := make(map[string]bool, len(header))
	for i, h := range header {
		if seen[h] {
			return nil, fmt.Errorf("changepoint: ReadOtavaCSV: duplicate column %q", h)
		}
		seen[h] = true
		if h == timeColumn {
			timeIdx = i
		}
	}
	if timeIdx < 0 {
		return nil, fmt.Errorf("changepoint: ReadOtavaCSV: time column %q not found in header %q", timeColumn, header)
	}
	times := make([]time.Time, len(rows))
	for r, row := range rows {
		t, err := parseOtavaTime(row[timeIdx])
		if err != nil {
			return nil, fmt.Errorf("changepoint: ReadOtavaCSV: row %d column %q: %w", r+2, timeColumn, err)
		}
		times[r] = t
	}
	var series []Series
	labelIdx, labelRank := -1, 99
	rank := map[string]int{OtavaLabelColumn: 0, "commit": 1, "version": 2}
	for c, name := range header {
		if c == timeIdx {
			continue
		}
		_, attribute := rank[name]
		vals, ok := numericColumn(rows, c)
		if attribute || !ok {
			rk, named := rank[name]
			if !named {
				rk = 3
			}
			if rk < labelRank {
				labelIdx, labelRank = c, rk
			}
			continue
		}
		series = append(series, Series{Name: name, Values: vals, Times: times})
	}
	if labelIdx >= 0 {
		labels := make([]string, len(rows))
		for r, row := range rows {
			labels[r] = row[labelIdx]
		}
		for i := range series {
			series[i].Labels = labels
		}
	}
	return series, nil
}

// numericColumn parses column c; ok is false if a non-empty cell is not a
// finite number or if the column has no value at all.
func numericColumn(rows [][]string, c int) ([]float64, bool) {
	vals := make([]float64, len(rows))
	missing := make([]bool, len(rows))
	found := false
	for r, row := range rows {
		cell := strings.TrimSpace(row[c])
		if cell == "" {
			missing[r] = true
			continue
		}
		v, err := strconv.ParseFloat(cell, 64)
		if err != nil || v != v || v > maxFloat || v < -maxFloat {
			return nil, false
		}
		vals[r] = v
		found = true
	}
	if !found {
		return nil, false
	}
	// Forward fill, then back fill the leading gap.
	have := false
	var prev float64
	for r := range vals {
		if missing[r] {
			if have {
				vals[r] = prev
				missing[r] = false
			}
			continue
		}
		prev, have = vals[r], true
	}
	have = false
	for r := len(vals) - 1; r >= 0; r-- {
		if missing[r] {
			if have {
				vals[r] = prev
			}
			continue
		}
		prev, have = vals[r], true
	}
	return vals, true
}

const maxFloat = 1.7976931348623157e308

var otavaTimeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
	"2006.01.02 15:04:05 -0700",
	"2006.01.02 15:04:05",
	"2006-01-02",
}

func parseOtavaTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range otavaTimeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
		if t := time.Unix(sec, 0).UTC(); t.Year() >= 1 && t.Year() <= 9999 {
			return t, nil
		}
		return time.Time{}, fmt.Errorf("time %q in Unix seconds is outside years 1-9999", s)
	}
	return time.Time{}, fmt.Errorf("cannot parse time %q", s)
}

// BMFMetric is one measure's value in a Bencher Metric Format document.
type BMFMetric struct {
	Value      float64  `json:"value"`
	LowerValue *float64 `json:"lower_value,omitempty"`
	UpperValue *float64 `json:"upper_value,omitempty"`
}

// BMFReport is one Bencher Metric Format document: benchmark name → measure
// name → metric. Bencher ingests one such document per run.
type BMFReport map[string]map[string]BMFMetric

// BMFReports converts series into one BMF document per run: run i holds, for
// every series, {series.Name: {measure: {"value": Values[i]}}}. In dbbench a
// series name is a step (the Bencher benchmark) and measure is e.g.
// "throughput". All series must have the same length.
func BMFReports(measure string, series []Series) ([]BMFReport, error) {
	if measure == "" {
		return nil, errors.New("changepoint: BMFReports: empty measure name")
	}
	if len(series) == 0 {
		return nil, nil
	}
	n := len(series[0].Values)
	for _, s := range series {
		if err := checkSeries(s); err != nil {
			return nil, err
		}
		if s.Name == "" {
			return nil, errors.New("changepoint: BMFReports: series with an empty name")
		}
		if len(s.Values) != n {
			return nil, fmt.Errorf("changepoint: BMFReports: series %q has %d values, series %q has %d",
				s.Name, len(s.Values), series[0].Name, n)
		}
	}
	out := make([]BMFReport, n)
	for i := range n {
		rep := make(BMFReport, len(series))
		for _, s := range series {
			rep[s.Name] = map[string]BMFMetric{measure: {Value: s.Values[i]}}
		}
		out[i] = rep
	}
	return out, nil
}

// WriteBMF writes BMFReports(measure, series) as JSON Lines: one compact BMF
// document per line, oldest run first, ready to feed to `bencher run --file`
// one line (one run) at a time.
func WriteBMF(w io.Writer, measure string, series []Series) error {
	reps, err := BMFReports(measure, series)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	for _, rep := range reps {
		if err := enc.Encode(rep); err != nil {
			return err
		}
	}
	return nil
}
