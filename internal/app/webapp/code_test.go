package webapp

import (
	"errors"
	"testing"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/server"
)

// TestFormatKinds: files a build would refuse are the request's fault
// (400), a file that does not parse is an answer, not an error, and a
// session asking faster than its rate is refused with when to retry
// (429), another session's rate untouched.
func TestFormatKinds(t *testing.T) {
	t.Parallel()
	a, err := app.Open(t.Context(), app.Config{DataDir: t.TempDir(), BinDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	w := &Web{a: a}
	for name, files := range map[string]map[string]string{
		"a path outside the module": {"../x.go": "package x\n"},
		"a file that is not Go":     {"notes.txt": "hello\n"},
	} {
		if v, err := w.Format("s1", files); !errors.Is(err, server.ErrInvalid) {
			t.Errorf("%s: got %v, %v, want ErrInvalid", name, v, err)
		}
	}
	v, err := w.Format("s2", map[string]string{"a.go": "package a\n\nfunc f() {\n\tx := := 1\n}\n"})
	if err != nil {
		t.Fatalf("a syntax error: got error %v, want an answer", err)
	}
	if f, ok := v.(*app.Formatted); !ok || f.OK || len(f.Errors) == 0 || f.Errors[0].Line != 4 {
		t.Errorf("a syntax error on line 4: got %#v", v)
	}
	files := map[string]string{"a.go": "package a\n"}
	var refused error
	for range app.FormatBurst + 5 {
		if _, err := w.Format("s3", files); err != nil {
			refused = err
			break
		}
	}
	var r *server.Refusal
	if !errors.As(refused, &r) || r.Reason != server.RefusalTooMany || r.Retry <= 0 {
		t.Errorf("a flood of gofmt requests: got %v, want a too-many refusal with a retry", refused)
	}
	if _, err := w.Format("s4", files); err != nil {
		t.Errorf("another session, after a flood of one: %v", err)
	}
}
