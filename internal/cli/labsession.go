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

	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// offlineLearner is the learner of sessions started from the command
// line: one person at their own machine.
const offlineLearner = "local"

// sessionFlags are the flags of the commands that act on a session.
type sessionFlags struct {
	id     string
	output string
}

func (f *sessionFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.id, "session", "", "the session to act on (default: the active one)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "", "output format: json")
}

func (f *sessionFlags) json() (bool, error) {
	switch f.output {
	case "":
		return false, nil
	case "json":
		return true, nil
	}
	return false, fmt.Errorf("unknown output format %q: use json, or leave it out for text", f.output)
}

// sessions opens the store and returns a session manager; close releases
// the store.
func (g *globals) sessions(ctx context.Context) (m *session.Manager, closeFn func(), err error) {
	p, err := g.provider()
	if err != nil {
		return nil, nil, err
	}
	st, err := store.OpenDir(ctx, g.dataDir)
	if err != nil {
		return nil, nil, err
	}
	m, err = session.New(session.Options{
		Store: st, Provider: p, Labs: course.Embedded().Labs, BinDir: g.binDir, Logger: g.logger(),
		// Two oplab commands in two terminals take turns on a session.
		LockDir: filepath.Join(g.dataDir, "locks"),
	})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return m, func() { st.Close() }, nil
}

// resolve returns the session id flag's session, or else the learner's
// active session, or else their newest one (which may have ended: its
// status and results stay readable), with errors that say what to do.
func resolve(ctx context.Context, m *session.Manager, id string) (string, error) {
	if id != "" {
		if _, err := m.Status(ctx, id); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return "", fmt.Errorf("no session %q (oplab lab status --all lists them)", id)
			}
			return "", err
		}
		return id, nil
	}
	id, err := m.Latest(ctx, offlineLearner)
	switch {
	case errors.Is(err, session.ErrNoSession):
		return "", errors.New("no session: start one with `oplab lab start ID` (oplab lab list shows the labs)")
	case errors.Is(err, session.ErrSeveralSessions):
		return "", fmt.Errorf("%w: pick one with --session ID", err)
	}
	return id, err
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

// healSessions fails the sessions that an oplab which is gone left
// provisioning (deleting their clusters) and finishes interrupted stops,
// before the clusters are listed; it does nothing where no session was
// ever stored.
func (g *globals) healSessions(ctx context.Context) {
	if _, err := os.Stat(filepath.Join(g.dataDir, store.FileName)); err != nil {
		return
	}
	m, closeStore, err := g.sessions(ctx)
	if err != nil {
		return
	}
	defer closeStore()
	if err := m.Heal(ctx, ""); err != nil {
		g.logger().Warn("heal sessions", "err", err)
	}
}
