// Package runverdict judges a finished BenchmarkRun for regressions: from
// the run's manifest, the suite's earlier runs, their noise and the suite's
// acknowledgements, Judge builds the verdict as the run's status carries it
// (status.regression and the Regressed condition), and Document the verdict
// as the object store keeps it. The statistics are pkg/analysis's and
// pkg/changepoint's; this package chooses among them by spec.regression,
// triages what they find against the acks and the environment, and words
// it. It reads and writes nothing: the controller gathers the history and
// the acks, calls Judge once and copies the Outcome into the status.
package runverdict
