package session

import (
	"context"
	"fmt"
	"regexp"
	"time"
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

// secretArg matches the values of arguments that carry a secret on a
// kubectl command line: a literal of `create secret` and credentials.
var secretArg = regexp.MustCompile(`(--from-literal[= ][^=\s]+=|--(?:token|password)[= ])("[^"]*"|'[^']*'|\S+)`)

// MaskSecrets hides the secret values of a command line.
func MaskSecrets(line string) string { return secretArg.ReplaceAllString(line, "${1}***") }

// RecordConsole adds a console command to the session's timeline, with
// its secret values masked. It counts as the learner's activity.
func (m *Manager) RecordConsole(ctx context.Context, id string, d ConsoleData) error {
	if _, err := m.record(ctx, id); err != nil {
		return err
	}
	d.Line = MaskSecrets(d.Line)
	msg := fmt.Sprintf("$ %s (exit %d, %s)", d.Line, d.ExitCode, d.Duration.Duration().Round(time.Millisecond))
	if d.Refused != "" {
		msg = fmt.Sprintf("$ %s (refused: %s)", d.Line, d.Refused)
	}
	return m.o.Store.AppendEvents(ctx, id, newEvent(KindConsole, "", msg, d))
}
