#!/usr/bin/env bash
# operators.sh installs another operator on the local cluster, as a user
# would install it: a database operator, so that databases[].template runs
# against a real one, and Flux, so that suites are applied from Git by a
# real GitOps controller (docs/testing.md, "Real operators"):
#
#   hack/operators.sh cnpg            # build (cached), load the images, apply the release manifest, wait for the webhooks
#   hack/operators.sh cnpg --build    # only build the manager into the cache; prints its path
#   hack/operators.sh cnpg --render   # print the manifest it would apply (no cluster needed)
#   hack/operators.sh flux            # build source- and kustomize-controller (cached), load their images, apply CRDs and hack/flux/flux-system.yaml
#   hack/operators.sh flux --build    # only build the two controllers into the cache; prints their paths
#
# CloudNativePG (version: hack/cnpg/go.mod's requirement, env.sh CNPG_VERSION):
# 1. The manager: `go build` of github.com/cloudnative-pg/cloudnative-pg/cmd/manager
#    from hack/cnpg (static, CGO_ENABLED=0, the version in its ldflags as
#    upstream's Makefile sets it) into ${TOOLS_BIN}/cnpg-manager-VERSION/, once
#    per version: only the first build pays the compile (about 6 min cold on
#    2 cores).
# 2. The images, with the project's image tooling: `hack/images.sh
#    cnpg-operator cnpg-postgresql-15 cnpg-postgresql-17` builds the operator
#    image (FROM scratch + the manager) and the PostgreSQL operand images
#    (Debian's postgresql-15 and -17, images/cnpg-postgresql) and imports them
#    into every node's containerd.
# 3. The release manifest that ships in the module (releases/cnpg-VERSION.yaml,
#    the file upstream's install docs apply), with two edits an air-gapped
#    user makes: the operator image is ours, and imagePullPolicy Always becomes
#    IfNotPresent (the local cluster pulls from no registry). Applied
#    server-side (its CRDs are too large for the last-applied annotation).
# 4. Annotates the Deployment's pod template with the operator image's content
#    hash, so that a rebuilt image under the same tag rolls the operator.
# 5. Waits for the Deployment, then until the API server accepts a Cluster
#    through the operator's webhooks (a server-side dry run): the operator
#    injects its own CA into the webhook configurations after it starts.
#
# Everything it logs goes to stderr; --build and --render print their result
# on stdout.
source "$(dirname "$0")/lib.sh"
source "${DBBENCH_ROOT}/hack/cluster/env.sh"

CNPG_NAMESPACE=cnpg-system
CNPG_DEPLOYMENT=cnpg-controller-manager
CNPG_UPSTREAM_IMAGE="ghcr.io/cloudnative-pg/cloudnative-pg:${CNPG_VERSION#v}"

kubectl() { "${KUBECTL}" --kubeconfig "${CLUSTER_KUBECONFIG}" "$@"; }

# cnpg_build builds the manager into the cache unless it is there (under a
# lock: the prefetch may be building it).
cnpg_build() { cached_build "${CNPG_BIN}" "CloudNativePG's manager ${CNPG_VERSION}" cnpg_go_build; }

cnpg_go_build() {
	(cd "${DBBENCH_ROOT}/hack/cnpg" && CGO_ENABLED=0 go build -trimpath \
		-ldflags "-s -w -X github.com/cloudnative-pg/cloudnative-pg/pkg/versions.buildVersion=${CNPG_VERSION#v}" \
		-o "$1" github.com/cloudnative-pg/cloudnative-pg/cmd/manager)
}

