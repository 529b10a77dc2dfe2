#!/usr/bin/env bash
# local-path.sh gives the local cluster dynamic volumes: rancher's
# local-path-provisioner (the provisioner kind clusters ship), built from its
# Go module, as the default StorageClass `local-path` on every node, each
# node's volumes under that node's own directory. hack/cluster/up.sh runs it
# once the cluster is ready; it can also be run by hand on a running cluster.
#
#   hack/cluster/local-path.sh            # build (cached), load the images, apply, wait for the provisioner
#   hack/cluster/local-path.sh --build    # only build the binary into the cache; prints its path
#   hack/cluster/local-path.sh --render   # print the manifests it would apply (no cluster needed)
#
# 1. The binary: `go install github.com/rancher/local-path-provisioner@VERSION`
#    (static, CGO_ENABLED=0) into ${TOOLS_BIN}/local-path-provisioner-VERSION/,
#    once per version (env.sh: LOCAL_PATH_VERSION, LOCAL_PATH_BIN).
# 2. The images, with the project's image tooling: `hack/images.sh
#    local-path-provisioner local-path-helper` builds them (FROM scratch + the
#    binary; bookworm-slim for the helper pods, which need a shell) and
#    imports them into every node's containerd, as it does for every other
#    image. The cluster pulls from no registry by default (docs/local-cluster.md,
#    "Pulling from a registry"), so nothing is pushed.
# 3. The manifests in hack/cluster/local-path/*.yaml, in file-name order, with
#    @LOCAL_PATH_IMAGE@, @LOCAL_PATH_HELPER_IMAGE@, @NODE_PATH_MAP@ (one entry
#    per node of the running cluster: node 1 ${CLUSTER_LOCAL_PATH_DIR}, worker
#    k $(worker_dir k)/local-path), @PROVISIONER_NODE@ (node 1) and
#    @IMAGE_HASH@ (the provisioner image's content hash, so that a rebuilt
#    image under the same tag rolls the Deployment) replaced, applied with
#    kubectl; then it waits for the Deployment to be available.
#
# Node count: the running cluster's (env.sh: CLUSTER_NODES_FILE), else NODES,
# else 1. Everything it logs goes to stderr; --build and --render print their
# result on stdout.
source "$(dirname "$0")/../lib.sh"
source "${DBBENCH_ROOT}/hack/cluster/env.sh"

MANIFESTS="${DBBENCH_ROOT}/hack/cluster/local-path"
NAMESPACE=local-path-storage
DEPLOYMENT=local-path-provisioner

# build_binary builds the provisioner into the cache unless it is there
# (hack/cluster/build.sh).
build_binary() { "${DBBENCH_ROOT}/hack/cluster/build.sh" local-path; }

# node_count: the running cluster's, else NODES, else 1.
node_count() {
	local n
	n=$(cat "${CLUSTER_NODES_FILE}" 2>/dev/null || true)
	n=${n:-${NODES:-1}}
	if ! [[ "${n}" =~ ^[0-9]+$ ]] || [ "${n}" -lt 1 ] || [ "${n}" -gt "${CLUSTER_NODES_MAX}" ]; then
		log "node count must be a number from 1 to ${CLUSTER_NODES_MAX}, not '${n}'"
		return 64
	fi
	echo "${n}"
}

# node_path_map N: the config.json nodePathMap (one JSON line) for nodes
# 1..N, each node's volumes under its own directory.
node_path_map() {
	local n=$1 k name dir sep="" out="["
	for ((k = 1; k <= n; k++)); do
		if [ "${k}" -eq 1 ]; then
			name=${CLUSTER_NODE_NAME}
			dir=${CLUSTER_LOCAL_PATH_DIR}
		else
			name=$(worker_name "${k}")
			dir="$(worker_dir "${name}")/local-path"
		fi
		# Written into JSON and YAML unquoted by anything but "": keep to
		# characters that need no escaping.
		if ! [[ "${dir}" =~ ^/[A-Za-z0-9._/-]+$ ]] || ! [[ "${name}" =~ ^[a-z0-9.-]+$ ]]; then
			log "node ${name}: its volume directory ${dir} (or its name) has characters this script does not escape"
			return 1
		fi
		out+="${sep}{\"node\": \"${name}\", \"paths\": [\"${dir}\"]}"
		sep=", "
	done
	echo "${out}]"
}

# render IMAGE_HASH: the manifests, placeholders replaced, on stdout.
render() {
	local hash=$1 n map f text
	n=$(node_count)
	map=$(node_path_map "${n}")
	for f in "${MANIFESTS}"/*.yaml; do
		text=$(<"${f}")
		# The replacements are quoted: bash 5.2 would otherwise expand & in them.
		text=${text//@LOCAL_PATH_IMAGE@/"${LOCAL_PATH_IMAGE}"}
		text=${text//@LOCAL_PATH_HELPER_IMAGE@/"${LOCAL_PATH_HELPER_IMAGE}"}
		text=${text//@NODE_PATH_MAP@/"${map}"}
		text=${text//@PROVISIONER_NODE@/"${CLUSTER_NODE_NAME}"}
		text=${text//@IMAGE_HASH@/"${hash}"}
		if [[ "${text}" =~ @[A-Z_]+@ ]]; then
			log "${f}: placeholder ${BASH_REMATCH[0]} is not replaced by local-path.sh"
			return 1
		fi
		printf -- '---\n# %s\n%s\n' "${f#"${DBBENCH_ROOT}/"}" "${text}"
	done
}

kubectl() { "${KUBECTL}" --kubeconfig "${CLUSTER_KUBECONFIG}" "$@"; }

# explain_failure: what the provisioner's pods and events say.
explain_failure() {
	log "the ${DEPLOYMENT} Deployment did not become available; its pods and recent events:"
	explain_deployment "${NAMESPACE}" "${DEPLOYMENT}"
}

install() {
	require_local_cluster local-path.sh || return 1
	build_binary
	# Builds what is not cached and imports it into every node's containerd.
	"${DBBENCH_ROOT}/hack/images.sh" local-path-provisioner local-path-helper >&2
	local hash
	hash=$(cat "${CLUSTER_DIR}/images-loaded/local-path-provisioner" 2>/dev/null || true)
	if [ -z "${hash}" ]; then
		log "hack/images.sh did not load local-path-provisioner into the cluster's containerd"
		return 1
	fi
	render "${hash}" | kubectl apply -f - >&2
	if ! kubectl -n "${NAMESPACE}" rollout status "deployment/${DEPLOYMENT}" --timeout=180s >&2; then
		explain_failure
		return 1
	fi
	log "StorageClass local-path (default): ${LOCAL_PATH_IMAGE}, volumes under ${CLUSTER_LOCAL_PATH_DIR} and each worker's $(worker_dir '<worker>')/local-path"
}

case "${1:-}" in
"") install ;;
--build) build_binary && echo "${LOCAL_PATH_BIN}" ;;
--render) render "${IMAGE_HASH:-unknown}" ;;
-h | --help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0" ;;
*) log "usage: $0 [--build | --render]"; exit 64 ;;
esac
