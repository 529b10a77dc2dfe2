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

for component in "$@"; do
	out="${K8S_BIN}/${component}"
	[ -x "${out}" ] && continue
	log "building ${component} ${KUBE_VERSION} (cached in ${K8S_BIN})"
	(cd "${DBBENCH_ROOT}/hack/k8sbin" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "${out}.tmp" "./${component}")
	mv "${out}.tmp" "${out}"
done
