// Package changepoint finds the runs where a benchmark metric changed level.
//
// It implements E-divisive means with a two-sided Student's t-test as the
// significance test, over overlapping windows followed by a merge pass, as
// Apache Otava (formerly Hunter) and Nyrkiö do. OtavaOptions reproduces
// Otava 0.8.0's change points; DefaultOptions adds a minimum magnitude, a
// minimum segment length and robustness to single outlier runs. For suites
// with few runs, CheckThreshold offers Bencher-style threshold tests, and
// WriteOtavaCSV / WriteBMF export a series for cross-checking with those
// tools. See docs/changepoints.md for the algorithm, defaults and speed.
//
// The package uses only the standard library and has no Kubernetes imports.
package changepoint
