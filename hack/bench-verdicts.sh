#!/usr/bin/env bash
# bench-verdicts.sh is `make bench-verdicts`: the regression verdicts on a real
# local MariaDB (test/bench/verdicts; docs/benchmarks.md, docs/noise.md).
# It needs root (a CPU cgroup for the server under /sys/fs/cgroup) and
# installs MariaDB and sysbench from Debian on first use (hack/dbservers.sh).
#
# Size (environment; defaults ≈ 25 min on 2 cores):
#   VERDICTS_ROUNDS=20        rounds of A, S90, S95, A2 (= A/A and slowdown verdicts)
#   VERDICTS_SECONDS=5        measured seconds per step (+ VERDICTS_WARMUP=1)
#   VERDICTS_STEPS=read-only-count,read-only-sum
#   VERDICTS_THREADS=8        client threads (keep the server at its quota)
#   VERDICTS_QUOTA=0.4        the server's base CPU quota, in CPUs
#   VERDICTS_SCALES=90,95     the slowed cells' quota, percent of the base
#   VERDICTS_TARGET=5         precision target, ± percent (Fieller 95 % half-width)
source "$(dirname "$0")/lib.sh"
cd "${DBBENCH_ROOT}"

if [ "$(id -u)" != 0 ]; then
	echo "bench-verdicts needs root for a CPU cgroup of the server (the CFS quota of a pod's CPU limit)" >&2
	exit 1
fi
command -v sysbench >/dev/null || hack/test-deps.sh >&2
exec go run ./test/bench/verdicts \
	-rounds "${VERDICTS_ROUNDS:-20}" -seconds "${VERDICTS_SECONDS:-5}" -warmup "${VERDICTS_WARMUP:-1}" \
	-steps "${VERDICTS_STEPS:-read-only-count,read-only-sum}" -threads "${VERDICTS_THREADS:-8}" \
	-quota "${VERDICTS_QUOTA:-0.4}" -scales "${VERDICTS_SCALES:-90,95}" -target "${VERDICTS_TARGET:-5}" "$@"
