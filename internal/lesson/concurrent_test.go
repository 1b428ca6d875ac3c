package lesson

import (
	"sync"
	"testing"

	"oplab.dev/oplab/internal/locale"
)

// TestRenderConcurrently backs the claim that a Renderer may be shared by
// the server's request handlers (run with -race to check it fully).
func TestRenderConcurrently(t *testing.T) {
	t.Parallel()
	r := New()
	var wg sync.WaitGroup
	results := make([]string, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, errs := r.Render("x.md", "x", locale.En, []byte(page))
			if len(errs) > 0 {
				t.Error(errs)
				return
			}
			results[i] = p.HTML
		}()
	}
	wg.Wait()
	for i := 1; i < len(results); i++ {
		if results[i] != results[0] {
			t.Fatalf("render %d differs from render 0", i)
		}
	}
}
