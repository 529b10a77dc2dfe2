#!/usr/bin/env bash
# build.sh builds the local cluster's own binaries into the version-keyed
# cache, each unless it is there: the Kubernetes components
# (hack/build-k8s.sh), CoreDNS with the plugins the cluster uses
# (hack/coredns) and rancher's local-path-provisioner. up.sh and
# local-path.sh call it for what they need; hack/prefetch.sh calls it ahead
# of test-e2e on a cold machine. Each build holds a lock (lib.sh, locked),
# so two callers build once. Prints nothing on a cache hit.
#
#   hack/cluster/build.sh                      # all three
#   hack/cluster/build.sh k8s coredns          # what up.sh starts
#   hack/cluster/build.sh local-path           # what local-path.sh installs
source "$(dirname "$0")/../lib.sh"
source "${DBBENCH_ROOT}/hack/cluster/env.sh"

build_coredns() {
	[ -x "${COREDNS_BIN}" ] && return 0
	log "building CoreDNS ${COREDNS_VERSION} (cached in $(dirname "${COREDNS_BIN}"))"
	mkdir -p "$(dirname "${COREDNS_BIN}")"
	(cd "${DBBENCH_ROOT}/hack/coredns" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${COREDNS_BIN}.tmp" .) || return 1
	mv "${COREDNS_BIN}.tmp" "${COREDNS_BIN}"
}

# Each builder returns its first failure itself (lib.sh's locked runs it
# where errexit does not apply).

# build_local_path: the binary appears at LOCAL_PATH_BIN only once complete.
build_local_path() {
	[ -x "${LOCAL_PATH_BIN}" ] && return 0
	local dir tmp start=${SECONDS}
	dir=$(dirname "${LOCAL_PATH_BIN}")
	mkdir -p "${dir}"
	tmp=$(mktemp -d "${dir}.XXXXXX")
	log "building local-path-provisioner ${LOCAL_PATH_VERSION} (cached in ${dir})"
	if ! GOBIN="${tmp}" CGO_ENABLED=0 go install -trimpath \
		-ldflags "-s -w -X main.VERSION=${LOCAL_PATH_VERSION}" \
		"github.com/rancher/local-path-provisioner@${LOCAL_PATH_VERSION}"; then
		rm -rf "${tmp}"
		log "go install github.com/rancher/local-path-provisioner@${LOCAL_PATH_VERSION} failed"
		return 1
	fi
	mv "${tmp}/local-path-provisioner" "${LOCAL_PATH_BIN}"
	rm -rf "${tmp}"
	log "built ${LOCAL_PATH_BIN} in $((SECONDS - start)) s"
}

what=("$@")
[ ${#what[@]} -gt 0 ] || what=(k8s coredns local-path)
for w in "${what[@]}"; do
	case "${w}" in
	k8s) "${DBBENCH_ROOT}/hack/build-k8s.sh" kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl ;;
	coredns) [ -x "${COREDNS_BIN}" ] || locked "${COREDNS_BIN%/*}.lock" build_coredns ;;
	local-path) [ -x "${LOCAL_PATH_BIN}" ] || locked "${LOCAL_PATH_BIN%/*}.lock" build_local_path ;;
	*) log "build.sh: unknown '${w}' (k8s, coredns, local-path)"; exit 64 ;;
	esac
done
