package webapp

import (
	"context"
	"errors"
	"testing"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/server"
)

// TestNoClassesWhereUncontained: a server that may serve no class (its
// clusters cannot be contained, and --insecure-clusters was not given)
// refuses joining, rejoining and creating a class, saying why; one that
// may serve classes does not refuse them for that.
func TestNoClassesWhereUncontained(t *testing.T) {
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DataDir: t.TempDir(), BinDir: clustertest.BinDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, tc := range []struct {
		serving app.Serving
		refused bool
	}{{app.Serving{}, true}, {app.Serving{Classes: true, Insecure: true}, false}} {
		w, err := New(ctx, a, Options{Serving: &tc.serving})
		if err != nil {
			t.Fatal(err)
		}
		_, joinErr := w.Join(ctx, "192.0.2.1", "NOSUCHCODE", "Ada")
		_, rejoinErr := w.Rejoin(ctx, "192.0.2.1", "NOSUCHCODE")
		_, createErr := w.CreateClass(ctx, server.Instructor{Name: "teacher"}, server.ClassForm{Name: "c1"})
		for what, err := range map[string]error{"join": joinErr, "rejoin": rejoinErr, "create": createErr} {
			if got := errors.Is(err, app.ErrNoClasses); got != tc.refused {
				t.Errorf("serving %+v, %s: got %v, want refused for serving no class: %v", tc.serving, what, err, tc.refused)
			}
		}
		w.Close()
	}
}
