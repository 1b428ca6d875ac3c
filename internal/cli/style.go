package cli

import (
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// style colours text for a terminal, and leaves it plain when the output
// is not a terminal or noColor is set (NO_COLOR, https://no-color.org;
// see config).
type style struct{ color bool }

func newStyle(w io.Writer, noColor bool) style {
	f, ok := w.(*os.File)
	return style{color: ok && term.IsTerminal(int(f.Fd())) && !noColor}
}

func (s style) paint(code, text string) string {
	if !s.color {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s style) ok(t string) string   { return s.paint("32", t) }
func (s style) bad(t string) string  { return s.paint("31", t) }
func (s style) warn(t string) string { return s.paint("33", t) }
func (s style) bold(t string) string { return s.paint("1", t) }
func (s style) dim(t string) string  { return s.paint("2", t) }

// mark is ✓ or ✗, coloured.
func (s style) mark(passed bool) string {
	if passed {
		return s.ok("✓")
	}
	return s.bad("✗")
}

// shellQuote quotes a path for a POSIX shell when it needs it.
func shellQuote(p string) string {
	if p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@,=") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
