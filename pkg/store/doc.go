// Package store keeps dbbench results in an S3-compatible object store (AWS
// S3, MinIO, versitygw, Ceph RGW, ...), through minio-go. It has no
// Kubernetes dependencies: the controller reads the BenchmarkRun's
// spec.output.s3 and the credentials Secret and passes them in Config.
//
// Keys follow Layout, documented with its compatibility rules in
// docs/results-store.md:
//
//	<prefix>/<suite>/<run>/run.json          which run object owns the directory
//	<prefix>/<suite>/<run>/manifest.json     the run's manifest (written last)
//	<prefix>/<suite>/<run>/report.html       the HTML report, when given
//	<prefix>/<suite>/<run>/<cell>/series.csv       per-second series
//	<prefix>/<suite>/<run>/<cell>/provenance.json  settings, config, commands
//	<prefix>/<suite>/<run>/<cell>/agent.log        logs, when given
//	<prefix>/<suite>/<run>/<cell>/result.json      full document (written last)
//
// Uploads are an outbox: UploadCell and UploadRun return the objects only
// when every one is stored and verified (size and SHA-256 read back), and
// are idempotent, so the caller keeps its in-cluster copy until they return
// nil and simply calls again after a Retryable error. Each request is retried
// with bounded exponential backoff and jitter (Backoff); refused credentials
// and other permanent errors return at once. Every error is an *Error that
// names the bucket and key and has a Kind.
//
// ListRuns, GetManifest and GetCellDocument read results back for reports,
// run history and change-point detection across runs.
package store
