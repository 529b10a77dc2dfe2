// Package bisect localizes a performance regression across an ordered list
// of builds (versions, images, digests): the pure search and decision logic
// of a BenchmarkBisection, with no Kubernetes imports, so that a database
// engineer can drive it from any benchmark loop.
//
// The points are numbered in order: 0 is the known-good build, n+1 the
// known-bad one, 1..n the candidates between them. A search first confirms
// the endpoints (the bad build is slower than the good one by more than the
// rule's magnitude on some judged step), then measures k candidates per
// round, splitting every interval that still holds a change into k+1 parts.
// Judge turns each point's per-run throughput into a verdict against the
// endpoints; Plan turns the verdicts into the next round's probes or into
// the result: the changes found (good point, first bad point after it), the
// candidates that failed to run and those left inconclusive within the
// budget.
//
// Verdicts are judged between runs (one value per run of a cell, see
// pkg/inference): per-second samples would over-call differences.
package bisect
