package console

import (
	"errors"
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line string
		want []string
	}{
		{`get pods`, []string{"get", "pods"}},
		{"  get \t pods  ", []string{"get", "pods"}},
		{`get pods -o jsonpath='{.items[*].metadata.name}'`, []string{"get", "pods", "-o", "jsonpath={.items[*].metadata.name}"}},
		{`get pods -o jsonpath={.items[*].metadata.name}`, []string{"get", "pods", "-o", "jsonpath={.items[*].metadata.name}"}},
		{`get "a b" c\ d $'x\ty'`, []string{"get", "a b", "c d", "x\ty"}},
		{`label pod p "note=it's fine"`, []string{"label", "pod", "p", "note=it's fine"}},
		{`patch x -p '{"a":"b"}'`, []string{"patch", "x", "-p", `{"a":"b"}`}},
		{`get "" ''`, []string{"get", "", ""}},
		{`get "x\\y" "a\"b"`, []string{"get", `x\y`, `a"b`}},
		{`get -o jsonpath="{$.items}"`, []string{"get", "-o", "jsonpath={$.items}"}},
		{`get -l app!=x,tier`, []string{"get", "-l", "app!=x,tier"}},
		{`get {a,b} ~/x *`, []string{"get", "{a,b}", "~/x", "*"}}, // no brace, tilde or glob expansion
		{`get pods # a comment`, []string{"get", "pods"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got, err := Split(tt.line)
			if err != nil {
				t.Fatalf("Split(%q): %v", tt.line, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Split(%q): got %q, want %q", tt.line, got, tt.want)
			}
		})
	}
}

func TestSplitRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line, want string
	}{
		{"", "empty command: type a kubectl command, for example: kubectl get pods"},
		{"   ", "empty command: type a kubectl command, for example: kubectl get pods"},
		{"# only a comment", "empty command: type a kubectl command, for example: kubectl get pods"},
		{"get 'pods", "unbalanced quote: close the quote or quote the whole argument with '…'"},
		{`get "pods`, "unbalanced quote: close the quote or quote the whole argument with '…'"},
		{"get pods | head", "pipes (|) are not supported: the console runs kubectl only, not a shell; filter with -l, --field-selector, -o jsonpath or --sort-by"},
		{"get pods |& head", "pipes (|) are not supported: the console runs kubectl only, not a shell; filter with -l, --field-selector, -o jsonpath or --sort-by"},
		{"get pods || true", "one command at a time: &&, || and ; are not supported (the console is not a shell)"},
		{"get pods\nget svc", "one command at a time: ; and new lines are not supported (the console is not a shell)"},
		{"get pods &", "& (background) is not supported: the console runs one command; use -w or -f to keep it running"},
		{"! get pods", "! is not supported: the console runs kubectl only, not a shell"},
		{"apply -f - < x.yaml", "redirections (<, >) are not supported: output appears here; for input put the YAML in the editor and use -f -"},
		{"get pods 2>&1", "redirections (<, >) are not supported: output appears here; for input put the YAML in the editor and use -f -"},
		{"get pods <<EOF\nx\nEOF", "redirections (<, >) are not supported: output appears here; for input put the YAML in the editor and use -f -"},
		{"KUBECONFIG=/x get pods", "variable assignments (NAME=value) are not supported: the console runs kubectl only, not a shell"},
		{"get pods -n ${NS}", "variables ($NAME) are not expanded: the console is not a shell; type the value itself (quote a literal $ with '…')"},
		{`get pods -n "$NS"`, "variables ($NAME) are not expanded: the console is not a shell; type the value itself (quote a literal $ with '…')"},
		{"get pods -n `hostname`", "command substitution ($(…) or `…`) is not supported: the console runs kubectl only, not a shell"},
		{"get pods --tail $((1+1))", "arithmetic expansion $((…)) is not supported: the console is not a shell"},
		{"apply -f <(cat x)", "process substitution <(…) is not supported: put the YAML in the editor and use -f -"},
		{"get @(a|b)", "extended globs are not supported: quote the word with '…'"},
		{"(get pods)", "shell syntax is not supported: the console runs one kubectl command, not a shell"},
		{"if true; then get pods; fi", "shell syntax is not supported: the console runs one kubectl command, not a shell"},
		{"get\x00pods", "the command contains a NUL character"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got, err := Split(tt.line)
			if err == nil {
				t.Fatalf("Split(%q): got %q, want refused with %q", tt.line, got, tt.want)
			}
			if !errors.Is(err, ErrRefused) {
				t.Errorf("got %v (%T), want a *RefusedError", err, err)
			}
			if err.Error() != tt.want {
				t.Errorf("got message\n  %q\nwant\n  %q", err.Error(), tt.want)
			}
		})
	}
}
