#!/usr/bin/env bash
# Makes the build kit: what a learner's own controller (the write-reconciler
# lab) is built with, inside their cluster's cell, with no network.
#
#   OUT/go       the Go toolchain that builds oplab (hard links where it can)
#   OUT/mod      a module cache holding every module the lab's module needs
#   OUT/module   the lab module's go.mod and go.sum: oplab's own versions of
#                controller-runtime, client-go, apimachinery and api
#   OUT/cache    a build cache warmed by building the reference solution, so
#                that a learner's build compiles only their own packages
#   OUT/stamp    written last: a kit without it is incomplete
#
# The cells see OUT read-only at the same path, and a learner's build runs
# with the flags this warm build used (-trimpath, CGO_ENABLED=0): a cache
# entry is found only when the flags and paths match (internal/controllab).
#
# Usage: build-kit.sh [--prepare-only] [OUT]
#
# --prepare-only makes the module cache and go.mod/go.sum and stops before
# the toolchain and the build: hack/verify-fresh-modules.sh runs it against
# an empty module cache.
set -euo pipefail

prepare_only=false
if [ "${1:-}" = --prepare-only ]; then
  prepare_only=true
  shift
fi
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/bin/_kit}
lab=${OPLAB_KIT_LAB:-$root/labs/write-reconciler}
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

cd "$root"
req=
for m in k8s.io/api k8s.io/apimachinery k8s.io/client-go sigs.k8s.io/controller-runtime; do
  req+=$'\t'"$m $(go list -m -f '{{.Version}}' "$m")"$'\n'
done
goversion=$(go list -m -f '{{.GoVersion}}')
hostcache=$(go env GOMODCACHE)
hostproxy=$(go env GOPROXY)

mkdir -p "$work/module"
cp -R "$lab/_module/." "$lab/_solution/." "$work/module/"
printf 'module example.com/webapp\n\ngo %s\n\nrequire (\n%s)\n' "$goversion" "$req" >"$work/module/go.mod"
# oplab's go.sum holds these modules at these versions: tidy keeps what the
# lab's module needs, and no checksum is taken on trust.
cp go.sum "$work/module/go.sum"

# The kit is made where it is used: the warm cache's entries name its paths.
if [ -d "$out" ]; then
  chmod -R u+w "$out"
  rm -rf "$out"
fi
mkdir -p "$out/module"
export GOMODCACHE=$out/mod GOTOOLCHAIN=local GOWORK=off GOFLAGS=-modcacherw
# This machine's module cache first, then its proxy.
export GOPROXY="file://$hostcache/cache/download,$hostproxy"
echo "build-kit: the lab module's modules"
(cd "$work/module" && go mod tidy)
cp "$work/module/go.mod" "$work/module/go.sum" "$out/module/"
if $prepare_only; then
  echo "build-kit: modules prepared in $out"
  exit 0
fi

goroot=$(go env GOROOT)
echo "build-kit: the toolchain $(go env GOVERSION) from $goroot"
mkdir -p "$out/go"
for f in bin pkg src go.env VERSION; do
  cp -al "$goroot/$f" "$out/go/" 2>/dev/null || cp -a "$goroot/$f" "$out/go/"
done

echo "build-kit: warming the build cache with the reference solution"
start=$(date +%s)
(cd "$work/module" &&
  env -u GOFLAGS GOROOT="$out/go" GOCACHE="$out/cache" GOPROXY=off GOFLAGS=-mod=readonly CGO_ENABLED=0 \
    "$out/go/bin/go" build -trimpath -o "$work/controller" .)
echo "build-kit: warm in $(($(date +%s) - start)) s; cache $(du -sh "$out/cache" | cut -f1)"
date -u +%FT%TZ >"$out/stamp"
