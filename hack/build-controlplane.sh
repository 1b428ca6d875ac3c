#!/usr/bin/env bash
# Builds the embedded control plane into ./bin from the Go modules pinned in
# hack/tools/controlplane/go.mod: etcd; kube-controlplane, which runs
# kube-apiserver, kube-controller-manager, kube-scheduler and kwok in one
# process (hack/tools/controlplane/cmd/kube-controlplane); and kubectl of the
# same Kubernetes line, for learners and tests. Version strings are stamped so
# that `kube-controlplane --version` tells the truth.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/bin}
mod=$root/hack/tools/controlplane
cd "$mod"

kube_version=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
kwok_version=$(go list -m -f '{{.Version}}' sigs.k8s.io/kwok)
major=${kube_version#v}; minor=${major#*.}; major=${major%%.*}; minor=${minor%%.*}
build_date=$(date -u -d "@${SOURCE_DATE_EPOCH:-0}" +%Y-%m-%dT%H:%M:%SZ)

kv=k8s.io/component-base/version
cv=k8s.io/client-go/pkg/version
ldflags="-s -w"
for pkg in $kv $cv; do
  ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
done
ldflags+=" -X sigs.k8s.io/kwok/pkg/consts.Version=${kwok_version#v}"

mkdir -p "$out"
tmp=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "building control plane $kube_version (kwok $kwok_version) into $out"
for cmd in \
  ./cmd/kube-controlplane \
  k8s.io/kubernetes/cmd/kubectl; do
  name=${cmd##*/}
  echo "  $name"
  go build -trimpath -ldflags "$ldflags" -o "$tmp/$name" "$cmd"
done
# etcd's main package is its module root, so go build names the file "server".
echo "  etcd"
go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3

for f in "$tmp"/*; do mv -f "$f" "$out/"; done
echo "$kube_version kwok-$kwok_version" > "$out/.controlplane-version"
