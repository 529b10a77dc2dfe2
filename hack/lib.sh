# Shared settings for hack/ scripts. Source it; do not run it.
# Everything built or downloaded lives in the user's cache directory, keyed by
# version, so that a fresh clone on the same machine (which is what CI is)
# reuses it.
set -euo pipefail

DBBENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DBBENCH_CACHE="${DBBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dbbench}"
KUBE_VERSION="${KUBE_VERSION:-v1.37.2}"
K8S_BIN="${DBBENCH_CACHE}/k8s/${KUBE_VERSION}"
TOOLS_BIN="${DBBENCH_CACHE}/tools"
mkdir -p "${K8S_BIN}" "${TOOLS_BIN}"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# eval_env COMMAND...: evaluates the shell assignments COMMAND prints (the
# local cluster's, the S3 server's), only if COMMAND succeeds. `eval
# "$(COMMAND)"` would go on after a failed COMMAND: the substitution's
# status is lost.
eval_env() {
	local out
	out=$("$@") || return
	eval "${out}"
}

# locked LOCKFILE COMMAND...: runs COMMAND holding an exclusive lock on
# LOCKFILE. Every builder of a cached artefact (a Kubernetes component, a
# tool, CoreDNS, helm) runs its check-then-build under one, so that a stage
# and hack/prefetch.sh asking for it at the same time build it once: the
# second waits, then finds it built. COMMAND runs where errexit does not
# apply (bash ignores -e inside a command whose status is tested), so a
# builder returns its first failure itself.
locked() {
	local lock=$1 fd rc=0
	shift
	mkdir -p "$(dirname "${lock}")"
	exec {fd}>"${lock}"
	flock "${fd}"
	"$@" || rc=$?
	exec {fd}>&-
	return "${rc}"
}

# cached_build BIN WHAT BUILDER [ARGS...]: makes the binary BIN unless it is
# there, checked again under BIN's lock (see locked). BUILDER ARGS... OUT
# writes the binary to OUT, a path in a new directory beside BIN, from which
# it moves into place: BIN appears only once complete, so a killed build
# leaves nothing a later check takes for a binary. Logs what is built and
# how long it took; returns the builder's failure.
cached_build() {
	[ -x "$1" ] || locked "$1.lock" cached_build_locked "$@"
}

cached_build_locked() {
	local bin=$1 what=$2 dir tmp rc=0 start=${SECONDS}
	shift 2
	[ -x "${bin}" ] && return 0
	dir=$(dirname "${bin}")
	mkdir -p "${dir}" || return 1
	tmp=$(mktemp -d "${dir}/.build.XXXXXX") || return 1
	log "building ${what} (cached in ${dir})"
	"$@" "${tmp}/out" || rc=$?
	[ "${rc}" != 0 ] || mv "${tmp}/out" "${bin}" || rc=$?
	rm -rf "${tmp}"
	if [ "${rc}" = 0 ]; then
		log "built ${bin} in $((SECONDS - start)) s"
	else
		log "building ${what} failed (exit ${rc})"
	fi
	return "${rc}"
}

# go_install_to [FLAGS...] PACKAGE@VERSION OUT: go install of one command
# (outside this tree's module), its binary written to OUT; a builder for
# cached_build.
go_install_to() {
	local out=${!#} gobin
	gobin="${out}.gobin"
	mkdir -p "${gobin}" || return 1
	GOBIN="${gobin}" go install "${@:1:$#-1}" || return 1
	# The one binary, whatever go named it (a path ending /v2 is named after
	# the element before).
	mv "${gobin}"/* "${out}"
}

# apt_get runs apt-get, waiting (up to 10 minutes) while another apt-get or
# dpkg holds a lock: two suites, or a suite and a developer, may install at the
# same time on one machine. DPkg::Lock::Timeout covers the dpkg lock only, not
# the lists lock `apt-get update` takes, hence the retry.
apt_get() {
	local out deadline=$((SECONDS + 600))
	while :; do
		if out="$(DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 "$@" 2>&1)"; then
			return 0
		fi
		if [[ "${out}" != *"Could not get lock"* && "${out}" != *"Unable to lock"* ]] || ((SECONDS >= deadline)); then
			printf '%s\n' "${out}" >&2
			return 1
		fi
		sleep 5
	done
}

# apt_install installs Debian packages that are missing, running apt-get update
# at most once per script.
_apt_updated=""
apt_install() {
	local missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing Debian packages: ${missing[*]}"
	if [ -z "${_apt_updated}" ]; then
		apt_get update -qq >/dev/null
		_apt_updated=1
	fi
	apt_get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
