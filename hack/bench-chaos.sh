#!/usr/bin/env bash
# bench-chaos.sh is `make bench-chaos`: the long version of TestManagerChaos
# (test/e2e/chaos_test.go) through hack/test-e2e.sh, on the local cluster
# (CLUSTER=local, started if needed) or CLUSTER=existing. It kills the
# manager CHAOS_KILLS times at seeded random moments while waves of
# CHAOS_RUNS two-cell runs with output.s3 are in progress, and ends with one
# line: kills, runs, cells, lost, duplicated, orphans (docs/benchmarks.md).
#
#   CHAOS_KILLS=20   manager pods deleted (grace period 0)
#   CHAOS_RUNS=3     runs started at once, and again when they all finished
#   CHAOS_SEED=N     replays the schedule of an earlier run (it is logged)
source "$(dirname "$0")/lib.sh"
cd "${DBBENCH_ROOT}"

export CHAOS_KILLS="${CHAOS_KILLS:-20}" CHAOS_RUNS="${CHAOS_RUNS:-3}"
out="${DBBENCH_CACHE}/e2e/bench-chaos.log"
mkdir -p "$(dirname "${out}")"
log "bench-chaos: ${CHAOS_KILLS} kills, ${CHAOS_RUNS} runs per wave; full output in ${out}"
set +e
E2E_RUN='^TestManagerChaos$' hack/test-e2e.sh >"${out}" 2>&1
rc=$?
set -e
# The test prints the summary alone on a line of its standard output.
summary="$(grep -m1 '^CHAOS SUMMARY:' "${out}" || true)"
if [ -z "${summary}" ]; then
	tail -50 "${out}" >&2
	log "bench-chaos: no summary line (exit ${rc}); see ${out}"
	exit $((rc == 0 ? 1 : rc))
fi
echo "${summary}"
exit "${rc}"
