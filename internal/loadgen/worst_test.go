package loadgen

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

func TestReadAnswer(t *testing.T) {
	long := strings.Repeat("y", 3*maxAnswerTail)
	for _, tc := range []struct {
		name, body string
		want       Answer
		refused    bool
	}{
		{"ran", "pod/a\npod/b\n", Answer{Output: 12}, false},
		{"nothing", "", Answer{}, false},
		{"refused", "\n\x00error: kubectl cp copies files\n", Answer{Error: "kubectl cp copies files"}, true},
		{"failed", "Error from server\n\n\x00error: kubectl exited with status 1\n", Answer{Output: 18, Error: "kubectl exited with status 1"}, false},
		{"long, then stopped", long + "\n\x00error: output limit reached\n", Answer{Output: int64(len(long)), Error: "output limit reached"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One byte at a time: the mark is found across reads.
			got, err := readAnswer(iotest.OneByteReader(strings.NewReader(tc.body)))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || got.Refused() != tc.refused {
				t.Errorf("got %+v (refused %v), want %+v (refused %v)", got, got.Refused(), tc.want, tc.refused)
			}
		})
	}
}

func TestCreated(t *testing.T) {
	out := "configmap/worst-00000 created\nconfigmap/worst-00001 unchanged\ndeployment.apps/worst created\nconfigmap/worst-00002 configured\n"
	if got := created(out); got != 2 {
		t.Errorf("created: got %d, want 2", got)
	}
}

func TestWorstOptions(t *testing.T) {
	o := WorstOptions{}
	if err := o.setDefaults(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	if n := len(configMapsYAML(0, o.Batch, o.Annotation)); n > maxApply {
		t.Errorf("a default batch is %d bytes, more than an apply's %d", n, maxApply)
	}
	if n := len(deploymentYAML(o.Replicas, o.Annotation)); n > maxApply {
		t.Errorf("the default Deployment is %d bytes, more than an apply's %d", n, maxApply)
	}
	for _, bad := range []WorstOptions{{Annotation: 300 << 10}, {Batch: 100, Annotation: 16 << 10}} {
		if err := bad.setDefaults(); err == nil {
			t.Errorf("%+v: got no error, want one", bad)
		}
	}
}

// fakeConsole answers the lab page's console and apply as the server does
// (a streamed answer, the error after the mark), refusing every other
// command and every long line, and counts what it answered.
type fakeConsole struct {
	mu                                sync.Mutex
	applies, commands, lines, refused int
	running, most                     int
	firstApply                        string
	consoleBeforeDeployment, noCSRF   bool
}

func (f *fakeConsole) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-CSRF-Token") != "token" {
		f.mu.Lock()
		f.noCSRF = true
		f.mu.Unlock()
		http.Error(w, `{"error":"no CSRF token"}`, http.StatusForbidden)
		return
	}
	var in struct{ Line, YAML string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.URL.Path {
	case "/api/sessions/s1/apply":
		if f.firstApply == "" {
			f.firstApply = in.YAML
		}
		f.applies++
		if f.applies%2 == 0 { // every other one refused, and sent again
			f.refused++
			_ = json.NewEncoder(w).Encode(Applied{Error: "lines are coming too fast"})
			return
		}
		_ = json.NewEncoder(w).Encode(Applied{OK: true, Output: strings.Repeat("configmap/x created\n", strings.Count(in.YAML, "kind: "))})
	case "/api/sessions/s1/console":
		if f.firstApply == "" {
			f.consoleBeforeDeployment = true
		}
		if strings.HasPrefix(in.Line, "kubectl cp ") {
			f.lines++
			f.refused++
			io.WriteString(w, errorMark+"kubectl cp copies files to and from the server\n")
			return
		}
		f.commands++
		if f.commands%2 == 0 {
			f.refused++
			io.WriteString(w, errorMark+"4 commands are still running\n")
			return
		}
		f.running++
		f.most = max(f.most, f.running)
		f.mu.Unlock()
		time.Sleep(5 * time.Millisecond) // so that commands overlap
		io.WriteString(w, "apiVersion: v1\n")
		f.mu.Lock()
		f.running--
	default:
		http.NotFound(w, r)
	}
}

