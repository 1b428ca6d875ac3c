package session

import (
	"context"
	"fmt"
	"time"

	"oplab.dev/oplab/internal/console"
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
	Refused  string `json:"refused,omitempty"`
	Duration Millis `json:"durationMs"`
}

// MaskSecrets hides the secret values of a command line (see
// console.Redact).
func MaskSecrets(line string) string {
	masked, _ := console.Redact(line)
	return masked
}

// RecordConsole adds a console command to the session's timeline. It is
// the one way a console line reaches the store, and so the instructor's
// view of the session: its secret values are masked here, below every
// front end, in the line and in a refusal that quotes it. It counts as the
// learner's activity.
func (m *Manager) RecordConsole(ctx context.Context, id string, d ConsoleData) error {
	if _, err := m.record(ctx, id); err != nil {
		return err
	}
	var secrets []string
	d.Line, secrets = console.Redact(d.Line)
	d.Refused = console.Scrub(d.Refused, secrets)
	msg := fmt.Sprintf("$ %s (exit %d, %s)", d.Line, d.ExitCode, d.Duration.Duration().Round(time.Millisecond))
	if d.Refused != "" {
		msg = fmt.Sprintf("$ %s (refused: %s)", d.Line, d.Refused)
	}
	return m.o.Store.AppendEvents(ctx, id, newEvent(KindConsole, "", msg, d))
}

// ConsoleTarget is what a web console command of a session needs: whose
// command it is, so that one learner's commands share one set of caps
// whichever of their sessions they run in, and the credentials of the
// session's own cluster.
type ConsoleTarget struct {
	// Owner is the session's learner (a warm session's pool until a
	// learner takes it); never empty.
	Owner      string
	Kubeconfig []byte
	// Remote, on a provider whose cells run the console (the pods
	// provider), runs the command there; nil runs it on this machine.
	Remote console.Remote
}

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
	return t, nil
}
