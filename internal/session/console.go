package session

import (
	"context"
	"fmt"
	"time"

	"oplab.dev/oplab/internal/console"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/store"
)

// KindConsole is the kind of the event a web console command leaves in
// its session's timeline (ConsoleData).
const KindConsole = "console"

// ConsoleData is the detail of a console event: the command line as typed
// (secret values masked), how it ended and how long it took.
type ConsoleData struct {
	Line     string `json:"line"`
	ExitCode int    `json:"exitCode"`
	// Refused says why the console did not run the line; empty when it ran.
	Refused  string            `json:"refused,omitempty"`
	Duration jsonconv.Duration `json:"durationMs"`
}

// MaskSecrets hides the secret values of a command line (see
// console.Redact).
func MaskSecrets(line string) string {
	masked, _ := console.Redact(line)
	return masked
}

// What a console event keeps of a learner's line, in bytes: the line
// itself is kept up to store.MaxEventText (the store cuts every text of
// an event), and the refusal and the message, which quote it, shorter.
const (
	// ConsoleQuote bounds the line as the event's message quotes it.
	ConsoleQuote = 256
	// ConsoleRefusal bounds a refusal, which quotes words of the line it
	// refused.
	ConsoleRefusal = 512
)

// RecordConsole adds a console command to the session's timeline. It is
// the one way a console line reaches the store, and so the instructor's
// view of the session: its secret values are masked here, below every
// front end, in the whole line and in a refusal that quotes it, before
// either is cut to what an event keeps (ConsoleQuote, ConsoleRefusal,
// store.MaxEventText). It counts as the learner's activity.
func (m *Manager) RecordConsole(ctx context.Context, id string, d ConsoleData) error {
	if _, err := m.record(ctx, id); err != nil {
		return err
	}
	var secrets []string
	d.Line, secrets = console.Redact(d.Line)
	d.Refused = store.Cut(console.Scrub(d.Refused, secrets), ConsoleRefusal)
	quoted := store.Cut(d.Line, ConsoleQuote)
	msg := fmt.Sprintf("$ %s (exit %d, %s)", quoted, d.ExitCode, d.Duration.Duration().Round(time.Millisecond))
	if d.Refused != "" {
		msg = fmt.Sprintf("$ %s (refused: %s)", quoted, d.Refused)
	}
	return m.o.Store.AppendEvents(ctx, id, newEvent(KindConsole, "", msg, d))
}

// ConsoleTarget is what a web console command of a session needs: whose
// command it is (the session's learner, or a warm session's pool until a
// learner takes it; never empty), so that one learner's commands share
// one set of caps whichever of their sessions they run in; the
// credentials of the session's own cluster; where the command runs (in
// the cell, on the pods provider) and the console group of the cell's
// budget it joins here.
type ConsoleTarget = console.Target

// ConsoleTarget returns what a console command of session id runs as.
// ErrNoCluster when the session has no cluster.
func (m *Manager) ConsoleTarget(ctx context.Context, id string) (ConsoleTarget, error) {
	rec, err := m.record(ctx, id)
	if err != nil {
		return ConsoleTarget{}, err
	}
	kc, err := m.Kubeconfig(ctx, id)
	if err != nil {
		return ConsoleTarget{}, err
	}
	owner := rec.Learner
	if owner == "" {
		owner = "session " + id
	}
	t := ConsoleTarget{Owner: owner, Kubeconfig: kc}
	p, err := m.providerOf(rec.Provider)
	if err != nil {
		return ConsoleTarget{}, fmt.Errorf("session %s: %w", id, err)
	}
	t.Remote = p.ConsoleIn(rec.Cluster)
	t.Cgroup = p.ConsoleGroup(rec.Cluster)
	return t, nil
}
