#!/bin/bash
# Initialises an empty /var/lib/mysql from MARIADB_* (or MYSQL_*) variables,
# then runs the server in the foreground. The subset of the official mariadb
# image's contract that dbbench relies on:
#   MARIADB_ROOT_PASSWORD | MARIADB_ALLOW_EMPTY_ROOT_PASSWORD | MARIADB_RANDOM_ROOT_PASSWORD
#   MARIADB_ROOT_HOST (default %), MARIADB_DATABASE, MARIADB_USER, MARIADB_PASSWORD
# Each MARIADB_X falls back to MYSQL_X.
set -Eeuo pipefail

note() { printf '%s [Entrypoint]: %s\n' "$(date --rfc-3339=seconds)" "$*"; }
die() { note "ERROR: $*" >&2; exit 1; }

for v in ROOT_PASSWORD ALLOW_EMPTY_ROOT_PASSWORD RANDOM_ROOT_PASSWORD ROOT_HOST DATABASE USER PASSWORD; do
	m="MARIADB_${v}" y="MYSQL_${v}"
	if [ -z "${!m:-}" ] && [ -n "${!y:-}" ]; then export "${m}=${!y}"; fi
done

if [ "${1:0:1}" = '-' ]; then set -- mariadbd "$@"; fi

# Started as root (plain podman/docker run): fix ownership and drop to mysql.
if [ "$(id -u)" = 0 ] && { [ "$1" = mariadbd ] || [ "$1" = mysqld ]; }; then
	chown -R mysql:mysql /var/lib/mysql /run/mysqld
	exec setpriv --reuid=mysql --regid=mysql --init-groups "$0" "$@"
fi

INIT_FILE=
# Initialisation scripts (*.sql, *.sh), as in the official image; the
# variable lets hack/bench-dbinit.sh time both paths on one machine.
INITDB_DIR=${DBBENCH_INITDB_DIR:-/docker-entrypoint-initdb.d}

sql_escape() { local s=${1//\\/\\\\}; printf '%s' "${s//\'/\\\'}"; }

init_database() {
	local datadir=$1; shift
	if [ -z "${MARIADB_ROOT_PASSWORD:-}" ] && [ -z "${MARIADB_ALLOW_EMPTY_ROOT_PASSWORD:-}" ] && [ -z "${MARIADB_RANDOM_ROOT_PASSWORD:-}" ]; then
		die "database is uninitialized and no root password option is set: set one of MARIADB_ROOT_PASSWORD, MARIADB_ALLOW_EMPTY_ROOT_PASSWORD or MARIADB_RANDOM_ROOT_PASSWORD"
	fi
	if [ -n "${MARIADB_RANDOM_ROOT_PASSWORD:-}" ]; then
		MARIADB_ROOT_PASSWORD="$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"
		note "GENERATED ROOT PASSWORD: ${MARIADB_ROOT_PASSWORD}"
	fi
	note "Initializing database files in ${datadir}"
	local out
	# The server's own arguments (after its name) go to the bootstrap too, as
	# in the official image: --innodb-log-group-home-dir must hold from the
	# first start, or the server cannot find the redo log it wrote.
	if ! out=$(mariadb-install-db --datadir="${datadir}" --auth-root-authentication-method=normal \
		--skip-test-db --skip-name-resolve --rpm "${@:2}" 2>&1); then
		printf '%s\n' "${out}" >&2
		die "mariadb-install-db failed"
	fi

	local rootpw rootHost=${MARIADB_ROOT_HOST:-%}
	local -a sql=()
	rootpw=$(sql_escape "${MARIADB_ROOT_PASSWORD:-}")
	sql+=("SET @@SESSION.SQL_LOG_BIN=0")
	sql+=("DELETE FROM mysql.user WHERE User='' OR (User='root' AND Host NOT IN ('localhost'))")
	sql+=("DELETE FROM mysql.proxies_priv WHERE Host NOT IN ('localhost')")
	sql+=("SET PASSWORD FOR 'root'@'localhost'=PASSWORD('${rootpw}')")
	if [ "${rootHost}" != localhost ]; then
		sql+=("CREATE USER 'root'@'$(sql_escape "${rootHost}")' IDENTIFIED BY '${rootpw}'")
		sql+=("GRANT ALL ON *.* TO 'root'@'$(sql_escape "${rootHost}")' WITH GRANT OPTION")
	fi
	if [ -n "${MARIADB_DATABASE:-}" ]; then
		sql+=("CREATE DATABASE IF NOT EXISTS \`${MARIADB_DATABASE//\`/\`\`}\`")
	fi
	if [ -n "${MARIADB_USER:-}" ]; then
		[ -n "${MARIADB_PASSWORD:-}" ] || die "MARIADB_USER is set but MARIADB_PASSWORD is not"
		sql+=("CREATE USER '$(sql_escape "${MARIADB_USER}")'@'%' IDENTIFIED BY '$(sql_escape "${MARIADB_PASSWORD}")'")
		if [ -n "${MARIADB_DATABASE:-}" ]; then
			sql+=("GRANT ALL ON \`${MARIADB_DATABASE//\`/\`\`}\`.* TO '$(sql_escape "${MARIADB_USER}")'@'%'")
		fi
	fi
	sql+=("FLUSH PRIVILEGES")

	if ! compgen -G "${INITDB_DIR}/*" >/dev/null; then
		# Nothing but the users and the database to create: the server runs
		# them itself at its first start (--init-file, one statement a
		# line), before it accepts a connection. Starting and stopping a
		# temporary server for them cost about two seconds of every cell's
		# start-up (docs/benchmarks.md, "Orchestration overhead").
		INIT_FILE=/run/mysqld/dbbench-init.sql
		(umask 077 && printf '%s;\n' "${sql[@]}" >"${INIT_FILE}")
		note "Database files initialised; users and database at the server's start"
		return
	fi

	# Initialisation scripts need a running server: a temporary one, on a
	# socket only.
	local socket=/run/mysqld/mysqld-init.sock
	note "Starting temporary server"
	"$@" --skip-networking --socket="${socket}" --skip-log-bin &
	local pid=$!
	# Polled every 0.2 s: the temporary server is up in about one.
	for _ in $(seq 1 300); do
		mariadb --protocol=socket --socket="${socket}" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
		kill -0 "${pid}" 2>/dev/null || die "temporary server exited during initialisation"
		sleep 0.2
	done
	mariadb --protocol=socket --socket="${socket}" -uroot -e "$(printf '%s;' "${sql[@]}")" || die "creating users and database failed"

	for f in "${INITDB_DIR}"/*; do
		case "${f}" in
		*.sh) note "running ${f}"; . "${f}" ;;
		*.sql) note "running ${f}"; mariadb --protocol=socket --socket="${socket}" -uroot -p"${MARIADB_ROOT_PASSWORD:-}" "${MARIADB_DATABASE:-}" <"${f}" ;;
		esac
	done

	note "Stopping temporary server"
	kill "${pid}"
	wait "${pid}" || true
	note "Database initialised"
}

if [ "$1" = mariadbd ] || [ "$1" = mysqld ]; then
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
	if [ -n "${INIT_FILE:-}" ]; then
		set -- "$@" --init-file="${INIT_FILE}"
	fi
	note "Starting $*"
fi
exec "$@"
