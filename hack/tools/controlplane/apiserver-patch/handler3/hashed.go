//go:build ignore

// This file is added to k8s.io/kube-openapi/pkg/handler3 in the copy of
// that module kube-controlplane is built against (hack/build-controlplane.sh,
// which removes the build constraint above and gives openAPIV3Group a hash
// field that its JSON document's ETag and the /openapi/v3 index use when it
// is set).
//
// Upstream names each group version in the index by the SHA-512 of its JSON
// document, so serving the index marshals every document there is. A group
// version registered here with a hash of its own is listed by that hash and
// served with it as its ETag, and its document is built and marshalled only
// when it is read. The hash must change whenever the document may: the
// caller registers each group version once, with a hash of the process and
// the group version (routes.OpenAPI's InstallV3), and never updates it.

package handler3

import (
	"k8s.io/kube-openapi/pkg/cached"
	"k8s.io/kube-openapi/pkg/spec3"
)

// UpdateGroupVersionLazyHashed adds group, or replaces it, with a document
// built when it is first read and named hash in the index and in its ETag.
func (o *OpenAPIService) UpdateGroupVersionLazyHashed(group string, openapi cached.Value[*spec3.OpenAPI], hash string) {
	o.mutex.Lock()
	defer o.mutex.Unlock()
	g := newOpenAPIV3Group()
	g.hash = hash
	g.UpdateSpec(openapi)
	o.v3Schema[group] = g
	o.discoveryCache.Store(o.buildDiscoveryCacheLocked())
}

// etag is the ETag of the group's JSON document json.
func (o *openAPIV3Group) etag(json []byte) string {
	if o.hash != "" {
		return o.hash
	}
	return computeETag(json)
}

// indexEntry is what the index reads of the group: only its ETag.
func (o *openAPIV3Group) indexEntry() cached.Value[timedSpec] {
	if o.hash != "" {
		return cached.Static(timedSpec{}, o.hash)
	}
	return o.jsonCache
}
