#!/usr/bin/env bash
# helm.sh installs helm v3.22.0 and the helm-unittest v1.1.2 plugin from the Go
# module proxy into the tools cache, then lints and unit-tests the chart.
#
#   hack/helm.sh            # drift check + lint + unittest charts/dbbench
#   hack/helm.sh sync       # copy config/crd/bases and config/rbac into the chart
#   hack/helm.sh install    # only install; prints the helm binary's path
#   hack/helm.sh helm ARGS  # run the cached helm with the plugin available
#   hack/helm.sh package DIR [ARGS]  # lint, then helm package the chart into DIR
#
# helm is built with the Kubernetes version it assumes for templates
# (.Capabilities.KubeVersion) set to 1.36, the version of hack/cluster;
# otherwise it believes 1.20. helm-unittest cannot be `go install`ed (its
# go.mod has replace directives), so it is built from a small generated module
# and installed as a plugin directory with no install hook.
source "$(dirname "$0")/lib.sh"

HELM_VERSION="${HELM_VERSION:-v3.22.0}"
HELM_UNITTEST_VERSION="${HELM_UNITTEST_VERSION:-v1.1.2}"
HELM_DIR="${TOOLS_BIN}/helm-${HELM_VERSION}"
HELM="${HELM_DIR}/helm"
PLUGINS="${HELM_DIR}/plugins"
UNITTEST_DIR="${PLUGINS}/helm-unittest-${HELM_UNITTEST_VERSION}"
CHART="${DBBENCH_ROOT}/charts/dbbench"

# Both are built from one small generated module that requires helm and
# helm-unittest: helm-unittest's own go.mod asks for an older helm (v3.21.3,
# Kubernetes libraries v0.36.3), so building each from its own module
# compiled helm's dependency tree twice on a cold machine. In one module
# they share one set of versions (helm ${HELM_VERSION}'s and, where
# helm-unittest asks for newer, those) and every package is compiled once.
tools_module() {
	local src="${HELM_DIR}/src"
	mkdir -p "${src}"
	cat >"${src}/go.mod.new" <<EOM
module dbbench.local/helmtools

go 1.26

require (
	helm.sh/helm/v3 ${HELM_VERSION}
	github.com/helm-unittest/helm-unittest ${HELM_UNITTEST_VERSION}
)

replace github.com/vmware-labs/yaml-jsonpath v0.3.2 => github.com/helm-unittest/yaml-jsonpath v0.4.0
EOM
	cat >"${src}/tools.go" <<'EOM'
//go:build tools

package tools

import (
	_ "github.com/helm-unittest/helm-unittest/cmd/helm-unittest"
	_ "helm.sh/helm/v3/cmd/helm"
)
EOM
	if ! cmp -s "${src}/go.mod.new" "${src}/go.mod.in" 2>/dev/null; then
		cp "${src}/go.mod.new" "${src}/go.mod"
		(cd "${src}" && go mod tidy >/dev/null 2>&1 || go mod tidy) || return 1
		mv "${src}/go.mod.new" "${src}/go.mod.in"
	fi
	echo "${src}"
}

# helm_build OUT and unittest_build OUT, for lib.sh's cached_build.
helm_build() {
	# The version it reports: from its own module it would read it from the
	# build info, from ours it says only its minor (v3.22).
	local ld="-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}" pkg src
	for pkg in pkg/chartutil pkg/lint/rules; do
		ld+=" -X helm.sh/helm/v3/${pkg}.k8sVersionMajor=1 -X helm.sh/helm/v3/${pkg}.k8sVersionMinor=36"
	done
	src=$(locked "${HELM_DIR}/src.lock" tools_module) || return 1
	(cd "${src}" && CGO_ENABLED=0 go build -trimpath -ldflags "${ld}" -o "$1" helm.sh/helm/v3/cmd/helm)
}

