#!/usr/bin/env bash
# Regenerates what controller-gen makes of the write-reconciler lab's module
# (labs/write-reconciler/_module): the WebApp type's deepcopy code, its CRD
# (crd.yaml) and the ClusterRole of its RBAC markers (rbac.yaml). The
# module is loaded with the build kit's go.mod and module cache (make kit):
# it is not part of oplab's module.
#
# Usage: generate-lab-module.sh KIT
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
kit=$(cd "${1:?usage: generate-lab-module.sh KIT (bin/_kit, made by make kit)}" && pwd)
lab=$root/labs/write-reconciler
if [ ! -f "$kit/stamp" ]; then
  echo "generate-lab-module: no build kit in $kit: run make kit first" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$root" && go build -modfile=hack/tools/go.mod -o "$work/controller-gen" sigs.k8s.io/controller-tools/cmd/controller-gen)
mkdir "$work/module"
cp -R "$lab/_module/." "$work/module/"
cp "$kit/module/go.mod" "$kit/module/go.sum" "$work/module/"
cd "$work/module"
export GOMODCACHE=$kit/mod GOFLAGS=-mod=readonly GOPROXY=off GOTOOLCHAIN=local GOWORK=off
"$work/controller-gen" object paths=./api/...
"$work/controller-gen" crd paths=./api/... output:crd:stdout >"$work/crd.yaml"
"$work/controller-gen" rbac:roleName=webapp-controller paths=./internal/controller/... output:rbac:stdout >"$work/rbac.yaml"
cp api/v1/zz_generated.deepcopy.go "$lab/_module/api/v1/"
cp "$work/crd.yaml" "$work/rbac.yaml" "$lab/"
