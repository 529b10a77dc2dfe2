// Package reporthtml renders pkg/analysis' reports as one self-contained
// HTML page: the tables of the report, bar and line charts drawn as inline
// SVG (relative throughput with its intervals, throughput and latency over
// time, scale-up, history with its change points), and the page of a
// bisection (WriteBisectionHTML). `kubectl dbbench report --format html`,
// the controller's run report and the static site use it.
//
// It only draws: every number comes from pkg/analysis (the dataset, its
// tables and their formatting), so the HTML page and the text, CSV and JSON
// forms never disagree. The package has no Kubernetes imports.
package reporthtml
