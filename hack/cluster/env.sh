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

COREDNS_VERSION="${COREDNS_VERSION:-v1.15.0}"
COREDNS_BIN="${TOOLS_BIN}/coredns-${COREDNS_VERSION}/coredns"
KUBECTL="${K8S_BIN}/kubectl"

# The sandbox ("pause") image, built by hack/images.sh pause.
PAUSE_IMAGE=docker.io/dbbench/pause:dev

ctr_k8s() { ctr --address "${CONTAINERD_SOCK}" --namespace k8s.io "$@"; }
containerd_up() { [ -S "${CONTAINERD_SOCK}" ] && ctr --address "${CONTAINERD_SOCK}" version >/dev/null 2>&1; }
