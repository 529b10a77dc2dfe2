#!/usr/bin/env bash
# test-stress.sh runs the envtest suites (the packages of make test-envtest)
# COUNT times in one go while BUSY shell loops keep CPUs busy beside them, so
# that a test which passes only when the controller happens to be fast fails
# here instead of once in a while in CI. It is not part of make test.
#
#   hack/test-stress.sh                    # -count=10, two busy loops
#   COUNT=3 RUN=TestMatrix hack/test-stress.sh
#   BUSY=0 hack/test-stress.sh             # repetition without the load
#
# The output goes to the terminal and to LOG; the summary at the end counts
# the failures per test.
source "$(dirname "$0")/lib.sh"
cd "${DBBENCH_ROOT}"

COUNT="${COUNT:-10}"
BUSY="${BUSY:-2}"
RUN="${RUN:-}"
PKGS="${PKGS:-./controllers/... ./internal/...}"
LOG="${LOG:-${TMPDIR:-/tmp}/dbbench-test-stress.log}"
# One pass of the suites takes under a minute on an idle 2-core machine;
# allow three per repetition for the load (and whatever else runs).
TIMEOUT="${TIMEOUT:-$((COUNT * 3 + 10))m}"

assets="$(hack/envtest-assets.sh)"

busy_pids=()
stop_busy() {
	# Only the loops this script started, by their ids.
	for pid in "${busy_pids[@]}"; do
		kill "${pid}" 2>/dev/null || true
	done
	wait "${busy_pids[@]}" 2>/dev/null || true
}
trap stop_busy EXIT
trap 'exit 130' INT TERM

# Build the tests before the load starts: the load is for the tests, not
# for the compiler.
go test -count=1 -run '^$' ${PKGS} >/dev/null

for _ in $(seq 1 "${BUSY}"); do
	( while :; do :; done ) &
	busy_pids+=("$!")
done
log "running ${PKGS} with -count=${COUNT} beside ${BUSY} busy loops (pids ${busy_pids[*]:-none}); log in ${LOG}"

args=(-count="${COUNT}" -timeout "${TIMEOUT}")
[ -n "${RUN}" ] && args+=(-run "${RUN}")
start=$(date +%s)
rc=0
# shellcheck disable=SC2086 # PKGS is a list of package patterns
KUBEBUILDER_ASSETS="${assets}" go test "${args[@]}" ${PKGS} 2>&1 | tee "${LOG}" || rc=$?

log "finished in $(($(date +%s) - start)) s with exit code ${rc}"
if grep -q -- '--- FAIL' "${LOG}"; then
	log "failures per test (of ${COUNT} repetitions):"
	grep -o -- '--- FAIL: [^ ]*' "${LOG}" | sort | uniq -c | sort -rn >&2
fi
exit "${rc}"
