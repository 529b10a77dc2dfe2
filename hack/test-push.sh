#!/usr/bin/env bash
# test-push.sh is `make test-push`: the push path of `make push` against a
# real registry (Debian's docker-registry, plain HTTP on a free loopback port,
# in a temporary directory removed at the end). It builds the agent image (or
# reuses the cached one), pushes it with hack/images.sh --push under a tag of
# its own, and checks through the registry's v2 API that
#   - the catalog lists dbbench/agent and its tag list has the tag,
#   - the manifest under the tag has the digest the push reported (the
#     registry's Docker-Content-Digest and the sha256 of the bytes served),
#   - the image's config carries the build's content hash (dbbench.hash), so
#     what was pushed is the image hack/images.sh built, not a stale one.
source "$(dirname "$0")/lib.sh"
cd "${DBBENCH_ROOT}"

start=${SECONDS}
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
addr="127.0.0.1:${port}"
tag="push-test-$$"
trap 'hack/registry.sh stop "${dir}"; rm -rf "${dir}"' EXIT
hack/registry.sh start "${dir}" "${addr}"

out=$(TAG="${tag}" REGISTRY_INSECURE=1 hack/images.sh --push "${addr}" agent)
echo "pushed: ${out}"
want_ref="${addr}/dbbench/agent:${tag}"
pushed_digest=${out##*@}
[ "${out%@*}" = "${want_ref}" ] || { log "FAIL: pushed ${out%@*}, want ${want_ref}"; exit 1; }
[[ "${pushed_digest}" =~ ^sha256:[0-9a-f]{64}$ ]] || { log "FAIL: the push reported digest '${pushed_digest}'"; exit 1; }

fail() { log "FAIL: $*"; exit 1; }
api="http://${addr}/v2"
curl -fsS "${api}/_catalog" | python3 -c 'import json,sys; sys.exit(0 if "dbbench/agent" in json.load(sys.stdin)["repositories"] else 1)' ||
	fail "the catalog does not list dbbench/agent: $(curl -sS "${api}/_catalog")"
curl -fsS "${api}/dbbench/agent/tags/list" | python3 -c 'import json,sys; sys.exit(0 if sys.argv[1] in json.load(sys.stdin)["tags"] else 1)' "${tag}" ||
	fail "the tag list has no ${tag}: $(curl -sS "${api}/dbbench/agent/tags/list")"

accept="application/vnd.docker.distribution.manifest.v2+json,application/vnd.oci.image.manifest.v1+json"
curl -fsS -H "Accept: ${accept}" -D "${dir}/headers" -o "${dir}/manifest.json" "${api}/dbbench/agent/manifests/${tag}"
served=$(awk -F': ' 'tolower($1) == "docker-content-digest" { gsub(/\r/, "", $2); print $2 }' "${dir}/headers")
[ "${served}" = "${pushed_digest}" ] || fail "the registry serves ${tag} as ${served}, the push reported ${pushed_digest}"
body="sha256:$(sha256sum "${dir}/manifest.json" | cut -d' ' -f1)"
[ "${body}" = "${pushed_digest}" ] || fail "the manifest's bytes hash to ${body}, not ${pushed_digest}"

config=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["config"]["digest"])' "${dir}/manifest.json")
label=$(curl -fsS "${api}/dbbench/agent/blobs/${config}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["config"]["Labels"].get("dbbench.hash", ""))')
archive=$(ls -t "${DBBENCH_CACHE}"/images/agent-*.tar | head -1)
built=${archive##*/agent-}
built=${built%.tar}
[ "${label}" = "${built}" ] || fail "the pushed image is build ${label:-<no label>}, the cached build is ${built}"

log "ok: ${want_ref}@${pushed_digest} is in the registry (build ${built}); took $((SECONDS - start)) s"
