#!/usr/bin/env bash
# build-k8s.sh builds Kubernetes components from the Go module proxy (there is
# no release download or registry here) into the version-keyed cache.
#   hack/build-k8s.sh kube-apiserver [kubelet ...]
# Prints nothing on a cache hit.
source "$(dirname "$0")/lib.sh"

minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
ldflags="-s -w"
for v in gitVersion=${KUBE_VERSION} gitMajor=1 gitMinor=${minor} gitTreeState=clean buildDate=1970-01-01T00:00:00Z; do
	ldflags+=" -X k8s.io/component-base/version.${v}"
done

# k8s_build COMPONENT OUT (for lib.sh's cached_build).
k8s_build() {
	(cd "${DBBENCH_ROOT}/hack/k8sbin" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "$2" "./$1")
}

for component in "$@"; do
	cached_build "${K8S_BIN}/${component}" "${component} ${KUBE_VERSION}" k8s_build "${component}"
done
