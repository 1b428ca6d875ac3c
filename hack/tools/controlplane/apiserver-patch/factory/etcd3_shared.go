//go:build ignore

// This file is added to k8s.io/apiserver/pkg/storage/storagebackend/factory
// in the copy of that module kube-controlplane is built against
// (hack/build-controlplane.sh, which removes the build constraint above),
// and newETCD3Storage takes its client from sharedETCD3Client instead of
// making one of its own.
//
// Upstream makes one etcd client for each resource the API server stores:
// about 60 gRPC connections to the same etcd, each with its TLS handshake
// at every start, its keepalive, its HTTP/2 buffers and goroutines on both
// sides, and a watch stream of its own in etcd. A lab's cluster is one
// small etcd behind one API server, whose traffic one connection carries
// (gRPC multiplexes the requests and watches on it). Here the resources of
// one transport (the same etcd servers and credentials) share one client,
// made when the first resource's storage is and closed when the last one's
// is destroyed; its KV records the request latencies, as each resource's
// own client's did.
//
// The watches of every resource then share one gRPC watch stream, so a
// progress request (the watch cache's consistent reads) is answered for
// all of them at once: etcd answers it once every watcher of the stream
// has caught up, which in a cluster of this size they have.

package factory

import (
	"fmt"
	"sync"

	"go.etcd.io/etcd/client/v3/kubernetes"

	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/storagebackend"
)

type sharedETCD3 struct {
	client *kubernetes.Client
	refs   int
}

var (
	sharedETCD3Mu      sync.Mutex
	sharedETCD3Clients = map[string]*sharedETCD3{}
)

// sharedETCD3Client returns the client of transport c, made on its first
// use, and the func that gives it back; the last one given back closes it.
func sharedETCD3Client(c storagebackend.TransportConfig) (*kubernetes.Client, func(), error) {
	key := fmt.Sprintf("%v", c) // as startCompactorOnce keys its compactors
	sharedETCD3Mu.Lock()
	defer sharedETCD3Mu.Unlock()
	s, ok := sharedETCD3Clients[key]
	if !ok {
		client, err := newETCD3Client(c)
		if err != nil {
			return nil, nil, err
		}
		client.KV = etcd3.NewETCDLatencyTracker(client.KV)
		s = &sharedETCD3{client: client}
		sharedETCD3Clients[key] = s
	}
	s.refs++
	var once sync.Once
	return s.client, func() {
		once.Do(func() {
			sharedETCD3Mu.Lock()
			defer sharedETCD3Mu.Unlock()
			s.refs--
			if s.refs == 0 {
				_ = s.client.Close()
				delete(sharedETCD3Clients, key)
			}
		})
	}, nil
}
