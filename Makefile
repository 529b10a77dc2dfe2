# dbbench — a Kubernetes operator that runs database benchmark matrices.
# Quick start: `make demo` (a real local cluster, a real run, a report) and
# `make test` (everything CI runs). Both install what they need by themselves.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

GO ?= go
# Every Go build under make (vet, lint, the tests, the images' static
# binaries, the tools built from their modules) uses the same two settings,
# so a package compiled for one is reused from Go's build cache by the
# others. With cgo on and full paths for the tests but off and -trimpath for
# the images, a cold machine compiled the whole dependency tree twice.
# Nothing in the tree uses cgo.
export CGO_ENABLED ?= 0
export GOFLAGS ?= -trimpath
CONTROLLER_GEN = $(shell hack/tools.sh controller-gen)

##@ General

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-20s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Demo

CLUSTER ?= local

.PHONY: demo-registry
demo-registry: ## CLUSTER=existing make demo on the local cluster pulling every image from a local registry (make push; docs/install.md).
	hack/demo-registry.sh

.PHONY: demo
demo: ## A real cluster (CLUSTER=local|kind|existing), the operator, a real MariaDB 10.5/10.11/11.8 run, the report, then eight short nights with a config change and their site.
	CLUSTER=$(CLUSTER) hack/demo.sh

##@ Development

