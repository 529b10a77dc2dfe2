#!/usr/bin/env bash
# up.sh starts a real single-node Kubernetes on this machine from real
# components, with no Docker engine and no registry:
#
#   etcd (Debian etcd-server, 127.0.0.1 only) -> kube-apiserver
#   -> kube-controller-manager, kube-scheduler
#   -> containerd + runc (Debian) -> kubelet, bridge CNI cni0 10.88.0.0/16
#   -> kube-proxy (iptables) -> CoreDNS (on the host, 10.88.0.1:53)
#
# The Kubernetes components (v1.37.2) and CoreDNS are built from the Go module
# proxy into ${DBBENCH_CACHE} on first use (hack/build-k8s.sh); images come
# from hack/images.sh. Everything the cluster writes lives under
# ${DBBENCH_CACHE}/cluster (override with DBBENCH_CLUSTER_DIR): certificates,
# configs, pidfiles, logs/<component>.log.
#
# Idempotent: on a running cluster it only checks health. It prints the admin
# kubeconfig's path, and as its last line on stdout `export KUBECONFIG=...`,
# so callers can `eval "$(hack/cluster/up.sh)"`. hack/cluster/down.sh stops it.
#
# Network: components listen on loopback or on the bridge address 10.88.0.1;
# pods get a route to the pod and Service ranges only, and a FORWARD guard
# drops anything between the bridge and other networks.
#
# Once ready, hack/cluster/local-path.sh installs a dynamic volume
# provisioner (the default StorageClass local-path; DBBENCH_LOCAL_PATH=0
# skips it).
#
# NODES=N (default 1, or the count of the cluster already running) adds N-1
# worker nodes, each a containerd + kubelet + kube-proxy in its own network
# namespace with its own pod range (env.sh, "Worker nodes";
# docs/local-cluster.md, "Worker nodes"). Changing N needs down.sh first.
source "$(dirname "$0")/../lib.sh"
source "${DBBENCH_ROOT}/hack/cluster/env.sh"

if [ "$(id -u)" != 0 ]; then
	log "up.sh must run as root (it runs containerd, the kubelet and iptables)"
	exit 1
fi

START=${SECONDS}
step() { log "[$((SECONDS - START))s] $*"; }

# ------------------------------------------------------------------ helpers

pidfile() { echo "${CLUSTER_RUN}/$1.pid"; }
running() { local p; p=$(cat "$(pidfile "$1")" 2>/dev/null) && [ -n "${p}" ] && kill -0 "${p}" 2>/dev/null; }

# daemon NAME COMMAND...: start COMMAND in its own session, logging to
# logs/NAME.log, unless NAME's pidfile names a live process.
daemon() {
	local name=$1
	shift
	if running "${name}"; then
		return 0
	fi
	step "starting ${name}"
	(
		close_inherited_fds
		exec setsid "$@" >>"${CLUSTER_LOGS}/${name}.log" 2>&1 </dev/null
	) &
	echo $! >"$(pidfile "${name}")"
}

# close_inherited_fds closes, in a subshell about to exec a daemon, every
# descriptor above stderr. The cluster outlives the command that started
# it, so anything it inherited would stay open for as long as it runs: a
# caller's flock(1) lock (`flock LOCK hack/test-e2e.sh` would hold LOCK
# until the cluster stops) or a pipe a log reader waits to see closed.
close_inherited_fds() {
	local fd
	for fd in /proc/"${BASHPID}"/fd/*; do
		fd=${fd##*/}
		if [ "${fd}" -gt 2 ] && [ "${fd}" -ne 255 ]; then
			eval "exec ${fd}>&-" 2>/dev/null || true
		fi
	done
}

# wait_for SECONDS WHAT NAME COMMAND...: poll COMMAND until it succeeds; fail
# with NAME's log tail if it does not in time or NAME dies.
wait_for() {
	local deadline=$((SECONDS + $1)) what=$2 name=$3
	shift 3
	until "$@" >/dev/null 2>&1; do
		if ! running "${name}" || [ "${SECONDS}" -ge "${deadline}" ]; then
			log "${what}: not ready ($(running "${name}" && echo "timed out" || echo "${name} exited")); last lines of ${CLUSTER_LOGS}/${name}.log:"
			tail -25 "${CLUSTER_LOGS}/${name}.log" >&2 || true
			exit 1
		fi
		sleep 0.5
	done
}

kubectl() { "${KUBECTL}" --kubeconfig "${CLUSTER_KUBECONFIG}" "$@"; }

# ---------------------------------------------------------------- NODES

# NODES: 1 unless the running cluster recorded another count (so callers that
# do not set it, like hack/test-e2e.sh, only check a running cluster's health).
running_nodes=""
if running kube-apiserver; then running_nodes=$(cat "${CLUSTER_NODES_FILE}" 2>/dev/null || echo 1); fi
NODES="${NODES:-${running_nodes:-1}}"
if ! [[ "${NODES}" =~ ^[0-9]+$ ]] || [ "${NODES}" -lt 1 ] || [ "${NODES}" -gt "${CLUSTER_NODES_MAX}" ]; then
	log "NODES must be a number from 1 to ${CLUSTER_NODES_MAX}, not '${NODES}'"
	exit 64
