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

# kube-controlplane is built against copies of k8s.io/apiserver and
# k8s.io/component-base with these changes; a temporary go.mod replaces the
# modules with the copies. (go build -overlay refuses files in the module
# cache.)
#
# - kube-apiserver makes its loopback certificate with ECDSA instead of RSA
#   keys (see apiserver-patch/loopback_cert.go): one call of
#   serving_with_loopback.go is renamed and that file added.
# - Each watch cache sends its watchers' bookmarks on a timer of 5 s instead
#   of 1 s (cacher.go's dispatchEvents). The timer fires for each of the
#   about 60 resources the API server caches, all the time. Bookmarks are
#   due about once a minute a watcher, so they go out up to 5 s later; the
#   bookmark that ends a watch-list's initial events is sent with them, not
#   on the timer.
# - The work queues keep no Prometheus metrics: the package that registers
#   them as client-go's provider no longer does. With a provider, each of
#   the about 64 queues of the API server and the controllers wakes twice a
#   second to update a gauge nobody scrapes here, and every item added,
#   taken and done reads the clock for a histogram.
#
# Together they were most of the idle kube-controlplane's wake-ups
# (docs/tuning.md).
#
# - kube-apiserver's OpenAPI v2 document is built
#   when /openapi/v2 is first asked for instead of before the server serves
#   (apiserver-patch/server/openapi_v2.go): PrepareRun calls
#   installOpenAPIV2 instead of routes.OpenAPI's InstallV2.
# - Every server's OpenAPI v3 documents are built each when it is first read
#   (apiserver-patch/routes/openapi_v3.go), and the /openapi/v3 index names
#   them by hashes made when they are registered instead of hashes of their
#   JSON (apiserver-patch/handler3/hashed.go, in a copy of k8s.io/kube-openapi),
#   so listing them builds nothing. Together these two take the OpenAPI
#   documents off every start (docs/tuning.md).
# - The admission policies' CEL variables object, oldObject, namespace and
#   params are converted to unstructured when an expression first reads
#   them instead of before every evaluation
#   (apiserver-patch/cel/activation_lazy.go): the fence's policies let
#   trusted callers through on a condition that reads the request alone.
# - The resources the API server stores share one etcd client, one gRPC
#   connection, where upstream makes one a resource: about 60 connections,
#   each with its TLS handshake at every start and its buffers and goroutines
#   on both sides (apiserver-patch/factory/etcd3_shared.go; newETCD3Storage
#   takes its client from sharedETCD3Client).
# - The aggregator's OpenAPI v3 index brings its local servers' indexes up
#   to date when it is read (at most a second old, as upstream's poll
#   leaves them), instead of asking each server for its index every second
#   (apiserver-patch/aggregator/fresh.go): the poll was most of the idle API
#   server's sampled CPU.
# - The MutatingAdmissionPolicy plugin reads the /openapi/v3 index when a
#   policy asks it for a custom resource's type converter, if its copy is
#   older than upstream's 5 s poll, instead of reading it every 5 s through
#   the loopback client (apiserver-patch/mappatch/typeconverter_lazy.go).
#
# copy_module MODULE copies MODULE from the module cache under $tmp/src and
# prints where. `go list -m` reports no directory for a module that is not
# in the module cache yet, so it is downloaded first (a no-op when it is
# there).
copy_module() {
  local dir
  go mod download "$1"
  dir=$(go list -m -f '{{.Dir}}' "$1")
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    echo "$1 is not in the module cache after 'go mod download'" >&2
    exit 1
  fi
  mkdir -p "$tmp/src/$(dirname "$1")"
  cp -r "$dir" "$tmp/src/$1"
  chmod -R u+w "$tmp/src/$1"
  echo "$tmp/src/$1"
}
# patch_module MODULE FILE EXPRESSION WRITTEN COUNT WHAT edits FILE of MODULE's
# copy with sed's EXPRESSION and checks that COUNT lines hold the text
# WRITTEN afterwards: a release whose code changed stops the build, named.
patch_module() {
  local file=$tmp/src/$1/$2
  sed -i "$3" "$file"
  if [ "$(grep -cF -- "$4" "$file")" != "$5" ]; then
    echo "$1's $2 no longer reads as the patch for $6 expects:" >&2
    echo "update hack/build-controlplane.sh for this release" >&2
    exit 1
  fi
}
# add_file FILE DIR copies apiserver-patch/FILE into DIR of the copies as
# zz_oplab_<its name>, without the build constraint that keeps a file that
# cannot compile on its own out of builds of this module.
add_file() {
  grep -v '^//go:build ignore$' "$mod/apiserver-patch/$1" > "$tmp/src/$2/zz_oplab_$(basename "$1")"
}
cp go.mod "$tmp/go.mod"
cp go.sum "$tmp/go.sum"
for m in k8s.io/apiserver k8s.io/component-base k8s.io/kube-openapi k8s.io/kube-aggregator; do
  dir=$(copy_module $m)
  go mod edit -replace "$m=$dir" "$tmp/go.mod"
