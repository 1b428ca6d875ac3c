#!/usr/bin/env bash
# Builds, with no container registry, every image a kind cluster of oplab
# needs, into the engine at $DOCKER_HOST (see env.sh):
#   oplab.local/kind-node:<kube version>   the node image: Debian bookworm,
#       kind's base files, containerd, the Kubernetes binaries, and inside it
#       the images kubeadm asks for (etcd, coredns, pause, kube-*), kind's
#       local-path storage and a bridge CNI configuration;
#   docker.io/library/postgres:15          PostgreSQL from Debian's packages;
#   oplab.local/pg-operator:dev, oplab.local/oplab:dev   from ./Dockerfile;
# and, only when asked for (make images-operators), the course's third-party
# operators from their Go modules, the images their pods run and their
# charts (see build_zalando and build_redis below):
#   oplab.local/postgres-operator:v1.15.1, oplab.local/spilo:15,
#   oplab.local/redis-operator:v1.2.4, oplab.local/redis:7.0.15,
#   $OPLAB_BIN/charts/postgres-operator-1.15.1/, .../redis-operator-3.2.6/.
# Every image carries a content label (oplab.key: a hash of its inputs) and
# is rebuilt only when that changes, so a second run is a no-op. Debian
# root file systems are cached as tars under $CACHE/kind/rootfs/.
#
#   hack/kind/build-images.sh [node|postgres|operator|rootfs|zalando|redis]...   (default: the first three)
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || die "building the images needs root (debootstrap)"
command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >&2
docker info >/dev/null 2>&1 || die "no engine at DOCKER_HOST=${DOCKER_HOST:-}: run eval \"\$(hack/kind/env.sh)\" first"
export DOCKER_BUILDKIT=0 # the legacy builder builds FROM scratch/local images offline

