package webapp

import (
	"context"
	"errors"
	"regexp"
	"strconv"

	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/yamldoc"
)

// Apply applies the editor's YAML to the session's cluster with
// `kubectl apply -f -`, only as a server-side dry run when dryRun, and
// points a failure at the line of the editor it is about.
func (w *Web) Apply(ctx context.Context, id, yaml string, dryRun bool) (server.ApplyResult, error) {
	line := "kubectl apply -f -"
	if dryRun {
		line += " --dry-run=server"
	}
	var out lockedBuffer
	err := w.Run(ctx, id, line, yaml, &out)
	res := server.ApplyResult{OK: err == nil, Output: out.String()}
	if err == nil {
		return res, nil
	}
	if errors.Is(err, server.ErrNotFound) {
		return res, err
	}
	res.Error = err.Error()
	res.Line = errorLine([]byte(yaml), res.Output+"\n"+res.Error)
	return res, nil
}

var (
	// kubectl's YAML errors name their line: "yaml: line 7: ...".
	yamlLine = regexp.MustCompile(`\bline (\d+)\b`)
	// The API server's validation names the field: "spec.replicas:
	// Invalid value: ...", "metadata.name: Required value".
	fieldPath = regexp.MustCompile(`\b((?:metadata|spec|data|stringData|rules|subjects|roleRef|webhooks|status)(?:\.[A-Za-z0-9_-]+|\[\d+\])*): (?:Invalid value|Required value|Unsupported value|Forbidden|Duplicate value|Too many|Too long|Not found)`)
)

// errorLine returns the 1-based line of data that msg is about, 0 when it
// cannot tell: the line a YAML error names, else the line of the first
// field a validation error names (for a single document; in a stream of
// several, paths do not say which document).
func errorLine(data []byte, msg string) int {
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	m := fieldPath.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	doc, err := yamldoc.Parse("", data) // one document only
	if err != nil {
		return 0
	}
	return doc.Line(m[1])
}
