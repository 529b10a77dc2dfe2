#!/usr/bin/env bash
# envtest-assets.sh prepares a directory with kube-apiserver (built from the Go
# module proxy; setup-envtest cannot download here) and etcd (Debian's
# etcd-server), plus kubectl for the `kubectl explain` test, and prints it,
# for KUBEBUILDER_ASSETS.
source "$(dirname "$0")/lib.sh"

"${DBBENCH_ROOT}/hack/build-k8s.sh" kube-apiserver kubectl
command -v etcd >/dev/null 2>&1 || apt_install etcd-server
ln -sf "$(command -v etcd)" "${K8S_BIN}/etcd"
echo "${K8S_BIN}"
