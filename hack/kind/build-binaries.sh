#!/usr/bin/env bash
# Builds, from Go modules only, every binary the offline kind node image
# needs: the Kubernetes node and control-plane binaries and etcd (pinned in
# hack/kind/nodebins/go.mod), containerd, CoreDNS, local-path-provisioner and
# pause, and crictl (which `kind export logs` runs in the nodes). Each lands in $CACHE/kind/bin/<name>-<version>/ and is skipped when
# already there, so a second run is a no-op.
#
#   hack/kind/build-binaries.sh [kube|containerd|coredns|local-path|pause|crictl]...  (default: all)
source "$(dirname "$0")/lib.sh"

want=("$@"); [ ${#want[@]} -gt 0 ] || want=(kube containerd coredns local-path pause crictl)
# wanted NAME: true when NAME is to be built by this run.
wanted() { [[ " ${want[*]} " == *" $1 "* ]]; }

COREDNS_VERSION=$(kubeadm_const CoreDNSVersion)
mkdir -p "$BINCACHE"

# built DIR: true when DIR holds a finished build.
built() { [ -e "$1/.done" ]; }

# gobuild_at MODULE@VERSION OUTDIR TAGS PKG...: builds packages of a module
# at a version statically, in a copy of the module itself, so its own
# go.sum, replace directives and vendor directory apply.
gobuild_at() {
  local modver=$1 out=$2 tags=$3; shift 3
  local work dir pkgs=() mod=${modver%@*}
  work=$(mktemp -d)
  dir=$(cd "$ROOT" && go mod download -json "$modver" | jq -r .Dir)
  [ -d "$dir" ] || die "go mod download $modver gave no directory"
  cp -r "$dir/." "$work/"; chmod -R u+w "$work"
  for p in "$@"; do pkgs+=(".${p#"$mod"}"); done
  # A module zip holds no vendor tree (at most vendor/modules.txt): build
  # from the module cache.
  (cd "$work" && CGO_ENABLED=0 go build -mod=mod -trimpath -tags "$tags" -ldflags "-s -w $LDX" -o "$out/" "${pkgs[@]}")
  rm -rf "$work"
}

kube_dir=$BINCACHE/kube-$KUBE_VERSION-$(hash_of "$KIND_HACK/nodebins/go.sum")-cgo
if wanted kube && ! built "$kube_dir"; then
  step "kubelet, kubeadm, kubectl, kube-apiserver, -controller-manager, -scheduler, -proxy $KUBE_VERSION and etcd (the slow one: ~15 min of CPU)"
  mkdir -p "$kube_dir"
  major=${KUBE_VERSION#v}; minor=${major#*.}; major=${major%%.*}; minor=${minor%%.*}
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  # Built as the control plane of hack/build-controlplane.sh is (cgo as
  # the toolchain's default, -trimpath), so most packages come from its
  # build cache; the binaries then link glibc, and their images are based on
  # the node's Debian tree rather than on an empty image.
  (cd "$KIND_HACK/nodebins" && go build -trimpath -ldflags "$ldflags" -o "$kube_dir/" \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubeadm k8s.io/kubernetes/cmd/kubectl \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy)
  (cd "$KIND_HACK/nodebins" && go build -trimpath -ldflags "-s -w" -o "$kube_dir/etcd" go.etcd.io/etcd/server/v3)
  touch "$kube_dir/.done"
fi
echo "$kube_dir" > "$BINCACHE/kube.path"

ctd_dir=$BINCACHE/containerd-$CONTAINERD_VERSION
if wanted containerd && ! built "$ctd_dir"; then
  step "containerd $CONTAINERD_VERSION"
  LDX="-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION"
  gobuild_at github.com/containerd/containerd/v2@$CONTAINERD_VERSION "$ctd_dir" "no_btrfs no_devmapper no_zfs" \
    github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/ctr \
    github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2
  touch "$ctd_dir/.done"
fi
echo "$ctd_dir" > "$BINCACHE/containerd.path"

dns_dir=$BINCACHE/coredns-$COREDNS_VERSION
if wanted coredns && ! built "$dns_dir"; then
  step "coredns $COREDNS_VERSION"
  LDX=""
  gobuild_at github.com/coredns/coredns@$COREDNS_VERSION "$dns_dir" "" github.com/coredns/coredns
  touch "$dns_dir/.done"
fi
echo "$dns_dir" > "$BINCACHE/coredns.path"

lp_dir=$BINCACHE/local-path-provisioner-$LOCAL_PATH_VERSION
if wanted local-path && ! built "$lp_dir"; then
  step "local-path-provisioner $LOCAL_PATH_VERSION"
  LDX="-X main.VERSION=$LOCAL_PATH_VERSION"
  gobuild_at github.com/rancher/local-path-provisioner@$LOCAL_PATH_VERSION "$lp_dir" "" github.com/rancher/local-path-provisioner
  touch "$lp_dir/.done"
fi
echo "$lp_dir" > "$BINCACHE/local-path-provisioner.path"

pause_dir=$BINCACHE/pause-$(hash_of "$KIND_HACK/pause/main.go")
if wanted pause && ! built "$pause_dir"; then
  step "pause"
  mkdir -p "$pause_dir"
  (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$pause_dir/pause" ./hack/kind/pause)
  touch "$pause_dir/.done"
fi
echo "$pause_dir" > "$BINCACHE/pause.path"
cri_dir=$BINCACHE/crictl-$CRICTL_VERSION
if wanted crictl && ! built "$cri_dir"; then
  step "crictl $CRICTL_VERSION"
  LDX="-X sigs.k8s.io/cri-tools/pkg/version.Version=$CRICTL_VERSION"
  gobuild_at sigs.k8s.io/cri-tools@$CRICTL_VERSION "$cri_dir" "" sigs.k8s.io/cri-tools/cmd/crictl
  touch "$cri_dir/.done"
fi
echo "$cri_dir" > "$BINCACHE/crictl.path"
step "binaries ready under $BINCACHE"
