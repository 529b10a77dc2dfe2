#!/usr/bin/env bash
# release.sh is `make release VERSION=vX.Y.Z REGISTRY=host[:port][/prefix]`:
# everything a user installs, built from this tree and published as one:
#
#   1. the agent and manager images pushed to REGISTRY under VERSION
#      (hack/images.sh --push), with the digests the registry reported;
#   2. the chart packaged with version X.Y.Z and appVersion vX.Y.Z, both
#      images pinned by digest in its values (docker.io/dbbench/...:vX.Y.Z
#      @sha256:..., the names Docker Hub serves them under; a mirror is one
#      value away: --set registry=REGISTRY), pushed to oci://REGISTRY/charts;
#   3. the kubectl-dbbench archives and their krew manifest with checksums
#      (hack/plugin-dist.sh, PLUGIN_BASE_URL, PLUGIN_PLATFORMS);
#   4. DIST/SHA256SUMS of everything in DIST;
#
# and prints what a user runs. REGISTRY_INSECURE=1 pushes over plain HTTP
# (a local registry); `make test-release` runs all of it against a real
# registry and installs the result on the local cluster.
source "$(dirname "$0")/lib.sh"
cd "${DBBENCH_ROOT}"

VERSION="${VERSION:-}"
REGISTRY="${REGISTRY:-}"
DIST="${DIST:-dist}"
PLUGIN_BASE_URL="${PLUGIN_BASE_URL:-https://github.com/dbbench/dbbench/releases/download/${VERSION}}"
read -r -a PLATFORMS <<<"${PLUGIN_PLATFORMS:-}"

[[ "${VERSION}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
	{ log "make release needs VERSION=vX.Y.Z (semantic version with a leading v), not '${VERSION}'"; exit 64; }
[ -n "${REGISTRY}" ] || { log "make release needs REGISTRY=host[:port][/prefix] to push the images and the chart to"; exit 64; }
chart_version=${VERSION#v}
helm=$(hack/helm.sh install)
mkdir -p "${DIST}"
DIST=$(cd "${DIST}" && pwd)

log "release ${VERSION}: images to ${REGISTRY}"
pushed=$(TAG="${VERSION}" hack/images.sh --push "${REGISTRY}" agent manager)
digest_of() { # digest_of NAME: the digest the push of dbbench/NAME reported
	awk -v want="${REGISTRY%/}/dbbench/$1:${VERSION}" -F@ '$1 == want { print $2 }' <<<"${pushed}"
}
agent_digest=$(digest_of agent)
manager_digest=$(digest_of manager)
for d in "${agent_digest}" "${manager_digest}"; do
	[[ "${d}" =~ ^sha256:[0-9a-f]{64}$ ]] || { log "the push reported no digest for every image:"$'\n'"${pushed}"; exit 1; }
done

log "release ${VERSION}: the chart ${chart_version}, images pinned by digest"
work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT
cp -r charts/dbbench "${work}/dbbench"
python3 - "${work}/dbbench" "${chart_version}" "${VERSION}" "${manager_digest}" "${agent_digest}" <<'EOF'
import pathlib, re, sys
chart, version, app, manager, agent = sys.argv[1:]
c = pathlib.Path(chart, "Chart.yaml")
text = c.read_text()
text = re.sub(r"(?m)^version: .*$", f"version: {version}", text)
text = re.sub(r"(?m)^appVersion: .*$", f'appVersion: "{app}"', text)
c.write_text(text)
v = pathlib.Path(chart, "values.yaml")
text = v.read_text()
for pattern, repl in [(r'(?m)^  digest: ""', f'  digest: "{manager}"'),
                      (r"(?m)^agentImage: .*$", f"agentImage: docker.io/dbbench/agent:{app}@{agent}")]:
    text, n = re.subn(pattern, repl, text)
    if n != 1:
        sys.exit(f"values.yaml: {pattern} matched {n} times, want once")
v.write_text(text)
EOF
"${helm}" lint --strict "${work}/dbbench" >/dev/null
rm -f "${DIST}/dbbench-${chart_version}.tgz"
"${helm}" package "${work}/dbbench" --destination "${DIST}" >/dev/null
tgz="${DIST}/dbbench-${chart_version}.tgz"
rendered=$("${helm}" template dbbench "${tgz}" --namespace dbbench-system)
for want in "image: \"docker.io/dbbench/manager:${VERSION}@${manager_digest}\"" \
	"--agent-image=docker.io/dbbench/agent:${VERSION}@${agent_digest}"; do
	grep -qF -- "${want}" <<<"${rendered}" || { log "the packaged chart renders no ${want}"; exit 1; }
done
plain=()
[ -z "${REGISTRY_INSECURE:-}" ] || plain=(--plain-http)
"${helm}" push "${tgz}" "oci://${REGISTRY%/}/charts" "${plain[@]}" >&2

log "release ${VERSION}: the plugin's archives and krew manifest"
hack/plugin-dist.sh "${DIST}" "${VERSION}" "${PLUGIN_BASE_URL}" "${PLATFORMS[@]}" >&2
(cd "${DIST}" && rm -f SHA256SUMS && sha256sum -- * >SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)

cat <<EOF

dbbench ${VERSION} is released:
  ${REGISTRY%/}/dbbench/manager:${VERSION}@${manager_digest}
  ${REGISTRY%/}/dbbench/agent:${VERSION}@${agent_digest}
  oci://${REGISTRY%/}/charts/dbbench ${chart_version} (also ${tgz})
  ${DIST}/dbbench.yaml, the krew manifest of $(ls "${DIST}"/kubectl-dbbench_*.tar.gz | wc -l) plugin archives
  ${DIST}/SHA256SUMS

A user installs it with (images from Docker Hub once they are published there;
--set registry=${REGISTRY%/} pulls them from this registry instead):
  helm install dbbench oci://${REGISTRY%/}/charts/dbbench --version ${chart_version} \\
    --namespace dbbench-system --create-namespace --set registry=${REGISTRY%/}$([ -z "${REGISTRY_INSECURE:-}" ] || echo " --plain-http")
  kubectl krew install --manifest=${DIST}/dbbench.yaml    # after uploading the archives to ${PLUGIN_BASE_URL}
EOF
