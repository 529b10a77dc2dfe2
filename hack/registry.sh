#!/usr/bin/env bash
# registry.sh starts and stops a real container registry (Debian's
# docker-registry package: the CNCF distribution registry, v2 API) for the
# push test and for running the local cluster from pushed images.
#
#   hack/registry.sh start DIR ADDR   # serves DIR/data on ADDR (host:port), plain HTTP
#   hack/registry.sh stop  DIR        # stops the registry started in DIR
#
# ADDR must be on loopback (127.0.0.1:PORT) or the local cluster's bridge
# (10.88.0.1:PORT): the registry has no TLS and no authentication, so it must
# not be reachable from other machines. The local cluster's containerd pulls
# from the host's network namespace, so loopback is enough for it
# (hack/cluster/up.sh with DBBENCH_CLUSTER_REGISTRY=ADDR). The pid, config
# and log are DIR/registry.pid, DIR/config.yml and DIR/registry.log; stop
# leaves DIR/data, so a restarted registry serves the same images.
source "$(dirname "$0")/lib.sh"

usage() {
	echo "usage: $0 start DIR ADDR | stop DIR" >&2
	exit 64
}

running() {
	local pid
	pid="$(cat "$1/registry.pid" 2>/dev/null)" || return 1
	[ -n "${pid}" ] && grep -qa docker-registry "/proc/${pid}/cmdline" 2>/dev/null
}

v2_answers() { curl -fsS -o /dev/null "http://$1/v2/"; }

start() {
	local dir=$1 addr=$2
	case "${addr}" in
	127.0.0.1:[0-9]* | 10.88.0.1:[0-9]*) ;;
	*) log "ADDR must be 127.0.0.1:PORT or 10.88.0.1:PORT (plain HTTP, no authentication), not ${addr}"; exit 64 ;;
	esac
	apt_install docker-registry curl
	mkdir -p "${dir}/data"
	dir="$(cd "${dir}" && pwd)"
	if running "${dir}"; then
		log "registry already running in ${dir} (pid $(cat "${dir}/registry.pid"))"
		return 0
	fi
	if (exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}") 2>/dev/null; then
		log "${addr} is already in use"
		return 1
	fi
	# The package's own config asks for htpasswd authentication and
	# listens on every address; this one does neither.
	cat >"${dir}/config.yml" <<EOC
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: ${dir}/data
  delete:
    enabled: true
http:
  addr: ${addr}
EOC
	nohup /usr/bin/docker-registry serve "${dir}/config.yml" >>"${dir}/registry.log" 2>&1 </dev/null &
	local pid=$! deadline=$((SECONDS + 20))
	echo "${pid}" >"${dir}/registry.pid"
	until v2_answers "${addr}" 2>/dev/null; do
		if ! kill -0 "${pid}" 2>/dev/null || [ "${SECONDS}" -ge "${deadline}" ]; then
			log "the registry did not answer on http://${addr}/v2/; last lines of ${dir}/registry.log:"
			tail -n 20 "${dir}/registry.log" >&2 || true
			stop "${dir}"
			return 1
		fi
		sleep 0.2
	done
	log "registry serving ${dir}/data on http://${addr} (pid ${pid})"
}

stop() {
	local dir=$1 pid
	if ! running "${dir}"; then
		rm -f "${dir}/registry.pid"
		return 0
	fi
	pid="$(cat "${dir}/registry.pid")"
	kill -TERM "${pid}" 2>/dev/null || true
	for _ in $(seq 100); do
		running "${dir}" || break
		sleep 0.1
	done
	running "${dir}" && kill -KILL "${pid}" 2>/dev/null
	rm -f "${dir}/registry.pid"
	log "registry in ${dir} stopped"
}

case "${1:-}" in
start) [ $# -eq 3 ] || usage; start "$2" "$3" ;;
stop) [ $# -eq 2 ] || usage; stop "$2" ;;
*) usage ;;
esac
