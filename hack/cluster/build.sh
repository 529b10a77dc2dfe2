#!/usr/bin/env bash
# build.sh builds the local cluster's own binaries into the version-keyed
# cache, each unless it is there: the Kubernetes components
# (hack/build-k8s.sh), CoreDNS with the plugins the cluster uses
# (hack/coredns) and rancher's local-path-provisioner. up.sh and
# local-path.sh call it for what they need; hack/prefetch.sh calls it ahead
# of test-e2e on a cold machine. Each build holds a lock (lib.sh's
# cached_build), so two callers build once. Prints nothing on a cache hit.
#
#   hack/cluster/build.sh                      # all three
#   hack/cluster/build.sh k8s coredns          # what up.sh starts
#   hack/cluster/build.sh local-path           # what local-path.sh installs
source "$(dirname "$0")/../lib.sh"
source "${DBBENCH_ROOT}/hack/cluster/env.sh"

# coredns_build OUT and local_path_build OUT, for lib.sh's cached_build.
coredns_build() {
	(cd "${DBBENCH_ROOT}/hack/coredns" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$1" .)
}

local_path_build() {
	CGO_ENABLED=0 go_install_to -trimpath -ldflags "-s -w -X main.VERSION=${LOCAL_PATH_VERSION}" \
		"github.com/rancher/local-path-provisioner@${LOCAL_PATH_VERSION}" "$1"
}

what=("$@")
[ ${#what[@]} -gt 0 ] || what=(k8s coredns local-path)
for w in "${what[@]}"; do
	case "${w}" in
	k8s) "${DBBENCH_ROOT}/hack/build-k8s.sh" kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl ;;
	coredns) cached_build "${COREDNS_BIN}" "CoreDNS ${COREDNS_VERSION}" coredns_build ;;
	local-path) cached_build "${LOCAL_PATH_BIN}" "local-path-provisioner ${LOCAL_PATH_VERSION}" local_path_build ;;
	*) log "build.sh: unknown '${w}' (k8s, coredns, local-path)"; exit 64 ;;
	esac
done