// TestWorstCounts runs the attacker against a fake console: each stream
// stops at its bound, refusals are counted and retried, and the report's
// counts are the server's.
func TestWorstCounts(t *testing.T) {
	f := &fakeConsole{}
	ts := httptest.NewServer(f)
	defer ts.Close()
	l := NewLearner(ts.URL)
	l.csrf = "token"
	o := WorstOptions{For: time.Minute, Replicas: 3, Objects: 7, Batch: 2, Annotation: 10,
		Commands: 12, Parallel: 3, Lines: 9, LineBytes: 1000, Floods: 2, Retry: time.Millisecond}
	r, err := Worst(t.Context(), l, "s1", o)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noCSRF || r.Failed != 0 || r.Err != nil {
		t.Fatalf("requests failed: %d (%v); without the CSRF token: %v", r.Failed, r.Err, f.noCSRF)
	}
	if !strings.Contains(f.firstApply, "kind: Deployment") || !strings.Contains(f.firstApply, "replicas: 3") || f.consoleBeforeDeployment || !r.Deployment {
		t.Errorf("first apply: got %.60q (console before it: %v), want the Deployment of 3 first", f.firstApply, f.consoleBeforeDeployment)
	}
	// The namespace and its Deployment, then 7 ConfigMaps in batches of
	// 2, 2, 2, 1: five applied, each after a refusal but the first.
	if r.Objects != 9 || r.Applies != f.applies || r.Applies != 9 || r.AppliesRefused != 4 || r.AppliesFailed != 0 {
		t.Errorf("applies: got %d (%d refused, %d failed) making %d objects, want 9 (4 refused) making 9; the server answered %d",
			r.Applies, r.AppliesRefused, r.AppliesFailed, r.Objects, f.applies)
	}
	if r.Commands != 12 || f.commands != 12 || r.CommandsRefused != 6 || r.CommandsRan() != 6 || r.Output != 6*int64(len("apiVersion: v1\n")) {
		t.Errorf("commands: got %d (%d refused, %d bytes), want 12 (6 refused, 6×15 bytes); the server answered %d",
			r.Commands, r.CommandsRefused, r.Output, f.commands)
	}
	if f.most > o.Parallel {
		t.Errorf("commands at once: got %d, want at most %d", f.most, o.Parallel)
	}
	if r.Lines != 9 || r.LinesRefused != 9 || f.lines != 9 {
		t.Errorf("flood: got %d lines (%d refused), want 9 (9 refused); the server answered %d", r.Lines, r.LinesRefused, f.lines)
	}
	if got := r.Refusals["kubectl cp copies files to and from the server"]; got != 9 {
		t.Errorf("refusals of cp: got %d, want 9 (all: %v)", got, r.Refusals)
	}
	if total := r.AppliesRefused + r.CommandsRefused + r.LinesRefused; total != f.refused {
		t.Errorf("refused: got %d, the server refused %d", total, f.refused)
	}
}

// TestWorstStopsAtItsTime: an attack whose streams have more to do than
// time stops at For (or this test never ends), and counts what was
// answered.
func TestWorstStopsAtItsTime(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/apply") {
			_ = json.NewEncoder(w).Encode(Applied{OK: true, Output: "configmap/x created\n"})
			return
		}
		io.WriteString(w, errorMark+"refused\n")
	}))
	defer ts.Close()
	l := NewLearner(ts.URL)
	r, err := Worst(t.Context(), l, "s1", WorstOptions{For: 300 * time.Millisecond, Objects: 1 << 30, Batch: 1,
		Commands: 1 << 30, Lines: 1 << 30, LineBytes: 10, Annotation: 10, Retry: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.Lines == 0 || r.Lines != r.LinesRefused || r.Applies == 0 || r.Failed != 0 {
		t.Errorf("got %+v, want lines (all refused) and applies, none failed", r)
	}
}
