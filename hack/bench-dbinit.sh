#!/usr/bin/env bash
# bench-dbinit.sh is `make bench-dbinit`: how long the MariaDB image's
# entrypoint (images/mariadb/docker-entrypoint.sh) takes from its start on an
# empty data directory to the benchmark user's first answer over TCP, on this
# machine's MariaDB (Debian's, installed by hack/test-deps.sh), with its two
# ways of creating the users and the database:
#   init-file  the server runs them at its first start (the default);
#   temporary  a temporary server on a socket runs them, then stops (the
#              path initialisation scripts take, and every cell's path
#              before 2026-11-29).
# The trials alternate between the two, DBINIT_TRIALS (default 10) each, and
# print each path's median and the ratio of the medians: absolute times on a
# shared machine are noise, the ratio measured in one run is the figure
# (docs/benchmarks.md, "Orchestration overhead"). Each trial also checks what
# a cell relies on: the user logs in with its password over TCP and owns its
# database, and root has the password it was given. Needs root (it runs the
# server as the mysql user).
source "$(dirname "$0")/lib.sh"
cd "${DBBENCH_ROOT}"
die() { echo "bench-dbinit: $*" >&2; exit 1; }

trials=${DBINIT_TRIALS:-10}
[ "$(id -u)" = 0 ] || die "bench-dbinit needs root: it runs the server as the mysql user"
command -v mariadbd >/dev/null || hack/test-deps.sh
id mysql >/dev/null 2>&1 || die "no mysql user: install mariadb-server (hack/test-deps.sh)"

work=$(mktemp -d /tmp/dbinit.XXXXXX)
trap 'pkill -u mysql -f "${work}/" 2>/dev/null || true; rm -rf "${work}"' EXIT
mkdir -p "${work}/initdb" /run/mysqld
chown mysql /run/mysqld
echo "SELECT 1;" >"${work}/initdb/00-noop.sql"
chown -R mysql "${work}"

port=$((33000 + RANDOM % 2000))

# trial PATH: seconds from the entrypoint's start to the user's first answer.
trial() {
	local path=$1 data="${work}/data" scripts="${work}/none"
	rm -rf "${data}" && mkdir -p "${data}" && chown mysql "${data}"
	[ "${path}" = temporary ] && scripts="${work}/initdb"
	local start end pid
	start=$(date +%s.%N)
	setpriv --reuid=mysql --regid=mysql --init-groups env -i PATH="${PATH}" \
		MARIADB_ROOT_PASSWORD='r00t pw' MARIADB_USER=sbtest MARIADB_PASSWORD="it's secret" MARIADB_DATABASE=sbtest \
		DBBENCH_INITDB_DIR="${scripts}" \
		images/mariadb/docker-entrypoint.sh mariadbd --no-defaults --datadir="${data}" --port="${port}" \
		--bind-address=127.0.0.1 --socket="${work}/mysqld.sock" --skip-name-resolve --innodb-buffer-pool-size=64M \
		>"${work}/server.log" 2>&1 &
	pid=$!
	for _ in $(seq 1 600); do
		if mariadb -h127.0.0.1 -P"${port}" -usbtest -p"it's secret" sbtest -e 'SELECT 1' >/dev/null 2>&1; then
			end=$(date +%s.%N)
			break
		fi
		kill -0 "${pid}" 2>/dev/null || { cat "${work}/server.log" >&2; die "${path}: the server exited"; }
		sleep 0.05
	done
	[ -n "${end:-}" ] || { cat "${work}/server.log" >&2; die "${path}: no answer within 30 s"; }
	mariadb -h127.0.0.1 -P"${port}" -usbtest -p"it's secret" sbtest -e 'CREATE TABLE t (i INT); DROP TABLE t' ||
		die "${path}: the user cannot create tables in its database"
	mariadb -h127.0.0.1 -P"${port}" -uroot -p'r00t pw' -e 'SELECT 1' >/dev/null || die "${path}: root's password was not set"
	kill "${pid}"
	wait "${pid}" 2>/dev/null || true
	awk -v a="${start}" -v b="${end}" 'BEGIN { print b - a }'
}

declare -a initfile=() temporary=()
for i in $(seq 1 "${trials}"); do
	initfile+=("$(trial init-file)")
	temporary+=("$(trial temporary)")
	printf '  trial %2d: init-file %.2f s, temporary server %.2f s\n' "${i}" "${initfile[-1]}" "${temporary[-1]}"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
mi=$(median "${initfile[@]}")
mt=$(median "${temporary[@]}")
echo
echo "MariaDB $(mariadbd --version | awk '{print $3}'): empty data directory to the user's first answer, ${trials} trials each"
printf '  init-file (users at the first start)   median %.2f s\n' "${mi}"
printf '  temporary server                        median %.2f s\n' "${mt}"
awk -v i="${mi}" -v t="${mt}" 'BEGIN { printf "  saved per cell                          %.2f s (init-file / temporary %.2f)\n", t - i, i / t }'
