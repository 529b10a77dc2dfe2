// Package sysbench reads what the sysbench benchmark client prints: the
// `sysbench --version` line, the per-interval lines of --report-interval, the
// table list of `prepare`, and the final report block, for sysbench 1.0.20
// (what Debian and most distributions ship) and 1.1.x (sysbench master, used
// by the reference studies).
//
// The parser works by anchors ("SQL statistics:", "queries:", "Latency (ms):",
// "General statistics:" or "Throughput:" ...), never by line numbers, so extra
// lines (warnings, a Lua script's own prints, a different percentile) do not
// shift anything. Lines it does not recognise are ignored; lines it does
// recognise but cannot read are errors that name the line number and text,
// because a silently wrong number in a benchmark table is worse than no
// number. `FATAL:` lines end the parse with a *FatalError.
//
// # Reference QPS and steady state
//
// The published studies quote the per-second value on the final report's
// `queries:` line (Report.SQL.QueriesPerSec). sysbench computes it as all
// queries divided by the whole run time, so it includes the first seconds of
// the run: cold caches, connection set-up, the ramp of the threads. sysbench
// 1.0.20 has no --warmup-time, so dbbench runs with --report-interval=1 and
// computes a steady-state figure from the interval series instead
// (SteadyStateOf): the first N seconds of samples are dropped and the rest are
// averaged. On a short step, or one whose first seconds differ from the rest
// (a read step that starts with a cold buffer pool reads low at first; a
// write step often reads *high* at first, before dirty-page and redo debt
// builds up), the two figures differ, and the difference is the reason to keep
// both. Note also that sysbench 1.0.20 does not print the last, incomplete
// interval (a 10 s run prints [ 1s ] to [ 9s ]), so the series never covers
// the very end of the run either. The final-report figure stays comparable with published numbers, the
// steady-state one is what relative tables should use. Nothing here mixes
// them.
//
// The package has no dependencies outside the standard library.
package sysbench
