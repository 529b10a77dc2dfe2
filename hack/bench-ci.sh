#!/usr/bin/env bash
# bench-ci.sh runs make test's stages one at a time, as `make test` does, and
# prints per stage its wall time and the CPU it kept busy (from /proc/stat),
# then the bound those figures put on `make test` on this machine.
#
# The bound: the suites that measure (test-agent's, and test-e2e's after its
# setup) must have the CPU to themselves (docs/testing.md, "What overlaps on
# a cold machine"), and every other stage needs its CPU time, so make test
# takes at least the measuring suites' wall time plus the other stages' busy
# CPU time spread over every core. A second figure leaves even that rule out:
# all the CPU time the run used, spread over every core.
#
#   hack/bench-ci.sh                 # with this user's caches (warm)
#   COLD=1 hack/bench-ci.sh          # an empty HOME and podman store: empty Go
#                                    # caches, ~/.cache/dbbench and images
#   STAGES="vet lint" hack/bench-ci.sh
#
# Run it on a fresh clone, as CI does, with the local cluster down
# (hack/cluster/down.sh): a cold run starts a cluster of its own on the same
# addresses. COLD keeps the Debian packages, which a freshly provisioned
# machine also installs (about 1–2 min). The output of every stage goes to
# LOG; the table goes to the terminal and to LOG.
source "$(dirname "$0")/lib.sh"
cd "${DBBENCH_ROOT}"

LOG="${LOG:-${TMPDIR:-/tmp}/dbbench-bench-ci.log}"
STAGES="${STAGES:-$(awk -F: '/^test:/ { sub(/##.*/, "", $2); print $2; exit }' Makefile)}"
# A stage that measures, and the line of its output from which it measures
# (what comes before it waits for, or sets up, what it measures with).
declare -A MEASURES_FROM=(
	[test-agent]='go test ./pkg/agent'
	[test-e2e]='running the end-to-end suite'
)
CPUS=$(nproc)

if ip link show cni0 >/dev/null 2>&1; then
	log "a local cluster is up (bridge cni0): stop it first (hack/cluster/down.sh)"
	exit 1
fi

cold_dir=
cleanup() {
	hack/prefetch.sh --stop >/dev/null 2>&1 || true
	hack/cluster/down.sh >/dev/null 2>&1 || true
	if [ -n "${cold_dir}" ]; then
		# Go's module cache is read-only.
		chmod -R u+w "${cold_dir}" 2>/dev/null || true
		rm -rf "${cold_dir}"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -n "${COLD:-}" ]; then
	# A short path: the local cluster's sockets live under HOME, and a unix
	# socket's path may not exceed 104 bytes.
	cold_dir=$(mktemp -d /tmp/dbc.XXXXXX)
	mkdir -p "${cold_dir}/h" "${cold_dir}/containers"
	cat >"${cold_dir}/storage.conf" <<-EOF
		[storage]
		driver = "overlay"
		graphroot = "${cold_dir}/containers/storage"
		runroot = "${cold_dir}/containers/run"
	EOF
	export HOME="${cold_dir}/h" CONTAINERS_STORAGE_CONF="${cold_dir}/storage.conf"
	unset DBBENCH_CACHE GOCACHE GOMODCACHE GOPATH XDG_CACHE_HOME
fi

# busy_jiffies prints the time every CPU has been busy since boot, in clock
# ticks.
busy_jiffies() {
	local _ user nice system idle iowait irq softirq steal
	read -r _ user nice system idle iowait irq softirq steal _ </proc/stat
	echo "$((user + nice + system + irq + softirq + steal))"
}

HZ=$(getconf CLK_TCK)
# minutes SECONDS: "12.3 min".
minutes() { printf '%d.%d min' "$(($1 / 60))" "$((($1 % 60) * 10 / 60))"; }
rows=()
measured_wall=0 other_busy=0 all_busy=0 all_wall=0 failed=

# row NAME FROM_SECONDS FROM_BUSY TO_SECONDS TO_BUSY MEASURES
row() {
	local name=$1 t0=$2 b0=$3 t1=$4 b1=$5 measures=$6
	local wall=$((t1 - t0)) busy=$(((b1 - b0) / HZ))
	local pct=$((wall > 0 ? 100 * busy / (wall * CPUS) : 0))
	rows+=("$(printf '%-28s %7d %9d %6d %%  %s' "${name}" "${wall}" "${busy}" "${pct}" "${measures}")")
	all_wall=$((all_wall + wall)) all_busy=$((all_busy + busy))
	if [ "${measures}" = yes ]; then
		measured_wall=$((measured_wall + wall))
	else
		other_busy=$((other_busy + busy))
	fi
}

log "make test's stages one at a time${COLD:+, cold (HOME=${HOME})}; the output in ${LOG}"
: >"${LOG}"
for stage in ${STAGES}; do
	marker=${MEASURES_FROM[${stage}]:-}
	mark_file=$(mktemp)
	start=$(date +%s) start_busy=$(busy_jiffies)
	log "${stage}"
	rc=0
	# Each line of the stage's output passes through here; the first that
	# matches the marker records when the measuring part began.
	make --no-print-directory "${stage}" 2>&1 | while IFS= read -r line; do
		printf '%s\n' "${line}" >>"${LOG}"
		if [ -n "${marker}" ] && [ ! -s "${mark_file}" ] && [[ ${line} == *"${marker}"* ]]; then
			echo "$(date +%s) $(busy_jiffies)" >"${mark_file}"
		fi
	done || rc=$?
	end=$(date +%s) end_busy=$(busy_jiffies)
	if [ -s "${mark_file}" ]; then
		read -r mark mark_busy <"${mark_file}"
		row "${stage} (before)" "${start}" "${start_busy}" "${mark}" "${mark_busy}" no
		row "${stage} (measuring)" "${mark}" "${mark_busy}" "${end}" "${end_busy}" yes
	else
		row "${stage}" "${start}" "${start_busy}" "${end}" "${end_busy}" no
	fi
	rm -f "${mark_file}"
	if [ "${rc}" != 0 ]; then
		failed=${stage}
		log "${stage} failed (exit ${rc}); the figures stop here (output: ${LOG})"
		break
	fi
done

{
	printf '\n%-28s %7s %9s %8s  %s\n' stage "wall s" "busy cpu-s" "busy" measures
	printf '%s\n' "${rows[@]}"
	printf '%-28s %7d %9d\n' total "${all_wall}" "${all_busy}"
	echo
	echo "${CPUS} CPUs. busy cpu-s: CPU time in use on all CPUs over the stage, the background prefetch's included."
	echo "The measuring suites' wall time: ${measured_wall} s."
	echo "The other stages' busy CPU time: ${other_busy} cpu-s, $((other_busy / CPUS)) s on ${CPUS} CPUs."
	bound=$((measured_wall + other_busy / CPUS))
	echo "Bound with the measuring suites alone: ${bound} s ($(minutes "${bound}")); this run: ${all_wall} s ($(minutes "${all_wall}"))."
	echo "Bound with every stage sharing the CPU: $((all_busy / CPUS)) s ($(minutes $((all_busy / CPUS)))), all the CPU time on ${CPUS} CPUs."
	[ -z "${failed}" ] || echo "Incomplete: ${failed} failed."
} | tee -a "${LOG}"
[ -z "${failed}" ]
