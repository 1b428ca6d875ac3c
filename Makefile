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

CONTROLPLANE_BINS := $(addprefix $(BIN)/,etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)
CONTROLPLANE_SRC  := hack/tools/controlplane/go.mod hack/tools/controlplane/go.sum hack/build-controlplane.sh

.PHONY: all build controlplane run test bench clean help

all: build

help: ## Show the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | sort

controlplane: $(CONTROLPLANE_BINS) ## Build etcd, kube-*, kubectl and kwok into ./bin (only when missing or stale)

# One build makes all six; it reruns when a pin or the script changes, or
# when a binary is missing.
$(CONTROLPLANE_BINS) &: $(CONTROLPLANE_SRC)
	./hack/build-controlplane.sh $(BIN)
	@touch $(CONTROLPLANE_BINS)

build: ## Build oplab into ./bin
	$(GO) build -o $(BIN)/oplab ./cmd/oplab

run: controlplane build ## Build what is needed and start the lab server
	$(BIN)/oplab serve --addr $(ADDR)

test: controlplane build ## Run the whole test suite against real components
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...

bench: controlplane build ## Print the benchmarks' figures (medians over BENCH_COUNT runs)
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) -timeout 60m ./... | tee $(BIN)/bench.txt
	$(GO) run ./hack/benchmedian < $(BIN)/bench.txt

clean: ## Remove ./bin
	rm -rf $(BIN)