.PHONY: manifests
manifests: ## Regenerate the CRD and RBAC manifests from the Go markers, the API reference, the step catalog (docs/catalog.md) and the import map (docs/design.md; fails on an import that points up).
	$(CONTROLLER_GEN) rbac:roleName=dbbench-manager crd:allowDangerousTypes=false paths="./api/..." paths="./internal/controller/..." output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	$(GO) run ./hack/apidocs config/crd/bases/dbbench.io_benchmarkruns.yaml docs/api.md
	$(GO) run ./hack/apidocs config/crd/bases/dbbench.io_benchmarkschedules.yaml docs/api-schedule.md
	$(GO) run ./hack/apidocs config/crd/bases/dbbench.io_benchmarkbisections.yaml docs/api-bisection.md
	$(GO) run ./hack/apidocs config/crd/bases/dbbench.io_benchmarkacks.yaml docs/api-ack.md
	$(GO) run ./hack/catalogdoc docs/catalog.md
	$(GO) run ./hack/importmap docs/design.md
	cp config/crd/bases/*.yaml charts/dbbench/files/crds/
	cp config/rbac/role.yaml charts/dbbench/files/rbac/role.yaml

.PHONY: generate
generate: ## Regenerate the deepcopy code.
	$(CONTROLLER_GEN) object paths="./api/..."

.PHONY: fmt
fmt: ## gofmt the code.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## go vet the code (not in make test: lint's govet runs the same analyzers, .golangci.yml).
	$(GO) vet ./...

.PHONY: lint
lint: ## golangci-lint (pinned in hack/tools.sh, settings in .golangci.yml) over the module, tests and e2e included.
	"$$(hack/tools.sh golangci-lint)" run --build-tags e2e ./...

.PHONY: verify-generated
verify-generated: generate manifests ## Fail if generated files differ from what is committed.
	python3 hack/config-rules.py --check api/v1alpha1/benchmarkrun_types.go
	python3 hack/modules-aligned.py
	@git diff --exit-code -- api config/crd config/rbac docs/api.md docs/api-schedule.md docs/api-bisection.md docs/api-ack.md docs/catalog.md docs/design.md charts/dbbench/files || { echo "generated files drifted: run 'make generate manifests' and commit" >&2; exit 1; }

.PHONY: verify-figures
verify-figures: ## Fail if a page cites a measured figure differently from docs/benchmarks.md's register, or an entry page restates one without a link.
	python3 hack/figures.py

##@ Test

# Two tiers (docs/testing.md, "Two tiers"). `make test` is the core tier, what
# CI runs on every change; `make test-long` adds the long tier: calibration
# on real servers, long chains of real runs, chaos, node loss and a real
# operator. Every test of the real-server and cluster suites declares its
# tier (internal/testutil/tier; DBBENCH_TEST_TIER selects); docs/testing.md
# lists each test's tier and has their times.

.PHONY: test
test: test-prefetch verify-generated verify-figures lint test-deps test-unit test-envtest test-agent test-prefetch-compile test-s3 test-chart test-push test-e2e ## The core tier: everything CI runs (docs/testing.md).

.PHONY: test-long
test-long: ## The long tier, after make test (docs/testing.md): the agent's calibration tests and change points on real servers, PostgreSQL 10-18, go install of the plugin, then the end-to-end chains, chaos, node loss, kwok placement and CloudNativePG.
	$(MAKE) test-deps test-agent-long test-go-install test-e2e-long

.PHONY: test-prefetch
test-prefetch: ## Start, in the background and in idle CPU time, what later stages build on the disk and network (database packages, the MySQL root, base and e2e images); see docs/testing.md.
	hack/prefetch.sh --background

.PHONY: test-prefetch-compile
test-prefetch-compile: ## After test-agent: start, in the background and in idle CPU time, the compiles of the tools later stages need (versitygw, helm, kwok, the cluster's components, CloudNativePG).
	hack/prefetch.sh --background-compile

.PHONY: test-deps
test-deps: ## Install what the suites drive for real (Chromium, sysbench, perf).
	hack/test-deps.sh

.PHONY: test-unit
test-unit: ## Unit tests: pure packages, the plugin and the agent (no servers; the HTML report renders in headless Chromium).
	$(GO) test ./pkg/... ./api/... ./cmd/... ./hack/... ./test/bench/...

.PHONY: test-envtest
test-envtest: ## Controller tests against a real kube-apiserver + etcd.
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(GO) test ./internal/... -count=1 -timeout 15m

.PHONY: test-stress
test-stress: ## Beside two CPU busy loops: the envtest suites COUNT times (default 10), then the end-to-end core tier E2E_COUNT times in a row (default 3; 0 skips it), to find tests that pass by chance (not part of make test).
	COUNT=$(or $(COUNT),10) E2E_COUNT=$(or $(E2E_COUNT),3) hack/test-stress.sh

.PHONY: test-agent
test-agent: ## The agent's core tier on real MariaDB, PostgreSQL and MySQL servers on loopback: the catalog, bad input, configs, external targets, pgbench (installs them from Debian).
	hack/prefetch.sh --wait
	DBBENCH_REAL_DB=1 DBBENCH_TEST_TIER=core $(GO) test ./pkg/agent -run Real -count=1 -timeout 15m

.PHONY: test-agent-long
test-agent-long: ## The agent's long tier on real servers: latency at fixed rates, tail latency, stalls, profiles, log volumes, adaptive steps; change points on 12 real runs.
	DBBENCH_REAL_DB=1 DBBENCH_TEST_TIER=long $(GO) test ./pkg/agent -run Real -count=1 -timeout 25m
	DBBENCH_REAL_DB=1 DBBENCH_TEST_TIER=long $(GO) test ./test/realseries -count=1 -timeout 10m

.PHONY: test-agent-tail-latency
test-agent-tail-latency: ## test-agent's p99-latency regression verdict alone, verbose: a server stalled 80 ms in every 800 at a fixed rate, real MariaDB (cgroups need root, else it skips).
	DBBENCH_REAL_DB=1 DBBENCH_REAL_DB_ENGINES=mariadb $(GO) test ./pkg/agent -run RealTailLatency -count=1 -v -timeout 10m

.PHONY: test-s3
test-s3: ## The results store, the plugin and the controller against a real S3 server (versitygw on loopback, built into the cache).
	DBBENCH_REAL_S3=1 $(GO) test ./pkg/store -count=1 -timeout 10m
	DBBENCH_REAL_S3=1 $(GO) test ./internal/plugin -run RealS3 -count=1 -timeout 10m
	DBBENCH_REAL_S3=1 KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(GO) test ./internal/controller/integration/ -run Upload -count=1 -timeout 10m

.PHONY: test-chart
test-chart: ## helm lint and helm-unittest of charts/dbbench (builds helm v3.22.0 and helm-unittest into the cache).
	hack/helm.sh

.PHONY: test-e2e
test-e2e: ## End-to-end core tier on a real cluster (CLUSTER=local starts the local three-node one): every kind, every target kind, faults, placement, volumes, uploads.
	CLUSTER=$(CLUSTER) DBBENCH_TEST_TIER=core hack/test-e2e.sh

.PHONY: test-e2e-long
test-e2e-long: ## End-to-end long tier: the nightly chain to an explained build, the suite's site with triage, verdicts and bisections on real runs, chaos, node loss, kwok placement, CloudNativePG.
	CLUSTER=$(CLUSTER) DBBENCH_TEST_TIER=long hack/test-e2e.sh

.PHONY: test-operators
test-operators: ## The operator tests of test-e2e-long alone (CloudNativePG installed by hack/operators.sh cnpg on the local cluster).
	CLUSTER=$(CLUSTER) DBBENCH_TEST_TIER=long E2E_RUN='CloudNativePG' hack/test-e2e.sh

.PHONY: test-push
test-push: ## make push against a real registry (Debian's docker-registry on loopback): the tag listed, the digest matching.
	hack/test-push.sh

.PHONY: test-go-install
test-go-install: ## go install .../cmd/kubectl-dbbench@<version> of the committed tree, served as a module version by a file:// proxy (docs/testing.md has its time).
	hack/test-go-install.sh

##@ Benchmarks

.PHONY: bench-controller
bench-controller: ## 200 runs × 10 cells against envtest with 500 simulated nodes, against a bare client starting the same cells (3 trials, median); prints CPU and API requests of both, writes and pods per cell, peak RSS. Then a blocked 10 + 10 run's wall time on 1, 5, 20 and 50 nodes.
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(GO) run ./test/bench/controller
	KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)" $(GO) run ./test/bench/controller -scaling 1,5,20,50

.PHONY: bench-dbinit
bench-dbinit: ## The MariaDB image's initialisation on this machine's MariaDB: users created at the server's first start (--init-file) against a temporary server, DBINIT_TRIALS each, alternating; medians and their ratio (docs/benchmarks.md).
	hack/bench-dbinit.sh

.PHONY: bench-fidelity
bench-fidelity: ## Agent vs plain sysbench QPS on a real local MariaDB, 5 concurrent pairs (docs/agent.md, Fidelity).
	$(GO) run ./test/bench/fidelity -concurrent

.PHONY: bench-verdicts
bench-verdicts: ## A/A false positives, detection of calibrated 10 % / 5 % CPU-quota slowdowns, adaptive vs fixed repeats, real local MariaDB (docs/benchmarks.md). Size: VERDICTS_* (hack/bench-verdicts.sh).
	hack/bench-verdicts.sh

.PHONY: bench-plan
bench-plan: ## Designed plan against the reference method's fixed plan for one goal on real MariaDB rounds: cell-hours, predicted power, held-out detection and A/A (docs/benchmarks.md). PLAN_FRESH=1 measures anew (hack/bench-plan.sh).
	hack/bench-plan.sh

.PHONY: bench-bisect
bench-bisect: ## BenchmarkBisection's search on a real local MariaDB: a 10 % / 20 % CPU-quota slowdown from a random build among 8, and null bisections under a changing load; right-build rate, calibration, cells (docs/benchmarks.md). Size: BISECT_* (hack/bench-bisect.sh).
	hack/bench-bisect.sh

.PHONY: bench-ci
bench-ci: ## make test's stages one at a time: per stage the wall time and the CPU it used, and the shortest make test those allow here. COLD=1: empty HOME and podman store (hack/bench-ci.sh).
	COLD=$(COLD) hack/bench-ci.sh

.PHONY: bench-pg-series
bench-pg-series: ## A real release history on the local cluster after make demo: SERIES_RELEASES=13 PostgreSQL SERIES_MAJOR=16 releases from the npm registry, one a night, each night's verdict, the change points, what moved (docs/benchmarks.md).
	hack/bench-pg-series.sh

.PHONY: bench-chaos
bench-chaos: ## Manager chaos on the local cluster: CHAOS_KILLS=20 manager kills over waves of CHAOS_RUNS=3 runs with output.s3; prints kills, runs, cells, lost, duplicated, orphans (docs/benchmarks.md).
	hack/bench-chaos.sh

##@ Build

.PHONY: build
build: ## Build the binaries into bin/.
	$(GO) build -o bin/ ./cmd/...

##@ Install on your cluster (docs/install.md)

# REGISTRY is where `make push` puts the images: host[:port][/prefix]. Each
# image keeps its docker.io path under it (REGISTRY/dbbench/manager:TAG,
# REGISTRY/library/mariadb:10.11), the layout of a docker.io mirror.
REGISTRY ?=
# TAG of the manager and agent images pushed (database images keep theirs).
TAG ?= dev
# PUSH_DATABASES=1 also builds and pushes the database images, for clusters
# that cannot pull from Docker Hub (the chart's databaseImages.registry).
PUSH_DATABASES ?=
DATABASE_IMAGES ?= mariadb-10.5 mariadb-10.11 mariadb-11.8 postgres-13 postgres-15 postgres-17 mysql-9.7
# CONTAINER_TOOL pushes with podman (default) or docker; images are built by podman.
CONTAINER_TOOL ?= podman
PUSH_IMAGES = agent manager $(if $(PUSH_DATABASES),$(DATABASE_IMAGES))
DIST ?= dist

.PHONY: images
images: ## Build the manager and agent images (and PUSH_DATABASES=1: the database images) with podman into the cache.
	hack/images.sh $(PUSH_IMAGES)

.PHONY: push
push: ## Build and push the images to REGISTRY=host[:port][/prefix] (TAG, PUSH_DATABASES=1, REGISTRY_INSECURE=1, CONTAINER_TOOL=docker).
	@[ -n "$(REGISTRY)" ] || { echo "make push needs REGISTRY=host[:port][/prefix]" >&2; exit 64; }
	TAG=$(TAG) CONTAINER_TOOL=$(CONTAINER_TOOL) hack/images.sh --push $(REGISTRY) $(PUSH_IMAGES)

# VERSION of a release: the chart's version with a leading v by default.
VERSION ?= v$(shell awk '/^version:/ { print $$2 }' charts/dbbench/Chart.yaml)
# PLUGIN_BASE_URL is where the release's plugin archives are downloaded from.
PLUGIN_BASE_URL ?= https://github.com/dbbench/dbbench/releases/download/$(VERSION)

.PHONY: chart-package
chart-package: ## helm package the chart into DIST (dist/dbbench-<chart version>.tgz); appVersion, the manager's default tag, is TAG.
	hack/helm.sh package $(DIST) --app-version $(TAG)

.PHONY: docs-pictures
docs-pictures: ## Refresh the pictures in docs/ in headless Chromium at 1,400 px: demo-site.png (the README's: the site make demo writes) and site-index.png (the suite site of TestSuiteSiteWithTriage, fourteen real nights on the local cluster).
	CLUSTER=$(CLUSTER) DEMO_SHOT=$(CURDIR)/docs/demo-site.png hack/demo.sh
	CLUSTER=$(CLUSTER) DBBENCH_TEST_TIER=long E2E_RUN='TestSuiteSiteWithTriage' DBBENCH_E2E_SITE_SHOT=$(CURDIR)/docs/site-index.png hack/test-e2e.sh

.PHONY: release
release: ## Build and push the images to REGISTRY under VERSION=vX.Y.Z, the chart pinned by digest to oci://REGISTRY/charts and DIST, the plugin's archives and krew manifest, SHA256SUMS; prints how to install (hack/release.sh).
	VERSION=$(VERSION) REGISTRY=$(REGISTRY) DIST=$(DIST) PLUGIN_BASE_URL=$(PLUGIN_BASE_URL) PLUGIN_PLATFORMS="$(PLUGIN_PLATFORMS)" CONTAINER_TOOL=$(CONTAINER_TOOL) hack/release.sh

.PHONY: test-release
test-release: ## make release against a real registry on loopback, then the packaged chart installed from it on the local cluster with --set registry alone, and a first benchmark run (not in make test).
	hack/test-release.sh

.PHONY: plugin-dist
plugin-dist: ## kubectl-dbbench archives for linux, darwin, windows and their krew manifest (DIST/dbbench.yaml, VERSION, PLUGIN_BASE_URL).
	hack/plugin-dist.sh $(DIST) $(VERSION) $(PLUGIN_BASE_URL) $(PLUGIN_PLATFORMS)
