# oplab's build. `make run` and `make test` are all a fresh machine with Go
# and make needs: they build the control plane into ./bin first.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

GO    ?= go
BIN   := $(CURDIR)/bin
ADDR  ?= 127.0.0.1:8080
# Benchmarks: iterations per run and runs (medians are taken over runs).
BENCH_COUNT ?= 5

export OPLAB_BIN := $(BIN)

CONTROLPLANE_BINS := $(addprefix $(BIN)/,etcd kube-controlplane kubectl)
CONTROLPLANE_SRC  := hack/tools/controlplane/go.mod hack/tools/controlplane/go.sum hack/build-controlplane.sh \
                     $(wildcard hack/tools/controlplane/cmd/*/*.go) $(wildcard hack/tools/controlplane/apiserver-patch/*.go hack/tools/controlplane/apiserver-patch/*/*.go)

.PHONY: all build kit controlplane run test test-short bench clean help kind-env images test-kind

all: build kit

help: ## Show the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | sort

controlplane: $(CONTROLPLANE_BINS) ## Build etcd, kube-controlplane and kubectl into ./bin (only when missing or stale)

# One build makes all six; it reruns when a pin or the script changes, or
# when a binary is missing.
$(CONTROLPLANE_BINS) &: $(CONTROLPLANE_SRC)
	./hack/build-controlplane.sh $(BIN)
	@touch $(CONTROLPLANE_BINS)

# conflictwindow runs in a kind cluster's pod whose root is the node's
# pause image: it is built without cgo, so that it needs no C library.
build: ## Build oplab, pg-operator, hostpod and the programs of the cells into ./bin
	$(GO) build -o $(BIN)/ $$($(GO) list ./cmd/... | grep -v '/cmd/conflictwindow$$')
	CGO_ENABLED=0 $(GO) build -o $(BIN)/ ./cmd/conflictwindow

# The build kit (hack/build-kit.sh): the toolchain, modules and warm build
# cache with which a learner's own controller is built in their cell. It
# is made again when a pin or the lab's module changes.
KIT     := $(BIN)/_kit
KIT_SRC := go.mod go.sum hack/build-kit.sh $(shell find labs/write-reconciler/_module labs/write-reconciler/_solution -type f 2>/dev/null)

kit: $(KIT)/stamp ## Make the build kit for learners' controllers (bin/_kit)

$(KIT)/stamp: $(KIT_SRC)
	./hack/build-kit.sh $(KIT)

run: controlplane build kit ## Build what is needed and start the lab server
	./scripts/ensure-bwrap.sh
	$(BIN)/oplab serve --addr $(ADDR)

# The walls between a learner and the machine (the cells' namespaces, the
# console's sandbox, the budgets' control groups) are tested only where the
# machine can make them. A wall test that cannot make its wall FAILS here,
# whatever CI says: a `make test` that passed having tested no wall would
# tell the machine's operator that learners are kept apart when nobody
# checked, and a machine that cannot make cells cannot serve classes either
# (oplab serve refuses). Failing is the default because only the person
# running the tests knows that their machine is not meant to serve (a
# laptop without user namespaces): they say so with WALLS=untested, and the
# wall tests skip — never in CI — and the report ends with one line for
# each wall not tested. The rule has one owner, internal/walltest; the
# report is hack/testsum's, which `go test -json` is piped through (with
# pipefail, a failed test still fails make).
WALLS ?=
test: controlplane build kit ## Run the whole test suite against real components (WALLS=untested on a machine that cannot make cells)
	./scripts/ensure-postgres.sh
	./scripts/ensure-chromium.sh
	./scripts/ensure-bwrap.sh
	$(MAKE) --no-print-directory verify-generated verify-tidy verify-fresh-modules
	$(GO) vet ./...
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(GO) build -o "$$tmp/testsum" ./hack/testsum; \
	OPLAB_WALLS=$(WALLS) OPLAB_KIND_TEST= OPLAB_KIND_SKIP="$(KIND_LATER)" OPLAB_SCREENSHOTS=$(BIN)/screenshots \
	  $(GO) test -json -count=1 -timeout 30m ./... | "$$tmp/testsum"
	$(call kind_tests,)

