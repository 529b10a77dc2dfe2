#!/usr/bin/env bash
# plugin-dist.sh builds the kubectl-dbbench archives a release publishes and
# the krew manifest (hack/krew) points at:
#
#   hack/plugin-dist.sh DIST VERSION BASE_URL [OS/ARCH ...]
#
# writes DIST/kubectl-dbbench_<os>_<arch>.tar.gz (the binary at the
# archive's root; kubectl-dbbench.exe on windows) for each platform (default:
# linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64), then
# DIST/dbbench.yaml from hack/krew/dbbench.yaml.tmpl with VERSION and the
# archives' URLs under BASE_URL and their sha256. Archives are reproducible
# (fixed mtime and owner, gzip -n), so a rebuild of one commit hashes alike.
source "$(dirname "$0")/lib.sh"
cd "${DBBENCH_ROOT}"

[ $# -ge 3 ] || { echo "usage: $0 DIST VERSION BASE_URL [OS/ARCH ...]" >&2; exit 64; }
dist=$1 version=$2 base_url=$3
shift 3
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64)
mkdir -p "${dist}"
rm -f "${dist}"/kubectl-dbbench_*.tar.gz
for p in "${platforms[@]}"; do
	os=${p%/*} arch=${p#*/} bin=kubectl-dbbench
	[ "${os}" != windows ] || bin+=.exe
	tmp=$(mktemp -d)
	log "building ${bin} for ${os}/${arch}"
	CGO_ENABLED=0 GOOS=${os} GOARCH=${arch} go build -trimpath -ldflags "-s -w" -o "${tmp}/${bin}" ./cmd/kubectl-dbbench
	tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "${tmp}" -cf - "${bin}" |
		gzip -n >"${dist}/kubectl-dbbench_${os}_${arch}.tar.gz"
	rm -rf "${tmp}"
done
go run ./hack/krew -version "${version}" -dist "${dist}" -base-url "${base_url}"
