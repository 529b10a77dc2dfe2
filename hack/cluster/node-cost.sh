#!/usr/bin/env bash
# node-cost.sh measures what each node of the running local cluster costs:
# the resident memory (RSS, and PSS, which splits pages shared between the
# nodes' copies of the same binaries) and the CPU time of its containerd,
# kubelet and kube-proxy over a window, read from /proc by the pidfiles
# hack/cluster/up.sh keeps. Run it on an idle cluster to get the idle cost
# docs/local-cluster.md ("Worker nodes") quotes.
#
#   hack/cluster/node-cost.sh [SECONDS]    # the window, default sixty seconds
#
# CPU % is of one core, averaged over the window, and counts the reaped
# children too (kube-proxy's iptables-restore, containerd's CNI plugins).
source "$(dirname "$0")/../lib.sh"
source "${DBBENCH_ROOT}/hack/cluster/env.sh"

WINDOW="${1:-60}"
if ! [[ "${WINDOW}" =~ ^[0-9]+$ ]] || [ "${WINDOW}" -lt 1 ]; then
	log "usage: node-cost.sh [SECONDS] (a whole number of seconds, not '${WINDOW}')"
	exit 64
fi
HZ=$(getconf CLK_TCK)

# rows: "NODE COMPONENT PID"
rows=()
for c in containerd kubelet kube-proxy; do
	rows+=("${CLUSTER_NODE_NAME} ${c} $(cat "${CLUSTER_RUN}/${c}.pid" 2>/dev/null || echo -)")
done
for w in $(cluster_workers); do
	for c in containerd kubelet kube-proxy; do
		[ -f "${CLUSTER_RUN}/${w}/${c}.pid" ] && rows+=("${w} ${c} $(cat "${CLUSTER_RUN}/${w}/${c}.pid")")
	done
done

# ticks PID: utime + stime + cutime + cstime (fields 14-17 of /proc/PID/stat;
# the command name in field 2 has no spaces here).
ticks() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat" 2>/dev/null || echo -1; }
kib() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/$3" 2>/dev/null || echo 0; }

declare -A start=()
for r in "${rows[@]}"; do
	read -r _ _ pid <<<"${r}"
	if [ "${pid}" = - ] || [ ! -d "/proc/${pid}" ]; then
		log "not running: ${r% *}"
		exit 1
	fi
	start[${pid}]=$(ticks "${pid}")
done
sleep "${WINDOW}"

printf '%-16s %-11s %7s %8s %8s %7s\n' node component pid RSS_MiB PSS_MiB CPU_%
declare -A node_rss=() node_pss=() node_cpu=()
for r in "${rows[@]}"; do
	read -r node comp pid <<<"${r}"
	rss=$(kib "${pid}" VmRSS status)
	pss=$(kib "${pid}" Pss smaps_rollup)
	cpu=$(awk -v a="${start[${pid}]}" -v b="$(ticks "${pid}")" -v hz="${HZ}" -v w="${WINDOW}" \
		'BEGIN { printf "%.2f", (b - a) * 100 / hz / w }')
	printf '%-16s %-11s %7s %8.1f %8.1f %7s\n' "${node}" "${comp}" "${pid}" "$(awk -v k="${rss}" 'BEGIN { print k / 1024 }')" \
		"$(awk -v k="${pss}" 'BEGIN { print k / 1024 }')" "${cpu}"
	node_rss[${node}]=$(( ${node_rss[${node}]:-0} + rss ))
	node_pss[${node}]=$(( ${node_pss[${node}]:-0} + pss ))
	node_cpu[${node}]=$(awk -v a="${node_cpu[${node}]:-0}" -v b="${cpu}" 'BEGIN { print a + b }')
done
echo
printf '%-16s %8s %8s %7s   (sum of containerd + kubelet + kube-proxy, %s s window)\n' node RSS_MiB PSS_MiB CPU_% "${WINDOW}"
for node in $(printf '%s\n' "${!node_rss[@]}" | sort); do
	printf '%-16s %8.1f %8.1f %7.2f\n' "${node}" "$(awk -v k="${node_rss[${node}]}" 'BEGIN { print k / 1024 }')" \
		"$(awk -v k="${node_pss[${node}]}" 'BEGIN { print k / 1024 }')" "${node_cpu[${node}]}"
done