fi
if [ -n "${running_nodes}" ] && [ "${running_nodes}" != "${NODES}" ]; then
	log "the cluster is running with NODES=${running_nodes}; run hack/cluster/down.sh before NODES=${NODES}"
	exit 64
fi
WORKERS=()
for ((k = 2; k <= NODES; k++)); do WORKERS+=("$(worker_name "${k}")"); done

# With workers, node 1's pods get a route to the workers' pods (through the
# host), kube-proxy counts every node's pods as cluster traffic, and the
# FORWARD guard lets traffic between all ranges inside the cluster's
# namespaces through. With one node all three stay as they were.
if [ "${NODES}" -gt 1 ]; then
	PROXY_CLUSTER_CIDR="${CLUSTER_ALL_PODS_CIDR}"
	NODE1_EXTRA_ROUTES=", {\"dst\": \"${CLUSTER_WORKER_POD_RANGE}\", \"gw\": \"${CLUSTER_NODE_IP}\"}"
	INSIDE_RANGES=("${CLUSTER_POD_CIDR}" "${CLUSTER_WORKER_POD_RANGE}" "${CLUSTER_WORKER_LINK_RANGE}")
else
	PROXY_CLUSTER_CIDR="${CLUSTER_POD_CIDR}"
	NODE1_EXTRA_ROUTES=""
	INSIDE_RANGES=("${CLUSTER_POD_CIDR}")
fi

# ---------------------------------------------------------------- install

install_deps() {
	apt_install etcd-server containerd runc containernetworking-plugins iptables conntrack \
		iproute2 openssl curl dnsutils podman debootstrap gcc libc6-dev
	"${DBBENCH_ROOT}/hack/cluster/build.sh" k8s coredns
}

# ---------------------------------------------------------------- PKI

# cert NAME CN ORG [SANS]: a key and a certificate signed by the cluster CA.
cert() {
	local name=$1 cn=$2 org=$3 sans=${4:-} subj="/CN=$2"
	[ -f "${CLUSTER_PKI}/${name}.crt" ] && return 0
	[ -n "${org}" ] && subj="/O=${org}${subj}"
	openssl genrsa -out "${CLUSTER_PKI}/${name}.key" 2048 2>/dev/null
	openssl req -new -key "${CLUSTER_PKI}/${name}.key" -subj "${subj}" -out "${CLUSTER_PKI}/${name}.csr" 2>/dev/null
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature,keyEncipherment"
		if [ -n "${sans}" ]; then
			echo "extendedKeyUsage=serverAuth,clientAuth"
			echo "subjectAltName=${sans}"
		else
			echo "extendedKeyUsage=clientAuth"
		fi
	} >"${CLUSTER_PKI}/${name}.ext"
	openssl x509 -req -in "${CLUSTER_PKI}/${name}.csr" -CA "${CLUSTER_PKI}/ca.crt" -CAkey "${CLUSTER_PKI}/ca.key" \
		-CAcreateserial -days 3650 -sha256 -extfile "${CLUSTER_PKI}/${name}.ext" -out "${CLUSTER_PKI}/${name}.crt" 2>/dev/null
	rm -f "${CLUSTER_PKI}/${name}.csr" "${CLUSTER_PKI}/${name}.ext"
}

# kubeconfig NAME CERT: a kubeconfig for the API server with a client cert.
kubeconfig() {
	local out="${CLUSTER_DIR}/$1.kubeconfig" c=$2
	[ -f "${out}" ] && return 0
	cat >"${out}.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: dbbench
  cluster:
    server: https://${CLUSTER_NODE_IP}:${CLUSTER_API_PORT}
    certificate-authority-data: $(base64 -w0 <"${CLUSTER_PKI}/ca.crt")
users:
- name: $1
  user:
    client-certificate-data: $(base64 -w0 <"${CLUSTER_PKI}/${c}.crt")
    client-key-data: $(base64 -w0 <"${CLUSTER_PKI}/${c}.key")
contexts:
- name: dbbench
  context: {cluster: dbbench, user: $1}
current-context: dbbench
EOF
	chmod 600 "${out}.tmp"
	mv "${out}.tmp" "${out}"
}

