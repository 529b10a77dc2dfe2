#!/usr/bin/env bash
# prefetch.sh prepares, ahead of the stages that need them, what make test
# would otherwise wait for on the network and the disk rather than the CPU:
# the database servers' Debian packages, the MySQL sid root, the Debian
# base images (debootstrap, 70 s to 4 min each on a cold machine) and the
# end-to-end suite's database and CloudNativePG images. `make
# test` starts it first, in the background at the lowest CPU priority, so
# that on a cold machine it overlaps the compile-bound stages (lint, unit,
# envtest); on a warm one it finds everything cached and ends in seconds.
# It is an optimisation only: a failure is logged, and the stage that needs
# the thing builds it itself as before (both scripts take a lock, so a
# stage that asks while the prefetch builds waits for it, then reuses it).
#
#   hack/prefetch.sh               # in the foreground
#   hack/prefetch.sh --background  # detached; the log is ${DBBENCH_CACHE}/prefetch.log
#   hack/prefetch.sh --stop        # end a background prefetch (CI's exit trap)
#   hack/prefetch.sh --wait        # until a background prefetch has ended (test-agent's first step)
#
# test-agent waits for it: its real servers measure latencies, which the
# prefetch's dpkg runs and compiles would disturb. On a cold machine the
# prefetch ends minutes before test-agent would start; the wait is a guard
# for a slower machine or mirror, not a step that usually waits.
source "$(dirname "$0")/lib.sh"

PIDFILE="${DBBENCH_CACHE}/prefetch.pid"
LOGFILE="${DBBENCH_CACHE}/prefetch.log"

case "${1:-}" in
--background)
	setsid nohup nice -n 19 "$0" >"${LOGFILE}" 2>&1 </dev/null &
	echo $! >"${PIDFILE}"
	log "prefetching in the background (pid $!, log ${LOGFILE})"
	exit 0
	;;
--wait)
	if pid=$(cat "${PIDFILE}" 2>/dev/null) && kill -0 "${pid}" 2>/dev/null; then
		log "waiting for the background prefetch (pid ${pid}, log ${LOGFILE}) to end before measuring"
		t=${SECONDS}
		while kill -0 "${pid}" 2>/dev/null; do sleep 2; done
		log "the prefetch ended after $((SECONDS - t)) s of waiting"
	fi
	exit 0
	;;
--stop)
	if pid=$(cat "${PIDFILE}" 2>/dev/null) && kill -0 "${pid}" 2>/dev/null; then
		kill -- "-${pid}" 2>/dev/null || true
	fi
	rm -f "${PIDFILE}"
	exit 0
	;;
esac

# prefetch_step DESCRIPTION COMMAND...: runs the command, logs how it went.
prefetch_step() {
	local what=$1 t=${SECONDS}
	shift
	if "$@"; then
		log "prefetch: ${what} done in $((SECONDS - t)) s"
	else
		log "prefetch: ${what} failed after $((SECONDS - t)) s; the stage that needs it will build it"
	fi
}

start=${SECONDS}
prefetch_step "database packages and the MySQL root" "${DBBENCH_ROOT}/hack/dbservers.sh" prepare all
prefetch_step "Debian base images" "${DBBENCH_ROOT}/hack/images.sh" base-bookworm base-trixie
# The end-to-end suite's database images (dpkg in podman, on those bases).
prefetch_step "the end-to-end database images" "${DBBENCH_ROOT}/hack/images.sh" mariadb-10.11 mariadb-11.8 postgres-17
# The end-to-end suite's operator (hack/operators.sh cnpg): the PostgreSQL
# operand images (dpkg in podman, on the bases just built), then the
# operator's compile (about 1.5 min of CPU cold, at nice 19 beside the
# foreground's compiles) and its image. All of it ends minutes before
# test-agent, the first stage that measures, starts on a cold machine.
prefetch_step "CloudNativePG's operand images" "${DBBENCH_ROOT}/hack/images.sh" cnpg-postgresql-15 cnpg-postgresql-17
prefetch_step "CloudNativePG's operator" bash -c '"$1" cnpg --build >/dev/null && "$2" cnpg-operator' _ \
	"${DBBENCH_ROOT}/hack/operators.sh" "${DBBENCH_ROOT}/hack/images.sh"
log "prefetch: done in $((SECONDS - start)) s"
