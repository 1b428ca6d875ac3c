#!/usr/bin/env bash
# Guards the promise that `make run` and `make test` work on a fresh machine
# whose Go module cache is empty. A machine with a warm cache (CI's, a
# developer's) cannot see a step that assumes a module is already
# downloaded, so this runs the module steps with an EMPTY module cache and
# build cache, fed by a file:// proxy over this machine's own module cache:
# no network, a few seconds. It runs hack/build-controlplane.sh
# --prepare-only: the versions, the download and patch of k8s.io/apiserver,
# the temporary go.mod; and hack/build-kit.sh --prepare-only: the module
# cache and go.sum of the lab whose learners build a controller. (`go build`, `go vet`, `go test` and `go tool`
# download what they need by themselves; only a script that asks for a
# module's directory can trip over an empty cache.)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=$(go env GOMODCACHE)
tmp=$(mktemp -d)
# The module cache's files are read-only.
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# The proxy is this machine's module cache, and the build kit's when it is
# made: the kit's module steps fetch into a cache of their own (its test
# dependencies' modules, say, which no build of oplab fetches), so on a
# machine whose kit was made from the network, only the kit's cache holds
# them.
proxy=file://$cache/cache/download
kitcache=$root/bin/_kit/mod/cache/download
if [ -d "$kitcache" ]; then
  proxy+=,file://$kitcache
fi
export GOMODCACHE=$tmp/mod GOCACHE=$tmp/build GOPROXY=$proxy
# go.sum verifies what it lists; nothing may reach the checksum database or
# fetch a toolchain.
export GOSUMDB=off GOTOOLCHAIN=local GOFLAGS=-mod=readonly

echo "verify-fresh-modules: module steps with an empty module cache (proxy: $GOPROXY)"
"$root/hack/build-controlplane.sh" --prepare-only "$tmp/bin"
"$root/hack/build-kit.sh" --prepare-only "$tmp/kit"
echo "verify-fresh-modules: ok"
