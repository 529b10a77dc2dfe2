#!/usr/bin/env bash
# dbservers.sh starts and stops real database servers for the agent's tests:
# MariaDB (Debian bookworm: 10.11) and PostgreSQL (15), each in a temporary
# data directory, listening on 127.0.0.1 only, on a non-default port.
#
#   hack/dbservers.sh start mariadb|postgres|all
#   hack/dbservers.sh stop  mariadb|postgres|all
#   hack/dbservers.sh env   mariadb|postgres      # prints the connection as shell variables
#
# Every server gets the same account: user dbbench, password dbbench-pw,
# database sbtest. Ports: MariaDB 33306, PostgreSQL 35432 (override with
# DBBENCH_MARIADB_PORT / DBBENCH_POSTGRES_PORT). Data lives under
# ${DBBENCH_DB_ROOT:-/tmp/dbbench-dbservers}/<engine> and is removed on stop.
#
# The servers are sized for tests (small buffer pools), not for benchmarks.
# MySQL 9.7 (Debian sid in a separate root) is not built here yet; see
# docs/agent.md.
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "${HACK_DIR}/lib.sh"

ROOT="${DBBENCH_DB_ROOT:-/tmp/dbbench-dbservers}"
MARIADB_PORT="${DBBENCH_MARIADB_PORT:-33306}"
POSTGRES_PORT="${DBBENCH_POSTGRES_PORT:-35432}"
DB_USER=dbbench
DB_PASSWORD=dbbench-pw
DB_NAME=sbtest

need_packages() {
	local pkgs=(sysbench)
	case "$1" in
	mariadb) pkgs+=(mariadb-server mariadb-client) ;;
	postgres) pkgs+=(postgresql) ;;
	esac
	apt_install "${pkgs[@]}"
}

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
	local deadline=$((SECONDS + $1)) what=$2
	shift 2
	until "$@" >/dev/null 2>&1; do
		if [ "${SECONDS}" -ge "${deadline}" ]; then
			log "timed out waiting for ${what}"
			return 1
		fi
		sleep 0.3
	done
}

# ---------------------------------------------------------------- MariaDB

mariadb_start() {
	local dir="${ROOT}/mariadb"
	if [ -f "${dir}/mysqld.pid" ] && kill -0 "$(cat "${dir}/mysqld.pid")" 2>/dev/null; then
		log "mariadb already running (pid $(cat "${dir}/mysqld.pid"))"
		return 0
	fi
	need_packages mariadb
	rm -rf "${dir}"
	mkdir -p "${dir}/data" "${dir}/tmp"
	cat >"${dir}/my.cnf" <<EOF
[mariadbd]
user=root
datadir=${dir}/data
tmpdir=${dir}/tmp
socket=${dir}/mysqld.sock
pid-file=${dir}/mysqld.pid
port=${MARIADB_PORT}
bind-address=127.0.0.1
skip-name-resolve
log-error=${dir}/error.log
innodb_buffer_pool_size=256M
innodb_log_file_size=128M
innodb_flush_log_at_trx_commit=2
max_connections=200
performance_schema=OFF
EOF
	mariadb-install-db --defaults-file="${dir}/my.cnf" --auth-root-authentication-method=socket \
		--skip-test-db >"${dir}/install.log" 2>&1 || {
		cat "${dir}/install.log" >&2
		return 1
	}
	# setsid: the server must not die with the shell that started it.
	setsid mariadbd --defaults-file="${dir}/my.cnf" >>"${dir}/error.log" 2>&1 </dev/null &
	wait_for 60 "mariadb socket" mariadb --socket="${dir}/mysqld.sock" -uroot -e 'SELECT 1' || {
		tail -30 "${dir}/error.log" >&2
		return 1
	}
	mariadb --socket="${dir}/mysqld.sock" -uroot <<EOF
CREATE DATABASE IF NOT EXISTS ${DB_NAME};
CREATE USER IF NOT EXISTS '${DB_USER}'@'127.0.0.1' IDENTIFIED BY '${DB_PASSWORD}';
GRANT ALL ON *.* TO '${DB_USER}'@'127.0.0.1';
FLUSH PRIVILEGES;
EOF
	log "mariadb $(mariadbd --version | awk '{print $3}') listening on 127.0.0.1:${MARIADB_PORT}"
}

