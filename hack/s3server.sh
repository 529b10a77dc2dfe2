#!/usr/bin/env bash
# s3server.sh starts and stops a real S3-compatible server (versitygw, the
# version pinned in hack/tools.sh, Apache-2.0) for pkg/store's tests and for
# local runs, on loopback only.
#
#   hack/s3server.sh install            # builds it once into the cache, prints its path
#   hack/s3server.sh start DIR PORT     # serves DIR/data on 127.0.0.1:PORT (S3_HOST=10.88.0.1: on the cluster bridge)
#   hack/s3server.sh stop  DIR          # stops the server started in DIR (PORT is ignored)
#   hack/s3server.sh env   DIR PORT     # prints the connection as shell variables
#
# The binary is built from the Go module proxy by hack/tools.sh into
# ${XDG_CACHE_HOME:-$HOME/.cache}/dbbench/tools/versitygw-<version> once
# per machine, then reused (its cold build is in docs/testing.md, "Time"). Buckets are directories of
# DIR/data (the posix backend); the server's pid and log are DIR/versitygw.pid
# and DIR/versitygw.log. stop leaves the data, so a server stopped and
# started again on the same DIR serves the same objects (the outage test
# relies on that); delete DIR to drop them.
#
# Credentials: S3_ACCESS_KEY (default dbbench) and S3_SECRET_KEY (default
# dbbench-secret). The server listens on 127.0.0.1 (or S3_HOST), plain HTTP.
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "${HACK_DIR}/lib.sh"

ACCESS_KEY="${S3_ACCESS_KEY:-dbbench}"
SECRET_KEY="${S3_SECRET_KEY:-dbbench-secret}"

usage() {
	echo "usage: $0 install | start DIR PORT | stop DIR [PORT] | env DIR PORT" >&2
	exit 2
}

# running DIR: succeeds when DIR's pid file names a live versitygw.
running() {
	local pid
	pid="$(cat "$1/versitygw.pid" 2>/dev/null)" || return 1
	[ -n "${pid}" ] && grep -qa versitygw "/proc/${pid}/cmdline" 2>/dev/null
}

# S3_HOST is the address to listen on: loopback unless a caller needs the
# server reachable from the local cluster's pods (its bridge address,
# 10.88.0.1, which hack/cluster/up.sh creates and firewalls).
S3_HOST="${S3_HOST:-127.0.0.1}"
case "${S3_HOST}" in
127.0.0.1 | 10.88.0.1) ;;
*) echo "S3_HOST must be 127.0.0.1 or the local cluster's bridge address 10.88.0.1" >&2; exit 64 ;;
esac

port_open() { (exec 3<>"/dev/tcp/${S3_HOST}/$1") 2>/dev/null; }

start() {
	local dir=$1 port=$2 bin
	[[ "${port}" =~ ^[0-9]+$ ]] || usage
	bin="$("${HACK_DIR}/tools.sh" versitygw)"
	mkdir -p "${dir}/data"
	dir="$(cd "${dir}" && pwd)"
	if running "${dir}"; then
		log "versitygw already running in ${dir} (pid $(cat "${dir}/versitygw.pid"))"
		return 0
	fi
	if port_open "${port}"; then
		log "${S3_HOST}:${port} is already in use"
		return 1
	fi
	# Global flags before the backend name; the backend's argument is its root.
	nohup "${bin}" --access "${ACCESS_KEY}" --secret "${SECRET_KEY}" --port "${S3_HOST}:${port}" \
		posix "${dir}/data" >>"${dir}/versitygw.log" 2>&1 </dev/null &
	echo $! >"${dir}/versitygw.pid"
	local deadline=$((SECONDS + 20))
	local pid
	pid="$(cat "${dir}/versitygw.pid")"
	until port_open "${port}"; do
		# kill -0, not running(): the child may not have exec'd yet.
		if ! kill -0 "${pid}" 2>/dev/null; then
			log "versitygw exited; last lines of ${dir}/versitygw.log:"
			tail -n 20 "${dir}/versitygw.log" >&2 || true
			rm -f "${dir}/versitygw.pid"
			return 1
		fi
		if [ "${SECONDS}" -ge "${deadline}" ]; then
			log "versitygw did not listen on ${S3_HOST}:${port} within 20 s"
			stop "${dir}"
			return 1
		fi
		sleep 0.1
	done
	log "versitygw serving ${dir}/data on http://${S3_HOST}:${port} (pid $(cat "${dir}/versitygw.pid"))"
}

stop() {
	local dir=$1 pid
	if ! running "${dir}"; then
		rm -f "${dir}/versitygw.pid"
		return 0
	fi
	pid="$(cat "${dir}/versitygw.pid")"
	kill -TERM "${pid}" 2>/dev/null || true
	for _ in $(seq 100); do
		grep -qa versitygw "/proc/${pid}/cmdline" 2>/dev/null || break
		sleep 0.1
	done
	if grep -qa versitygw "/proc/${pid}/cmdline" 2>/dev/null; then
		log "versitygw (pid ${pid}) ignored SIGTERM for 10 s; killing it"
		kill -KILL "${pid}" 2>/dev/null || true
	fi
	rm -f "${dir}/versitygw.pid"
	log "versitygw in ${dir} stopped"
}

case "${1:-}" in
install) "${HACK_DIR}/tools.sh" versitygw ;;
start) [ $# -eq 3 ] || usage; start "$2" "$3" ;;
stop) [ $# -ge 2 ] || usage; stop "$2" ;;
env)
	[ $# -eq 3 ] || usage
	printf 'S3_ENDPOINT=http://%s:%s\nS3_ACCESS_KEY=%s\nS3_SECRET_KEY=%s\n' "${S3_HOST}" "$3" "${ACCESS_KEY}" "${SECRET_KEY}"
	;;
*) usage ;;
esac
