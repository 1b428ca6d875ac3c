# Shared by hack/kind/*.sh: where the kind tooling keeps its cache, how it
# logs, and the versions every step agrees on. Sourced, not run.
set -euo pipefail

KIND_HACK=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$KIND_HACK/../.." && pwd)
# Everything built is cached by content under here; deleting it forces a rebuild.
CACHE=${OPLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/oplab}
BINCACHE=$CACHE/kind/bin
# The private engine's state (see env.sh) lives here when it is needed.
STATE=${OPLAB_KIND_STATE:-/var/lib/oplab-kind}

# Versions: kind's library from the main go.mod; Kubernetes and etcd from
# nodebins/go.mod; the images kubeadm asks for from kubeadm's own constants.
KIND_VERSION=$(cd "$ROOT" && go list -m -f '{{.Version}}' sigs.k8s.io/kind 2>/dev/null || echo v0.33.0)
KUBE_VERSION=$(cd "$KIND_HACK/nodebins" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
CONTAINERD_VERSION=v2.3.7
LOCAL_PATH_VERSION=v0.0.30
# crictl: the proxy serves v1.34.0 and v1.37.0 of sigs.k8s.io/cri-tools (no
# v1.36.x); crictl speaks the CRI v1 API of any containerd 2.x.
CRICTL_VERSION=v1.37.0
DEBIAN_SUITE=bookworm

step() { printf '==> %s\n' "$*" >&2; }
info() { printf '    %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# kubeadm_const NAME prints a string constant of kubeadm's constants.go.
kubeadm_const() {
  local dir
  dir=$(cd "$KIND_HACK/nodebins" && go mod download -json k8s.io/kubernetes | jq -r .Dir)
  sed -nE "s/^[[:space:]]*$1 = \"([^\"]+)\".*/\1/p" "$dir/cmd/kubeadm/app/constants/constants.go" | head -1
}

# hash_of FILE... prints a short content hash of files (cache keys).
hash_of() { cat "$@" | sha256sum | cut -c1-12; }
