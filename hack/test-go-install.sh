#!/usr/bin/env bash
# test-go-install.sh is `make test-go-install`: what README's
#   go install github.com/dbbench/dbbench/cmd/kubectl-dbbench@<version>
# does, on the committed tree (HEAD) instead of a published tag. The tree is
# served as a module version (v0.0.0-test, a zip as the Go proxy serves it,
# the nested modules under hack/ left out as module zips require) from a file://
# proxy placed before the real one; `go install` then resolves it like any
# version: without this repository's go.work or replace directives (which
# `go install pkg@version` refuses), dependencies from the module proxy.
# Checks that the binary runs and says which module version it was built
# from. Takes about a minute with a warm module cache.
source "$(dirname "$0")/lib.sh"
cd "${DBBENCH_ROOT}"

module=$(go list -m)
version=v0.0.0-test
tmp=$(mktemp -d)
trap 'chmod -R u+w "${tmp}" 2>/dev/null; rm -rf "${tmp}"' EXIT
dir="${tmp}/proxy/${module}/@v"
mkdir -p "${dir}" "${tmp}/bin"
# Every directory with a go.mod of its own (hack/k8sbin, hack/coredns) is
# another module: a module zip must not hold it.
nested=()
while read -r m; do
	nested+=(":(exclude)$(dirname "${m}")")
done < <(git ls-files '*/go.mod')
git archive --format=zip --prefix="${module}@${version}/" -o "${dir}/${version}.zip" HEAD -- . "${nested[@]}"
git show HEAD:go.mod >"${dir}/${version}.mod"
printf '{"Version":"%s","Time":"%s"}\n' "${version}" "$(git show -s --format=%cI HEAD)" >"${dir}/${version}.info"
echo "${version}" >"${dir}/list"

start=${SECONDS}
GOBIN="${tmp}/bin" GOPROXY="file://${tmp}/proxy,$(go env GOPROXY)" GONOSUMDB="${module}" GOFLAGS=-buildvcs=false GOWORK=off \
	go install "${module}/cmd/kubectl-dbbench@${version}"
bin="${tmp}/bin/kubectl-dbbench"
built=$(go version -m "${bin}" | awk '$1 == "mod" { print $2, $3 }')
[ "${built}" = "${module} ${version}" ] || { log "FAIL: the binary says it was built from '${built}', not ${module} ${version}"; exit 1; }
# Captured first: `--help | grep -q` races, since grep exits at its first match
# and a later write of the help text then dies of SIGPIPE, which pipefail
# reports as a failure (it did in CI once the help text grew).
help=$("${bin}" --help)
grep -q "kubectl dbbench" <<<"${help}" || { log "FAIL: kubectl-dbbench --help does not describe the plugin"; exit 1; }
log "ok: go install ${module}/cmd/kubectl-dbbench@${version} built a working plugin in $((SECONDS - start)) s"
