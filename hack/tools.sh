#!/usr/bin/env bash
# tools.sh installs pinned developer tools from the Go module proxy into the
# version-keyed cache and prints the path of the requested one:
#   hack/tools.sh controller-gen   ->  ~/.cache/dbbench/tools/controller-gen-v0.23.0
source "$(dirname "$0")/lib.sh"

declare -A PKG=(
	[controller-gen]="sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0"
	[kustomize]="sigs.k8s.io/kustomize/kustomize/v5@v5.8.2"
	[golangci-lint]="github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0"
	[kwok]="sigs.k8s.io/kwok/cmd/kwok@v0.8.0"
	[versitygw]="github.com/versity/versitygw/cmd/versitygw@v1.8.0"
)

tool="$1"
spec="${PKG[$tool]:-}"
[ -n "$spec" ] || { echo "tools.sh: unknown tool $tool (known: ${!PKG[*]})" >&2; exit 2; }
version="${spec##*@}"
out="${TOOLS_BIN}/${tool}-${version}"
cached_build "${out}" "${spec}" go_install_to "${spec}"
echo "$out"
