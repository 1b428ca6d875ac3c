package console

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Split splits a console line into words as a POSIX shell splits a simple
// command: blanks separate words, quotes ('…', "…", $'…') and backslashes
// keep blanks and quotes inside a word. Nothing is expanded or run: any shell
// syntax beyond one simple command (pipes, ;, &&, redirections, $VAR, $(…),
// `…`, VAR=value, subshells) is refused with a *RefusedError that names it.
// The line is parsed by mvdan.cc/sh's bash parser so that the refusal names
// what the learner typed rather than failing on a word kubectl would misread.
func Split(line string) ([]string, error) {
	if strings.TrimSpace(line) == "" {
		return nil, refuse("empty command: type a kubectl command, for example: kubectl get pods")
	}
	if strings.ContainsRune(line, 0) {
		return nil, refuse("the command contains a NUL character")
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, parseRefusal(err)
	}
	switch len(f.Stmts) {
	case 0:
		return nil, refuse("empty command: type a kubectl command, for example: kubectl get pods")
	case 1:
	default:
		return nil, refuse("one command at a time: ; and new lines are not supported (the console is not a shell)")
	}
	call, err := simpleCommand(f.Stmts[0])
	if err != nil {
		return nil, err
	}
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		if err := literalWord(w); err != nil {
			return nil, err
		}
		word, err := unquote(w)
		if err != nil {
			return nil, refuse(fmt.Sprintf("cannot read the word %s: quote it with '…'", wordSource(line, w)))
		}
		words = append(words, word)
	}
	return words, nil
}

// simpleCommand returns stmt's command when it is one simple command with
// no redirections, assignments or control operators.
func simpleCommand(stmt *syntax.Stmt) (*syntax.CallExpr, error) {
	switch {
	case stmt.Background || stmt.Coprocess || stmt.Disown:
		return nil, refuse("& (background) is not supported: the console runs one command; use -w or -f to keep it running")
	case stmt.Negated:
		return nil, refuse("! is not supported: the console runs kubectl only, not a shell")
	case len(stmt.Redirs) > 0:
		return nil, refuse("redirections (<, >) are not supported: output appears here; for input put the YAML in the editor and use -f -")
	}
	switch cmd := stmt.Cmd.(type) {
	case *syntax.CallExpr:
		if len(cmd.Assigns) > 0 {
			return nil, refuse("variable assignments (NAME=value) are not supported: the console runs kubectl only, not a shell")
		}
		return cmd, nil
	case *syntax.BinaryCmd:
		if cmd.Op == syntax.Pipe || cmd.Op == syntax.PipeAll {
			return nil, refuse("pipes (|) are not supported: the console runs kubectl only, not a shell; filter with -l, --field-selector, -o jsonpath or --sort-by")
		}
		return nil, refuse("one command at a time: &&, || and ; are not supported (the console is not a shell)")
	case nil:
		return nil, refuse("empty command: type a kubectl command, for example: kubectl get pods")
	default:
		return nil, refuse("shell syntax is not supported: the console runs one kubectl command, not a shell")
	}
}

// literalWord refuses a word with any part a shell would expand.
func literalWord(w *syntax.Word) error {
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, inner := range p.Parts {
				if _, ok := inner.(*syntax.Lit); !ok {
					return expansionRefusal(inner)
				}
			}
		default:
			return expansionRefusal(part)
		}
	}
	return nil
}

func expansionRefusal(part syntax.WordPart) error {
	switch part.(type) {
	case *syntax.ParamExp:
		return refuse("variables ($NAME) are not expanded: the console is not a shell; type the value itself (quote a literal $ with '…')")
	case *syntax.CmdSubst:
		return refuse("command substitution ($(…) or `…`) is not supported: the console runs kubectl only, not a shell")
	case *syntax.ArithmExp:
		return refuse("arithmetic expansion $((…)) is not supported: the console is not a shell")
	case *syntax.ProcSubst:
		return refuse("process substitution <(…) is not supported: put the YAML in the editor and use -f -")
	case *syntax.ExtGlob:
		return refuse("extended globs are not supported: quote the word with '…'")
	default:
		return refuse("shell expansions are not supported: quote the word with '…'")
	}
}

// parseRefusal turns a parser error into a one-line refusal.
func parseRefusal(err error) error {
	var pe syntax.ParseError
	msg := err.Error()
	if errors.As(err, &pe) {
		msg = pe.Text
	}
	switch {
	case strings.Contains(msg, "closing quote"), strings.Contains(msg, "must be closed"):
		return refuse("unbalanced quote: close the quote or quote the whole argument with '…'")
	case syntax.IsIncomplete(err):
		return refuse("incomplete command: " + msg)
	default:
		return refuse("the console runs one kubectl command, not a shell: " + msg)
	}
}

// unquote removes the quotes and backslashes of a word holding only
// literals and quotes, and expands nothing else: no braces, tilde or globs.
func unquote(w *syntax.Word) (string, error) {
	var b strings.Builder
	for _, part := range w.Parts {
		if lit, ok := part.(*syntax.Lit); ok {
			b.WriteString(unescape(lit.Value))
			continue
		}
		// Quoted parts: expand.Literal applies the quoting rules of '…',
		// $'…' and "…" (whose parts were checked to be literals).
		s, err := expand.Literal(&expand.Config{}, &syntax.Word{Parts: []syntax.WordPart{part}})
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// unescape applies the backslashes of an unquoted word: \x is x, and a
// backslash before a new line joins the lines.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// wordSource returns the text of w as typed.
func wordSource(line string, w *syntax.Word) string {
	start, end := int(w.Pos().Offset()), int(w.End().Offset())
	if start < 0 || end > len(line) || start > end {
		return ""
	}
	return line[start:end]
}