ROOTFS=$CACHE/kind/rootfs
mkdir -p "$ROOTFS"
NODE_IMAGE=oplab.local/kind-node:$KUBE_VERSION
KIND_DIR=$(cd "$ROOT" && go mod download -json "sigs.k8s.io/kind@$KIND_VERSION" | jq -r .Dir)
MIRROR=${DEBIAN_MIRROR:-$(sed -nE 's/^URIs: *([^ ]*debian)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}

NODE_PKGS=systemd,systemd-sysv,dbus,iptables,nftables,conntrack,iproute2,ethtool,kmod,mount,util-linux,pigz,e2fsprogs,jq,curl,ca-certificates,procps,socat,ebtables,libseccomp2,runc,containernetworking-plugins,bash
PG_PKGS=postgresql-15,ca-certificates,locales-all

key_of() { docker image inspect -f '{{index .Config.Labels "oplab.key"}}' "$1" 2>/dev/null || true; }
fresh() { [ "$(key_of "$1")" = "$2" ]; }

# rootfs NAME PACKAGES [SETUP]: a cached tar of debootstrap --variant=minbase
# with PACKAGES, SETUP (a shell snippet) run against $dir before packing.
rootfs() {
  local name=$1 pkgs=$2 setup=${3:-} key tar dir
  key=$(printf '%s\n' "$DEBIAN_SUITE" "$pkgs" "$setup" | sha256sum | cut -c1-12)
  tar=$ROOTFS/$name-$key.tar
  if [ ! -s "$tar" ]; then
    step "debootstrap $DEBIAN_SUITE minbase for $name ($pkgs)"
    dir=$(mktemp -d "$ROOTFS/.$name.XXXXXX")
    debootstrap --variant=minbase --include="$pkgs" "$DEBIAN_SUITE" "$dir" "$MIRROR" >"$dir.log" 2>&1 ||
      { tail -20 "$dir.log" >&2; die "debootstrap failed: $dir.log"; }
    [ -z "$setup" ] || (eval "$setup") || die "setting up the $name tree failed"
    rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/* "$dir"/usr/share/doc/* "$dir"/usr/share/man/* \
      "$dir"/usr/share/info/* "$dir"/var/log/*.log
    tar --numeric-owner -C "$dir" -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
    rm -rf "$dir" "$dir.log"
  fi
  echo "$tar"
}

# build_ctx TAG KEY CONTEXT: docker build of CONTEXT/Dockerfile labelled KEY.
build_ctx() {
  docker build -q --label "oplab.key=$2" -t "$1" "$3" >/dev/null
}

# scratch_image TAG KEY DOCKERFILE-BODY FILE...: an image FROM scratch with a
# minimal /etc/passwd and /tmp, the FILEs copied to /, and DOCKERFILE-BODY.
scratch_image() {
  local tag=$1 key=$2 body=$3; shift 3
  fresh "$tag" "$key" && return 0
  info "$tag"
  local ctx; ctx=$(mktemp -d)
  mkdir -p "$ctx/root/etc" "$ctx/root/tmp" "$ctx/root/usr/local/bin"
  chmod 1777 "$ctx/root/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n' > "$ctx/root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' > "$ctx/root/etc/group"
  echo 'hosts: files dns' > "$ctx/root/etc/nsswitch.conf"
  for f in "$@"; do cp -a "$f" "$ctx/root/usr/local/bin/"; done
  printf 'FROM %s\nCOPY root/ /\nENV PATH=/usr/local/bin:/usr/bin:/bin\n%s\n' "${FROM_IMAGE:-scratch}" "$body" > "$ctx/Dockerfile"
  build_ctx "$tag" "$key" "$ctx"
  rm -rf "$ctx"
}

build_node() {
  local bins kube ctd cri dns lp pause etcd_version dns_version pause_version
  "$KIND_HACK/build-binaries.sh"
  kube=$(cat "$BINCACHE/kube.path"); ctd=$(cat "$BINCACHE/containerd.path"); cri=$(cat "$BINCACHE/crictl.path")
  dns=$(cat "$BINCACHE/coredns.path"); lp=$(cat "$BINCACHE/local-path-provisioner.path")
  pause=$(cat "$BINCACHE/pause.path")
  etcd_version=$(kubeadm_const DefaultEtcdVersion); dns_version=$(kubeadm_const CoreDNSVersion)
  pause_version=$(kubeadm_const PauseVersion)
  # PostgreSQL is baked into the node image too: every cluster then has it
  # without a 420 MB load.
  build_postgres
  local pg_id; pg_id=$(docker image inspect -f '{{.Id}}' "$PG_IMAGE")
  local inputs; inputs=$(printf '%s\n' "$KIND_VERSION" "$kube" "$ctd" "$cri" "$dns" "$lp" "$pause" "$pg_id" \
    "$(hash_of "$KIND_HACK"/files/* "$KIND_HACK/build-images.sh")")
  local node_key; node_key=$(echo "$inputs" | sha256sum | cut -c1-12)
  if fresh "$NODE_IMAGE" "$node_key"; then info "$NODE_IMAGE is up to date ($node_key)"; return; fi

  # 1. The base image: kind's images/base/Dockerfile on a debootstrapped rootfs.
  local node_tar base=oplab.local/kind-base:$KUBE_VERSION
  node_tar=$(rootfs node "$NODE_PKGS")
  local base_key; base_key=$(printf '%s\n' "$node_tar" "$ctd" "$cri" "$KIND_VERSION" "$(hash_of "$KIND_HACK/build-images.sh")" | sha256sum | cut -c1-12)
  if ! fresh "$base" "$base_key"; then
    step "base image $base"
    local dir; dir=$(mktemp -d)
    tar -C "$dir" -xf "$node_tar"
    local f="$KIND_DIR/images/base/files"
    install -m 0755 "$f"/usr/local/bin/* "$dir/usr/local/bin/"
    mkdir -p "$dir/kind/bin" "$dir/LICENSES"
    cp -r "$f/kind/." "$dir/kind/"; chmod -R u+w,go+r "$dir/kind"; chmod 0755 "$dir/kind" "$dir/kind/bin" "$dir"/kind/bin/*
    for sub in etc etc/containerd etc/default etc/sysctl.d etc/systemd/system etc/systemd/system/kubelet.service.d; do
      mkdir -p "$dir/$sub"
      find "$f/$sub" -maxdepth 1 -type f -exec install -m 0644 {} "$dir/$sub/" \;
    done
    (cd "$dir" &&
      find lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete &&
      rm -f lib/systemd/system/multi-user.target.wants/* etc/systemd/system/*.wants/* \
        lib/systemd/system/local-fs.target.wants/* lib/systemd/system/sockets.target.wants/*udev* \
        lib/systemd/system/sockets.target.wants/*initctl* lib/systemd/system/basic.target.wants/* &&
      echo "ReadKMsg=no" >> etc/systemd/journald.conf &&
      ln -sf /usr/lib/systemd/systemd sbin/init)
    chroot "$dir" systemctl enable kubelet.service containerd.service undo-mount-hacks.service >/dev/null
    chroot "$dir" systemctl mask systemd-binfmt.service >/dev/null
    mkdir -p "$dir/etc/kubernetes/manifests" "$dir/opt/cni/bin" "$dir/etc/cni/net.d"
    for p in "$dir"/usr/lib/cni/*; do ln -sf "/usr/lib/cni/$(basename "$p")" "$dir/opt/cni/bin/"; done
    install -m 0755 "$ctd"/containerd "$ctd"/ctr "$ctd"/containerd-shim-runc-v2 "$cri"/crictl "$dir/usr/local/bin/"
    chroot "$dir" /usr/local/bin/ctr oci spec |
      jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' |
      jq 'del(.process.rlimits)' > "$dir/etc/containerd/cri-base.json"
    install -m 0644 "$KIND_HACK/files/10-bridge.conflist" "$dir/etc/cni/net.d/"
    tar --numeric-owner -C "$dir" -c . | docker import \
      --change 'ENV container=docker' --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' - "$base.imported" >/dev/null
    rm -rf "$dir"
    local ctx; ctx=$(mktemp -d)
    printf 'FROM %s\nSTOPSIGNAL SIGRTMIN+3\n' "$base.imported" > "$ctx/Dockerfile"
    build_ctx "$base" "$base_key" "$ctx"; rm -rf "$ctx"; docker rmi "$base.imported" >/dev/null
  fi

  # 2. The images kubeadm and kind's manifests name, built here.
  step "component images"
  local ckey; ckey=$(echo "$node_key" | cut -c1-12)
  local reg=registry.k8s.io
  # The Kubernetes binaries and etcd link glibc (see build-binaries.sh):
  # their images share the node's Debian tree as their one base layer.
  for c in kube-apiserver kube-controller-manager kube-scheduler etcd; do
    local tag=$reg/$c:$KUBE_VERSION; [ $c != etcd ] || tag=$reg/etcd:$etcd_version
    FROM_IMAGE=$base scratch_image "$tag" "$ckey" 'ENTRYPOINT []
CMD []' "$kube/$c"
  done
  scratch_image "$reg/coredns/coredns:$dns_version" "$ckey" 'ENTRYPOINT ["/usr/local/bin/coredns"]' "$dns/coredns"
  scratch_image "$reg/pause:$pause_version" "$ckey" 'ENTRYPOINT ["/usr/local/bin/pause"]' "$pause/pause"
  docker tag "$reg/pause:$pause_version" "$reg/pause:3.10" # kind's containerd config pins 3.10
  local ctx
  local storage_images; storage_images=$(sed -nE 's/^const storage(Provisioner|Helper)Image = "([^"]+)"/\2/p' "$KIND_DIR/pkg/build/nodeimage/const_storage.go")
  local prov_image helper_image
  prov_image=$(echo "$storage_images" | sed -n 1p); helper_image=$(echo "$storage_images" | sed -n 2p)
  scratch_image "$prov_image" "$ckey" "" "$lp/local-path-provisioner"
  # The helper pod runs /bin/sh scripts (mkdir, rm): busybox from Debian.
  if ! fresh "$helper_image" "$ckey"; then
    info "$helper_image"
    local bb; bb=$(mktemp -d)
    (cd "$bb" && apt-get download -qq busybox-static 2>/dev/null && dpkg-deb -x busybox-static_*.deb x)
    mkdir -p "$bb/ctx/root/bin" "$bb/ctx/root/tmp"; chmod 1777 "$bb/ctx/root/tmp"
    cp "$bb/x/bin/busybox" "$bb/ctx/root/bin/"
    for a in sh mkdir rm rmdir chmod ls cat mv cp; do ln -s busybox "$bb/ctx/root/bin/$a"; done
    printf 'FROM scratch\nCOPY root/ /\nENV PATH=/bin\n' > "$bb/ctx/Dockerfile"
    build_ctx "$helper_image" "$ckey" "$bb/ctx"
    rm -rf "$bb"
  fi
  # kube-proxy needs iptables: the node's Debian rootfs with the binary and
  # a wrapper that picks legacy or nft.
  local kp=$reg/kube-proxy:$KUBE_VERSION
  if ! fresh "$kp" "$ckey"; then
    info "$kp"
    ctx=$(mktemp -d); cp "$kube/kube-proxy" "$KIND_HACK/files/iptables-wrapper" "$ctx/"
    cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM $base
COPY kube-proxy /usr/local/bin/kube-proxy
COPY iptables-wrapper /usr/sbin/iptables-wrapper
RUN for c in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do ln -sf iptables-wrapper /usr/sbin/\$c; done
ENTRYPOINT []
CMD []
DOCKERFILE
    build_ctx "$kp" "$ckey" "$ctx"; rm -rf "$ctx"
  fi
  # the wrapper re-points the links to xtables-*-multi, so it must not
  # name itself: it exec's "$0" after relinking.

  # 3. The node image: kind's nodeimage build, by hand.
  step "node image $NODE_IMAGE"
  local c; c=$(docker run -d --privileged --entrypoint=sleep "$base" infinity)
  trap "docker rm -f $c >/dev/null 2>&1 || true" RETURN
  docker cp "$kube/kubeadm" "$c:/usr/bin/kubeadm"; docker cp "$kube/kubelet" "$c:/usr/bin/kubelet"
  docker cp "$kube/kubectl" "$c:/usr/bin/kubectl"
  docker exec "$c" sh -c "echo $KUBE_VERSION > /kind/version && mkdir -p /kind/manifests"
  docker cp "$KIND_HACK/files/default-cni.yaml" "$c:/kind/manifests/default-cni.yaml"
  awk '/^const defaultStorageManifest = `/{on=1; next} on && /^`/{exit} on' \
    "$KIND_DIR/pkg/build/nodeimage/const_storage.go" |
    sed -e "s#\` + storageProvisionerImage + \`#$prov_image#g" -e "s#\` + storageHelperImage + \`#$helper_image#g" |
    docker exec -i "$c" sh -c 'cat > /kind/manifests/default-storage.yaml'
  docker exec -d "$c" containerd
  for _ in $(seq 60); do docker exec "$c" ctr version >/dev/null 2>&1 && break; sleep 0.5; done
  local images="$reg/kube-apiserver:$KUBE_VERSION $reg/kube-controller-manager:$KUBE_VERSION $reg/kube-scheduler:$KUBE_VERSION $kp $reg/etcd:$etcd_version $reg/coredns/coredns:$dns_version $reg/pause:$pause_version $reg/pause:3.10 $prov_image $helper_image $PG_IMAGE"
  for img in $images; do
    info "importing $img"
    docker save "$img" | docker exec -i "$c" ctr -n k8s.io images import --label=io.cri-containerd.pinned=pinned \
      --all-platforms --no-unpack --digests - >/dev/null
  done
  docker exec "$c" sh -c 'kill $(pidof containerd); while pidof containerd >/dev/null; do sleep 0.2; done; rm -rf /tmp/* /var/log/*'
  docker commit --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' --change 'CMD []' \
    --change "LABEL oplab.key=$node_key" "$c" "$NODE_IMAGE" >/dev/null
  info "$NODE_IMAGE built ($(docker image inspect -f '{{.Size}}' "$NODE_IMAGE" | numfmt --to=iec))"
}

PG_IMAGE=docker.io/library/postgres:15
build_postgres() {
  local tag=$PG_IMAGE
  local setup='
    chroot "$dir" sh -c "groupmod -g 999 postgres && usermod -u 999 -g 999 postgres" &&
    chroot "$dir" sh -c "chown -R 999:999 /var/lib/postgresql /var/run/postgresql /etc/postgresql /var/log/postgresql" &&
    rm -rf "$dir"/var/lib/postgresql/15 "$dir"/etc/postgresql/15 &&
    rm -rf "$dir"/usr/lib/postgresql/15/lib/bitcode "$dir"/usr/lib/llvm-*'
  local tar; tar=$(rootfs postgres "$PG_PKGS" "$setup")
  local key; key=$(printf '%s\n' "$tar" "$(hash_of "$KIND_HACK/files/postgres-entrypoint")" | sha256sum | cut -c1-12)
  fresh "$tag" "$key" && { info "$tag is up to date ($key)"; return; }
  step "PostgreSQL image $tag"
  docker import --change 'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin' \
    --change 'ENV PGDATA=/var/lib/postgresql/data' "$tar" "$tag.imported" >/dev/null
  local ctx; ctx=$(mktemp -d); cp "$KIND_HACK/files/postgres-entrypoint" "$ctx/"
  cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM $tag.imported
COPY postgres-entrypoint /usr/local/bin/docker-entrypoint.sh
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
STOPSIGNAL SIGINT
EXPOSE 5432
CMD ["postgres"]
DOCKERFILE
  build_ctx "$tag" "$key" "$ctx"; rm -rf "$ctx"; docker rmi "$tag.imported" >/dev/null
  docker tag "$tag" postgres:15
}

build_operator() {
  "$KIND_HACK/build-operator-image.sh"
}

# ---- the course's third-party operators (issue 22) ----------------------------
# Zalando's postgres-operator and Spotahome's redis-operator at the versions
# the course uses, each built from its Go module; the images their pods run,
# from Debian's packages; their Helm charts, taken out of the module zips.
# The pins are internal/operator/thirdparty's, which labs install from.
pin() { (cd "$ROOT" && go run ./hack/charts -module "$1") || die "no pin for $1"; }
ZALANDO=$(pin postgres-operator)
SPOTAHOME=$(pin redis-operator)
BIN=${OPLAB_BIN:-$ROOT/bin}
SPILO_IMAGE=oplab.local/spilo:15
REDIS_IMAGE=oplab.local/redis:7.0.15
# Debian's patroni talks to the Kubernetes API with its own client, so
# python3-kubernetes is not needed; openssl makes the server certificate
# (the operator connects with sslmode=require); locales gives Spilo's
# en_US.UTF-8; procps gives ps to whoever looks inside a pod.
SPILO_PKGS=patroni,postgresql-15,locales,openssl,procps
REDIS_PKGS=redis-server,redis-sentinel,redis-tools

module_dir() { (cd "$ROOT" && go mod download -json "$1" | jq -r .Dir); }

# ctx_key DIR: a content hash of a build context (names, modes and bytes).
ctx_key() { tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$1" -cf - . | sha256sum | cut -c1-12; }

# go_program MODULE@VERSION DIR [LDFLAGS]: the program in DIR of a module,
# built as its upstream Dockerfile builds it (CGO off, so static) in a copy
# of the module, so that its own go.mod and go.sum apply; cached as
# $BINCACHE/<name>-<version>/<name>, <name> the module path's last element.
# Prints the binary's path.
go_program() {
  local modver=$1 pkg=$2 ldflags=${3:-} name out work
  name=${modver%@*}; name=${name##*/}
  out=$BINCACHE/$name-${modver#*@}
  if [ ! -e "$out/.done" ]; then
    step "$name ${modver#*@}: go build ./$pkg of the module"
    work=$(mktemp -d)
    cp -r "$(module_dir "$modver")/." "$work/" && chmod -R u+w "$work" || die "no module $modver"
    mkdir -p "$out"
    (cd "$work" && CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "-s -w $ldflags" -o "$out/$name" "./$pkg") ||
      die "go build of $modver failed"
    rm -rf "$work"; touch "$out/.done"
  fi
  echo "$out/$name"
}

# operator_image TAG BINARY PATH USER: a static Go program where its upstream
# Dockerfile puts it (PATH, the entrypoint), run as USER, uid 1000 as the
# charts' securityContext expects, with /etc/passwd naming it, /tmp and
# Debian's CA bundle, on an empty base.
operator_image() {
  local tag=$1 bin=$2 path=$3 user=$4 ctx key node_tar
  node_tar=$(rootfs node "$NODE_PKGS")
  ctx=$(mktemp -d)
  mkdir -p "$ctx/root/etc/ssl/certs" "$ctx/root/tmp" "$ctx/root$(dirname "$path")"
  chmod 1777 "$ctx/root/tmp"
  install -m 0755 "$bin" "$ctx/root$path"
  printf 'root:x:0:0:root:/root:/sbin/nologin\n%s:x:1000:1000:%s:/tmp:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n' \
    "$user" "$user" > "$ctx/root/etc/passwd"
  printf 'root:x:0:\n%s:x:1000:\nnogroup:x:65534:\n' "$user" > "$ctx/root/etc/group"
  echo 'hosts: files dns' > "$ctx/root/etc/nsswitch.conf"
  tar -xOf "$node_tar" ./etc/ssl/certs/ca-certificates.crt > "$ctx/root/etc/ssl/certs/ca-certificates.crt"
  printf 'FROM scratch\nCOPY root/ /\nENV PATH=/usr/local/bin:/usr/bin:/bin\nUSER 1000:1000\nENTRYPOINT ["%s"]\n' "$path" > "$ctx/Dockerfile"
  key=$(ctx_key "$ctx")
  if fresh "$tag" "$key"; then info "$tag is up to date ($key)"; else info "$tag"; build_ctx "$tag" "$key" "$ctx"; fi
  rm -rf "$ctx"
}

# debian_image TAG TAR CONTEXT: the Debian tree TAR imported, then
# CONTEXT/Dockerfile (FROM TAG.imported) built over it; skipped when both
# are as they were.
debian_image() {
  local tag=$1 tar=$2 ctx=$3 key
  key=$(printf '%s\n' "$tar" "$(ctx_key "$ctx")" | sha256sum | cut -c1-12)
  if fresh "$tag" "$key"; then info "$tag is up to date ($key)"; return; fi
  step "image $tag"
  docker import "$tar" "$tag.imported" >/dev/null
  build_ctx "$tag" "$key" "$ctx"
  docker rmi "$tag.imported" >/dev/null
}

# install_charts: both charts copied out of their module zips into
# $BIN/charts/<name>-<version>/ (thirdparty.Operator.Extract).
install_charts() {
  (cd "$ROOT" && go run ./hack/charts "$BIN") | while read -r line; do info "$line"; done
}

# build_zalando: Zalando's operator, the Spilo-compatible image its pods
# run, and its chart.
build_zalando() {
  local version=${ZALANDO#*@} bin
  bin=$(go_program "$ZALANDO" cmd "-X main.version=$version")
  operator_image "oplab.local/postgres-operator:$version" "$bin" /postgres-operator pgo
  build_spilo
  install_charts
}

# build_spilo: Patroni and PostgreSQL 15 from Debian, laid out as Spilo is
# (postgres is uid 101, gid 103, home /home/postgres, data under
# /home/postgres/pgdata), and images/spilo/entrypoint.py, which does what
# Spilo's launch does with the variables the operator sets.
build_spilo() {
  local setup='
    chroot "$dir" sh -ec "
      groupmod -g 103 postgres; usermod -u 101 -g 103 -d /home/postgres postgres
      echo en_US.UTF-8 UTF-8 > /etc/locale.gen; locale-gen >/dev/null
      rm -rf /var/lib/postgresql/15 /etc/postgresql/15
      mkdir -p /home/postgres/pgdata /run/certs /scripts
      chown -R 101:103 /home/postgres /run/certs /run/postgresql /var/lib/postgresql /etc/postgresql /var/log/postgresql" &&
    rm -rf "$dir"/usr/lib/postgresql/15/lib/bitcode "$dir"/usr/lib/llvm-*'
  local tar ctx
  tar=$(rootfs spilo "$SPILO_PKGS" "$setup")
  ctx=$(mktemp -d)
  install -m 0755 "$KIND_HACK/images/spilo/entrypoint.py" "$ctx/entrypoint.py"
  cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM $SPILO_IMAGE.imported
COPY entrypoint.py /scripts/entrypoint.py
ENV PGHOME=/home/postgres PGROOT=/home/postgres/pgdata/pgroot PGDATA=/home/postgres/pgdata/pgroot/data \\
    LC_ALL=en_US.UTF-8 PATH=/usr/lib/postgresql/15/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
WORKDIR /home/postgres
EXPOSE 5432 8008 8080
CMD ["/usr/bin/python3", "/scripts/entrypoint.py"]
DOCKERFILE
  debian_image "$SPILO_IMAGE" "$tar" "$ctx"
  rm -rf "$ctx"
}

# build_redis: Spotahome's operator, the Redis image its pods run, and its
# chart.
build_redis() {
  local bin
  bin=$(go_program "$SPOTAHOME" cmd/redisoperator)
  operator_image "oplab.local/redis-operator:${SPOTAHOME#*@}" "$bin" /usr/local/bin/redis-operator rf
  build_redis_server
  install_charts
}

# build_redis_server: Debian's Redis 7.0 for the operator's pods, which run
# redis-server and shell scripts (redis-cli, tr, cut, xargs, hostname -i) as
# uid 1000 on a read-only root, saving to the working directory: /data,
# owned by that uid. images/redis/redis-server turns protected mode off as
# the official image does.
build_redis_server() {
  local setup='
    chroot "$dir" sh -ec "
      groupmod -g 1000 redis; usermod -u 1000 -g 1000 -d /data redis
      mkdir -p /data; chown -R 1000:1000 /data /etc/redis /var/lib/redis /var/log/redis"'
  local tar ctx
  tar=$(rootfs redis "$REDIS_PKGS" "$setup")
  ctx=$(mktemp -d)
  install -m 0755 "$KIND_HACK/images/redis/redis-server" "$ctx/redis-server"
  install -m 0755 "$KIND_HACK/images/redis/redis-server" "$ctx/redis-sentinel"
  cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM $REDIS_IMAGE.imported
COPY redis-server redis-sentinel /usr/local/bin/
ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
WORKDIR /data
USER 1000:1000
EXPOSE 6379 26379
CMD ["redis-server"]
DOCKERFILE
  debian_image "$REDIS_IMAGE" "$tar" "$ctx"
  rm -rf "$ctx"
}

stages=("$@"); [ ${#stages[@]} -gt 0 ] || stages=(node postgres operator)
for s in "${stages[@]}"; do
  case $s in
    node) build_node ;; postgres) build_postgres ;; operator) build_operator ;;
    rootfs) rootfs node "$NODE_PKGS" >/dev/null ;; # the node's Debian tree only
    zalando) build_zalando ;; redis) build_redis ;;
    *) die "unknown stage $s (node, postgres, operator, rootfs, zalando, redis)" ;;
  esac
done
step "images ready"
