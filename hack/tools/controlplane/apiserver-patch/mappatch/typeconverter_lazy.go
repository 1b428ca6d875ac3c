//go:build ignore

// This file is added to k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch
// in the copy of that module kube-controlplane is built against
// (hack/build-controlplane.sh, which removes the build constraint above). There,
// the type converter manager's Run is renamed runPolling, unused, and
// GetTypeConverter calls refreshPaths first.
//
// Upstream, the MutatingAdmissionPolicy plugin's type converter manager reads
// the API server's /openapi/v3 index every 5 s through the loopback client,
// to know when a schema it converted with has changed: a TLS request through
// the whole handler chain, and the aggregator's merged index behind it, every
// 5 s of a cluster's life, though only a policy that patches a custom
// resource with an apply configuration ever asks for a type converter. Here
// the index is read when a type converter is asked for, if the copy is more
// than pathsFreshness old (upstream's poll period), or more than
// pathsMissRetry old and does not name the group version asked for (a CRD
// just made): no converter is made from an older index than upstream's would
// be, and a cluster with no such policy reads nothing.

package patch

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/openapi"
)

const (
	pathsFreshness = 5 * time.Second
	pathsMissRetry = time.Second
)

// Run blocks until ctx ends: the index is read when it is needed
// (refreshPaths).
func (t *typeConverterManager) Run(ctx context.Context) { <-ctx.Done() }

// refreshPaths reads the /openapi/v3 index again when the copy kept is
// older than pathsFreshness, or older than pathsMissRetry and without gv.
// An error keeps the old copy and is reported, as upstream's poll does.
func (t *typeConverterManager) refreshPaths(gv schema.GroupVersion) {
	t.lock.RLock()
	age := time.Since(t.pathsFetched)
	_, known := t.lastFetchedPaths[gv]
	t.lock.RUnlock()
	if age < pathsFreshness && (known || age < pathsMissRetry) {
		return
	}
	paths, err := t.openapiClient.Paths()
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("failed to fetch openapi paths: %w", err))
		return
	}
	parsed := make(map[schema.GroupVersion]openapi.GroupVersion, len(paths))
	for path, entry := range paths {
		if !strings.HasPrefix(path, "apis/") && !strings.HasPrefix(path, "api/") {
			continue
		}
		gv, err := schema.ParseGroupVersion(strings.TrimPrefix(strings.TrimPrefix(path, "apis/"), "api/"))
		if err != nil {
			utilruntime.HandleError(fmt.Errorf("failed to parse group version %q: %w", path, err))
			return
		}
		parsed[gv] = entry
	}
	t.lock.Lock()
	defer t.lock.Unlock()
	t.lastFetchedPaths = parsed
	t.pathsFetched = time.Now()
}
