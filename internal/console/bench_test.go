package console

import (
	"context"
	"testing"
)

// BenchmarkConsoleGetPods measures a console command from the call to
// its last line of output: kubectl get pods on a real cluster, through the
// allow-list, a private directory and the sandbox where there is one.
// `make bench` runs one op per run; ns/op over runs gives the p50.
func BenchmarkConsoleGetPods(b *testing.B) {
	f := newFixture(b)
	r := f.runner(b, Options{})
	b.Logf("sandboxed: %v", r.Sandboxed())
	ctx := context.Background()
	req := Request{Target: Target{Owner: "ada", Kubeconfig: f.kubeconfig}, Line: "kubectl get pods -A", Output: func(Chunk) {}}
	for b.Loop() {
		if _, err := r.Run(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
