#!/bin/bash
# Initialises an empty /var/lib/mysql from MYSQL_* variables, then runs the
# server in the foreground. The subset of the official mysql image's contract
# that dbbench relies on:
#   MYSQL_ROOT_PASSWORD | MYSQL_ALLOW_EMPTY_PASSWORD | MYSQL_RANDOM_ROOT_PASSWORD
#   MYSQL_ROOT_HOST (default %), MYSQL_DATABASE, MYSQL_USER, MYSQL_PASSWORD
set -Eeuo pipefail

note() { printf '%s [Entrypoint]: %s\n' "$(date --rfc-3339=seconds)" "$*"; }
die() { note "ERROR: $*" >&2; exit 1; }

if [ "${1:0:1}" = '-' ]; then set -- mysqld "$@"; fi

# Started as root (plain podman/docker run): fix ownership and drop to mysql.
if [ "$(id -u)" = 0 ] && [ "$1" = mysqld ]; then
	chown -R mysql:mysql /var/lib/mysql /run/mysqld
	exec setpriv --reuid=mysql --regid=mysql --init-groups "$0" "$@"
fi

sql_escape() { local s=${1//\\/\\\\}; printf '%s' "${s//\'/\\\'}"; }

init_database() {
	local datadir=$1; shift
	if [ -z "${MYSQL_ROOT_PASSWORD:-}" ] && [ -z "${MYSQL_ALLOW_EMPTY_PASSWORD:-}" ] && [ -z "${MYSQL_RANDOM_ROOT_PASSWORD:-}" ]; then
		die "database is uninitialized and no root password option is set: set one of MYSQL_ROOT_PASSWORD, MYSQL_ALLOW_EMPTY_PASSWORD or MYSQL_RANDOM_ROOT_PASSWORD"
	fi
	if [ -n "${MYSQL_RANDOM_ROOT_PASSWORD:-}" ]; then
		MYSQL_ROOT_PASSWORD="$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"
		note "GENERATED ROOT PASSWORD: ${MYSQL_ROOT_PASSWORD}"
	fi
	note "Initializing database files in ${datadir}"
	"$@" --initialize-insecure --default-time-zone=SYSTEM || die "mysqld --initialize-insecure failed"

	local socket=/run/mysqld/mysqld-init.sock
	note "Starting temporary server"
	"$@" --skip-networking --socket="${socket}" --mysqlx=OFF --skip-log-bin &
	local pid=$!
	# Polled every 0.2 s: the temporary server is up in about one, and every
	# cell's database waits on it.
	for _ in $(seq 1 450); do
		mysql --protocol=socket --socket="${socket}" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
		kill -0 "${pid}" 2>/dev/null || die "temporary server exited during initialisation"
		sleep 0.2
	done

	local rootpw rootHost=${MYSQL_ROOT_HOST:-%} sql=
	rootpw=$(sql_escape "${MYSQL_ROOT_PASSWORD:-}")
	sql+="SET @@SESSION.SQL_LOG_BIN=0;"
	sql+="ALTER USER 'root'@'localhost' IDENTIFIED BY '${rootpw}';"
	if [ "${rootHost}" != localhost ]; then
		sql+="CREATE USER 'root'@'$(sql_escape "${rootHost}")' IDENTIFIED BY '${rootpw}';"
		sql+="GRANT ALL ON *.* TO 'root'@'$(sql_escape "${rootHost}")' WITH GRANT OPTION;"
	fi
	if [ -n "${MYSQL_DATABASE:-}" ]; then
		sql+="CREATE DATABASE IF NOT EXISTS \`${MYSQL_DATABASE//\`/\`\`}\`;"
	fi
	if [ -n "${MYSQL_USER:-}" ]; then
		[ -n "${MYSQL_PASSWORD:-}" ] || die "MYSQL_USER is set but MYSQL_PASSWORD is not"
		sql+="CREATE USER '$(sql_escape "${MYSQL_USER}")'@'%' IDENTIFIED BY '$(sql_escape "${MYSQL_PASSWORD}")';"
		if [ -n "${MYSQL_DATABASE:-}" ]; then
			sql+="GRANT ALL ON \`${MYSQL_DATABASE//\`/\`\`}\`.* TO '$(sql_escape "${MYSQL_USER}")'@'%';"
		fi
	fi
	sql+="FLUSH PRIVILEGES;"
	mysql --protocol=socket --socket="${socket}" -uroot -e "${sql}" || die "creating users and database failed"

	for f in /docker-entrypoint-initdb.d/*; do
		case "${f}" in
		*.sh) note "running ${f}"; . "${f}" ;;
		*.sql) note "running ${f}"; mysql --protocol=socket --socket="${socket}" -uroot -p"${MYSQL_ROOT_PASSWORD:-}" "${MYSQL_DATABASE:-}" <"${f}" ;;
		esac
	done

	note "Stopping temporary server"
	kill "${pid}"
	wait "${pid}" || true
	note "Database initialised"
}

if [ "$1" = mysqld ]; then
	# The server reads its option files here first: one it refuses (an
	# unknown variable, a bad value) ends the container with the server's
	# own error lines and exit code, which the controller quotes. Under
	# set -e a failing $(...) would exit silently.
	rc=0
	errors=$("$@" --verbose --help 2>&1 >/dev/null) || rc=$?
	if [ "${rc}" != 0 ]; then
		printf '%s\n' "${errors}" >&2
		note "ERROR: $1 refused its options (exit code ${rc}); the lines above are its own" >&2
		exit "${rc}"
	fi
	datadir=$("$@" --verbose --help 2>/dev/null | awk '$1 == "datadir" { print $2; exit }')
	datadir=${datadir:-/var/lib/mysql}
	datadir=${datadir%/}
	if [ ! -d "${datadir}/mysql" ]; then
		init_database "${datadir}" "$@"
	fi
	note "Starting $*"
fi
exec "$@"
