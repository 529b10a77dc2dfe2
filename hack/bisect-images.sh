#!/usr/bin/env bash
# bisect-images.sh builds the images the bisection end-to-end test searches
# (test/e2e/bisect_test.go) and loads them into the containerd of every
# node of the local cluster: docker.io/dbbench/mariadb-bisect:t1 … t8, the project's
# MariaDB 10.11 image with one my.cnf drop-in baked in. Tags before
# t${BISECT_FIRST_DURABLE} flush the redo log once a second and do not sync a
# binary log; from it on every commit is durable (redo log flush and binary
# log sync per transaction), which costs write steps most of their
# throughput. Run after `hack/images.sh mariadb-10.11`; does nothing when the
# tags loaded are those this script and base would build. Each tag is an
# image of its own (a label names it), so runs record a digest per build.
source "$(dirname "$0")/lib.sh"
source "${DBBENCH_ROOT}/hack/cluster/env.sh"

REPO=docker.io/dbbench/mariadb-bisect
BASE=docker.io/library/mariadb:10.11
TAGS=8
FIRST_DURABLE="${BISECT_FIRST_DURABLE:-6}"
FAST_CNF='[mysqld]\ninnodb_flush_log_at_trx_commit=2\nsync_binlog=0\n'
DURABLE_CNF='[mysqld]\ninnodb_flush_log_at_trx_commit=1\nlog_bin=binlog\nsync_binlog=1\n'
MARKER="${CLUSTER_DIR}/images-loaded/mariadb-bisect"

# nodes prints "SOCKET MARKER" for node 1 and every running worker node
# (NODES>1 hack/cluster/up.sh): each has its own containerd.
nodes() {
	echo "${CONTAINERD_SOCK} ${MARKER}"
	local w sock
	for w in $(cluster_workers); do
		sock=$(worker_sock "${w}")
		containerd_up_at "${sock}" && echo "${sock} $(worker_dir "${w}")/images-loaded/mariadb-bisect"
	done
	return 0
}

# hack/bisect-images.sh tag SRC DST points ${REPO}:DST at the image of
# ${REPO}:SRC in every node's containerd (a moving tag re-pointed: the same
# reference, another digest, as the suite-site e2e's environment change);
# hack/bisect-images.sh untag DST removes ${REPO}:DST. Both run after the
# images are loaded.
case "${1:-}" in
tag | untag)
	while read -r sock _; do
		if [ "$1" = tag ]; then
			ctr --address "${sock}" --namespace k8s.io images tag --force "${REPO}:$2" "${REPO}:$3" >/dev/null
		else
			ctr --address "${sock}" --namespace k8s.io images rm "${REPO}:$2" >/dev/null 2>&1 || true
		fi
	done < <(nodes)
	exit 0
	;;
esac

podman() { command podman --runtime runc --cgroup-manager cgroupfs --events-backend file "$@"; }

if ! podman image exists "${BASE}"; then
	archive=$(ls -t "${DBBENCH_CACHE}/images/mariadb-10.11"-*.tar 2>/dev/null | head -1 || true)
	[ -n "${archive}" ] || { log "no ${BASE}: run hack/images.sh mariadb-10.11 first"; exit 1; }
	podman load -q -i "${archive}" >/dev/null
fi
hash=$( (podman image inspect --format '{{.Id}}' "${BASE}"; echo "${FIRST_DURABLE} ${TAGS}"; cat "$0") | sha256sum | cut -c1-16)
# loaded SOCKET MARKER: this build's tags are in that containerd.
loaded() { [ "$(cat "$2" 2>/dev/null)" = "${hash}" ] && ctr --address "$1" --namespace k8s.io images ls -q "name==${REPO}:t${TAGS}" | grep -q .; }
missing=()
while read -r sock marker; do
	loaded "${sock}" "${marker}" || missing+=("${sock} ${marker}")
done < <(nodes)
[ "${#missing[@]}" -gt 0 ] || exit 0

ctx=$(mktemp -d)
trap 'rm -rf "${ctx}"' EXIT
refs=()
for i in $(seq 1 "${TAGS}"); do
	cnf="${FAST_CNF}"
	[ "${i}" -lt "${FIRST_DURABLE}" ] || cnf="${DURABLE_CNF}"
	printf '%b' "${cnf}" >"${ctx}/zz-bisect.cnf"
	# The label makes every tag its own image (its own digest), as every
	# build of a real nightly is, though t1…t5 share their drop-in.
	printf 'FROM %s\nLABEL io.dbbench.bisect.build=t%d\nCOPY zz-bisect.cnf /etc/mysql/conf.d/zz-bisect.cnf\n' "${BASE}" "${i}" >"${ctx}/Dockerfile"
	podman build -q -t "${REPO}:t${i}" "${ctx}" >/dev/null
	refs+=("${REPO}:t${i}")
done
podman save -q --multi-image-archive --format docker-archive -o "${ctx}/bisect.tar" "${refs[@]}" >/dev/null
for m in "${missing[@]}"; do
	read -r sock marker <<<"${m}"
	log "loading ${REPO}:t1..t${TAGS} into containerd at ${sock} (durable commits from t${FIRST_DURABLE})"
	ctr --address "${sock}" --namespace k8s.io images import "${ctx}/bisect.tar" >/dev/null
	mkdir -p "$(dirname "${marker}")"
	echo "${hash}" >"${marker}"
done
