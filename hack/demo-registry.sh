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
# installs, the cluster's registry setting is removed (hack/cluster/up.sh
# without it) and the registry stops. The cluster is left running, as after
# `make demo`. Run it holding the cluster lock on a shared machine.
source "$(dirname "$0")/lib.sh"
source "${DBBENCH_ROOT}/hack/cluster/env.sh"
cd "${DBBENCH_ROOT}"

REG="127.0.0.1:${REGISTRY_PORT:-5000}"
REG_DIR="${DBBENCH_CACHE}/registry"
TAG=registry-demo
DBS=(mariadb-10.5 mariadb-10.11 mariadb-11.8)
start=${SECONDS}
elapsed() { echo "$((SECONDS - start)) s"; }

restore() {
	local rc=$?
	log "restoring: the release as make demo installs it, the cluster without the registry, the registry stopped"
	if [ -n "${KUBECONFIG:-}" ]; then
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

eval "$(DBBENCH_CLUSTER_REGISTRY="${REG}" hack/cluster/up.sh)"
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
