#!/usr/bin/env python3
"""modules-aligned.py: the Go modules the tree builds from (this module,
hack/k8sbin's Kubernetes components, hack/coredns) require every module they
share at one version, so that a cold make test compiles each shared package
(client-go, apimachinery, golang.org/x/..., protobuf, grpc) once: Go's build
cache shares a compiled package only between builds of the same module
version. With k8s.io at v0.37.0 here and v0.36.3 in hack/k8sbin, a cold run
compiled that tree twice.

Reads the go.mod files only (with Go's module graph pruning they list every
module whose packages their builds use, and hack/k8sbin's replace lines pin
the Kubernetes staging modules). Exit 1 naming each module and the versions,
with the command that aligns it. Run by make verify-generated.

  python3 hack/modules-aligned.py [go.mod ...]
"""
import re
import sys

DEFAULT = ["go.mod", "hack/k8sbin/go.mod", "hack/coredns/go.mod"]
REQUIRE = re.compile(r"^(?:require\s+)?([\w.\-/~]+\.[\w.\-/~]+)\s+(v\S+)")
REPLACE = re.compile(r"^(?:replace\s+)?([\w.\-/~]+)\s+=>\s+([\w.\-/~]+)\s+(v\S+)")


def versions(path):
    """The version each module resolves to in one go.mod: its replace
    target's when replaced with a version, else its requirement."""
    required, replaced = {}, {}
    block = None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.split("//")[0].strip()
            if not line:
                continue
            if line.endswith("("):
                block = line.split()[0]
                continue
            if line == ")":
                block = None
                continue
            if block == "replace" or line.startswith("replace "):
                m = REPLACE.match(line)
                if m:
                    replaced[m.group(1)] = m.group(3)
            elif block == "require" or line.startswith("require "):
                m = REQUIRE.match(line)
                if m:
                    required[m.group(1)] = m.group(2)
    required.update(replaced)
    return required


def main(paths):
    by_file = {p: versions(p) for p in paths}
    problems = []
    modules = sorted(set().union(*by_file.values()))
    for mod in modules:
        seen = {p: v[mod] for p, v in by_file.items() if mod in v}
        if len(set(seen.values())) > 1:
            newest = max(seen.values(), key=semver_key)
            behind = [p for p, v in seen.items() if v != newest]
            dirs = " ".join(p.rsplit("/", 1)[0] if "/" in p else "." for p in behind)
            problems.append(f"{mod}: " + ", ".join(f"{p} {v}" for p, v in seen.items()) +
                            f"; align: go get {mod}@{newest} in {dirs}")
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"{len(problems)} module(s) at more than one version across {', '.join(paths)}: "
              "a cold make test compiles their packages once per version", file=sys.stderr)
        return 1
    return 0


def semver_key(v):
    core = v.lstrip("v").split("+")[0]
    base, _, pre = core.partition("-")
    nums = [int(x) if x.isdigit() else 0 for x in base.split(".")]
    return (nums, 0 if pre else 1, pre)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or DEFAULT))
