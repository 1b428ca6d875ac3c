//go:build ignore

// This file is added to k8s.io/apiserver/pkg/server in the copy of that
// module kube-controlplane is built against (hack/build-controlplane.sh,
// which removes the build constraint above: it keeps the file out of builds
// of this module, where it cannot compile), and GenericAPIServer.PrepareRun
// installs /openapi/v2 with installOpenAPIV2 instead of routes.OpenAPI's
// InstallV2.
//
// Upstream builds each server's OpenAPI v2 document from its routes in
// PrepareRun, before the server serves: for kube-apiserver, whose routes are
// every built-in API, about 0.5 CPU-seconds and 13 MB of heap kept for the
// life of the process, at every start of a cluster. Nothing oplab runs reads
// OpenAPI v2 (kubectl, Helm and controller-runtime use v3 or nothing; the
// aggregator's merged /openapi/v2 is lazy already and fetches its delegates'
// documents only when it is asked for). Here the document is built the
// first time /openapi/v2 is requested, from the same routes by the same
// builder, and kept from then on, as upstream keeps it.
//
// apiextensions-apiserver is the exception: its CRD OpenAPI controllers
// merge each CRD into its static document (GenericAPIServer.StaticOpenAPISpec),
// so that server's document is built at start as upstream builds it. It
// is the smallest of the three (one API group).

package server

import (
	"k8s.io/apiserver/pkg/server/routes"
	builder2 "k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/cached"
	"k8s.io/kube-openapi/pkg/common/restfuladapter"
	"k8s.io/kube-openapi/pkg/handler"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

func installOpenAPIV2(s *GenericAPIServer) (*handler.OpenAPIService, *spec.Swagger) {
	container, mux, config := s.Handler.GoRestfulContainer, s.Handler.NonGoRestfulMux, s.openAPIConfig
	if d, ok := s.Handler.Director.(director); !ok || d.name == "apiextensions-apiserver" {
		return routes.OpenAPI{Config: config}.InstallV2(container, mux)
	}
	build := cached.Once(cached.Func(func() (*spec.Swagger, string, error) {
		swagger, err := builder2.BuildOpenAPISpecFromRoutes(restfuladapter.AdaptWebServices(container.RegisteredWebServices()), config)
		if err != nil {
			return nil, "", err
		}
		swagger.Definitions = handler.PruneDefaults(swagger.Definitions)
		// The handler's ETag is a hash of the JSON it serves; this one
		// only has to stay the same, and does, being built once.
		return swagger, "built-once", nil
	}))
	service := handler.NewOpenAPIServiceLazy(build)
	service.RegisterOpenAPIVersionedService("/openapi/v2", mux)
	return service, nil
}
