#!/usr/bin/env bash
# demo-registry.sh is `make demo-registry`: `CLUSTER=existing make demo` on
# the local cluster set up the way a cluster of the user's is, pulling every
# dbbench and database image from a registry instead of having them imported:
#
#   1. a real registry (Debian's docker-registry, plain HTTP) on
#      127.0.0.1:${REGISTRY_PORT:-5000}, its data in ${DBBENCH_CACHE}/registry;
#   2. `make push REGISTRY=127.0.0.1:PORT TAG=registry-demo PUSH_DATABASES=1`
#      with the demo's MariaDB images;
#   3. hack/cluster/up.sh with DBBENCH_CLUSTER_REGISTRY=127.0.0.1:PORT (starts
#      the cluster if it is down; containerd may now pull from the registry),
#      and the registry's images dropped from containerd so each must be pulled;
#   4. a values file as README "Install on your cluster" writes one, and
#      CLUSTER=existing DEMO_VALUES=... hack/demo.sh;
#   5. a check that containerd holds the manager, agent and MariaDB images
#      under the registry's name, i.e. pulled from it during the demo.
#
# At the end, pass or fail, the release goes back to what `make demo`
# installs, containerd forgets the registry's names, the cluster's registry
# setting is removed (hack/cluster/up.sh without it) and the registry stops. The cluster is left running, as after
# `make demo`. Run it holding the cluster lock on a shared machine.
#
# Why the end re-pulls the docker.io images (reverify): the kubelet (1.35+,
# KEP-2535 "ensure secret pulled images") keeps a record per image ID of the
# names it pulled that image under, and an image it once pulled must be
# pulled again, to check the credentials, before a pod may use it under
# another name. The images pulled here from 127.0.0.1:PORT are the very
# images (same IDs) the local cluster has imported as docker.io/...; without
# a record for those names, every later pod using them would try to pull
# from docker.io, which this cluster cannot reach (ErrImagePull). So
# containerd pushes its own docker.io images (the very manifests, so nothing
# it holds changes) to the registry under their docker.io paths, uses the
# registry as docker.io's mirror for a moment, and one pod per image makes
# the kubelet pull, and record, each docker.io name.
#
#   hack/demo-registry.sh --reverify   # only that step (after an interrupted run)
source "$(dirname "$0")/lib.sh"
source "${DBBENCH_ROOT}/hack/cluster/env.sh"
cd "${DBBENCH_ROOT}"

REG="127.0.0.1:${REGISTRY_PORT:-5000}"
REG_DIR="${DBBENCH_CACHE}/registry"
TAG=registry-demo
DBS=(mariadb-10.5 mariadb-10.11 mariadb-11.8)
start=${SECONDS}
elapsed() { echo "$((SECONDS - start)) s"; }

# docker_io_images lists containerd's docker.io names (not NAME@DIGEST) and digests.
docker_io_images() { ctr_k8s images ls | awk '$1 ~ /^docker\.io\// && $1 !~ /@/ { print $1, $3 }' | sort; }

