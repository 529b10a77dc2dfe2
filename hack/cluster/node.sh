#!/usr/bin/env bash
# node.sh lose|return NAME: a worker node of the local cluster (NODES>1
# hack/cluster/up.sh) lost and brought back, for fault tests
# (test/e2e/nodes_test.go) and for trying what dbbench does about it.
#
#   lose NAME    what a power cut does to a node. Its link goes down first
#                (the API server hears nothing more from it, its pods reach
#                nobody), then its kubelet, kube-proxy and containerd, every
#                container of its pods and every shim are killed at once
#                (SIGKILL, nothing stops gracefully). Kubernetes sees a node
#                that stopped answering; nothing on it runs any more.
#   return NAME  the node boots again: hack/cluster/up.sh (with the running
#                cluster's NODES) brings its link up and starts what is not
#                running. The kubelet finds its pods deleted in the API
#                (Terminating) and removes them.
source "$(dirname "$0")/../lib.sh"
source "${DBBENCH_ROOT}/hack/cluster/env.sh"

usage() { echo "usage: $0 lose|return NAME (a worker: $(cluster_workers | tr '\n' ' '))" >&2; exit 64; }
[ $# -eq 2 ] || usage
action=$1 w=$2
[ -d "$(worker_dir "${w}")" ] && [ "${w}" != "${CLUSTER_NODE_NAME}" ] || usage
[ "$(id -u)" = 0 ] || { log "node.sh must run as root"; exit 1; }

# kill_pidfile NAME: SIGKILL the process in NAME's pidfile.
kill_pidfile() {
	local pid
	pid=$(cat "${CLUSTER_RUN}/$1.pid" 2>/dev/null) || return 0
	[ -z "${pid}" ] || kill -KILL "${pid}" 2>/dev/null || true
}

# cgroup_procs NAME: every process in the worker's cgroup root (its pods'
# containers: the kubelet's cgroupRoot is /NAME).
cgroup_procs() {
	find /sys/fs/cgroup/*/"$1" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u
}

case "${action}" in
lose)
	log "losing node ${w}: link down, then its node agents, runtime and containers killed"
	ip link set "$(worker_veth "${w}")" down
	for c in kubelet kube-proxy containerd; do kill_pidfile "${w}/${c}"; done
	kill_shims "$(worker_sock "${w}")"
	# Twice: a container's process can fork while the first pass runs.
	for _ in 1 2; do
		for pid in $(cgroup_procs "${w}"); do kill -KILL "${pid}" 2>/dev/null || true; done
	done
	n=$(cgroup_procs "${w}" | wc -l)
	[ "${n}" -eq 0 ] || log "${n} processes of ${w}'s pods are still there"
	;;
return)
	log "bringing node ${w} back"
	"${DBBENCH_ROOT}/hack/cluster/up.sh" >/dev/null
	;;
*) usage ;;
esac
