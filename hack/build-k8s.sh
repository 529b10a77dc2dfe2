#!/usr/bin/env bash
# build-k8s.sh builds Kubernetes components from the Go module proxy (there is
# no release download or registry here) into the version-keyed cache.
#   hack/build-k8s.sh kube-apiserver [kubelet ...]
# Every component is one multi-call binary, kube (hack/k8sbin/kube), and
# each name asked for a link to it: linked once, not six times. Prints
# nothing on a cache hit.
source "$(dirname "$0")/lib.sh"

minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
ldflags="-s -w"
for v in gitVersion=${KUBE_VERSION} gitMajor=1 gitMinor=${minor} gitTreeState=clean buildDate=1970-01-01T00:00:00Z; do
	ldflags+=" -X k8s.io/component-base/version.${v}"
done

# k8s_build OUT (for lib.sh's cached_build).
k8s_build() {
	(cd "${DBBENCH_ROOT}/hack/k8sbin" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "$1" ./kube)
}

for component in "$@"; do
	case "${component}" in
	kube-apiserver | kube-controller-manager | kube-scheduler | kube-proxy | kubelet | kubectl) ;;
	*) echo "build-k8s.sh: unknown component ${component} (kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, kubelet, kubectl)" >&2; exit 64 ;;
	esac
done
[ "$#" = 0 ] || cached_build "${K8S_BIN}/kube" "kube (every component) ${KUBE_VERSION}" k8s_build
for component in "$@"; do
	# A binary of its own from before kube, or a missing link, becomes the
	# link, by a rename: another build-k8s.sh or a reader never sees the
	# name missing (a running process keeps the file it started from).
	link="${K8S_BIN}/${component}"
	if [ "$(readlink "${link}" 2>/dev/null)" != kube ]; then
		ln -sfn kube "${link}.$$" && mv -Tf "${link}.$$" "${link}"
	fi
done
