package webapp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/console"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// consoleSession is a real session (the rbac lab on the embedded
// provider, a SQLite store) with the web adapter's console on it.
type consoleSession struct {
	app  *app.App
	web  *Web
	id   string
	data string
}

func newConsoleSession(t *testing.T) consoleSession {
	t.Helper()
	ctx := context.Background()
	bin := clustertest.BinDir(t)
	data := t.TempDir()
	a, err := app.Open(ctx, app.Config{DataDir: data, BinDir: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	st, err := a.Start(ctx, session.StartOptions{Learner: app.LocalLearner, Lab: "rbac"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = a.Stop(ctx, st.ID, "the test ended", nil) })
	w, err := New(ctx, a, Options{BinDir: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if w.Console() == nil {
		t.Fatal("the adapter has no console")
	}
	return consoleSession{app: a, web: w, id: st.ID, data: data}
}

// run runs line as the learner's console does and returns its output.
func (s consoleSession) run(t *testing.T, line string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out lockedBuffer
	err := s.web.Run(ctx, s.id, line, "", &out)
	return out.String(), err
}

// storeFiles returns the bytes of the store's files: the database and its
// write-ahead log.
func storeFiles(t *testing.T, data string) []byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(data, store.FileName+"*"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no store files in %s (%v)", data, err)
	}
	var all []byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}

func secretValue(t *testing.T, what string) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return what + "-" + hex.EncodeToString(b)
}

// TestConsoleSecretsMasked runs console lines that carry
// secrets through the web adapter on a real session, as the page does:
// the commands that are allowed do their work in the cluster with the
// real values, and the timeline (the instructor's view) holds each line
// with its values masked, while the store's files, read byte by byte,
// hold none of the values. The lines' other words are in those files, so
// the search can find what is there.
func TestConsoleSecretsMasked(t *testing.T) {
	s := newConsoleSession(t)
	name := secretValue(t, "db")
	literal, docker, token, patched, piped := secretValue(t, "literal"), secretValue(t, "docker"), secretValue(t, "token"), secretValue(t, "patched"), secretValue(t, "piped")
	secrets := []string{literal, docker, token, patched, piped}
	tests := []struct {
		line, recorded string
		refused        bool
	}{
		{line: "kubectl create secret generic " + name + " --from-literal=password=" + literal + " --from-literal user=ada",
			recorded: "kubectl create secret generic " + name + " --from-literal=password=*** --from-literal user=***"},
		{line: "kubectl create secret docker-registry " + name + "-reg --docker-server=r.example --docker-username=ada --docker-password '" + docker + "'",
			recorded: "kubectl create secret docker-registry " + name + "-reg --docker-server=r.example --docker-username=ada --docker-password ***"},
		{line: `kubectl patch secret ` + name + ` --type merge -p '{"stringData":{"password":"` + patched + `"}}'`,
			recorded: "kubectl patch secret " + name + " --type merge -p ***"},
		{line: "kubectl get secrets --token=" + token, recorded: "kubectl get secrets --token=***", refused: true},
		{line: "kubectl create secret generic " + name + "-2 --from-literal=pw=" + piped + " | cat",
			recorded: "kubectl create secret generic " + name + "-2 --from-literal=pw=*** | cat", refused: true},
	}
	for _, tt := range tests {
		out, err := s.run(t, tt.line)
		switch {
		case tt.refused && !errors.Is(err, console.ErrRefused):
			t.Errorf("%q: got %v, want refused", tt.recorded, err)
		case !tt.refused && err != nil:
			t.Errorf("%q: got %v (%s), want it run", tt.recorded, err, out)
		}
	}
	// The values reached the cluster: the console ran what was typed.
	out, err := s.run(t, "kubectl get secret "+name+" -o jsonpath='{.data.password}'")
	if err != nil {
		t.Fatalf("read the secret back: %v (%s)", err, out)
	}
	if got, _ := base64.StdEncoding.DecodeString(out); string(got) != patched {
		t.Errorf("the secret's password in the cluster: got %q, want %q", got, patched)
	}

	tl, err := s.app.Timeline(context.Background(), s.id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	evs := tl.Events
	recorded := map[string]session.Event{}
	for _, ev := range evs {
		if ev.Kind == session.KindConsole && ev.Console != nil {
			recorded[ev.Console.Line] = ev
		}
		for _, v := range secrets {
			if strings.Contains(ev.Message, v) || (ev.Console != nil && (strings.Contains(ev.Console.Line, v) || strings.Contains(ev.Console.Refused, v))) {
				t.Errorf("timeline event %d holds the secret %q: %q %+v", ev.Seq, v, ev.Message, ev.Console)
			}
		}
	}
	for _, tt := range tests {
		ev, ok := recorded[tt.recorded]
		if !ok {
			t.Errorf("timeline: no console event with the line %q", tt.recorded)
			continue
		}
		if got := ev.Console.Refused != ""; got != tt.refused {
			t.Errorf("%q: recorded refused %v, want %v", tt.recorded, got, tt.refused)
		}
	}

	raw := storeFiles(t, s.data)
	if !bytes.Contains(raw, []byte("create secret generic "+name)) {
		t.Fatalf("the store's files do not hold the lines as text: the search below could not find a value either")
	}
	for _, v := range secrets {
		if bytes.Contains(raw, []byte(v)) {
			t.Errorf("the store's files hold the secret %q", v)
		}
	}
}

// TestConsoleCapsPerLearner: on a real session, a learner's third command
// that follows is refused at once with a message the page shows as it
// shows any refusal, and the refusal is on the timeline; once one watch
// is stopped another starts.
func TestConsoleCapsPerLearner(t *testing.T) {
	s := newConsoleSession(t)
	type watch struct {
		cancel context.CancelFunc
		out    *lockedBuffer
		done   chan error
	}
	var watches []*watch
	var wg sync.WaitGroup
	defer func() {
		for _, w := range watches {
			w.cancel()
		}
		wg.Wait()
	}()
	startWatch := func(line string) *watch {
		ctx, cancel := context.WithCancel(context.Background())
		w := &watch{cancel: cancel, out: &lockedBuffer{}, done: make(chan error, 1)}
		watches = append(watches, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.done <- s.web.Run(ctx, s.id, line, "", w.out)
		}()
		for deadline := time.Now().Add(time.Minute); w.out.String() == ""; time.Sleep(20 * time.Millisecond) {
			select {
			case err := <-w.done:
				t.Fatalf("%q ended before any output: %v", line, err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%q wrote nothing in a minute", line)
			}
		}
		return w
	}
	startWatch("kubectl get pods -A -w")
	startWatch("kubectl get events -A -w")

	const want = "2 commands that keep running (get -w, logs -f, rollout status, wait) are still open: stop one before you start another"
	began := time.Now()
	out, err := s.run(t, "kubectl get pgc -A -w")
	if !errors.Is(err, console.ErrTooMany) || err.Error() != want {
		t.Fatalf("a third watch: got %v (output %q), want the refusal %q", err, out, want)
	}
	t.Logf("refused in %s", time.Since(began))
	if out, err := s.run(t, "kubectl get pods -A"); err != nil {
		t.Errorf("a command that ends, beside two watches: got %v (%s), want it run", err, out)
	}
	tl, err := s.app.Timeline(context.Background(), s.id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	evs := tl.Events
	found := false
	for _, ev := range evs {
		found = found || (ev.Console != nil && ev.Console.Line == "kubectl get pgc -A -w" && ev.Console.Refused == want)
	}
	if !found {
		t.Errorf("timeline: no refused console event for the third watch")
	}

	watches[0].cancel()
	if err := <-watches[0].done; !errors.Is(err, context.Canceled) {
		t.Errorf("the stopped watch: got %v, want context.Canceled", err)
	}
	startWatch("kubectl get pods -A -w")
}
