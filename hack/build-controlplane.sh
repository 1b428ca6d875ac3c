#!/usr/bin/env bash
# Builds the embedded control plane into ./bin from the Go modules pinned in
# hack/tools/controlplane/go.mod: etcd; kube-controlplane, which runs
# kube-apiserver, kube-controller-manager, kube-scheduler and kwok in one
# process (hack/tools/controlplane/cmd/kube-controlplane); and kubectl of the
# same Kubernetes line, for learners and tests. Version strings are stamped so
# that `kube-controlplane --version` tells the truth.
#
# Usage: build-controlplane.sh [--prepare-only] [OUT]
#
# --prepare-only runs the module steps (versions, download and patch of
# k8s.io/apiserver, the temporary go.mod) and stops before compiling:
# hack/verify-fresh-modules.sh runs it against an empty module cache.
set -euo pipefail

prepare_only=false
if [ "${1:-}" = --prepare-only ]; then
  prepare_only=true
  shift
fi
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
#
# `go list -m` reports no directory for a module that is not in the module
# cache yet, so it is downloaded first (a no-op when it is there).
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

if $prepare_only; then
  # The module graph must resolve with the patched copy in place.
  go list -modfile "$tmp/go.mod" -m -f '{{.Path}} {{.Version}} => {{with .Replace}}{{.Path}}{{end}}' k8s.io/apiserver
  echo "prepared control plane $kube_version (kwok $kwok_version); nothing compiled"
  exit 0
fi

# build NAME OUTPUT [GO BUILD FLAGS...] PACKAGE compiles with `go build -v`,
# which names each package as it compiles it, and prints how far along it
# is: packages compiled of those `go list` reports stale, and the time so
# far, every 15 seconds or 10 %. Anything else go prints (downloads,
# errors) is passed through.
build() {
  local name=$1 output=$2
  shift 2
  local total built=0 shown=0 start=$SECONDS last=$SECONDS line rc=1
  total=$(go list -deps -trimpath -f '{{if .Stale}}x{{end}}' "$@" | grep -c x || true)
  if [ "$total" -eq 0 ]; then
    echo "  $name: up to date in the build cache, linking"
  else
    echo "  $name: compiling $total packages"
  fi
  while IFS= read -r line; do
    case $line in
      '__exit '*)
        rc=${line#__exit }
        continue
        ;;
      *' '*|'#'*|'')
        echo "$line" >&2
        continue
        ;;
    esac
    built=$((built < total ? built + 1 : total))
    if [ $((SECONDS - last)) -ge 15 ] || [ $(((built - shown) * 10)) -ge "$total" ]; then
      printf '  %s: %d/%d packages (%d%%), %s elapsed, compiling %s\n' \
        "$name" "$built" "$total" $((built * 100 / (total > 0 ? total : 1))) "$(elapsed $start)" "$line"
      shown=$built last=$SECONDS
      if [ "$built" -eq "$total" ]; then
        echo "  $name: linking"
      fi
    fi
  done < <(go build -v -trimpath -o "$output" "$@" 2>&1; echo "__exit $?")
  if [ "$rc" != 0 ]; then
    echo "  $name: build failed after $(elapsed $start)" >&2
    return 1
  fi
  echo "  $name: done in $(elapsed $start)"
}

elapsed() {
  local s=$((SECONDS - $1))
  printf '%dm%02ds' $((s / 60)) $((s % 60))
}

echo "building control plane $kube_version (kwok $kwok_version) into $out"
if [ ! -e "$out/.controlplane-version" ]; then
  echo "  the first build compiles Kubernetes from source: 5-15 minutes on 2 cores; later builds take seconds"
fi
build kube-controlplane "$tmp/kube-controlplane" -modfile "$tmp/go.mod" -ldflags "$ldflags" ./cmd/kube-controlplane
build kubectl "$tmp/kubectl" -ldflags "$ldflags" k8s.io/kubernetes/cmd/kubectl
# etcd's main package is its module root, so go build would name the file "server".
build etcd "$tmp/etcd" -ldflags "-s -w" go.etcd.io/etcd/server/v3

rm -rf "$tmp/src" "$tmp/go.mod" "$tmp/go.sum"
for f in "$tmp"/*; do mv -f "$f" "$out/"; done
echo "$kube_version kwok-$kwok_version" > "$out/.controlplane-version"
