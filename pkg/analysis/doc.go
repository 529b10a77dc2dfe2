// Package analysis turns benchmark results into the tables that database
// performance engineers publish: relative throughput against a base cell,
// group summaries, hardware efficiency per operation, scale-up with client
// concurrency, throughput over time, the spread of repeats, and change
// points across a series of runs.
//
// It works on a small input model of its own (Dataset: cells and their
// Observations, one per step × thread count), so that it can be fed from
// dbbench results documents and manifests (FromDocuments, FromManifest), from
// old sysbench output, or from numbers copied out of a blog post. Every
// report is a plain struct that renders as text, Markdown, CSV (Table) or
// JSON; pkg/reporthtml draws them as inline SVG.
//
// The packages above it: pkg/regression (the regression verdict between
// runs, suite noise and run planning) and pkg/reporthtml (the HTML
// report). Neither is imported from here; the statistics proper (Welch's
// test, intervals) live below it, in pkg/inference and pkg/stats.
//
// Rules that hold everywhere:
//
//   - A ratio of 0 to 0 is 1 (no change), x/0 is +Inf (printed "inf").
//   - A step a cell did not measure is missing: never 0 and never silently
//     left out of a ratio. Missing values are printed as "missing" and carry
//     "missing": true in JSON.
//   - Text output prints ratios with 2 decimals.
//
// docs/reports.md describes every report and the statistics choices. The
// package has no Kubernetes imports.
package analysis
