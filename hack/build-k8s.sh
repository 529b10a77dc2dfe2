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

# build COMPONENT: unless it is there (checked again under the lock; errors
# returned, see lib.sh's locked).
build() {
	local component=$1 out="${K8S_BIN}/$1"
	[ -x "${out}" ] && return 0
	log "building ${component} ${KUBE_VERSION} (cached in ${K8S_BIN})"
	(cd "${DBBENCH_ROOT}/hack/k8sbin" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "${out}.tmp" "./${component}") || return 1
	mv "${out}.tmp" "${out}"
}

for component in "$@"; do
	[ -x "${K8S_BIN}/${component}" ] || locked "${K8S_BIN}/${component}.lock" build "${component}"
done
