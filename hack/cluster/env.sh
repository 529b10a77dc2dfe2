# Paths and settings of the local single-node cluster, shared by
# hack/cluster/*.sh and hack/images.sh. Source it after hack/lib.sh.
#
# Everything the cluster writes lives under CLUSTER_DIR: certificates,
# configs, pidfiles, logs, etcd data, containerd's root and state, kubelet's
# root. hack/cluster/down.sh --purge removes it; the images built into
# containerd survive a plain down/up.

CLUSTER_DIR="${DBBENCH_CLUSTER_DIR:-${DBBENCH_CACHE}/cluster}"
CLUSTER_PKI="${CLUSTER_DIR}/pki"
CLUSTER_LOGS="${CLUSTER_DIR}/logs"
CLUSTER_RUN="${CLUSTER_DIR}/run"
CLUSTER_CONF="${CLUSTER_DIR}/conf"
CLUSTER_KUBECONFIG="${CLUSTER_DIR}/admin.kubeconfig"

CONTAINERD_ROOT="${CLUSTER_DIR}/containerd"
CONTAINERD_STATE="${CLUSTER_RUN}/containerd"
CONTAINERD_SOCK="${CONTAINERD_STATE}/containerd.sock"
KUBELET_ROOT="${CLUSTER_DIR}/kubelet"

# The node: the bridge's address is the node IP, the API server's advertise
# address and the DNS server. Pods get 10.88.0.2 and up; Services 10.96.0.0/16.
CLUSTER_BRIDGE=cni0
CLUSTER_POD_CIDR=10.88.0.0/16
CLUSTER_NODE_IP=10.88.0.1
CLUSTER_SERVICE_CIDR=10.96.0.0/16
CLUSTER_API_SERVICE_IP=10.96.0.1
CLUSTER_DNS_IP="${CLUSTER_NODE_IP}"
CLUSTER_DOMAIN=cluster.local
CLUSTER_API_PORT=6443
CLUSTER_ETCD_CLIENT_PORT=23790
CLUSTER_ETCD_PEER_PORT=23800
CLUSTER_NODE_NAME="${DBBENCH_NODE_NAME:-dbbench-node}"

# Worker nodes (NODES=N>1 hack/cluster/up.sh). Node 1 is the node above, on
# the host's network. Node k (2..N) is ${CLUSTER_NODE_NAME}-k: its own
# containerd, kubelet and kube-proxy inside network namespace
# ${CLUSTER_NODE_NAME}-k, joined to the host by a veth pair
# (dbbnode<k> 10.87.k.1 on the host, eth0 10.87.k.2 = node IP in the
# namespace), with pods on its own bridge in 10.89.k.0/24. The host routes
# between the nodes; 10.88.0.0/15 covers every pod of every node.
CLUSTER_NODES_DIR="${CLUSTER_DIR}/nodes"
CLUSTER_NODES_FILE="${CLUSTER_RUN}/nodes"
CLUSTER_NODES_MAX=16
CLUSTER_WORKER_POD_RANGE=10.89.0.0/16
CLUSTER_WORKER_LINK_RANGE=10.87.0.0/16
CLUSTER_ALL_PODS_CIDR=10.88.0.0/15

