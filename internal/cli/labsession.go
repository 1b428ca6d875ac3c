package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/session"
)

// offlineLearner is the learner of sessions started from the command
// line: the person at this machine.
const offlineLearner = app.LocalLearner

// sessionFlags are the flags of the commands that act on a session.
type sessionFlags struct {
	id     string
	output outputFlag
}

func (f *sessionFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.id, "session", "", "the session to act on (default: the active one)")
	cmd.Flags().StringVarP((*string)(&f.output), "output", "o", "", "output format: json")
}

func (f *sessionFlags) json() (bool, error) { return f.output.json() }

// appConfig is the application's configuration from the flags and the
// environment.
func (g *globals) appConfig() app.Config {
	c := g.app()
	c.Logger = g.logger()
	return c
}

// open builds the application layer on the course built into oplab.
func (g *globals) open(ctx context.Context) (*app.App, error) {
	return app.Open(ctx, g.appConfig())
}

// openCourse builds the application layer on the course in src.
func (g *globals) openCourse(ctx context.Context, src app.CourseSource) (*app.App, error) {
	c := g.appConfig()
	c.Course = src
	return app.Open(ctx, c)
}

// local is the application as the person at this machine uses it: their
// sessions' statuses come with the path of the cluster's kubeconfig, for
// their own kubectl.
type local struct {
	*app.App
}

// localStatus is a session's status with its kubeconfig's path while its
// cluster lives (what `oplab lab status -o json` prints).
type localStatus struct {
	session.Status
	Kubeconfig string `json:"kubeconfigPath,omitempty"`
}

// Status reads session id with its kubeconfig's path.
func (l *local) Status(ctx context.Context, id string) (*localStatus, error) {
	st, err := l.App.Status(ctx, id)
	if err != nil {
		return nil, err
	}
	return l.withPath(ctx, st), nil
}

func (l *local) withPath(ctx context.Context, st *session.Status) *localStatus {
	ls := &localStatus{Status: *st}
	if st.ClusterLive {
		ls.Kubeconfig, _ = l.KubeconfigPath(ctx, st.ID)
	}
	return ls
}

// sessions builds the application layer; close releases it.
func (g *globals) sessions(ctx context.Context) (l *local, closeFn func(), err error) {
	return g.sessionsOn(ctx, g.appConfig())
}

// sessionsOn is sessions with configuration c.
func (g *globals) sessionsOn(ctx context.Context, c app.Config) (l *local, closeFn func(), err error) {
	a, err := app.Open(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	return &local{App: a}, func() { a.Close() }, nil
}

// resolve returns the session id flag's session, or else the learner's
// active session, or else their newest one, with errors that say what to
// do.
func resolve(ctx context.Context, l *local, id string) (string, error) {
	got, err := l.Resolve(ctx, offlineLearner, "", id)
	return got, explainResolve(err, id)
}

// explainResolve rewrites an error of Resolve with what the learner can do.
func explainResolve(err error, id string) error {
	switch {
	case errors.Is(err, session.ErrNotFound):
		return fmt.Errorf("no session %q (oplab lab status --all lists them)", id)
	case errors.Is(err, session.ErrNoSession):
		return errors.New("no session: start one with `oplab lab start ID` (oplab lab list shows the labs)")
	case errors.Is(err, session.ErrSeveralSessions):
		return fmt.Errorf("%w: pick one with --session ID", err)
	}
	return err
}

// friendly rewrites a session error with what the learner can do next.
func friendly(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, session.ErrEnded):
		return fmt.Errorf("%w; start a new one with `oplab lab start ID`", err)
	case errors.Is(err, session.ErrActive):
		return fmt.Errorf("%w (oplab lab stop), or pick it with --session", err)
	}
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// lang returns the session's language.
func lang(st *session.Status) locale.Lang {
	if l := locale.Lang(st.Lang); l.Valid() {
		return l
	}
	return locale.En
}

// repair does what an oplab that stopped uncleanly left half-done (see
// App.Recover: the same start-up repair a server does), before the
// clusters are listed; it does nothing where no session was ever stored.
func (g *globals) repair(ctx context.Context) {
	if _, err := os.Stat(filepath.Join(g.dataDir, app.StoreFile)); err != nil {
		return
	}
	a, err := g.open(ctx)
	if err != nil {
		return
	}
	defer a.Close()
	if _, err := a.Recover(ctx); err != nil {
		g.logger().Warn("repair sessions", "err", err)
	}
}
