package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// TestWebViewHidesTheKubeconfig: the browser never gets the cluster's
// admin credentials, only what the page shows.
func TestWebViewHidesTheKubeconfig(t *testing.T) {
	v, err := view(&session.Status{ID: "failover-1", Learner: "local", Kubeconfig: "apiVersion: v1\nusers: [secret]"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	if strings.Contains(string(b), "secret") || !strings.Contains(string(b), "failover-1") {
		t.Errorf("status for the browser: got %s, want it without the kubeconfig", b)
	}
}

func TestWebErrorKinds(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want error
	}{
		{fmt.Errorf("session x: %w", store.ErrNotFound), server.ErrNotFound},
		{fmt.Errorf("lab y: %w", session.ErrUnknownLab), server.ErrNotFound},
		{fmt.Errorf("check: %w", session.ErrOutOfOrder), server.ErrConflict},
		{fmt.Errorf("chaos: %w", session.ErrEnded), server.ErrConflict},
		{fmt.Errorf("start: %w", session.ErrActive), server.ErrConflict},
	} {
		got := webErr(tc.err)
		if !errors.Is(got, tc.want) || got.Error() != tc.err.Error() {
			t.Errorf("webErr(%v): got %v, want it kept and marked %v", tc.err, got, tc.want)
		}
	}
	if plain := errors.New("disk full"); webErr(plain) != plain {
		t.Error("an unexpected error was reclassified")
	}
}
