package controllab

import (
	"testing"

	"oplab.dev/oplab/internal/cluster/clustertest"
)

// BenchmarkKitPreload times a walk of Kit.Preload when the kit's pages are
// already in memory, as between the builds of a class: an open and a
// posix_fadvise for each file a build reads. Preload walks at most once
// every preloadEvery.
//
//	go test -run '^$' -bench '^BenchmarkKitPreload$' -count 5 ./internal/controllab/
func BenchmarkKitPreload(b *testing.B) {
	k, err := FindKit(clustertest.BinDir(b))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := k.preload(); err != nil {
			b.Fatal(err)
		}
	}
}
