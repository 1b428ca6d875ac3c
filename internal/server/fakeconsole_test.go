package server

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// fakeConsole is Console in memory: it echoes the line it was given.
type fakeConsole struct{}

func (fakeConsole) Run(_ context.Context, session, line, stdin string, out io.Writer) error {
	_, err := fmt.Fprintf(out, "ran %q in %s with %d bytes of stdin\n", line, session, len(stdin))
	return err
}

// Apply reports the line it would have run, and for YAML with "bad:" on
// a line, a failure pointing there.
func (f fakeConsole) Apply(ctx context.Context, session, yaml string, dryRun bool) (ApplyResult, error) {
	line := "kubectl apply -f -"
	if dryRun {
		line += " --dry-run=server"
	}
	var out strings.Builder
	_ = f.Run(ctx, session, line, yaml, &out)
	for i, l := range strings.Split(yaml, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "bad:") {
			return ApplyResult{Output: out.String(), Error: "refused: bad field", Line: i + 1}, nil
		}
	}
	return ApplyResult{OK: true, Output: out.String()}, nil
}

// Complete offers the resource types that start like the line's last word.
func (fakeConsole) Complete(_ context.Context, session, line string) (Completion, error) {
	from := strings.LastIndexByte(line, ' ') + 1
	var out []string
	for _, w := range []string{"pods", "podtemplates", "postgresclusters", "services"} {
		if strings.HasPrefix(w, line[from:]) {
			out = append(out, w)
		}
	}
	return Completion{From: from, Candidates: out}, nil
}