make_pki() {
	mkdir -p "${CLUSTER_PKI}"
	chmod 700 "${CLUSTER_PKI}"
	if [ ! -f "${CLUSTER_PKI}/ca.crt" ]; then
		step "generating certificates and service-account keys in ${CLUSTER_PKI}"
		openssl genrsa -out "${CLUSTER_PKI}/ca.key" 2048 2>/dev/null
		openssl req -x509 -new -key "${CLUSTER_PKI}/ca.key" -subj "/CN=dbbench-local-ca" -days 3650 -sha256 \
			-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
			-out "${CLUSTER_PKI}/ca.crt" 2>/dev/null
	fi
	if [ ! -f "${CLUSTER_PKI}/sa.key" ]; then
		openssl genrsa -out "${CLUSTER_PKI}/sa.key" 2048 2>/dev/null
		openssl rsa -in "${CLUSTER_PKI}/sa.key" -pubout -out "${CLUSTER_PKI}/sa.pub" 2>/dev/null
	fi
	cert apiserver kube-apiserver "" \
		"IP:${CLUSTER_NODE_IP},IP:${CLUSTER_API_SERVICE_IP},IP:127.0.0.1,DNS:localhost,DNS:${CLUSTER_NODE_NAME},DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.${CLUSTER_DOMAIN}"
	cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
	cert admin dbbench-admin system:masters
	cert controller-manager system:kube-controller-manager ""
	cert scheduler system:kube-scheduler ""
	cert kube-proxy system:kube-proxy ""
	cert kubelet-client "system:node:${CLUSTER_NODE_NAME}" system:nodes
	cert kubelet-serving "system:node:${CLUSTER_NODE_NAME}" system:nodes "IP:${CLUSTER_NODE_IP},DNS:${CLUSTER_NODE_NAME}"
	kubeconfig admin admin
	kubeconfig controller-manager controller-manager
	kubeconfig scheduler scheduler
	kubeconfig kube-proxy kube-proxy
	kubeconfig kubelet kubelet-client
	local w
	for w in "${WORKERS[@]}"; do
		cert "kubelet-client-${w}" "system:node:${w}" system:nodes
		cert "kubelet-serving-${w}" "system:node:${w}" system:nodes "IP:$(worker_node_ip "${w}"),DNS:${w}"
		kubeconfig "kubelet-${w}" "kubelet-client-${w}"
	done
}

# ---------------------------------------------------------------- configs

# put FILE: write stdin to FILE unless FILE already has that content (the
# kubelet and kube-proxy exit when their config file changes under them).
put() {
	local tmp="$1.tmp"
	cat >"${tmp}"
	if cmp -s "${tmp}" "$1"; then rm -f "${tmp}"; else mv "${tmp}" "$1"; fi
}

# cni_conflist IPAM_DIR RANGE ROUTES: a node's CNI config, a bridge on
# CLUSTER_BRIDGE with host-local addresses from RANGE (one JSON range) and
# ROUTES (JSON routes, comma-separated); the nodes' configs differ only in
# these.
cni_conflist() {
	local ipam=$1 range=$2 routes=$3
	cat <<EOF
{
  "cniVersion": "1.0.0",
  "name": "dbbench",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "${CLUSTER_BRIDGE}",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "${ipam}",
        "ranges": [[${range}]],
        "routes": [${routes}]
      }
    },
    {"type": "loopback"}
  ]
}
EOF
}

# containerd_toml ROOT STATE SOCKET CNI_CONF_DIR: a node's containerd config;
# the nodes' configs differ only in these paths.
containerd_toml() {
	local root=$1 state=$2 sock=$3 cni=$4
	cat <<EOF
version = 2
root = "${root}"
state = "${state}"

[grpc]
  address = "${sock}"

[plugins."io.containerd.internal.v1.opt"]
  path = "${root}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  # This machine does not allow lowering oom_score_adj (see local-cluster.md).
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "${state}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${cni}"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${CLUSTER_CONF}/certs.d"
EOF
}

