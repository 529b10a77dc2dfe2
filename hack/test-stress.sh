#!/usr/bin/env bash
# test-stress.sh runs, while BUSY shell loops keep CPUs busy beside them,
# the envtest suites (the packages of make test-envtest) COUNT times in one
# go, then the end-to-end core tier (make test-e2e) E2E_COUNT times in a
# row, so that a test which passes only when the controller or the cluster
# happens to be fast fails here instead of once in a while in CI. It is not
# part of make test.
#
#   hack/test-stress.sh                    # -count=10, then the e2e core tier 3 times, two busy loops
#   COUNT=3 RUN=TestMatrix E2E_COUNT=0 hack/test-stress.sh
#   COUNT=0 E2E_COUNT=3 hack/test-stress.sh   # the e2e core tier alone
#   BUSY=0 hack/test-stress.sh             # repetition without the load
#
# The output goes to the terminal and to LOG (the e2e rounds' to
# LOG.e2e-N); the summary at the end counts the failures per test.
source "$(dirname "$0")/lib.sh"
cd "${DBBENCH_ROOT}"

COUNT="${COUNT:-10}"
E2E_COUNT="${E2E_COUNT:-3}"
BUSY="${BUSY:-2}"
RUN="${RUN:-}"
PKGS="${PKGS:-./internal/...}"
LOG="${LOG:-${TMPDIR:-/tmp}/dbbench-test-stress.log}"
# One pass of the suites takes under a minute on an idle 2-core machine;
# allow three per repetition for the load (and whatever else runs).
TIMEOUT="${TIMEOUT:-$((COUNT * 3 + 10))m}"

assets="$(hack/envtest-assets.sh)"
if [ "${E2E_COUNT}" -gt 0 ]; then
	# The cluster, its images and the operator, before the load: the load
	# is for the tests, not for the builds (a first round builds nothing).
	DBBENCH_TEST_TIER=core E2E_RUN='^$' hack/test-e2e.sh >/dev/null
fi

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
go test -tags e2e -count=1 -run '^$' ./test/e2e/ >/dev/null 2>&1 || true

for _ in $(seq 1 "${BUSY}"); do
	( while :; do :; done ) &
	busy_pids+=("$!")
done
start=$(date +%s)
rc=0
: >"${LOG}"
if [ "${COUNT}" -gt 0 ]; then
	log "running ${PKGS} with -count=${COUNT} beside ${BUSY} busy loops (pids ${busy_pids[*]:-none}); log in ${LOG}"
	args=(-count="${COUNT}" -timeout "${TIMEOUT}")
	[ -n "${RUN}" ] && args+=(-run "${RUN}")
	# shellcheck disable=SC2086 # PKGS is a list of package patterns
	KUBEBUILDER_ASSETS="${assets}" go test "${args[@]}" ${PKGS} 2>&1 | tee "${LOG}" || rc=$?
	log "the envtest suites finished in $(($(date +%s) - start)) s with exit code ${rc}"
fi
for round in $(seq 1 "${E2E_COUNT}"); do
	e2e_start=$(date +%s)
	log "the end-to-end core tier, round ${round} of ${E2E_COUNT}, beside ${BUSY} busy loops; log in ${LOG}.e2e-${round}"
	e2e_rc=0
	DBBENCH_TEST_TIER=core hack/test-e2e.sh >"${LOG}.e2e-${round}" 2>&1 || e2e_rc=$?
	grep -E -- '^(--- |    --- )(PASS|FAIL)' "${LOG}.e2e-${round}" >>"${LOG}" || true
	log "round ${round}: $(grep -c -- '--- PASS' "${LOG}.e2e-${round}") passed, $(grep -c -- '--- FAIL' "${LOG}.e2e-${round}") failed, exit code ${e2e_rc}, $(($(date +%s) - e2e_start)) s"
	[ "${e2e_rc}" -eq 0 ] || rc=${e2e_rc}
done

log "finished in $(($(date +%s) - start)) s with exit code ${rc}"
if grep -q -- '--- FAIL' "${LOG}"; then
	log "failures per test (of ${COUNT} envtest repetitions and ${E2E_COUNT} e2e rounds):"
	grep -o -- '--- FAIL: [^ ]*' "${LOG}" | sort | uniq -c | sort -rn >&2
fi
exit "${rc}"