# The README's picture of the lab page is taken by the browser test, not by
# hand: TestBrowserRunsTheFailoverLab keeps the lab page mid-failover as
# $(OPLAB_SCREENSHOTS)/lab.png, copied here to docs/images/lab.png.
.PHONY: screenshots
screenshots: controlplane build ## Retake docs/images/lab.png, the README's screenshot, with the browser test
	./scripts/ensure-chromium.sh
	./scripts/ensure-bwrap.sh
	rm -f $(BIN)/screenshots/lab.png
	OPLAB_SCREENSHOTS=$(BIN)/screenshots $(GO) test -count=1 -timeout 15m -run '^TestBrowserRunsTheFailoverLab$$' ./internal/app/webapp/
	mkdir -p docs/images
	cp $(BIN)/screenshots/lab.png docs/images/lab.png

# The inner loop: no control plane, kind, Chromium or PostgreSQL, so it
# builds none of them and runs on a fresh clone. The helpers that start
# those skip under -short; OPLAB_BIN and OPLAB_CHROMIUM name paths that
# cannot exist, so a test that reaches for ./bin or a browser without them
# fails here instead of passing on a machine that has built everything.
# testsum prints go test's usual report, how many tests were skipped and
# which walls were not tested (all of them, under -short: see `make test`).
NOWHERE := /dev/null/test-short
test-short: ## Run the tests that need no control plane, kind, Chromium or PostgreSQL (about 2 min)
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(GO) build -o "$$tmp/testsum" ./hack/testsum; \
	OPLAB_BIN=$(NOWHERE)/bin OPLAB_CHROMIUM=$(NOWHERE)/chromium \
	  $(GO) test -short -json -timeout 10m ./... | "$$tmp/testsum"

bench: controlplane build ## Print the benchmarks' figures (medians over BENCH_COUNT runs)
	eval "$$(./hack/kind/test-env.sh)" && \
	  trap '[ -z "$${OPLAB_KIND_STARTED:-}" ] || ./hack/kind/env.sh stop' EXIT && \
	  $(GO) test -run '^$$' -bench . -benchtime 1x -count $(BENCH_COUNT) -timeout 150m ./... | tee $(BIN)/bench.txt
	@echo; echo "Medians over $(BENCH_COUNT) runs (benchstat):"
	$(GO) tool -modfile=hack/tools/bench/go.mod benchstat $(BIN)/bench.txt

# ---- kind clusters ------------------------------------------------------------
# hack/kind/ holds the tooling: env.sh prepares a container engine (and this
# machine's workarounds, only where detected), build-images.sh builds every
# image offline, cached by content. Image builds run at the lowest CPU and
# I/O priority so that they only use idle time.
KIND_NICE  := nice -n 19 ionice -c3

kind-env: ## Prepare a container engine for kind; prints the variables to eval: eval "$$(make -s kind-env)"
	@./hack/kind/env.sh

images: ## Build kind's node image, PostgreSQL 15 and the operator images offline (a no-op when cached)
	eval "$$(./hack/kind/env.sh)" && $(KIND_NICE) ./hack/kind/build-images.sh

# The course's third-party operators, apart from `make images` (cold, they
# add Go builds and two Debian trees): Zalando's postgres-operator with a
# Spilo-compatible PostgreSQL image, Spotahome's redis-operator with Redis,
# and their charts, taken from the module zips, under $(BIN)/charts.
.PHONY: images-operators test-images-operators
images-operators: ## Build the third-party operators' images and charts offline (a no-op when cached)
	eval "$$(./hack/kind/env.sh)" && $(KIND_NICE) ./hack/kind/build-images.sh zalando redis

test-images-operators: images-operators ## Test the third-party operators' images without Kubernetes, and their load into a kind node
	eval "$$(./hack/kind/env.sh)" && \
	  OPLAB_KIND_TEST=1 $(GO) test -count=1 -timeout 20m -run 'OperatorImages|Spilo|RedisImage' ./hack/kind/

