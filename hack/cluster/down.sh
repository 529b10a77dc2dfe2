#!/usr/bin/env bash
# down.sh stops the local cluster started by hack/cluster/up.sh and leaves no
# processes, mounts, interfaces or iptables chains behind. Succeeds when
# nothing is running.
#
#   hack/cluster/down.sh           # keep certs, etcd data and loaded images
#   hack/cluster/down.sh --purge   # also remove the state directory
#
# Order: control plane and node agents by pidfile; then every container
# (killed through containerd, whose shims then exit), containerd itself;
# then mounts under the state directory, the bridge and leftover veths,
# kube-proxy's and our iptables chains, the sysctls up.sh changed, and the
# kubelet's cgroups. Worker nodes (NODES>1) are found by their state
# directories and stopped the same way, and their network namespaces,
# veths, routes and cgroup roots removed.
source "$(dirname "$0")/../lib.sh"
source "${DBBENCH_ROOT}/hack/cluster/env.sh"

purge=""
[ "${1:-}" = --purge ] && purge=1

if [ "$(id -u)" != 0 ]; then
	log "down.sh must run as root"
	exit 1
fi

# stop NAME: TERM the process in NAME's pidfile, KILL it after 10 s.
stop() {
	local name=$1 file="${CLUSTER_RUN}/$1.pid" pid
	pid=$(cat "${file}" 2>/dev/null) || return 0
	if [ -n "${pid}" ] && kill -0 "${pid}" 2>/dev/null; then
		log "stopping ${name} (pid ${pid})"
		kill -TERM "${pid}" 2>/dev/null || true
		for _ in $(seq 1 100); do
			kill -0 "${pid}" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "${pid}" 2>/dev/null; then
			log "${name} ignored SIGTERM; killing it"
			kill -KILL "${pid}" 2>/dev/null || true
			sleep 0.2
		fi
	fi
	rm -f "${file}"
}

mapfile -t workers < <(cluster_workers)

# Node agents first, so nothing restarts containers while they are removed.
for w in "${workers[@]}"; do
	stop "${w}/kube-proxy"
	stop "${w}/kubelet"
done
for c in coredns kube-proxy kubelet kube-scheduler kube-controller-manager kube-apiserver etcd; do
	stop "${c}"
done

# drain SOCKET WHERE: kill every task and remove every container in the k8s.io
# namespace of the containerd at SOCKET (the CRI plugin keeps sandboxes
# there), so the shims exit.
drain() {
	local sock=$1 where=$2 tasks t c
	containerd_up_at "${sock}" || return 0
	ctr_at() { ctr --address "${sock}" --namespace k8s.io "$@"; }
	tasks=$(ctr_at tasks ls -q 2>/dev/null || true)
	if [ -n "${tasks}" ]; then
		log "killing $(wc -w <<<"${tasks}") containers${where}"
		for t in ${tasks}; do ctr_at tasks kill -a -s SIGKILL "${t}" >/dev/null 2>&1 & done
		wait
		# containerd's CRI plugin reaps and deletes the exited tasks itself;
		# delete whatever it has not after a few seconds.
		for _ in $(seq 1 20); do
			[ -z "$(ctr_at tasks ls -q 2>/dev/null)" ] && break
			sleep 0.5
		done
		for t in $(ctr_at tasks ls -q 2>/dev/null || true); do
			ctr_at tasks delete -f "${t}" >/dev/null 2>&1 || true
		done
	fi
	for c in $(ctr_at containers ls -q 2>/dev/null || true); do
		ctr_at containers delete "${c}" >/dev/null 2>&1 || true
	done
}

drain "${CONTAINERD_SOCK}" ""
stop containerd
kill_shims "${CONTAINERD_SOCK}"
for w in "${workers[@]}"; do
	drain "$(worker_sock "${w}")" " on ${w}"
	stop "${w}/containerd"
	kill_shims "$(worker_sock "${w}")"
done