# cnpg_release_manifest prints the path of the release manifest in the
# module (downloaded into the module cache if it is not there).
cnpg_release_manifest() {
	local dir f
	dir=$(cd "${DBBENCH_ROOT}/hack/cnpg" && go mod download -json github.com/cloudnative-pg/cloudnative-pg |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
	f="${dir}/releases/cnpg-${CNPG_VERSION#v}.yaml"
	if [ ! -f "${f}" ]; then
		log "no release manifest ${f} in the module github.com/cloudnative-pg/cloudnative-pg@${CNPG_VERSION}"
		return 1
	fi
	echo "${f}"
}

# cnpg_render prints the release manifest with our operator image and no
# forced pulls; it fails if either edit found nothing to change.
cnpg_render() {
	local f text
	f=$(cnpg_release_manifest)
	text=$(<"${f}")
	if [[ "${text}" != *"${CNPG_UPSTREAM_IMAGE}"* || "${text}" != *"imagePullPolicy: Always"* ]]; then
		log "${f}: no ${CNPG_UPSTREAM_IMAGE} or no 'imagePullPolicy: Always' to replace; the release layout changed"
		return 1
	fi
	text=${text//"${CNPG_UPSTREAM_IMAGE}"/"${CNPG_OPERATOR_IMAGE}"}
	text=${text//"imagePullPolicy: Always"/"imagePullPolicy: IfNotPresent"}
	printf '%s\n' "${text}"
}

# cnpg_probe_cluster: a minimal Cluster for the webhook dry run.
cnpg_probe_cluster() {
	cat <<EOF
apiVersion: postgresql.cnpg.io/v1
kind: Cluster
metadata: {name: dbbench-webhook-probe, namespace: default}
spec:
  instances: 1
  imageName: ${CNPG_POSTGRES_IMAGE}:17
  storage: {size: 1Gi}
EOF
}

cnpg_explain_failure() {
	log "CloudNativePG's operator is not ready; its pods, recent events and logs:"
	explain_deployment "${CNPG_NAMESPACE}" "${CNPG_DEPLOYMENT}"
}

cnpg_install() {
	local start=${SECONDS} deadline out
	require_local_cluster operators.sh || return 1
	cnpg_build
	"${DBBENCH_ROOT}/hack/images.sh" cnpg-operator cnpg-postgresql-15 cnpg-postgresql-17 >&2
	if [ ! -s "${CLUSTER_DIR}/images-loaded/cnpg-operator" ]; then
		log "hack/images.sh did not load cnpg-operator into the cluster's containerd"
		return 1
	fi
	cnpg_render | kubectl apply --server-side --force-conflicts -f - >&2
	# The tag stays the version's: a rebuilt image (another content hash)
	# rolls the operator through an annotation, as local-path.sh does.
	kubectl -n "${CNPG_NAMESPACE}" patch "deployment/${CNPG_DEPLOYMENT}" --type merge -p \
		"{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{\"dbbench.io/image-hash\":\"$(cat "${CLUSTER_DIR}/images-loaded/cnpg-operator")\"}}}}}" >&2
	if ! kubectl -n "${CNPG_NAMESPACE}" rollout status "deployment/${CNPG_DEPLOYMENT}" --timeout=300s >&2; then
		cnpg_explain_failure
		return 1
	fi
	deadline=$((SECONDS + 120))
	until out=$(cnpg_probe_cluster | kubectl create --dry-run=server -f - 2>&1); do
		if [ "${SECONDS}" -ge "${deadline}" ]; then
			log "the API server still refuses a Cluster after 120 s: ${out}"
			cnpg_explain_failure
			return 1
		fi
		sleep 2
	done
	log "CloudNativePG ${CNPG_VERSION} ready in $((SECONDS - start)) s: ${CNPG_OPERATOR_IMAGE}, operands ${CNPG_POSTGRES_IMAGE}:15 and :17"
}

# Flux (versions: hack/flux/go.mod's requirements, env.sh FLUX_*): the two
# controllers a Kustomization from a GitRepository needs, built with `go
# build` from hack/flux into ${TOOLS_BIN} once per version (a cold compile
# of several minutes on 2 cores: they link the cloud providers' SDKs for
# their other sources), one image each FROM scratch, their CRDs from the
# modules' config/crd/bases, and hack/flux/flux-system.yaml.
FLUX_NAMESPACE=flux-system

flux_build() {
	cached_build "${FLUX_SOURCE_BIN}" "Flux source-controller ${FLUX_SOURCE_VERSION}" flux_go_build github.com/fluxcd/source-controller &&
		cached_build "${FLUX_KUSTOMIZE_BIN}" "Flux kustomize-controller ${FLUX_KUSTOMIZE_VERSION}" flux_go_build github.com/fluxcd/kustomize-controller
}

# flux_go_build PACKAGE OUT, a builder for cached_build.
flux_go_build() {
	(cd "${DBBENCH_ROOT}/hack/flux" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$2" "$1")
}

# flux_module_dir MODULE prints the module's directory in the module cache.
flux_module_dir() {
	(cd "${DBBENCH_ROOT}/hack/flux" && go mod download -json "$1" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
}

flux_render() {
	local text
	text=$(<"${DBBENCH_ROOT}/hack/flux/flux-system.yaml")
	text=${text//@SOURCE_IMAGE@/"${FLUX_SOURCE_IMAGE}"}
	text=${text//@KUSTOMIZE_IMAGE@/"${FLUX_KUSTOMIZE_IMAGE}"}
	text=${text//@NODE@/"${CLUSTER_NODE_NAME}"}
	text=${text//@SOURCE_HASH@/"$(cat "${CLUSTER_DIR}/images-loaded/flux-source-controller" 2>/dev/null)"}
	text=${text//@KUSTOMIZE_HASH@/"$(cat "${CLUSTER_DIR}/images-loaded/flux-kustomize-controller" 2>/dev/null)"}
	printf '%s\n' "${text}"
}

flux_install() {
	local start=${SECONDS} m dir
	require_local_cluster operators.sh || return 1
	flux_build
	"${DBBENCH_ROOT}/hack/images.sh" flux-source-controller flux-kustomize-controller >&2
	for m in source-controller kustomize-controller; do
		if [ ! -s "${CLUSTER_DIR}/images-loaded/flux-${m}" ]; then
			log "hack/images.sh did not load flux-${m} into the cluster's containerd"
			return 1
		fi
		dir=$(flux_module_dir "github.com/fluxcd/${m}")
		# Server-side: the CRDs exceed the client-side annotation limit.
		kubectl apply --server-side --force-conflicts -f "${dir}/config/crd/bases" >&2
	done
	flux_render | kubectl apply --server-side --force-conflicts -f - >&2
	for m in source-controller kustomize-controller; do
		if ! kubectl -n "${FLUX_NAMESPACE}" rollout status "deployment/${m}" --timeout=300s >&2; then
			log "Flux's ${m} is not ready; its pods, recent events and logs:"
			explain_deployment "${FLUX_NAMESPACE}" "${m}"
			return 1
		fi
	done
	log "Flux ready in $((SECONDS - start)) s: source-controller ${FLUX_SOURCE_VERSION}, kustomize-controller ${FLUX_KUSTOMIZE_VERSION}"
}

case "${1:-} ${2:-}" in
"cnpg ") cnpg_install ;;
"cnpg --build") cnpg_build && echo "${CNPG_BIN}" ;;
"cnpg --render") cnpg_render ;;
"flux ") flux_install ;;
"flux --build") flux_build && echo "${FLUX_SOURCE_BIN}" && echo "${FLUX_KUSTOMIZE_BIN}" ;;
"flux --render") flux_render ;;
"-h "* | "--help "*) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0" ;;
*) log "usage: $0 cnpg|flux [--build | --render]"; exit 64 ;;
esac