# The kind tests: a cluster's lifecycle, the operator on real PostgreSQL
# and, with OPLAB_KIND_SLOW=1, every lab's self-test on kind. `make test`
# runs the quick ones after the rest of the suite, never beside it: on a
# 2-core machine a kind node died under the load of the whole suite. They
# run one package and one cluster at a time. test-env.sh prepares the
# engine and the images (a no-op when cached), or says why they skip.
KIND_TEST_PKGS := ./hack/kind/ ./charts/ ./internal/cluster/ ./internal/operator/install/ ./internal/operator/thirdparty/ ./internal/engine/ ./internal/app/webapp/
KIND_LATER     := they run after the rest of the suite, one cluster at a time (make test's kind phase)
define kind_tests
	eval "$$(./hack/kind/test-env.sh)" && \
	  trap '[ -z "$${OPLAB_KIND_STARTED:-}" ] || ./hack/kind/env.sh stop' EXIT && \
	  OPLAB_KIND_SLOW=$(1) $(GO) test -p 1 -count=1 -timeout 60m -run 'Kind|PostgresImage' $(KIND_TEST_PKGS)
endef

test-kind: controlplane build kit ## Run the kind tests, every lab's self-test on kind included (~18 min)
	$(call kind_tests,1)

clean: ## Remove ./bin
	chmod -R u+w $(BIN) 2>/dev/null || true
	rm -rf $(BIN)

# ---- pg-operator: code generated from +kubebuilder markers ------------------
# controller-gen is pinned in hack/tools/go.mod (its k8s.io line matches ours).
# `generate` writes the CRD to config/crd/, the ClusterRole to config/rbac/,
# deepcopy code to api/v1/, and copies the CRD and the role into the chart.
CONTROLLER_GEN := $(GO) tool -modfile=hack/tools/go.mod controller-gen
GENERATED      := api/v1/zz_generated.deepcopy.go config/crd config/rbac charts/pg-operator/crds charts/pg-operator/files/role.yaml \
                  labs/write-reconciler/_module/api/v1/zz_generated.deepcopy.go labs/write-reconciler/crd.yaml labs/write-reconciler/rbac.yaml

.PHONY: generate verify-generated

generate: ## Regenerate the CRDs, RBAC and deepcopy code from markers (PostgresCluster, the write-reconciler lab's WebApp)
	$(CONTROLLER_GEN) object paths=./api/...
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd
	$(CONTROLLER_GEN) rbac:roleName=pg-operator paths=./internal/operator/controller/... output:rbac:artifacts:config=config/rbac
	mkdir -p charts/pg-operator/crds charts/pg-operator/files
	cp config/crd/databases.example.com_postgresclusters.yaml charts/pg-operator/crds/
	cp config/rbac/role.yaml charts/pg-operator/files/role.yaml
	./hack/generate-lab-module.sh $(KIT)

# verify-generated runs `make generate` in a copy of the tree (without bin/,
# .git and .cache) whose generated files are removed first, and compares: the
# working tree is never written, and an output that generate no longer
# makes shows up as stale too. (tar's status 1 is a file changed while it
# was read, an editor saving; only 2 is an error.)
verify-generated: ## Fail when the generated CRD, RBAC or deepcopy code is stale
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	{ tar -C . --exclude=./bin --exclude=./.git --exclude=./.cache --warning=no-file-changed -cf - . || [ $$? = 1 ]; } | tar -C "$$tmp" -xf -; \
	(cd "$$tmp" && rm -rf $(GENERATED)); \
	if ! out=$$($(MAKE) --no-print-directory -C "$$tmp" generate KIT=$(KIT) 2>&1); then \
	  echo "$$out" >&2; echo "make generate failed in a copy of the tree (see above)" >&2; exit 1; \
	fi; \
	stale=0; \
	for f in $(GENERATED); do \
	  diff -ru "$$f" "$$tmp/$$f" || stale=1; \
	done; \
	if [ $$stale = 1 ]; then \
	  echo "generated files are stale (the diff above is what regenerating changes): run 'make generate' and commit the result" >&2; exit 1; \
	fi

# ---- guards of the fresh-machine promise ------------------------------------
GO_MODULES := . hack/tools hack/tools/bench hack/tools/controlplane

.PHONY: verify-tidy verify-fresh-modules

verify-tidy: ## Fail when go.mod or go.sum of oplab or a tool module is not tidy
	@for m in $(GO_MODULES); do \
	  if ! d=$$(cd $$m && $(GO) mod tidy -diff 2>&1); then \
	    echo "$$d"; echo "$$m/go.mod is not tidy: run 'go mod tidy' in $$m and commit the result" >&2; exit 1; \
	  fi; \
	done

verify-fresh-modules: ## Run the build's module steps against an empty module cache (no network)
	./hack/verify-fresh-modules.sh
