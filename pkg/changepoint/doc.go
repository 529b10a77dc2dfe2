// Package changepoint finds the runs where a benchmark metric changed level.
//
// It implements E-divisive means with a two-sided Student's t-test as the
// significance test, over overlapping windows followed by a merge pass, as
// Apache Otava (formerly Hunter) and Nyrkiö do. OtavaOptions reproduces
// Otava 0.8.0's change points exactly. DefaultOptions adds what nightly
// suites need:
//
//   - A magnitude filter relative to the series' noise: a change must exceed
//     NoiseMultiple (1.5) × the noise CV, supplied by the caller (e.g. from a
//     suite's A/A repeats) or estimated robustly from the series (MAD of
//     successive differences / √2), and an absolute floor MinMagnitude (1 %).
//   - A minimum segment length (3 runs) and robustness to one outlier run.
//   - Newest runs first-class: a change in the last runs, which the minimum
//     segment length keeps E-divisive from placing, is found by a t-test of
//     the last k runs against the segment before them and placed at the run
//     where it starts, replacing a last change point that only those runs
//     made significant. It is Suspected while only the newest run shows it
//     and Confirmed once the next run holds it (ChangePoint.Status).
//   - Every reported change point, whichever pass placed, moved or
//     refreshed it, passes the filters it is reported under (p-value,
//     magnitude, segment lengths, outliers), with statistics that describe
//     its final segments (TestEveryReportedPointPassesItsFilters).
//   - Drift: a sustained slope is reported as a Drift with its least-squares
//     slope per run and p-value, not as one arbitrary change point or a
//     staircase of them (Result.Drifts).
//
// # Models
//
// Every test assumes runs are independent, with Gaussian noise around a
// mean that is piecewise constant (change points) or, for a drift, linear
// within a segment. The t-tests, the slope test and the noise estimate are
// calibrated under that model: on pure noise the defaults report a false
// Confirmed change in under 1 % of 20- to 300-run series, at any noise level
// (TestNightlyNoiseOnly). Positive autocorrelation between runs (a
// machine that is slow for a week, a cache that warms over several nights)
// breaks it: neighbouring runs agree more than independent ones would, so
// p-values are too small and the successive-difference noise estimate too
// low, and slow wanders are reported as changes or drifts. A drift inside
// a segment biases the t-tests the other way (the segment's spread grows),
// and a step inside a drift is fitted by the line and the step together:
// the drift pass compares a line with the steps E-divisive found (BIC) and
// keeps the better. Heavy-tailed noise is handled only as far as
// MaxOutliers goes.
//
// # Verdicts are not revised
//
// Detection is a pure function of the series it is given. Each night's
// call sees one more run and may place, confirm, move or drop a change:
// a Suspected change that the next run does not hold disappears. A
// verdict a caller made from an earlier call (the controller's Regressed
// condition on an earlier run) is not revised; the newer call's result is
// the newer verdict.
//
// For suites with few runs, CheckThreshold offers Bencher-style threshold
// tests, and WriteOtavaCSV / WriteBMF export a series for cross-checking with
// those tools. See docs/changepoints.md for the algorithm and speed, and the
// section "Change points for nightly suites" of docs/design.md for the
// defaults and the rates measured behind them.
//
// The package uses only the standard library and has no Kubernetes imports.
package changepoint
