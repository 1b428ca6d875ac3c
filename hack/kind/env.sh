#!/usr/bin/env bash
# Prepares a container engine for kind on this machine, idempotently, and
# prints the variables a shell should `eval`:
#
#   eval "$(hack/kind/env.sh)"      # or: eval "$(make -s kind-env)"
#
# A normal developer machine already runs Docker or Podman: then this only
# checks it and prints nothing to change. Otherwise, as root, it installs
# Debian's docker.io and starts dockerd. Two machine-specific workarounds
# switch on only when detected:
#   - the capability bounding set lacks CAP_SYS_RESOURCE (some sandboxes):
#     a private dockerd (own data root and socket under $STATE) whose default
#     runtime is hack/kind/runc-wrapper, which drops that capability, and a
#     kind config with containerd's restrict_oom_score_adj = true;
#   - cgroup v1: the kind config sets the kubelet's failCgroupV1: false.
# The kind config is written to $STATE/kind-config.yaml and exported as
# OPLAB_KIND_CONFIG, which the kind provider takes as its cluster config.
# Progress goes to stderr; only `export` lines go to stdout, among them
# OPLAB_KIND_STARTED=1 when this run started a dockerd.
# `hack/kind/env.sh stop` stops the dockerd this script started.
source "$(dirname "$0")/lib.sh"

# cap_sys_resource_missing: true when bit 24 of CapBnd is clear.
cap_sys_resource_missing() {
  local bnd; bnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
  (( (16#$bnd >> 24 & 1) == 0 ))
}
cgroup_v1() { [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" != cgroup2fs ]; }

private_sock=$STATE/docker.sock
private_pid=$STATE/dockerd.pid

if [ "${1:-}" = stop ]; then
  for pidfile in "$private_pid" "$STATE/system-dockerd.pid"; do
    pid=$(cat "$pidfile" 2>/dev/null || true)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      step "stopping dockerd $pid"
      kill "$pid"
      for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      rm -f "$pidfile"
    fi
  done
  exit 0
fi

# wait_for_engine HOST SECONDS: true once `docker info` answers on HOST.
wait_for_engine() {
  local host=$1 n=$2
  for _ in $(seq $((n * 2))); do
    DOCKER_HOST=$host docker info >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  return 1
}

ensure_packages() {
  if command -v dockerd >/dev/null && command -v docker >/dev/null && command -v runc >/dev/null; then
    return
  fi
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    die "no container engine: install Docker (https://docs.docker.com/engine/install/) or Podman, start it, and run this again"
  fi
  step "installing docker.io from Debian's packages"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io jq >&2 ||
    { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io jq >&2; }
}

# start_private_dockerd: a dockerd of its own, leaving any other engine alone.
start_private_dockerd() {
  mkdir -p "$STATE/data" "$STATE/exec"
  if DOCKER_HOST=unix://$private_sock docker info >/dev/null 2>&1; then
    info "private dockerd already running on $private_sock"
    return
  fi
  step "starting a private dockerd on $private_sock (runtime drops CAP_SYS_RESOURCE, missing from this machine's bounding set)"
  install -m 0755 "$KIND_HACK/runc-wrapper" "$STATE/runc-wrapper"
  # Its own bridge network and no iptables changes, so the host's rules and
  # any other dockerd stay untouched.
  setsid dockerd --data-root "$STATE/data" --exec-root "$STATE/exec" --pidfile "$private_pid" \
    --host "unix://$private_sock" --bridge=none --iptables=false --ip-masq=false \
    --default-address-pool base=10.213.0.0/16,size=24 \
    --add-runtime "oplab-runc=$STATE/runc-wrapper" --default-runtime oplab-runc \
    >>"$STATE/dockerd.log" 2>&1 </dev/null &
  wait_for_engine "unix://$private_sock" 60 || die "the private dockerd did not start: see $STATE/dockerd.log"
  started=1
}

start_system_dockerd() {
  step "starting dockerd"
  mkdir -p "$STATE"
  setsid dockerd --pidfile "$STATE/system-dockerd.pid" >>"$STATE/system-dockerd.log" 2>&1 </dev/null &
  wait_for_engine "unix:///var/run/docker.sock" 60 || die "dockerd did not start: see $STATE/system-dockerd.log"
  started=1
}

write_kind_config() {
  local cfg=$STATE/kind-config.yaml
  mkdir -p "$STATE"
  {
    echo "# Written by hack/kind/env.sh for this machine; see docs/kind.md#troubleshooting."
    echo "kind: Cluster"
    echo "apiVersion: kind.x-k8s.io/v1alpha4"
    if cgroup_v1; then
      echo "kubeadmConfigPatches:"
      echo "- |"
      echo "  kind: KubeletConfiguration"
      echo "  failCgroupV1: false"
    fi
    if cap_sys_resource_missing; then
      echo "containerdConfigPatches:"
      echo "- |-"
      echo "  [plugins.\"io.containerd.grpc.v1.cri\"]"
      echo "    restrict_oom_score_adj = true"
    fi
  } > "$cfg"
  echo "$cfg"
}

host=""
started=""
if [ -n "${DOCKER_HOST:-}" ] && docker info >/dev/null 2>&1 && ! cap_sys_resource_missing; then
  step "using the engine at DOCKER_HOST=$DOCKER_HOST"
  host=$DOCKER_HOST
elif command -v podman >/dev/null && ! command -v docker >/dev/null; then
  step "using podman"
  echo "export KIND_EXPERIMENTAL_PROVIDER=podman"
else
  ensure_packages
  if cap_sys_resource_missing; then
    [ "$(id -u)" = 0 ] || die "this machine lacks CAP_SYS_RESOURCE and a private dockerd needs root"
    start_private_dockerd
    host=unix://$private_sock
  elif DOCKER_HOST= docker info >/dev/null 2>&1; then
    info "dockerd is running"
    host=unix:///var/run/docker.sock
  else
    [ "$(id -u)" = 0 ] || die "dockerd is not running: start it (sudo systemctl start docker) and run this again"
    start_system_dockerd
    host=unix:///var/run/docker.sock
  fi
fi
[ -z "$host" ] || echo "export DOCKER_HOST=$host"
# Tells a caller (make test-kind) that this run started the engine, so it
# can stop it again with `hack/kind/env.sh stop`.
[ -z "$started" ] || echo "export OPLAB_KIND_STARTED=1"
if cgroup_v1 || cap_sys_resource_missing; then
  cfg=$(write_kind_config)
  info "kind config for this machine: $cfg"
  echo "export OPLAB_KIND_CONFIG=$cfg"
fi
step "engine ready"