# The plugin is complete once its binary is in place: plugin.yaml is
# written first.
unittest_build() {
	local src
	src=$(locked "${HELM_DIR}/src.lock" tools_module) || return 1
	(cd "${src}" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$1" \
		github.com/helm-unittest/helm-unittest/cmd/helm-unittest) || return 1
	cat >"${UNITTEST_DIR}/plugin.yaml" <<EOM
name: "unittest"
version: "${HELM_UNITTEST_VERSION#v}"
usage: "unittest for helm charts"
description: "Unit test for helm chart in YAML with ease to keep your chart functional and robust."
ignoreFlags: false
command: "\$HELM_PLUGIN_DIR/untt"
EOM
}

helm() { HELM_PLUGINS="${PLUGINS}" "${HELM}" "$@"; }

# The chart renders the generated CRDs and ClusterRole from copies in files/
# (helm cannot read outside the chart): sync writes them, check fails on drift.
GENERATED=("config/crd/bases:files/crds" "config/rbac:files/rbac")
sync_generated() {
	local pair src dst
	for pair in "${GENERATED[@]}"; do
		src="${DBBENCH_ROOT}/${pair%%:*}" dst="${CHART}/${pair#*:}"
		rm -f "${dst}"/*.yaml
		mkdir -p "${dst}"
		cp "${src}"/*.yaml "${dst}/"
	done
}
check_generated() {
	local pair src dst
	for pair in "${GENERATED[@]}"; do
		src="${DBBENCH_ROOT}/${pair%%:*}" dst="${CHART}/${pair#*:}"
		if ! diff -r "${src}" "${dst}" >/dev/null; then
			diff -r "${src}" "${dst}" | head -20 >&2
			log "charts/dbbench/${pair#*:} differs from ${pair%%:*}: run hack/helm.sh sync"
			return 1
		fi
	done
}

# check_package: the packaged chart is named and versioned as Chart.yaml
# says, carries the appVersion asked for, and renders images pushed to a
# registry (README, "Install on your cluster").
check_package() {
	local tmp version tgz out
	tmp=$(mktemp -d)
	version=$(awk '/^version:/ { print $2 }' "${CHART}/Chart.yaml")
	helm package "${CHART}" --destination "${tmp}" --app-version v9.9.9 >/dev/null
	tgz="${tmp}/dbbench-${version}.tgz"
	if [ ! -f "${tgz}" ]; then
		log "helm package wrote $(ls "${tmp}"), not dbbench-${version}.tgz"
		rm -rf "${tmp}"
		return 1
	fi
	out=$(helm template t "${tgz}" --set agentImage=reg.test:5000/dbbench/agent:v9.9.9 --set databaseImages.registry=reg.test:5000 \
		--set image.repository=reg.test:5000/dbbench/manager)
	rm -rf "${tmp}"
	local want
	for want in 'image: "reg.test:5000/dbbench/manager:v9.9.9"' '--agent-image=reg.test:5000/dbbench/agent:v9.9.9' '--database-image-registry=reg.test:5000'; do
		if ! grep -qF -- "${want}" <<<"${out}"; then
			log "the packaged chart renders no ${want}"
			return 1
		fi
	done
	log "helm package: dbbench-${version}.tgz renders the pushed images"
}

case "${1:-}" in
sync) sync_generated; exit 0 ;;
esac
cached_build "${HELM}" "helm ${HELM_VERSION}" helm_build
cached_build "${UNITTEST_DIR}/untt" "helm-unittest ${HELM_UNITTEST_VERSION}" unittest_build
case "${1:-}" in
install) echo "${HELM}" ;;
helm) shift; helm "$@" ;;
package)
	[ $# -ge 2 ] || { log "usage: $0 package DIR [helm package flags]"; exit 64; }
	dir=$2
	shift 2
	check_generated
	helm lint --strict "${CHART}"
	mkdir -p "${dir}"
	helm package "${CHART}" --destination "${dir}" "$@"
	;;
"")
	check_generated
	helm lint --strict "${CHART}"
	helm lint --strict "${CHART}" --set crds.enabled=false --set metrics.enabled=false
	helm unittest --strict "${CHART}"
	check_package
	;;
*) log "usage: $0 [install | helm ARGS...]"; exit 64 ;;
esac
