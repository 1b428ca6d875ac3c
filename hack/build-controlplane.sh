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

# kube-apiserver makes its loopback certificate with ECDSA instead of RSA
# keys (see apiserver-patch/loopback_cert.go). kube-controlplane is built against a
# copy of k8s.io/apiserver in which one call of serving_with_loopback.go is
# renamed and that file added; a temporary go.mod replaces the module with
# the copy. (go build -overlay refuses files in the module cache.)
# `go list -m` reports no directory for a module not yet in the module
# cache, so download it first (a no-op when it is there).
go mod download k8s.io/apiserver
apiserver=$(go list -m -f '{{.Dir}}' k8s.io/apiserver)
if [ -z "$apiserver" ] || [ ! -d "$apiserver" ]; then
  echo "k8s.io/apiserver is not in the module cache after 'go mod download'" >&2
  exit 1
fi
patched=$tmp/src/k8s.io/apiserver
mkdir -p "$tmp/src/k8s.io"
cp -r "$apiserver" "$patched"
chmod -R u+w "$patched"
options=$patched/pkg/server/options
sed -i 's/certutil\.GenerateSelfSignedCertKeyWithOptions(/generateLoopbackCertKey(/' "$options/serving_with_loopback.go"
if [ "$(grep -c 'generateLoopbackCertKey(' "$options/serving_with_loopback.go")" != 1 ]; then
  echo "k8s.io/apiserver's serving_with_loopback.go no longer makes the loopback certificate as" >&2
  echo "hack/tools/controlplane/apiserver-patch/loopback_cert.go expects: update it for this release" >&2
  exit 1
fi
cp "$mod/apiserver-patch/loopback_cert.go" "$options/zz_oplab_loopback_cert.go"
cp go.mod "$tmp/go.mod"
cp go.sum "$tmp/go.sum"
go mod edit -replace "k8s.io/apiserver=$patched" "$tmp/go.mod"

echo "building control plane $kube_version (kwok $kwok_version) into $out"
echo "  kube-controlplane"
go build -trimpath -modfile "$tmp/go.mod" -ldflags "$ldflags" -o "$tmp/kube-controlplane" ./cmd/kube-controlplane
echo "  kubectl"
go build -trimpath -ldflags "$ldflags" -o "$tmp/kubectl" k8s.io/kubernetes/cmd/kubectl
# etcd's main package is its module root, so go build names the file "server".
echo "  etcd"
go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3

rm -rf "$tmp/src" "$tmp/go.mod" "$tmp/go.sum"
for f in "$tmp"/*; do mv -f "$f" "$out/"; done
echo "$kube_version kwok-$kwok_version" > "$out/.controlplane-version"