# kubelet_yaml NODE_IP SERVING_CERT SOCKET POD_LOGS_DIR: a node's kubelet
# config (SERVING_CERT: the path of its .crt and .key without the suffix).
# Image garbage collection is off (high threshold 100): every image here was
# imported, none can be pulled again (there is no registry), and a disk
# past the threshold once deleted the pause image from two nodes in the
# middle of an end-to-end run, leaving every new pod without a sandbox.
kubelet_yaml() {
	local ip=$1 serving=$2 sock=$3 logs=$4
	cat <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${ip}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: ${serving}.crt
tlsPrivateKeyFile: ${serving}.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${CLUSTER_PKI}/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://${sock}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
clusterDNS: [${CLUSTER_DNS_IP}]
clusterDomain: ${CLUSTER_DOMAIN}
resolvConf: ${CLUSTER_CONF}/resolv.conf
podLogsDir: ${logs}
serializeImagePulls: false
evictionHard: {memory.available: 200Mi, nodefs.available: 2%, imagefs.available: 2%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
}

# kube_proxy_yaml NODE_NAME NODE_IP: a node's kube-proxy config. Its healthz
# and metrics ports are on the loopback of the node's network namespace.
kube_proxy_yaml() {
	local name=$1 ip=$2
	cat <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clusterCIDR: ${PROXY_CLUSTER_CIDR}
hostnameOverride: ${name}
clientConnection: {kubeconfig: ${CLUSTER_DIR}/kube-proxy.kubeconfig}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["${ip}/32"]
# Leave the host's conntrack sysctls alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

write_configs() {
	mkdir -p "${CLUSTER_CONF}/cni" "${CLUSTER_CONF}/certs.d"
	# Pods get routes to the pod and Service ranges only (no default route),
	# and no masquerading: they cannot address anything off this machine.
	cni_conflist "${CLUSTER_DIR}/cni-ipam" \
		"{\"subnet\": \"${CLUSTER_POD_CIDR}\", \"rangeStart\": \"10.88.0.2\", \"gateway\": \"${CLUSTER_NODE_IP}\"}" \
		"{\"dst\": \"${CLUSTER_SERVICE_CIDR}\", \"gw\": \"${CLUSTER_NODE_IP}\"}${NODE1_EXTRA_ROUTES}" |
		put "${CLUSTER_CONF}/cni/10-dbbench.conflist"
	# Image pulls never leave the machine: every registry resolves to a closed
	# loopback port, so a missing image fails fast with ErrImagePull.
	local host
	for host in _default docker.io registry.k8s.io quay.io ghcr.io gcr.io; do
		mkdir -p "${CLUSTER_CONF}/certs.d/${host}"
		printf 'server = "http://127.0.0.1:9"\n\n[host."http://127.0.0.1:9"]\n  capabilities = ["pull", "resolve"]\n' |
			put "${CLUSTER_CONF}/certs.d/${host}/hosts.toml"
	done
	# DBBENCH_CLUSTER_REGISTRY=127.0.0.1:PORT (or 10.88.0.1:PORT): containerd
	# also pulls from that plain-HTTP registry (hack/registry.sh). containerd
	# reads certs.d at each pull, so this applies to a running cluster; a
	# rerun without the setting removes it.
	local reg=${DBBENCH_CLUSTER_REGISTRY:-} dir
	case "${reg}" in
	"" | 127.0.0.1:[0-9]* | "${CLUSTER_NODE_IP}":[0-9]*) ;;
	*) log "DBBENCH_CLUSTER_REGISTRY must be 127.0.0.1:PORT or ${CLUSTER_NODE_IP}:PORT (plain HTTP), not ${reg}"; exit 64 ;;
	esac
	for dir in "${CLUSTER_CONF}/certs.d"/*:*; do
		if [ -d "${dir}" ] && [ "${dir##*/}" != "${reg}" ]; then rm -rf "${dir}"; fi
	done
	if [ -n "${reg}" ]; then
		mkdir -p "${CLUSTER_CONF}/certs.d/${reg}"
		printf 'server = "http://%s"\n\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' "${reg}" "${reg}" |
			put "${CLUSTER_CONF}/certs.d/${reg}/hosts.toml"
	fi
	containerd_toml "${CONTAINERD_ROOT}" "${CONTAINERD_STATE}" "${CONTAINERD_SOCK}" "${CLUSTER_CONF}/cni" |
		put "${CLUSTER_CONF}/containerd.toml"
	# Pods with dnsPolicy Default get this, never the host's resolvers.
	printf 'nameserver %s\n' "${CLUSTER_DNS_IP}" | put "${CLUSTER_CONF}/resolv.conf"
	kubelet_yaml "${CLUSTER_NODE_IP}" "${CLUSTER_PKI}/kubelet-serving" "${CONTAINERD_SOCK}" "${CLUSTER_DIR}/pod-logs" |
		put "${CLUSTER_CONF}/kubelet.yaml"
	kube_proxy_yaml "${CLUSTER_NODE_NAME}" "${CLUSTER_NODE_IP}" | put "${CLUSTER_CONF}/kube-proxy.yaml"
	put "${CLUSTER_CONF}/Corefile" <<EOF
# Cluster names only: nothing is forwarded to outside resolvers.
${CLUSTER_DOMAIN}:53 in-addr.arpa:53 ip6.arpa:53 {
    bind ${CLUSTER_DNS_IP}
    errors
    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
        kubeconfig ${CLUSTER_KUBECONFIG}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
}
EOF
}

# ---------------------------------------------------------------- network

sysctl_set() { # remember the first value seen so down.sh can restore it
	local key=$1 want=$2 file="/proc/sys/${1//.//}"
	[ -w "${file}" ] || return 0
	[ -f "${CLUSTER_RUN}/sysctl.${key}" ] || cat "${file}" >"${CLUSTER_RUN}/sysctl.${key}"
	echo "${want}" >"${file}"
}

