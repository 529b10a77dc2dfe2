// Package inference holds the statistics of dbbench's verdicts between runs:
// intervals for the ratio of two throughputs, tests of "B is slower than A
// by more than a magnitude", multiple-comparison control over a run's many
// (step, threads) points, the run-to-run noise floor, the minimum
// detectable effect and the number of repeats a target precision needs.
//
// The unit of replication is a run of a cell (a fresh server, a fresh data
// load, possibly another node), not a second of a run: per-second samples
// measure the jitter within one run, which is much smaller than the
// variation between runs (an A/A pair of identical cells differed by 7–18 %
// per step on 10 s steps, while Welch's test on their per-second samples
// called three steps different with p ≈ 0.001). Every function here takes
// one value per run (the run's steady-state throughput of the step) and
// states in its doc comment what it assumes about those values:
//
//   - independence: the runs of a cell do not share state (each gets its
//     own server and data load); interleaved A/B pairs may share the
//     conditions of their slot, which the paired variants exploit;
//   - normal or log-normal throughput: the ratio-of-means intervals assume
//     each side's per-run throughput is normal; the tests and the noise
//     floor work on log throughput, so a multiplicative noise (a coefficient
//     of variation that does not depend on the level) is normal there;
//   - equal variance or not: said per function (Welch's unequal-variance
//     forms are the default; the noise-floor forms assume the floor's
//     variance applies to both sides).
//
// Student's t and normal quantiles come from pkg/stats, shared with the
// change-point detection, so the whole project computes them one way.
// docs/noise.md describes the model, its limits and the simulations that
// check the coverage and error rates claimed here. No Kubernetes imports.
package inference
