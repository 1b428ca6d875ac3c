//go:build ignore

// This file is added to k8s.io/apiserver/pkg/server/routes in the copy of
// that module kube-controlplane is built against (hack/build-controlplane.sh,
// which removes the build constraint above: it keeps the file out of builds
// of this module, where it cannot compile). Upstream's InstallV3 is renamed
// installV3AtStart and left unused; this InstallV3 takes its place.
//
// Upstream builds the OpenAPI v3 document of every group version a server
// serves in PrepareRun, before the server serves (about 60 for
// kube-apiserver), and the first read of the /openapi/v3 index, which the
// aggregator makes at start and every second after, marshals each of them
// to hash it. Here each group version is built, by the same builder from
// the same routes, the first time it is read, and kept from then on; the
// index names each with a hash made when it is registered
// (handler3.UpdateGroupVersionLazyHashed), so listing them builds nothing.
// A cluster's own requests read one or two group versions, when they read
// any (kubectl explain, kubectl apply's patch of an object that exists).

package routes

import (
	"crypto/sha512"
	"fmt"

	restful "github.com/emicklei/go-restful/v3"
	"github.com/google/uuid"
	"k8s.io/klog/v2"

	"k8s.io/apiserver/pkg/server/mux"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/cached"
	"k8s.io/kube-openapi/pkg/common/restfuladapter"
	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/spec3"
)

// InstallV3 adds the static group versions of the RegisteredWebServices to
// the OpenAPI v3 documents, each built when it is first read.
func (oa OpenAPI) InstallV3(c *restful.Container, mux *mux.PathRecorderMux) *handler3.OpenAPIService {
	service := handler3.NewOpenAPIService()
	if err := service.RegisterOpenAPIV3VersionedService("/openapi/v3", mux); err != nil {
		klog.Fatalf("Failed to register versioned open api spec for root: %v", err)
	}
	// The hashes only have to change whenever a document may: the
	// documents are this process's routes, so a hash per process and group
	// version is enough, and a client's cache of an earlier process's
	// documents is never served as this one's.
	process := uuid.New().String()
	grouped := make(map[string]*restful.WebService)
	for _, t := range c.RegisteredWebServices() {
		grouped[t.RootPath()[1:]] = t
	}
	for gv, ws := range grouped {
		build := cached.Once(cached.Func(func() (*spec3.OpenAPI, string, error) {
			spec, err := builder3.BuildOpenAPISpecFromRoutes(restfuladapter.AdaptWebServices([]*restful.WebService{ws}), oa.V3Config)
			if err != nil {
				klog.Errorf("Failed to build OpenAPI v3 for group %s, %q", gv, err)
				return nil, "", err
			}
			if group, version, ok := groupVersionFromPath(gv); ok {
				filterScopedGVKs(spec, group, version)
			}
			return spec, "", nil
		}))
		hash := fmt.Sprintf("%X", sha512.Sum512([]byte(process+"/"+gv)))
		service.UpdateGroupVersionLazyHashed(gv, build, hash)
	}
	return service
}
