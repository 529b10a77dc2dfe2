#!/usr/bin/env bash
# test-release.sh is `make test-release`: a release made and installed as a
# user would, on this machine's real components.
#
#   1. a real registry (Debian's docker-registry) on 127.0.0.1:5000, and
#      the local cluster's containerd allowed to pull from it;
#   2. `make release VERSION=v0.0.0-e2e REGISTRY=127.0.0.1:5000` (linux/amd64
#      plugin only): the images, the chart pinned by digest in the registry
#      (OCI), the krew manifest, SHA256SUMS, each checked;
#   3. the chart installed from the registry, as the release prints it, with
#      no --set but the registry: the manager runs the pushed image, by
#      digest;
#   4. a first benchmark (one MariaDB cell): it succeeds, its client ran the
#      pushed agent by digest.
#
# At the end, whatever the outcome, it puts back what make demo and the
# end-to-end suite expect: the chart of this tree with the dev images, the
# kubelet's record of the docker.io names (hack/demo-registry.sh
# --reverify: the pulled images are the same images), the cluster without
# the registry, the registry stopped. Not part of make test.
source "$(dirname "$0")/lib.sh"
source "${DBBENCH_ROOT}/hack/cluster/env.sh"
cd "${DBBENCH_ROOT}"

REG="127.0.0.1:${REGISTRY_PORT:-5000}"
VERSION=v0.0.0-e2e
NS=dbbench-release-test
work=$(mktemp -d)
start=${SECONDS}
helm=$(hack/helm.sh install)
kubectl() { "${K8S_BIN}/kubectl" "$@"; }
fail() { log "FAIL: $*"; exit 1; }

restore() {
	local rc=$?
	log "restoring: this tree's chart with the dev images, the kubelet's docker.io names, the cluster without the registry"
	hack/registry.sh stop "${work}" || true
	if [ -n "${KUBECONFIG:-}" ]; then
		kubectl delete namespace "${NS}" --ignore-not-found --wait=false >/dev/null 2>&1 || true
		# First the kubelet's record of the docker.io names: until then it
		# refuses the dev images, which are the images it pulled by the
		# registry's names.
		hack/demo-registry.sh --reverify || rc=1
		ctr_k8s images ls -q | { grep "^${REG}/" || true; } |
			xargs -r ctr --address "${CONTAINERD_SOCK}" --namespace k8s.io images rm >/dev/null || true
		"${helm}" upgrade dbbench charts/dbbench --namespace dbbench-system --set image.tag=dev \
			--wait --timeout 5m >/dev/null || rc=1
	fi
	hack/cluster/up.sh >/dev/null || rc=1
	rm -rf "${work}"
	log "test-release ended (exit ${rc}) after $((SECONDS - start)) s"
	exit "${rc}"
}
trap restore EXIT

hack/registry.sh start "${work}" "${REG}"
DBBENCH_CLUSTER_REGISTRY="${REG}" eval_env hack/cluster/up.sh
export KUBECONFIG

log "make release ${VERSION} to ${REG}"
out=$(make --no-print-directory release VERSION="${VERSION}" REGISTRY="${REG}" REGISTRY_INSECURE=1 \
	DIST="${work}/dist" PLUGIN_PLATFORMS=linux/amd64)
