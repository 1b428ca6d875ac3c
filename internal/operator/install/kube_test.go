package install

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWaitCreatable: Install waits only while the API server would still
// hold back a create of the new custom resource.
func TestWaitCreatable(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel() // a wait shows as the context's error
	tests := []struct {
		name        string
		established time.Time
		want        error
	}{
		{"no CRD applied", time.Time{}, nil},
		{"established long ago", time.Now().Add(-3 * crdCreateDelay), nil},
		{"established just now", time.Now(), context.Canceled},
		{"established 1 s ago", time.Now().Add(-time.Second), context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := waitCreatable(done, tt.established); !errors.Is(err, tt.want) {
				t.Errorf("waitCreatable: got %v, want %v", err, tt.want)
			}
		})
	}
}
