// Package bisect localizes a performance regression across an ordered list
// of builds (versions, images, digests): the pure search and decision logic
// of a BenchmarkBisection, with no Kubernetes imports, so that a database
// engineer can drive it from any benchmark loop.
//
// The points are numbered in order: 0 is the known-good build, n+1 the
// known-bad one, 1..n the candidates between them. A search is a list of
// rounds, each a set of cells measured together under the same conditions.
// Two pure functions drive it:
//
//   - Assess recomputes the search's State from all its rounds: whether
//     the endpoints reproduce the regression (the bad build slower than
//     the good one by more than the Rule's magnitude on some judged key),
//     each candidate's judgement against the endpoints within its round,
//     the changes found (a good point and the first bad point after it),
//     the posterior probability of each build being the first bad one,
//     and the shifts of the environment between rounds, after which the
//     rounds before are no longer judged;
//   - Decide turns a State into the next step under the Limits: measure
//     another round (its points, references and cells), or stop with an
//     Outcome (Localized with the build named and its confidence,
//     Ambiguous with the likely builds, endpoints not reproduced, budget
//     spent, ...).
//
// Search runs Assess and Decide in a loop over a Measurer, as the
// controller does one round at a time. Next, which both use, splits the
// intervals that still hold a change into the next round's probes.
// Verdicts are judged between runs (one value per run of a
// cell, see pkg/inference): per-second samples would over-call
// differences.
package bisect
