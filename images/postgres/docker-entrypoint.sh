#!/bin/bash
# Initialises an empty PGDATA from POSTGRES_* variables, then runs postgres in
# the foreground with any extra arguments. The subset of the official postgres
# image's contract that dbbench relies on:
#   POSTGRES_PASSWORD (or POSTGRES_HOST_AUTH_METHOD=trust), POSTGRES_USER
#   (default postgres), POSTGRES_DB (default: the user), POSTGRES_INITDB_ARGS,
#   POSTGRES_HOST_AUTH_METHOD (default scram-sha-256), PGDATA,
#   POSTGRES_INITDB_WALDIR (initdb --waldir: the WAL on another volume).
#   docker-entrypoint.sh -c listen_addresses=* -c config_file=/etc/x.conf
set -Eeuo pipefail

note() { printf '%s [Entrypoint]: %s\n' "$(date --rfc-3339=seconds)" "$*"; }
die() { note "ERROR: $*" >&2; exit 1; }

if [ "${1:0:1}" = '-' ]; then set -- postgres "$@"; fi

# Started as root (plain podman/docker run): fix ownership and drop to postgres.
if [ "$(id -u)" = 0 ] && [ "$1" = postgres ]; then
	mkdir -p "${PGDATA}"
	chown -R postgres:postgres "${PGDATA}"
	chmod 700 "${PGDATA}"
	exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

init_database() {
	if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "${POSTGRES_HOST_AUTH_METHOD:-}" != trust ]; then
		die "database is uninitialized and superuser password is not specified: set POSTGRES_PASSWORD (or POSTGRES_HOST_AUTH_METHOD=trust)"
	fi
	local user=${POSTGRES_USER:-postgres} db=${POSTGRES_DB:-${POSTGRES_USER:-postgres}}
	local auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}

	mkdir -p "${PGDATA}"
	# PostgreSQL insists on owning its data directory. A volume mounted at
	# PGDATA itself is owned by root (kubelet's emptyDir with fsGroup), which
	# the official image cannot use either: set PGDATA to a subdirectory.
	if [ "$(stat -c %u "${PGDATA}")" != "$(id -u)" ]; then
		die "${PGDATA} is owned by uid $(stat -c %u "${PGDATA}"), not $(id -u); mount the volume one level up or set PGDATA to a subdirectory of the mount (e.g. ${PGDATA}/pgdata)"
	fi
	chmod 700 "${PGDATA}" 2>/dev/null || true

	note "Initializing database in ${PGDATA}"
	local pwfile
	pwfile=$(mktemp)
	printf '%s\n' "${POSTGRES_PASSWORD:-}" >"${pwfile}"
	local waldir=()
	if [ -n "${POSTGRES_INITDB_WALDIR:-}" ]; then waldir=(--waldir="${POSTGRES_INITDB_WALDIR}"); fi
	# shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a word list by contract.
	initdb --username="${user}" --pwfile="${pwfile}" --auth-local=trust --auth-host="${auth}" "${waldir[@]}" ${POSTGRES_INITDB_ARGS:-} >/dev/null ||
		die "initdb failed"
	rm -f "${pwfile}"
	printf '\nhost all all all %s\n' "${auth}" >>"${PGDATA}/pg_hba.conf"

	note "Starting temporary server"
	# The socket where psql looks: the npm registry's server builds
	# (images/postgres-embedded) put it in /tmp by default.
	pg_ctl -D "${PGDATA}" -o "-c listen_addresses='' -p 5432 -c unix_socket_directories=/var/run/postgresql" -w start >/dev/null
	if [ "${db}" != postgres ]; then
		echo 'CREATE DATABASE :"db";' | psql -v ON_ERROR_STOP=1 --username "${user}" --dbname postgres \
			--no-psqlrc --quiet --set db="${db}" ||
			die "creating database ${db} failed"
	fi
	for f in /docker-entrypoint-initdb.d/*; do
		case "${f}" in
		*.sh) note "running ${f}"; . "${f}" ;;
		*.sql) note "running ${f}"; psql -v ON_ERROR_STOP=1 --username "${user}" --dbname "${db}" --no-psqlrc -f "${f}" ;;
		esac
	done
	note "Stopping temporary server"
	pg_ctl -D "${PGDATA}" -m fast -w stop >/dev/null
	note "Database initialised"
}

if [ "$1" = postgres ]; then
	if [ ! -s "${PGDATA}/PG_VERSION" ]; then
		init_database
	fi
	note "Starting $*"
fi
exec "$@"