worker_name() { echo "${CLUSTER_NODE_NAME}-$1"; }
worker_index() { echo "${1##*-}"; }
worker_dir() { echo "${CLUSTER_NODES_DIR}/$1"; }
worker_sock() { echo "${CLUSTER_NODES_DIR}/$1/run/containerd/containerd.sock"; }
worker_veth() { echo "dbbnode$(worker_index "$1")"; }
worker_host_ip() { echo "10.87.$(worker_index "$1").1"; }
worker_node_ip() { echo "10.87.$(worker_index "$1").2"; }
worker_pod_cidr() { echo "10.89.$(worker_index "$1").0/24"; }
worker_pod_gw() { echo "10.89.$(worker_index "$1").1"; }
# cluster_workers prints the name of every worker that has a state directory
# (started now or by an earlier up.sh with a larger NODES).
cluster_workers() {
	local d
	for d in "${CLUSTER_NODES_DIR}"/*/; do
		[ -d "${d}" ] && basename "${d}"
	done
	return 0
}

# CoreDNS with the cluster's plugins only (hack/coredns: its version is that
# module's requirement; the cache key changes with the plugin list and the
# module's requirements).
COREDNS_VERSION="$(awk '$1 == "require" && $2 == "github.com/coredns/coredns" {print $3}' "${DBBENCH_ROOT}/hack/coredns/go.mod")"
COREDNS_BIN="${TOOLS_BIN}/coredns-${COREDNS_VERSION}-$(cat "${DBBENCH_ROOT}"/hack/coredns/{main.go,go.mod,go.sum} | sha256sum | cut -c1-8)/coredns"
KUBECTL="${K8S_BIN}/kubectl"

# The sandbox ("pause") image, built by hack/images.sh pause.
PAUSE_IMAGE=docker.io/dbbench/pause:dev

# The dynamic volume provisioner (hack/cluster/local-path.sh): rancher's
# local-path-provisioner built from its Go module into the cache, its image
# and the image of its helper pods (hack/images.sh local-path-provisioner
# local-path-helper). v0.0.30 is the newest version the module proxy lists
# and the checksum database verifies here (docs/testing.md, "Dynamic volumes
# on the local cluster").
LOCAL_PATH_VERSION="${LOCAL_PATH_VERSION:-v0.0.30}"
LOCAL_PATH_BIN="${TOOLS_BIN}/local-path-provisioner-${LOCAL_PATH_VERSION}/local-path-provisioner"
LOCAL_PATH_IMAGE="docker.io/dbbench/local-path-provisioner:${LOCAL_PATH_VERSION}"
LOCAL_PATH_HELPER_IMAGE=docker.io/dbbench/local-path-helper:dev
# Node 1's volumes; worker k's are under its own directory,
# $(worker_dir k)/local-path. Not under CLUSTER_NODES_DIR: every directory
# there is taken for a worker (cluster_workers).
CLUSTER_LOCAL_PATH_DIR="${CLUSTER_DIR}/local-path"

# CloudNativePG (hack/operators.sh cnpg): its manager built from the Go module
# that hack/cnpg pins (a module of ours with a `tool` line: `go install
# ...@version` asks the proxy for the version list, which it refuses for
# this module), its operator image, and the PostgreSQL operand images
# (hack/images.sh cnpg-operator cnpg-postgresql-15 cnpg-postgresql-17).
CNPG_VERSION="$(awk '$1 == "github.com/cloudnative-pg/cloudnative-pg" {print $2}' "${DBBENCH_ROOT}/hack/cnpg/go.mod")"
CNPG_BIN="${TOOLS_BIN}/cnpg-manager-${CNPG_VERSION}/manager"
CNPG_OPERATOR_IMAGE="docker.io/dbbench/cnpg-operator:${CNPG_VERSION#v}"
CNPG_POSTGRES_IMAGE=docker.io/dbbench/cnpg-postgresql

# Flux (hack/operators.sh flux): source-controller and kustomize-controller
# built from the Go modules hack/flux pins (a module of ours with `tool`
# lines: theirs have replace directives, so `go install ...@version`
# refuses them), one image each (hack/images.sh flux-source-controller
# flux-kustomize-controller).
FLUX_SOURCE_VERSION="$(awk '$1 == "github.com/fluxcd/source-controller" && $2 ~ /^v/ {print $2}' "${DBBENCH_ROOT}/hack/flux/go.mod")"
FLUX_KUSTOMIZE_VERSION="$(awk '$1 == "github.com/fluxcd/kustomize-controller" && $2 ~ /^v/ {print $2}' "${DBBENCH_ROOT}/hack/flux/go.mod")"
FLUX_SOURCE_BIN="${TOOLS_BIN}/flux-source-controller-${FLUX_SOURCE_VERSION}/source-controller"
FLUX_KUSTOMIZE_BIN="${TOOLS_BIN}/flux-kustomize-controller-${FLUX_KUSTOMIZE_VERSION}/kustomize-controller"
FLUX_SOURCE_IMAGE="docker.io/dbbench/flux-source-controller:${FLUX_SOURCE_VERSION}"
FLUX_KUSTOMIZE_IMAGE="docker.io/dbbench/flux-kustomize-controller:${FLUX_KUSTOMIZE_VERSION}"

# require_local_cluster SCRIPT: what an installer into the running local
# cluster needs (hack/cluster/local-path.sh, hack/operators.sh): root (it
# imports images into the nodes' containerd), kubectl, an API server that
# answers. Logs why not, naming SCRIPT, and fails.
require_local_cluster() {
	if [ "$(id -u)" != 0 ]; then
		log "$1 must run as root (it imports images into the cluster's containerd)"
		return 1
	fi
	[ -x "${KUBECTL}" ] || "${DBBENCH_ROOT}/hack/build-k8s.sh" kubectl
	if ! "${KUBECTL}" --kubeconfig "${CLUSTER_KUBECONFIG}" get --raw /readyz >/dev/null 2>&1; then
		log "the local cluster's API server does not answer (${CLUSTER_KUBECONFIG}); start it with hack/cluster/up.sh"
		return 1
	fi
}

# explain_deployment NAMESPACE DEPLOYMENT: its pods, recent events and
# logs, on stderr, for an installer whose Deployment did not come up.
explain_deployment() {
	local k=("${KUBECTL}" --kubeconfig "${CLUSTER_KUBECONFIG}" -n "$1")
	"${k[@]}" get pods -o wide >&2 || true
	"${k[@]}" get events --sort-by=.lastTimestamp 2>/dev/null | tail -15 >&2 || true
	"${k[@]}" logs "deployment/$2" --tail=25 >&2 || true
}

ctr_k8s() { ctr --address "${CONTAINERD_SOCK}" --namespace k8s.io "$@"; }
containerd_up() { containerd_up_at "${CONTAINERD_SOCK}"; }
containerd_up_at() { [ -S "$1" ] && ctr --address "$1" version >/dev/null 2>&1; }

# kill_shims SOCKET: shims of that containerd that outlived it (they carry
# its socket path).
kill_shims() {
	local pid
	for pid in $(pgrep -f -- "containerd-shim-runc-v2 .*-address $1" || true); do
		log "killing leftover shim ${pid}"
		kill -KILL "${pid}" 2>/dev/null || true
	done
}
