//go:build ignore

// This file is added to k8s.io/kube-aggregator/pkg/controllers/openapiv3/aggregator
// in the copy of that module kube-controlplane is built against
// (hack/build-controlplane.sh, which removes the build constraint above),
// and the OpenAPI v3 aggregation controller there requeues the local
// delegates every LocalRequeue instead of every second.
//
// Upstream, the aggregator learns which group versions its local servers
// (kube-apiserver, apiextensions-apiserver) document by asking each for its
// /openapi/v3 index once a second, so that a new CRD's group version is in
// the merged index a second after apiextensions adds it. An idle cluster
// spent most of its API server's sampled CPU there: one JSON index encoded
// and decoded a second for each server, the garbage it made, and the wakes.
// Here the merged index and a group version's document bring the local
// servers' indexes up to date when they are read, if they are older than
// localFreshness: a reader sees what upstream's poll would have shown it,
// and a cluster nobody reads the documents of does no work for them.

package aggregator

import "time"

const (
	// localFreshness is how old the local servers' indexes may be when
	// the merged index or a group version's document is read: upstream's
	// poll period.
	localFreshness = time.Second
	// LocalRequeue is how often the aggregation controller still brings
	// the local servers' indexes up to date with nobody reading them.
	LocalRequeue = 10 * time.Minute
)

// refreshLocal brings the local servers' indexes up to date if they were
// brought up to date more than localFreshness ago. An error leaves a
// server's index as it was, as a failed poll upstream does; the aggregation
// controller reports it at its next pass.
func (s *specProxier) refreshLocal() {
	s.rwMutex.Lock()
	defer s.rwMutex.Unlock()
	if time.Since(s.localRefreshed) < localFreshness {
		return
	}
	for name := range s.apiServiceInfo {
		if IsLocalAPIService(name) {
			_ = s.updateAPIServiceSpecLocked(name)
		}
	}
	s.localRefreshed = time.Now()
}