# Mounts under the state directory (rootfs overlays, netns, projected
# volumes, tmpfs secrets), deepest first.
if [ -d "${CLUSTER_DIR}" ]; then
	mapfile -t mounts < <(awk -v d="${CLUSTER_DIR}/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
	if [ ${#mounts[@]} -gt 0 ]; then
		log "unmounting ${#mounts[@]} mounts under ${CLUSTER_DIR}"
		for m in "${mounts[@]}"; do
			umount "${m}" 2>/dev/null || umount -l "${m}" 2>/dev/null || log "could not unmount ${m}"
		done
	fi
fi

# Network: veths on the bridge (normally gone with their netns), the bridge.
if ip link show "${CLUSTER_BRIDGE}" >/dev/null 2>&1; then
	for v in $(ip -o link show master "${CLUSTER_BRIDGE}" 2>/dev/null | awk -F': ' '{ print $2 }' | cut -d@ -f1); do
		ip link delete "${v}" 2>/dev/null || true
	done
	log "deleting bridge ${CLUSTER_BRIDGE}"
	ip link delete "${CLUSTER_BRIDGE}"
fi
# Workers: deleting a namespace whose processes are gone deletes its bridge,
# its iptables rules and its end of the veth pair, and with it the host end
# and the host's route to its pods; delete those too in case something still
# holds the namespace.
for w in "${workers[@]}"; do
	if [ -e "/run/netns/${w}" ]; then
		log "deleting network namespace ${w}"
		ip netns delete "${w}" 2>/dev/null || log "could not delete network namespace ${w}"
	fi
	v=$(worker_veth "${w}")
	if ip link show "${v}" >/dev/null 2>&1; then ip link delete "${v}" 2>/dev/null || true; fi
	ip route del "$(worker_pod_cidr "${w}")" 2>/dev/null || true
done
# `ip netns add` made /run/netns a bind mount of itself; if up.sh created it
# and no other namespace is left there, remove both.
if [ -f "${CLUSTER_RUN}/created-run-netns" ] && [ -z "$(ls -A /run/netns 2>/dev/null)" ]; then
	if mountpoint -q /run/netns; then umount /run/netns 2>/dev/null || log "could not unmount /run/netns"; fi
	rmdir /run/netns 2>/dev/null || true
	rm -f "${CLUSTER_RUN}/created-run-netns"
fi

# iptables: kube-proxy's own cleanup, then any KUBE-* / DBBENCH-* chain left
# (the kubelet's canaries, our FORWARD guard).
# (The rules are captured first: `iptables -S | grep -q` can die of SIGPIPE
# under pipefail once grep has its match.)
if [ -x "${K8S_BIN}/kube-proxy" ] && grep -q -- '-N KUBE-' <<<"$(iptables -w -t nat -S 2>/dev/null || true)"; then
	"${K8S_BIN}/kube-proxy" --cleanup >/dev/null 2>&1 || true
fi
for ipt in iptables ip6tables; do
	command -v "${ipt}" >/dev/null || continue
	for table in filter nat mangle; do
		rules=$("${ipt}" -w -t "${table}" -S 2>/dev/null) || continue
		# Jumps into our chains from the built-in chains.
		{ grep -E -- '^-A [A-Z]+ .*-j (KUBE-|DBBENCH-)' <<<"${rules}" || true; } | { grep -vE '^-A (KUBE-|DBBENCH-)' || true; } |
			while read -r rule; do
				eval "${ipt} -w -t ${table} ${rule/-A/-D}" 2>/dev/null || true
			done
		for chain in $(awk '$1 == "-N" && ($2 ~ /^KUBE-/ || $2 ~ /^DBBENCH-/) { print $2 }' <<<"${rules}"); do
			"${ipt}" -w -t "${table}" -F "${chain}" 2>/dev/null || true
		done
		for chain in $(awk '$1 == "-N" && ($2 ~ /^KUBE-/ || $2 ~ /^DBBENCH-/) { print $2 }' <<<"${rules}"); do
			"${ipt}" -w -t "${table}" -X "${chain}" 2>/dev/null || true
		done
	done
done

# Sysctls back to what they were before up.sh.
for f in "${CLUSTER_RUN}"/sysctl.*; do
	[ -f "${f}" ] || continue
	key=${f##*/sysctl.}
	cat "${f}" >"/proc/sys/${key//.//}" 2>/dev/null || true
	rm -f "${f}"
done

# The kubelet's cgroups (cgroupfs driver): kubepods/ in every hierarchy, and
# each worker's cgroup root.
for hier in /sys/fs/cgroup/*/; do
	for cg in kubepods "${workers[@]}"; do
		[ -d "${hier}${cg}" ] || continue
		find "${hier}${cg}" -depth -type d -exec rmdir {} \; 2>/dev/null || true
	done
done

# Directories outside the state directory that the runtime creates.
rm -rf "${CLUSTER_DIR}/cni-ipam"
for w in "${workers[@]}"; do rm -rf "$(worker_dir "${w}")/cni-ipam"; done
rm -f "${CLUSTER_NODES_FILE}"
if [ -f "${CLUSTER_RUN}/created-run-containerd" ]; then
	find /run/containerd -depth -type d -empty -delete 2>/dev/null || true
	rm -f "${CLUSTER_RUN}/created-run-containerd"
fi
if [ -d /var/log/containers ]; then
	find /var/log/containers -type l -lname "${CLUSTER_DIR}/*" -delete 2>/dev/null || true
	if [ -f "${CLUSTER_RUN}/created-var-log-containers" ]; then
		rmdir /var/log/containers 2>/dev/null || true
		rm -f "${CLUSTER_RUN}/created-var-log-containers"
	fi
fi

if [ -n "${purge}" ] && [ -d "${CLUSTER_DIR}" ]; then
	log "removing ${CLUSTER_DIR}"
	rm -rf "${CLUSTER_DIR}"
fi
log "cluster is down"
