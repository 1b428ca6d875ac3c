#!/usr/bin/env bash
# Builds oplab.dev/pg-operator:<chart appVersion> and oplab.dev/oplab:<same>
# from ./Dockerfile: the binaries are built on the host (static), then
# copied into images on an empty base. Skipped when an image with the same
# inputs (label oplab.key) exists.
source "$(dirname "$0")/lib.sh"
shopt -s nullglob
export DOCKER_BUILDKIT=0
cd "$ROOT"
version=$(sed -nE 's/^appVersion: *"?([^"]+)"?/\1/p' charts/pg-operator/Chart.yaml)
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
step "static binaries oplab, pg-operator, hostpod, cellpod"
# The toolchain's default settings, so the packages come from the build
# cache of the usual `go build`; linked statically (glibc's resolver is not
# used: the images set GODEBUG=netdns=go).
go build -ldflags "-s -w -linkmode external -extldflags -static" -o "$ctx/" ./cmd/oplab ./cmd/pg-operator ./cmd/hostpod ./cmd/cellpod 2> >(grep -v 'statically linked applications requires at runtime' >&2)
for f in "$ctx"/oplab "$ctx"/pg-operator "$ctx"/hostpod "$ctx"/cellpod; do
  file "$f" | grep -q 'statically linked' || die "$f is not statically linked"
done
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin\n' > "$ctx/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' > "$ctx/group"
mkdir -p "$ctx/controlplane" "$ctx/sysroot"
for f in etcd kube-controlplane kubectl; do
  [ ! -x "bin/$f" ] || cp "bin/$f" "$ctx/controlplane/"
done
# The control plane is linked against the C library (`make controlplane`
# builds it as the host's programs): the image carries the loader and the
# libraries ldd names, at the same paths, so the pods provider's cells run
# the same binaries as the embedded provider.
for f in "$ctx"/controlplane/*; do
  file "$f" | grep -q 'dynamically linked' || continue
  for lib in $(ldd "$f" | grep -oE '/[^ ]+\.so[^ ]*'); do
    mkdir -p "$ctx/sysroot$(dirname "$lib")"
    cp -L "$lib" "$ctx/sysroot$lib"
  done
done
for target in pg-operator oplab; do
  tag=oplab.dev/$target:$version
  files=("$ctx/pg-operator"); [ "$target" = pg-operator ] || files=("$ctx"/oplab "$ctx"/hostpod "$ctx"/pg-operator "$ctx"/cellpod "$ctx"/controlplane/* $(find "$ctx/sysroot" -type f))
  key=$(cat Dockerfile "${files[@]}" 2>/dev/null | sha256sum | cut -c1-12)
  if [ "$(docker image inspect -f '{{index .Config.Labels "oplab.key"}}' "$tag" 2>/dev/null)" = "$key" ]; then
    info "$tag is up to date ($key)"
    continue
  fi
  step "image $tag"
  docker build -q -f Dockerfile --target "$target" --label "oplab.key=$key" -t "$tag" "$ctx" >/dev/null
done
