package keyrate

import (
	"fmt"
	"testing"
	"time"
)

// TestAllow: a key gets its burst and no more; another key is apart; past
// maxKeys the full buckets are forgotten and the one being drained kept.
func TestAllow(t *testing.T) {
	l := New(0.001, 3, 4)
	for i := range 3 {
		if !l.Allow("a") {
			t.Fatalf("request %d of a burst of 3 refused", i+1)
		}
	}
	if l.Allow("a") {
		t.Error("a fourth request in a burst of 3 allowed")
	}
	if !l.Allow("b") {
		t.Error("another key refused after a's burst")
	}
	// Buckets full again (a fast rate refills at once) are forgotten
	// past maxKeys; a drained one is not: its flood would start again.
	fast := New(1e9, 3, 4)
	drained := New(0.001, 3, 1).bucket()
	drained.AllowN(time.Now(), 3)
	fast.buckets["drained"] = drained
	for i := range 10 {
		fast.Allow(fmt.Sprint("k", i))
	}
	if n := len(fast.buckets); n > 6 {
		t.Errorf("%d buckets kept, want at most maxKeys, the drained one and the new one", n)
	}
	if _, ok := fast.buckets["drained"]; !ok {
		t.Error("a drained bucket was forgotten")
	}
}