mariadb_stop() {
	local dir="${ROOT}/mariadb"
	if [ -f "${dir}/mysqld.pid" ]; then
		local pid
		pid="$(cat "${dir}/mysqld.pid")"
		kill "${pid}" 2>/dev/null || true
		wait_for 60 "mariadb to stop" bash -c "! kill -0 ${pid}" || kill -9 "${pid}" 2>/dev/null || true
	fi
	rm -rf "${dir}"
	log "mariadb stopped"
}

# ------------------------------------------------------------- PostgreSQL

pg_bin() {
	local d
	d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
	[ -n "${d}" ] || {
		log "no PostgreSQL server binaries under /usr/lib/postgresql"
		return 1
	}
	echo "${d}"
}

postgres_start() {
	local dir="${ROOT}/postgres" bin
	need_packages postgres
	bin="$(pg_bin)"
	if [ -f "${dir}/data/postmaster.pid" ] && kill -0 "$(head -1 "${dir}/data/postmaster.pid")" 2>/dev/null; then
		log "postgres already running"
		return 0
	fi
	rm -rf "${dir}"
	mkdir -p "${dir}"
	chown postgres: "${dir}"
	# PostgreSQL refuses to run as root: run it as the package's user.
	printf '%s\n' "${DB_PASSWORD}" >"${dir}/pw"
	chown postgres: "${dir}/pw"
	runuser -u postgres -- "${bin}/initdb" -D "${dir}/data" -U postgres --auth-local=trust \
		--auth-host=scram-sha-256 >"${dir}/initdb.log" 2>&1 || {
		cat "${dir}/initdb.log" >&2
		return 1
	}
	cat >>"${dir}/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = ${POSTGRES_PORT}
unix_socket_directories = '${dir}'
shared_buffers = 256MB
max_connections = 200
synchronous_commit = off
max_wal_size = 2GB
EOF
	runuser -u postgres -- "${bin}/pg_ctl" -D "${dir}/data" -l "${dir}/server.log" -w -t 60 start >/dev/null || {
		tail -30 "${dir}/server.log" >&2
		return 1
	}
	runuser -u postgres -- psql -h "${dir}" -p "${POSTGRES_PORT}" -U postgres -q -v ON_ERROR_STOP=1 <<EOF
CREATE ROLE ${DB_USER} LOGIN SUPERUSER PASSWORD '${DB_PASSWORD}';
CREATE DATABASE ${DB_NAME} OWNER ${DB_USER};
EOF
	log "postgres $("${bin}/postgres" --version | awk '{print $3}') listening on 127.0.0.1:${POSTGRES_PORT}"
}

postgres_stop() {
	local dir="${ROOT}/postgres" bin
	if [ -d "${dir}/data" ]; then
		bin="$(pg_bin)"
		runuser -u postgres -- "${bin}/pg_ctl" -D "${dir}/data" -m fast -w -t 60 stop >/dev/null 2>&1 || true
	fi
	rm -rf "${dir}"
	log "postgres stopped"
}

print_env() {
	case "$1" in
	mariadb) echo "DBBENCH_TEST_MARIADB=127.0.0.1:${MARIADB_PORT}" ;;
	postgres) echo "DBBENCH_TEST_POSTGRES=127.0.0.1:${POSTGRES_PORT}" ;;
	esac
	echo "DBBENCH_TEST_DB_USER=${DB_USER}"
	echo "DBBENCH_TEST_DB_PASSWORD=${DB_PASSWORD}"
	echo "DBBENCH_TEST_DB_NAME=${DB_NAME}"
}

usage() {
	echo "usage: $0 start|stop|env mariadb|postgres|all" >&2
	exit 64
}

[ $# -eq 2 ] || usage
action=$1
engines=("$2")
[ "$2" = all ] && engines=(mariadb postgres)
for e in "${engines[@]}"; do
	case "${e}" in
	mariadb | postgres) ;;
	*) usage ;;
	esac
	case "${action}" in
	start) "${e}_start" ;;
	stop) "${e}_stop" ;;
	env) print_env "${e}" ;;
	*) usage ;;
	esac
done