done
patch_module k8s.io/apiserver pkg/server/options/serving_with_loopback.go \
  's/certutil\.GenerateSelfSignedCertKeyWithOptions(/generateLoopbackCertKey(/' 'generateLoopbackCertKey(' 1 \
  "the loopback certificate"
add_file loopback_cert.go k8s.io/apiserver/pkg/server/options
patch_module k8s.io/apiserver pkg/storage/cacher/cacher.go \
  's/wait\.Jitter(time\.Second, 0\.25)/wait.Jitter(5*time.Second, 0.25)/' 'wait.Jitter(5*time.Second, 0.25)' 2 \
  "the bookmark timer"
patch_module k8s.io/apiserver pkg/server/genericapiserver.go \
  '/= routes\.OpenAPI{$/{N;N;s/routes\.OpenAPI{\n\t*Config: s\.openAPIConfig,\n\t*}\.InstallV2(s\.Handler\.GoRestfulContainer, s\.Handler\.NonGoRestfulMux)$/installOpenAPIV2(s)/}' \
  'StaticOpenAPISpec = installOpenAPIV2(s)' 1 \
  "the OpenAPI v2 document built at start"
add_file server/openapi_v2.go k8s.io/apiserver/pkg/server
patch_module k8s.io/apiserver pkg/server/routes/openapi.go \
  's/^func (oa OpenAPI) InstallV3(/func (oa OpenAPI) installV3AtStart(/' 'installV3AtStart(' 1 \
  "the OpenAPI v3 documents built at start"
add_file routes/openapi_v3.go k8s.io/apiserver/pkg/server/routes
patch_module k8s.io/kube-openapi pkg/handler3/handler.go \
  's/^\tjsonCache cached\.Value\[timedSpec\]$/&\n\thash      string \/\/ oplab: zz_oplab_hashed.go/' 'zz_oplab_hashed.go' 1 \
  "the OpenAPI v3 index's hashes"
patch_module k8s.io/kube-openapi pkg/handler3/handler.go \
  's/, computeETag(json), nil$/, o.etag(json), nil/' 'o.etag(json), nil' 1 \
  "the OpenAPI v3 index's hashes"
patch_module k8s.io/kube-openapi pkg/handler3/handler.go \
  's/caches\[gvName\] = group\.jsonCache$/caches[gvName] = group.indexEntry()/' 'group.indexEntry()' 1 \
  "the OpenAPI v3 index's hashes"
add_file handler3/hashed.go k8s.io/kube-openapi/pkg/handler3
patch_module k8s.io/apiserver pkg/admission/plugin/cel/activation.go \
  's/^func newActivation(/func newActivationAtOnce(/' 'func newActivationAtOnce(' 1 \
  "the admission policies' variables converted when read"
patch_module k8s.io/apiserver pkg/admission/plugin/cel/activation.go \
  's/^\tobject, oldObject, params, request, namespace, authorizer, requestResourceAuthorizer, variables interface{}$/&\n\tlazy *lazyVariables \/\/ oplab: zz_oplab_activation_lazy.go/' \
  'lazy *lazyVariables' 1 \
  "the admission policies' variables converted when read"
patch_module k8s.io/apiserver pkg/admission/plugin/cel/activation.go \
  's/^func (a \*evaluationActivation) ResolveName(name string) (interface{}, bool) {$/&\n\tif v, ok := a.resolveLazy(name); ok {\n\t\treturn v, true\n\t}/' \
  'a.resolveLazy(name)' 1 \
  "the admission policies' variables converted when read"
