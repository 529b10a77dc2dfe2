#!/usr/bin/env bash
# bench-bisect.sh is `make bench-bisect`: BenchmarkBisection's search
# (pkg/bisect) on a real local MariaDB whose CPU quota calibrates a slowdown
# from a random build on (test/bench/bisect; docs/benchmarks.md). It needs
# root (CPU cgroups for the server, the client and the busy loop) and
# installs MariaDB and sysbench from Debian on first use (hack/dbservers.sh).
#
# Size (environment; defaults ≈ 60–90 min on 2 cores, BISECT_MINUTES bounds it):
#   BISECT_BISECTIONS=3       real bisections per case, the cases in turn
#   BISECT_CASES=10,20,null   slowdowns in percent of the base quota; null: no build differs
#   BISECT_CANDIDATES=8       candidate builds between the good and the bad one
#   BISECT_MINUTES=90         start no bisection that would likely end after this (0: no bound)
#   BISECT_REPEATS=3          cells per point and round
#   BISECT_MAX_CELLS=200      cell budget of a bisection
#   BISECT_SECONDS=5          measured seconds per step (+ BISECT_WARMUP=1)
#   BISECT_STEPS=read-only-count
#   BISECT_THREADS=8          client threads (keep the server at its quota)
#   BISECT_QUOTA=0.4          the server's base CPU quota, in CPUs
#   BISECT_BUSY=1             busy-loop processes started and stopped between a null bisection's rounds
#   BISECT_BUSY_IN=server     where: server (its CPU group: shares its quota), client, max (own group), default
#   BISECT_RESAMPLE=400       bisections per case on cells drawn from the measured ones
#   BISECT_SEED=1
#   BISECT_LOG=…              the JSON-lines log (default: $TMPDIR/bench-bisect-<time>.jsonl)
# The rule: -magnitude 5 -magnitude-rule Estimated -max-p 0.05 -confidence 0.9
# (extra flags after `--`: hack/bench-bisect.sh -confidence 0.95).
source "$(dirname "$0")/lib.sh"
cd "${DBBENCH_ROOT}"

if [ "$(id -u)" != 0 ]; then
	echo "bench-bisect needs root for CPU cgroups of the server and the busy loop (the CFS quota of a pod's CPU limit)" >&2
	exit 1
fi
command -v sysbench >/dev/null || hack/test-deps.sh >&2
log_flag=()
if [ -n "${BISECT_LOG:-}" ]; then
	log_flag=(-log "${BISECT_LOG}")
fi
exec go run ./test/bench/bisect \
	-bisections "${BISECT_BISECTIONS:-3}" -cases "${BISECT_CASES:-10,20,null}" -candidates "${BISECT_CANDIDATES:-8}" \
	-minutes "${BISECT_MINUTES:-90}" -repeats "${BISECT_REPEATS:-3}" -max-cells "${BISECT_MAX_CELLS:-200}" \
	-seconds "${BISECT_SECONDS:-5}" -warmup "${BISECT_WARMUP:-1}" -steps "${BISECT_STEPS:-read-only-count}" \
	-threads "${BISECT_THREADS:-8}" -quota "${BISECT_QUOTA:-0.4}" -busy "${BISECT_BUSY:-1}" -busy-in "${BISECT_BUSY_IN:-server}" \
	-resample "${BISECT_RESAMPLE:-400}" -seed "${BISECT_SEED:-1}" "${log_flag[@]}" "$@"