# reverify: see the header. Needs the registry running and KUBECONFIG.
reverify() {
	# The kubelet matches names as pods write them: the operator's default
	# database image is the short mariadb:{version}, a spec may write
	# docker.io/library/mariadb:{version}; both need a record.
	local names=(docker.io/dbbench/manager:dev docker.io/dbbench/agent:dev
		mariadb:10.5 mariadb:10.11 mariadb:11.8
		docker.io/library/mariadb:10.5 docker.io/library/mariadb:10.11 docker.io/library/mariadb:11.8)
	local refs=(docker.io/dbbench/manager:dev docker.io/dbbench/agent:dev
		docker.io/library/mariadb:10.5 docker.io/library/mariadb:10.11 docker.io/library/mariadb:11.8) name
	local ns=dbbench-registry-reverify hosts="${CLUSTER_CONF}/certs.d/docker.io/hosts.toml" i ref repo id deadline before
	log "re-pulling ${#refs[@]} images under ${#names[@]} docker.io names so the kubelet records them"
	before=$(docker_io_images)
	for ref in "${refs[@]}"; do
		ctr_k8s images push --plain-http "${REG}/${ref#docker.io/}" "${ref}" >/dev/null
	done
	cp "${hosts}" "${hosts}.orig"
	printf 'server = "http://%s"\n\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' "${REG}" "${REG}" >"${hosts}"
	"${K8S_BIN}/kubectl" create namespace "${ns}" --dry-run=client -o yaml | "${K8S_BIN}/kubectl" apply -f - >/dev/null
	for i in "${!names[@]}"; do
		# The command does not exist: the pull is all this pod is for.
		"${K8S_BIN}/kubectl" -n "${ns}" run "pull-${i}" --image="${names[i]}" --image-pull-policy=Always \
			--restart=Never --command -- /dbbench-pull-only >/dev/null
	done
	local rc=0
	for name in "${names[@]}"; do
		# The kubelet's record of this image (by ID) must name this repository.
		repo=${name%:*} ref=${name}
		[[ "${ref}" == */* ]] || ref="docker.io/library/${ref}"
		id=$(ctr_k8s content get "$(ctr_k8s images ls "name==${ref}" | awk 'NR == 2 { print $3 }')" |
			python3 -c 'import json, sys; print(json.load(sys.stdin)["config"]["digest"])')
		deadline=$((SECONDS + 180))
		until grep -lsF "\"imageRef\":\"${id}\"" "${KUBELET_ROOT}"/image_manager/pulled/* | xargs -r grep -qsF "\"${repo}\""; do
			if [ "${SECONDS}" -ge "${deadline}" ]; then
				log "the kubelet recorded no pull of ${name} within 180 s"
				rc=1
				break
			fi
			sleep 2
		done
	done
	mv "${hosts}.orig" "${hosts}"
	"${K8S_BIN}/kubectl" delete namespace "${ns}" --wait=false >/dev/null
	# Pulls add NAME@DIGEST references; the names themselves must not move.
	if [ "$(docker_io_images)" != "${before}" ]; then
		log "the re-pulls changed an image containerd holds under a docker.io name"
		rc=1
	fi
	return "${rc}"
}

if [ "${1:-}" = --reverify ]; then
	export KUBECONFIG="${CLUSTER_KUBECONFIG}"
	hack/registry.sh start "${REG_DIR}" "${REG}"
	rc=0
	reverify || rc=1
	hack/registry.sh stop "${REG_DIR}"
	exit "${rc}"
fi

restore() {
	local rc=$?
	log "restoring: the release as make demo installs it, the cluster without the registry, the registry stopped"
	if [ -n "${KUBECONFIG:-}" ]; then
		reverify || rc=1
		# The registry's names go; the images stay under their docker.io names.
		ctr_k8s images ls -q | { grep "^${REG}/" || true; } | xargs -r ctr --address "${CONTAINERD_SOCK}" --namespace k8s.io images rm >/dev/null
		"$(hack/helm.sh install)" upgrade dbbench charts/dbbench --namespace dbbench-system \
			--set image.tag=dev --wait --timeout 5m >/dev/null || rc=1
	fi
	hack/cluster/up.sh >/dev/null || rc=1
	hack/registry.sh stop "${REG_DIR}" || true
	log "demo-registry ended (exit ${rc}) after $(elapsed)"
	exit "${rc}"
}
trap restore EXIT

hack/registry.sh start "${REG_DIR}" "${REG}"
make --no-print-directory push REGISTRY="${REG}" TAG="${TAG}" PUSH_DATABASES=1 DATABASE_IMAGES="${DBS[*]}" \
	REGISTRY_INSECURE=1 | tee "${REG_DIR}/pushed.txt"
log "images pushed after $(elapsed)"

DBBENCH_CLUSTER_REGISTRY="${REG}" eval_env hack/cluster/up.sh
export KUBECONFIG
# Anything already in containerd under the registry's name (an earlier run)
# would be used without a pull.
ctr_k8s images ls -q | grep "^${REG}/" | xargs -r ctr --address "${CONTAINERD_SOCK}" --namespace k8s.io images rm >/dev/null || true

values="${REG_DIR}/values.yaml"
cat >"${values}" <<EOV
image:
  repository: ${REG}/dbbench/manager
  tag: ${TAG}
agentImage: ${REG}/dbbench/agent:${TAG}
databaseImages:
  registry: ${REG}
EOV
CLUSTER=existing DEMO_VALUES="${values}" hack/demo.sh

pulled=$(ctr_k8s images ls -q)
missing=()
for want in "${REG}/dbbench/manager:${TAG}" "${REG}/dbbench/agent:${TAG}" \
	"${REG}/library/mariadb:10.5" "${REG}/library/mariadb:10.11" "${REG}/library/mariadb:11.8"; do
	grep -qxF "${want}" <<<"${pulled}" || missing+=("${want}")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "FAIL: containerd did not pull ${missing[*]} from ${REG}"
	exit 1
fi
log "ok: the demo ran on images pulled from ${REG} ($(elapsed))"
