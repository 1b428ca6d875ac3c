package webapp

import (
	"errors"
	"testing"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/server"
)

// TestFormatKinds: files a build would refuse are the request's fault
// (400), a file that does not parse is an answer, not an error.
func TestFormatKinds(t *testing.T) {
	t.Parallel()
	w := &Web{}
	for name, files := range map[string]map[string]string{
		"a path outside the module": {"../x.go": "package x\n"},
		"a file that is not Go":     {"notes.txt": "hello\n"},
	} {
		if v, err := w.Format(files); !errors.Is(err, server.ErrInvalid) {
			t.Errorf("%s: got %v, %v, want ErrInvalid", name, v, err)
		}
	}
	v, err := w.Format(map[string]string{"a.go": "package a\n\nfunc f() {\n\tx := := 1\n}\n"})
	if err != nil {
		t.Fatalf("a syntax error: got error %v, want an answer", err)
	}
	if f, ok := v.(*app.Formatted); !ok || f.OK || len(f.Errors) == 0 || f.Errors[0].Line != 4 {
		t.Errorf("a syntax error on line 4: got %#v", v)
	}
}