setup_network() {
	# Another interface on the pod range (podman's default network,
	# cni-podman0, is also 10.88.0.0/16) would take the pods' return traffic.
	local other
	other=$(ip -o -4 addr show | awk -v b="${CLUSTER_BRIDGE}" '$2 != b && $4 ~ /^10\.88\./ { print $2 }' | sort -u | tr '\n' ' ')
	if [ -n "${other}" ]; then
		log "interface(s) ${other}hold addresses in ${CLUSTER_POD_CIDR}, the cluster's pod network; remove them (podman's default network: \`ip link delete cni-podman0\`) and rerun"
		exit 1
	fi
	if [ "${NODES}" -gt 1 ]; then
		# The workers' ranges must be ours alone too (our host veths are dbbnode<k>).
		other=$(ip -o -4 addr show | awk '$2 !~ /^dbbnode[0-9]+$/ && $4 ~ /^10\.(87|89)\./ { print $2 }' | sort -u | tr '\n' ' ')
		if [ -n "${other}" ]; then
			log "interface(s) ${other}hold addresses in ${CLUSTER_WORKER_LINK_RANGE} or ${CLUSTER_WORKER_POD_RANGE}, the worker nodes' networks; remove them and rerun"
			exit 1
		fi
	fi
	modprobe br_netfilter 2>/dev/null || true
	if ! ip link show "${CLUSTER_BRIDGE}" >/dev/null 2>&1; then
		step "creating bridge ${CLUSTER_BRIDGE} ${CLUSTER_NODE_IP}/16"
		ip link add "${CLUSTER_BRIDGE}" type bridge
	fi
	ip addr replace "${CLUSTER_NODE_IP}/16" dev "${CLUSTER_BRIDGE}"
	ip link set "${CLUSTER_BRIDGE}" up
	sysctl_set net.ipv4.ip_forward 1
	sysctl_set net.bridge.bridge-nf-call-iptables 1
	# The guard: traffic may be forwarded between pods (Service DNAT) and
	# nowhere else. Inserted first in FORWARD, before kube-proxy's chains.
	# With worker nodes, "between pods" means between any two of the ranges
	# inside the cluster's namespaces (every node's pods, the workers' node
	# IPs), whichever node they are on.
	iptables -w -N DBBENCH-FORWARD 2>/dev/null || iptables -w -F DBBENCH-FORWARD
	local src dst
	for src in "${INSIDE_RANGES[@]}"; do
		for dst in "${INSIDE_RANGES[@]}"; do
			iptables -w -A DBBENCH-FORWARD -s "${src}" -d "${dst}" -j ACCEPT
		done
	done
	for src in "${INSIDE_RANGES[@]}"; do
		iptables -w -A DBBENCH-FORWARD -s "${src}" -j DROP
		iptables -w -A DBBENCH-FORWARD -d "${src}" -j DROP
	done
	iptables -w -C FORWARD -j DBBENCH-FORWARD 2>/dev/null || iptables -w -I FORWARD 1 -j DBBENCH-FORWARD
}

# ---------------------------------------------------------------- components

start_etcd() {
	daemon etcd etcd --name dbbench --data-dir "${CLUSTER_DIR}/etcd" \
		--listen-client-urls "http://127.0.0.1:${CLUSTER_ETCD_CLIENT_PORT}" \
		--advertise-client-urls "http://127.0.0.1:${CLUSTER_ETCD_CLIENT_PORT}" \
		--listen-peer-urls "http://127.0.0.1:${CLUSTER_ETCD_PEER_PORT}" \
		--initial-advertise-peer-urls "http://127.0.0.1:${CLUSTER_ETCD_PEER_PORT}" \
		--initial-cluster "dbbench=http://127.0.0.1:${CLUSTER_ETCD_PEER_PORT}" \
		--listen-metrics-urls "" --log-level warn
	wait_for 60 etcd etcd curl -fsS "http://127.0.0.1:${CLUSTER_ETCD_CLIENT_PORT}/health"
}

start_apiserver() {
	daemon kube-apiserver "${K8S_BIN}/kube-apiserver" \
		--advertise-address="${CLUSTER_NODE_IP}" --bind-address="${CLUSTER_NODE_IP}" --secure-port="${CLUSTER_API_PORT}" \
		--etcd-servers="http://127.0.0.1:${CLUSTER_ETCD_CLIENT_PORT}" \
		--service-cluster-ip-range="${CLUSTER_SERVICE_CIDR}" \
		--client-ca-file="${CLUSTER_PKI}/ca.crt" \
		--tls-cert-file="${CLUSTER_PKI}/apiserver.crt" --tls-private-key-file="${CLUSTER_PKI}/apiserver.key" \
		--kubelet-client-certificate="${CLUSTER_PKI}/apiserver-kubelet-client.crt" \
		--kubelet-client-key="${CLUSTER_PKI}/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority="${CLUSTER_PKI}/ca.crt" \
		--kubelet-preferred-address-types=InternalIP \
		--service-account-issuer="https://kubernetes.default.svc.${CLUSTER_DOMAIN}" \
		--service-account-key-file="${CLUSTER_PKI}/sa.pub" \
		--service-account-signing-key-file="${CLUSTER_PKI}/sa.key" \
		--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
		--allow-privileged=true --profiling=false --v=1
	wait_for 120 kube-apiserver kube-apiserver \
		curl -fsS --cacert "${CLUSTER_PKI}/ca.crt" --cert "${CLUSTER_PKI}/admin.crt" --key "${CLUSTER_PKI}/admin.key" \
		"https://${CLUSTER_NODE_IP}:${CLUSTER_API_PORT}/readyz"
}