add_file cel/activation_lazy.go k8s.io/apiserver/pkg/admission/plugin/cel
patch_module k8s.io/apiserver pkg/storage/storagebackend/factory/etcd3.go \
  '/^func newETCD3Storage(/,/^}/s/client, err := newETCD3Client(c\.Transport)$/client, releaseClient, err := sharedETCD3Client(c.Transport)/' \
  'client, releaseClient, err := sharedETCD3Client(c.Transport)' 1 \
  "one etcd client for every resource"
patch_module k8s.io/apiserver pkg/storage/storagebackend/factory/etcd3.go \
  '/^func newETCD3Storage(/,/^}/s/_ = client\.Close()$/releaseClient()/' 'releaseClient()' 3 \
  "one etcd client for every resource"
patch_module k8s.io/apiserver pkg/storage/storagebackend/factory/etcd3.go \
  '/^func newETCD3Storage(/,/^}/s/^\tclient\.KV = etcd3\.NewETCDLatencyTracker(client\.KV)$/\t\/\/ oplab: the shared client tracks the latency (zz_oplab_etcd3_shared.go)/' \
  'oplab: the shared client tracks the latency' 1 \
  "one etcd client for every resource"
add_file factory/etcd3_shared.go k8s.io/apiserver/pkg/storage/storagebackend/factory
patch_module k8s.io/component-base metrics/prometheus/workqueue/metrics.go \
  's|^\tworkqueue\.SetProvider(prometheusMetricsProvider{})$|\t// oplab: no provider, no metric loops|' '// oplab: no provider' 1 \
  "the work queues' metrics"
patch_module k8s.io/kube-aggregator pkg/controllers/openapiv3/aggregator/aggregator.go \
  's/^\tdownloader Downloader$/&\n\tlocalRefreshed time.Time \/\/ oplab: zz_oplab_fresh.go/' 'localRefreshed time.Time' 1 \
  "the local OpenAPI v3 indexes read when read"
patch_module k8s.io/kube-aggregator pkg/controllers/openapiv3/aggregator/aggregator.go \
  's/^func (s \*specProxier) getOpenAPIV3Root() handler3\.OpenAPIV3Discovery {$/&\n\ts.refreshLocal()/; s/^func (s \*specProxier) handleGroupVersion(w http\.ResponseWriter, r \*http\.Request) {$/&\n\ts.refreshLocal()/' \
  's.refreshLocal()' 2 \
  "the local OpenAPI v3 indexes read when read"
patch_module k8s.io/kube-aggregator pkg/controllers/openapiv3/controller.go \
  's/^\tsuccessfulUpdateDelayLocal = time\.Second$/\tsuccessfulUpdateDelayLocal = aggregator.LocalRequeue \/\/ oplab: zz_oplab_fresh.go/' \
  'successfulUpdateDelayLocal = aggregator.LocalRequeue' 1 \
  "the local OpenAPI v3 indexes read when read"
add_file aggregator/fresh.go k8s.io/kube-aggregator/pkg/controllers/openapiv3/aggregator
patch_module k8s.io/apiserver pkg/admission/plugin/policy/mutating/patch/typeconverter.go \
  's/^\tlastFetchedPaths map\[schema\.GroupVersion\]openapi\.GroupVersion$/&\n\tpathsFetched time.Time \/\/ oplab: zz_oplab_typeconverter_lazy.go/' \
  'pathsFetched time.Time' 1 \
  "the mutating policies' OpenAPI index read when needed"
patch_module k8s.io/apiserver pkg/admission/plugin/policy/mutating/patch/typeconverter.go \
  's/^func (t \*typeConverterManager) Run(ctx context\.Context) {$/func (t *typeConverterManager) runPolling(ctx context.Context) {/' \
  'runPolling(ctx context.Context)' 1 \
  "the mutating policies' OpenAPI index read when needed"
patch_module k8s.io/apiserver pkg/admission/plugin/policy/mutating/patch/typeconverter.go \
  's/^\tgv := gvk\.GroupVersion()$/\tt.refreshPaths(gvk.GroupVersion()) \/\/ oplab\n&/' \
  't.refreshPaths(gvk.GroupVersion())' 1 \
  "the mutating policies' OpenAPI index read when needed"
add_file mappatch/typeconverter_lazy.go k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch

if $prepare_only; then
  # The module graph must resolve with the patched copy in place.
  go list -modfile "$tmp/go.mod" -m -f '{{.Path}} {{.Version}} => {{with .Replace}}{{.Path}}{{end}}' k8s.io/apiserver k8s.io/component-base k8s.io/kube-openapi k8s.io/kube-aggregator
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
