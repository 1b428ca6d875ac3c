package app

import "testing"

// BenchmarkOpen measures what every CLI command pays before it starts:
// loading and validating the course, opening the store, making the
// provider and the session manager.
func BenchmarkOpen(b *testing.B) {
	dir, bin := b.TempDir(), b.TempDir()
	for b.Loop() {
		a, err := Open(b.Context(), Config{DataDir: dir, BinDir: bin})
		if err != nil {
			b.Fatal(err)
		}
		a.Close()
	}
}