start_controllers() {
	daemon kube-controller-manager "${K8S_BIN}/kube-controller-manager" \
		--kubeconfig="${CLUSTER_DIR}/controller-manager.kubeconfig" \
		--authentication-kubeconfig="${CLUSTER_DIR}/controller-manager.kubeconfig" \
		--authorization-kubeconfig="${CLUSTER_DIR}/controller-manager.kubeconfig" \
		--bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
		--service-account-private-key-file="${CLUSTER_PKI}/sa.key" --root-ca-file="${CLUSTER_PKI}/ca.crt" \
		--cluster-signing-cert-file="${CLUSTER_PKI}/ca.crt" --cluster-signing-key-file="${CLUSTER_PKI}/ca.key" \
		--service-cluster-ip-range="${CLUSTER_SERVICE_CIDR}" --profiling=false --v=1
	daemon kube-scheduler "${K8S_BIN}/kube-scheduler" \
		--kubeconfig="${CLUSTER_DIR}/scheduler.kubeconfig" \
		--authentication-kubeconfig="${CLUSTER_DIR}/scheduler.kubeconfig" \
		--authorization-kubeconfig="${CLUSTER_DIR}/scheduler.kubeconfig" \
		--bind-address=127.0.0.1 --leader-elect=false --profiling=false --v=1
}

start_containerd() {
	mkdir -p "${CONTAINERD_ROOT}" "${CONTAINERD_STATE}"
	# The runc shims put their sockets in /run/containerd/s whatever the
	# config says; remember whether /run/containerd was ours to remove.
	[ -d /run/containerd ] || touch "${CLUSTER_RUN}/created-run-containerd"
	daemon containerd containerd --config "${CLUSTER_CONF}/containerd.toml"
	wait_for 60 containerd containerd containerd_up
}

load_images() {
	# The sandbox image first (pods cannot start without it), then whatever
	# hack/images.sh has already built.
	"${DBBENCH_ROOT}/hack/images.sh" pause
	"${DBBENCH_ROOT}/hack/images.sh" --load
}

start_kubelet() {
	mkdir -p "${KUBELET_ROOT}" "${CLUSTER_DIR}/pod-logs"
	[ -d /var/log/containers ] || touch "${CLUSTER_RUN}/created-var-log-containers"
	daemon kubelet "${K8S_BIN}/kubelet" --config="${CLUSTER_CONF}/kubelet.yaml" \
		--kubeconfig="${CLUSTER_DIR}/kubelet.kubeconfig" --root-dir="${KUBELET_ROOT}" \
		--node-ip="${CLUSTER_NODE_IP}" --hostname-override="${CLUSTER_NODE_NAME}" --v=1
	wait_for 120 "node ${CLUSTER_NODE_NAME} Ready" kubelet node_ready
}

