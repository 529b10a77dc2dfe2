// Package results is dbbench's results schema, version 1: one JSON document
// per cell (one engine × version × config variant × repeat), in two forms,
// and a run manifest that indexes the cells of a run.
//
//   - The full form (FormFull) keeps every per-second sample. It belongs in
//     object storage, where size does not matter and where the throughput-
//     over-time charts (write stalls, checkpoint waves) are drawn from.
//   - The compact form (FormCompact) replaces each per-second series by a
//     summary (min, p5, median, p95, max, mean, CV, stall seconds) and, when
//     it fits, a gzip-compressed copy of the QPS series at the finest
//     resolution that keeps the document under a size budget. It is made to
//     fit a Kubernetes ConfigMap (1 MiB).
//   - The Manifest is the run-level index: every cell's identity, phase,
//     where its documents live, and {step → {threads → QPS}}, which is enough
//     for the relative-throughput and scale-up tables without opening the
//     cells.
//
// These documents are read for years, by tools that do not exist yet, so the
// rules are strict: field names never change meaning, v1 only grows by
// optional fields, every reader checks schemaVersion first and refuses what it
// does not know (Unmarshal returns *UnsupportedVersionError rather than a
// half-understood struct), and absent is distinct from zero wherever a zero
// is a legitimate measurement (pointers). docs/results-schema.md is the
// field reference; schema/v1.json is the machine-checkable JSON Schema.
//
// The package has no Kubernetes dependencies.
package results
