# Shared settings for hack/ scripts. Source it; do not run it.
# Everything built or downloaded lives in the user's cache directory, keyed by
# version, so that a fresh clone on the same machine (which is what CI is)
# reuses it.
set -euo pipefail

DBBENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DBBENCH_CACHE="${DBBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dbbench}"
KUBE_VERSION="${KUBE_VERSION:-v1.36.3}"
K8S_BIN="${DBBENCH_CACHE}/k8s/${KUBE_VERSION}"
TOOLS_BIN="${DBBENCH_CACHE}/tools"
mkdir -p "${K8S_BIN}" "${TOOLS_BIN}"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

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
		apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null
		_apt_updated=1
	fi
	# Wait for the dpkg lock rather than fail: two suites (or a suite and a
	# developer) may install at the same time on one machine.
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