node_ready() {
	[ "$(kubectl get node "${CLUSTER_NODE_NAME}" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

start_kube_proxy() {
	daemon kube-proxy "${K8S_BIN}/kube-proxy" --config="${CLUSTER_CONF}/kube-proxy.yaml" --v=1
	wait_for 60 kube-proxy kube-proxy curl -fsS http://127.0.0.1:10256/healthz
}

dns_answers() {
	[ "$(dig +short +time=1 +tries=1 "@${CLUSTER_DNS_IP}" "kubernetes.default.svc.${CLUSTER_DOMAIN}")" = "${CLUSTER_API_SERVICE_IP}" ]
}

start_coredns() {
	daemon coredns "${COREDNS_BIN}" -conf "${CLUSTER_CONF}/Corefile"
	wait_for 60 "CoreDNS answering kubernetes.default" coredns dns_answers
}

# install_local_path: dynamic volumes, the default StorageClass local-path
# (hack/cluster/local-path.sh; docs/testing.md, "Dynamic volumes on the local
# cluster"). Run on every up.sh, so a running cluster gets it too and its
# node list follows NODES. DBBENCH_LOCAL_PATH=0 skips it.
install_local_path() {
	if [ "${DBBENCH_LOCAL_PATH:-1}" = 0 ]; then
		step "not installing the local-path volume provisioner (DBBENCH_LOCAL_PATH=0)"
		return 0
	fi
	step "installing the local-path volume provisioner (default StorageClass local-path)"
	if ! "${DBBENCH_ROOT}/hack/cluster/local-path.sh" >&2; then
		log "the cluster is up, but installing its volume provisioner failed: hack/cluster/local-path.sh (output above); rerun it alone to retry, or DBBENCH_LOCAL_PATH=0 hack/cluster/up.sh to go without dynamic volumes"
		exit 1
	fi
}

# ---------------------------------------------------------------- worker nodes
#
# Worker k runs containerd, the kubelet and kube-proxy in network namespace
# ${CLUSTER_NODE_NAME}-k, entered with nsenter --net only: `ip netns exec`
# would also give each a mount namespace with a fresh /sys (no cgroup
# mounts for the kubelet) and the kubelet's volume mounts would be invisible
# to containerd. They share the host's mounts, each under its own directory
# (env.sh: worker_dir), and its own cgroup root /NAME so that no two kubelets
# manage the same kubepods cgroup.

in_netns() {
	local ns=$1
	shift
	nsenter --net="/run/netns/${ns}" -- "$@"
}

# ns_sysctl NS KEY VALUE: net.* sysctls are per namespace (a new one starts
# from the kernel's defaults, not the host's values).
ns_sysctl() {
	local f="/proc/sys/${2//.//}"
	in_netns "$1" sh -c "[ ! -w '${f}' ] || echo '$3' >'${f}'"
}

setup_worker_network() {
	local w=$1 veth host_ip node_ip r
	veth=$(worker_veth "${w}")
	host_ip=$(worker_host_ip "${w}")
	node_ip=$(worker_node_ip "${w}")
	if [ ! -e "/run/netns/${w}" ]; then
		[ -d /run/netns ] || touch "${CLUSTER_RUN}/created-run-netns"
		step "creating network namespace ${w} (node IP ${node_ip}, pods $(worker_pod_cidr "${w}"))"
		ip netns add "${w}"
	fi
	ip link show "${veth}" >/dev/null 2>&1 || ip link add "${veth}" type veth peer name eth0 netns "${w}"
	ip addr replace "${host_ip}/24" dev "${veth}"
	ip link set "${veth}" up
	in_netns "${w}" ip link set lo up
	in_netns "${w}" ip addr replace "${node_ip}/24" dev eth0
	in_netns "${w}" ip link set eth0 up
	# Routes to the cluster's ranges only, through the host (where the
	# FORWARD guard applies): the namespace has no default route.
	for r in "${CLUSTER_POD_CIDR}" "${CLUSTER_WORKER_POD_RANGE}" "${CLUSTER_WORKER_LINK_RANGE}" "${CLUSTER_SERVICE_CIDR}"; do
		in_netns "${w}" ip route replace "${r}" via "${host_ip}" dev eth0
	done
	ip route replace "$(worker_pod_cidr "${w}")" via "${node_ip}" dev "${veth}"
	ns_sysctl "${w}" net.ipv4.ip_forward 1
	ns_sysctl "${w}" net.bridge.bridge-nf-call-iptables 1
}

# setup_worker_cgroups NAME: the kubelet requires its cgroupRoot to exist in
# every v1 hierarchy; cpuset children start with no CPUs or memory nodes.
setup_worker_cgroups() {
	local w=$1 hier f
	for hier in /sys/fs/cgroup/*/; do
		[ "$(stat -f -c %T "${hier}")" = cgroupfs ] || continue
		mkdir -p "${hier}${w}"
	done
	for f in cpuset.cpus cpuset.mems; do
		if [ -f "/sys/fs/cgroup/cpuset/${w}/${f}" ] && [ -z "$(cat "/sys/fs/cgroup/cpuset/${w}/${f}")" ]; then
			cat "/sys/fs/cgroup/cpuset/${f}" >"/sys/fs/cgroup/cpuset/${w}/${f}"
		fi
	done
}

write_worker_configs() {
	local w=$1 d gw
	d=$(worker_dir "${w}")
	gw=$(worker_pod_gw "${w}")
	mkdir -p "${d}/conf/cni" "${d}/containerd" "${d}/run/containerd" "${d}/kubelet" "${d}/pod-logs" \
		"${CLUSTER_RUN}/${w}" "${CLUSTER_LOGS}/${w}"
	# The bridge lives in the worker's namespace; pods reach the other
	# nodes' pods, the host (API server, DNS) and Services through it. The
	# links' range is routed too: the host reaches a worker's pods from its
	# end of the link (kube-proxy masquerades node 1's own Service traffic
	# to that address), and without the route the pod's reply is dropped,
	# so the API server could not call a webhook (an operator's) served by a
	# pod on a worker.
	cni_conflist "${d}/cni-ipam" \
		"{\"subnet\": \"$(worker_pod_cidr "${w}")\", \"gateway\": \"${gw}\"}" \
		"{\"dst\": \"${CLUSTER_SERVICE_CIDR}\", \"gw\": \"${gw}\"}, {\"dst\": \"${CLUSTER_POD_CIDR}\", \"gw\": \"${gw}\"}, {\"dst\": \"${CLUSTER_WORKER_POD_RANGE}\", \"gw\": \"${gw}\"}, {\"dst\": \"${CLUSTER_WORKER_LINK_RANGE}\", \"gw\": \"${gw}\"}" |
		put "${d}/conf/cni/10-dbbench.conflist"
	containerd_toml "${d}/containerd" "${d}/run/containerd" "$(worker_sock "${w}")" "${d}/conf/cni" |
		put "${d}/conf/containerd.toml"
	{
		kubelet_yaml "$(worker_node_ip "${w}")" "${CLUSTER_PKI}/kubelet-serving-${w}" "$(worker_sock "${w}")" "${d}/pod-logs"
		echo "cgroupRoot: /${w}"
	} | put "${d}/conf/kubelet.yaml"
	kube_proxy_yaml "${w}" "$(worker_node_ip "${w}")" | put "${d}/conf/kube-proxy.yaml"
}

# forget_stale_workers deletes the Node objects of workers that an earlier
# up.sh with a larger NODES registered (etcd keeps them across down.sh), so
# that the cluster has exactly NODES nodes.
forget_stale_workers() {
	local n w keep
	for n in $(kubectl get nodes -o 'jsonpath={.items[*].metadata.name}'); do
		[[ "${n}" =~ ^${CLUSTER_NODE_NAME}-[0-9]+$ ]] || continue
		keep=""
		for w in "${WORKERS[@]}"; do [ "${w}" != "${n}" ] || keep=1; done
		if [ -z "${keep}" ]; then
			step "deleting node ${n}: not one of NODES=${NODES}"
			kubectl delete node "${n}" --wait=false >/dev/null
		fi
	done
}

worker_containerd_up() { containerd_up_at "$(worker_sock "$1")"; }

start_worker_containerds() {
	local w
	for w in "${WORKERS[@]}"; do
		write_worker_configs "${w}"
		setup_worker_network "${w}"
		setup_worker_cgroups "${w}"
		daemon "${w}/containerd" nsenter --net="/run/netns/${w}" -- containerd --config "$(worker_dir "${w}")/conf/containerd.toml"
	done
	for w in "${WORKERS[@]}"; do
		wait_for 60 "containerd of ${w}" "${w}/containerd" worker_containerd_up "${w}"
	done
}

node_ready_named() {
	[ "$(kubectl get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

start_worker_kubelets() {
	local w d
	for w in "${WORKERS[@]}"; do
		d=$(worker_dir "${w}")
		daemon "${w}/kubelet" nsenter --net="/run/netns/${w}" -- "${K8S_BIN}/kubelet" --config="${d}/conf/kubelet.yaml" \
			--kubeconfig="${CLUSTER_DIR}/kubelet-${w}.kubeconfig" --root-dir="${d}/kubelet" \
			--node-ip="$(worker_node_ip "${w}")" --hostname-override="${w}" --v=1
	done
	for w in "${WORKERS[@]}"; do
		wait_for 120 "node ${w} Ready" "${w}/kubelet" node_ready_named "${w}"
	done
}

start_worker_proxies() {
	local w
	for w in "${WORKERS[@]}"; do
		daemon "${w}/kube-proxy" nsenter --net="/run/netns/${w}" -- "${K8S_BIN}/kube-proxy" \
			--config="$(worker_dir "${w}")/conf/kube-proxy.yaml" --v=1
	done
	for w in "${WORKERS[@]}"; do
		wait_for 60 "kube-proxy of ${w}" "${w}/kube-proxy" in_netns "${w}" curl -fsS http://127.0.0.1:10256/healthz
	done
}

# check_socket_paths: containerd refuses a socket path over 104 bytes (its
# ttrpc socket's is the longest), which under a deep DBBENCH_CACHE would
# stop a node's containerd; say so before anything starts.
check_socket_paths() {
	local w p longest="${CONTAINERD_SOCK}.ttrpc"
	for w in "${WORKERS[@]}"; do
		p="$(worker_sock "${w}").ttrpc"
		[ ${#p} -le ${#longest} ] || longest=${p}
	done
	if [ ${#longest} -gt 104 ]; then
		log "${longest} is ${#longest} bytes, over the 104 containerd allows a socket path: set DBBENCH_CACHE (now ${DBBENCH_CACHE}) to a shorter directory"
		exit 1
	fi
}

# ---------------------------------------------------------------- main

mkdir -p "${CLUSTER_DIR}" "${CLUSTER_LOGS}" "${CLUSTER_RUN}" "${CLUSTER_CONF}"
check_socket_paths
echo "${NODES}" >"${CLUSTER_NODES_FILE}"
install_deps
make_pki
write_configs
setup_network
start_etcd
start_apiserver
start_controllers
forget_stale_workers
start_containerd
start_worker_containerds
load_images
start_kubelet
start_worker_kubelets
start_kube_proxy
start_worker_proxies
start_coredns
wait_for 60 "default service account" kube-controller-manager kubectl -n default get serviceaccount default
install_local_path
if [ "${NODES}" -gt 1 ]; then
	step "cluster ready: nodes ${CLUSTER_NODE_NAME} (${CLUSTER_NODE_IP}) $(for w in "${WORKERS[@]}"; do printf '%s (%s) ' "${w}" "$(worker_node_ip "${w}")"; done)logs in ${CLUSTER_LOGS}"
else
	step "cluster ready: node ${CLUSTER_NODE_NAME} (${CLUSTER_NODE_IP}), logs in ${CLUSTER_LOGS}"
fi
log "admin kubeconfig: ${CLUSTER_KUBECONFIG} (kubectl: ${KUBECTL})"
echo "export KUBECONFIG=${CLUSTER_KUBECONFIG}"
