package kind

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"unicode"

	kindlog "sigs.k8s.io/kind/pkg/log"
)

// kindLogger hands kind's messages to slog: warnings and errors as such,
// the rest at debug level.
type kindLogger struct{ l *slog.Logger }

func (k kindLogger) Warn(m string)                      { k.l.Warn(strings.TrimSpace(m), "from", "kind") }
func (k kindLogger) Warnf(f string, a ...any)           { k.Warn(fmt.Sprintf(f, a...)) }
func (k kindLogger) Error(m string)                     { k.l.Error(strings.TrimSpace(m), "from", "kind") }
func (k kindLogger) Errorf(f string, a ...any)          { k.Error(fmt.Sprintf(f, a...)) }
func (k kindLogger) V(kindlog.Level) kindlog.InfoLogger { return infoLogger(k) }

type infoLogger kindLogger

func (i infoLogger) Info(m string)            { i.l.Debug(strings.TrimSpace(m), "from", "kind") }
func (i infoLogger) Infof(f string, a ...any) { i.Info(fmt.Sprintf(f, a...)) }
func (i infoLogger) Enabled() bool            { return true }

// stepLogger turns kind's status lines (" • Starting control-plane 🕹️  ..."
// when a step starts, " ✓ Starting control-plane 🕹️" or " ✗ ..." when it
// ends) into calls of onStep, and passes everything on to next.
type stepLogger struct {
	next   kindlog.Logger
	onStep func(name string, done, ok bool)
	mu     sync.Mutex
}

func (s *stepLogger) Warn(m string)                        { s.next.Warn(m) }
func (s *stepLogger) Warnf(f string, a ...any)             { s.next.Warnf(f, a...) }
func (s *stepLogger) Error(m string)                       { s.next.Error(m) }
func (s *stepLogger) Errorf(f string, a ...any)            { s.next.Errorf(f, a...) }
func (s *stepLogger) V(l kindlog.Level) kindlog.InfoLogger { return stepInfo{s, s.next.V(l)} }

type stepInfo struct {
	s    *stepLogger
	next kindlog.InfoLogger
}

func (i stepInfo) Info(m string) {
	if name, done, ok, isStep := parseStatus(m); isStep {
		i.s.mu.Lock()
		i.s.onStep(name, done, ok)
		i.s.mu.Unlock()
	}
	i.next.Info(m)
}
func (i stepInfo) Infof(f string, a ...any) { i.Info(fmt.Sprintf(f, a...)) }
func (i stepInfo) Enabled() bool            { return true }

// parseStatus reads one of kind's status lines. name has the emoji and the
// trailing dots removed.
func parseStatus(line string) (name string, done, ok, isStep bool) {
	line = strings.TrimSpace(line)
	var rest string
	switch {
	case strings.HasPrefix(line, "• "):
		rest = strings.TrimSuffix(strings.TrimPrefix(line, "• "), "...")
	case strings.HasPrefix(line, "✓ "):
		rest, done, ok = strings.TrimPrefix(line, "✓ "), true, true
	case strings.HasPrefix(line, "✗ "):
		rest, done = strings.TrimPrefix(line, "✗ "), true
	default:
		return "", false, false, false
	}
	name = strings.TrimRightFunc(rest, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.Is(unicode.So, r) || unicode.Is(unicode.Mn, r) || r == '\ufe0f'
	})
	return name, done, ok, name != ""
}