echo "${out}"
dist="${work}/dist"
(cd "${dist}" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not match the files in DIST"
tgz="${dist}/dbbench-${VERSION#v}.tgz"
[ -f "${tgz}" ] || fail "no ${tgz}"
archive="${dist}/kubectl-dbbench_linux_amd64.tar.gz"
grep -qF "sha256: $(sha256sum "${archive}" | cut -d' ' -f1)" "${dist}/dbbench.yaml" ||
	fail "the krew manifest does not carry the archive's sha256"
meta=$("${helm}" show chart "oci://${REG}/charts/dbbench" --version "${VERSION#v}" --plain-http)
grep -qx "appVersion: ${VERSION}" <<<"${meta}" || fail "the chart in the registry has no appVersion ${VERSION}:"$'\n'"${meta}"
manager_ref=$(grep -o "${REG}/dbbench/manager:${VERSION}@sha256:[0-9a-f]*" <<<"${out}" | head -1)
agent_ref=$(grep -o "${REG}/dbbench/agent:${VERSION}@sha256:[0-9a-f]*" <<<"${out}" | head -1)
[ -n "${manager_ref}" ] && [ -n "${agent_ref}" ] || fail "make release printed no pinned references"

log "installing the chart from oci://${REG}/charts with --set registry alone"
# The release's own instruction, as printed.
install=$(grep -A1 '^  helm install dbbench oci://' <<<"${out}" | tr -d '\\\n' | sed 's/^ *helm install/install/')
# shellcheck disable=SC2086 # the printed command line, split as a shell would
"${helm}" upgrade --${install} --wait --timeout 5m >/dev/null
image=$(kubectl -n dbbench-system get deployment dbbench-manager -o jsonpath='{.spec.template.spec.containers[0].image}')
[ "${image}" = "${manager_ref}" ] || fail "the manager runs ${image}, want ${manager_ref}"
kubectl -n dbbench-system rollout status deployment/dbbench-manager --timeout=3m >/dev/null
# The new pod's (the release's old pod may still be terminating).
pod_image_id=$(kubectl -n dbbench-system get pods -l app.kubernetes.io/name=dbbench \
	-o jsonpath='{range .items[*]}{.spec.containers[0].image} {.status.containerStatuses[0].imageID}{"\n"}{end}' |
	awk -v want="${manager_ref}" '$1 == want { print $2; exit }')
[[ "${pod_image_id}" == *"${manager_ref##*@}" ]] || fail "the manager pod's image ID ${pod_image_id} is not ${manager_ref##*@}"

log "a first benchmark"
kubectl create namespace "${NS}" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl -n "${NS}" apply -f - >/dev/null <<'EOF'
apiVersion: dbbench.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: first
spec:
  databases:
    - name: mariadb
      engine: mariadb
      versions: ["10.11"]
  workload:
    steps: [point-query]
    tables: 1
    tableSize: 2000
    readSeconds: 3
    writeSeconds: 3
    warmupSeconds: 1
    flushWaitSeconds: 1
  placement:
    exclusiveNodes: false
EOF
kubectl -n "${NS}" wait --for=condition=Ready benchmarkrun/first --timeout=5m >/dev/null ||
	fail "the first run is not Ready: $(kubectl -n "${NS}" get benchmarkrun first -o jsonpath='{.status.phase} {.status.conditions}')"
# The client ran the pushed agent, by digest: its pod (kept, Completed,
# after the run) names the image and the runtime reports what it ran.
client=$(kubectl -n "${NS}" get pods -l dbbench.io/run=first -o json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["items"]:
    ids = {s["name"]: s.get("imageID", "") for s in p["status"].get("containerStatuses", [])}
    for c in p["spec"]["containers"]:
        if "/dbbench/agent" in c["image"]:
            print(c["image"], ids.get(c["name"], ""))')
read -r client_image client_id <<<"${client}"
[ "${client_image}" = "${agent_ref}" ] || fail "the run's client ran ${client_image:-nothing}, want ${agent_ref}"
[[ "${client_id}" == *"${agent_ref##*@}" ]] || fail "the client's image ID ${client_id:-(none)} is not ${agent_ref##*@}"
# The run's manifest records the same digest (environment.clientImageDigest).
recorded=$(kubectl -n "${NS}" get configmap first-results -o jsonpath='{.data.manifest\.json}' |
	python3 -c 'import json, sys; print(*{(c.get("environment") or {}).get("clientImageDigest", "") for c in json.load(sys.stdin)["cells"]})')
[ "${recorded}" = "${agent_ref##*@}" ] || fail "the run's manifest records the client image digest ${recorded:-(none)}, want ${agent_ref##*@}"
log "PASS: ${VERSION} released to ${REG}, installed from it with --set registry alone, and its first run succeeded ($((SECONDS - start)) s)"
