package console

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/bwrap"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

const podYAML = `apiVersion: v1
kind: Pod
metadata:
  name: demo
  labels: {app: demo}
spec:
  containers:
  - name: app
    image: nginx
`

// recorder collects a command's output, per stream.
type recorder struct {
	mu     sync.Mutex
	chunks []Chunk
	first  chan struct{}
	once   sync.Once
}

func newRecorder() *recorder { return &recorder{first: make(chan struct{})} }

func (r *recorder) add(c Chunk) {
	r.mu.Lock()
	r.chunks = append(r.chunks, c)
	r.mu.Unlock()
	r.once.Do(func() { close(r.first) })
}

func (r *recorder) text(s Stream) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b bytes.Buffer
	for _, c := range r.chunks {
		if c.Stream == s {
			b.Write(c.Data)
		}
	}
	return b.String()
}

func (r *recorder) bytes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.chunks {
		if c.Stream != Notice {
			n += len(c.Data)
		}
	}
	return n
}

type fixture struct {
	kubectl    string
	kubeconfig []byte
	cluster    *clustertest.Cluster
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	c := clustertest.New(t)
	kc, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{kubectl: filepath.Join(clustertest.BinDir(t), "kubectl"), kubeconfig: kc, cluster: c}
}

func (f fixture) runner(t testing.TB, opts Options) *Runner {
	t.Helper()
	opts.Kubectl = f.kubectl
	if opts.Cell == "" {
		opts.Cell = filepath.Join(clustertest.BinDir(t), "cell")
	}
	if opts.TempDir == "" {
		opts.TempDir = t.TempDir()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	r, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func (f fixture) run(t *testing.T, r *Runner, line, stdin string) (*recorder, *Result, error) {
	t.Helper()
	rec := newRecorder()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := r.Run(ctx, Request{Target: Target{Owner: "ada", Kubeconfig: f.kubeconfig}, Line: line, Stdin: []byte(stdin), Output: rec.add})
	return rec, res, err
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// TestRunner runs real kubectl against a real cluster, sandboxed where
// bubblewrap works.
func TestRunner(t *testing.T) {
	f := newFixture(t)
	// A variable of the server's environment the child must not see.
	t.Setenv("OPLAB_CONSOLE_TEST_SECRET", "server-only")
	tmp := t.TempDir()
	r := f.runner(t, Options{TempDir: tmp})
	t.Logf("sandboxed: %v", r.Sandboxed())

	t.Run("apply -f - with YAML on stdin", func(t *testing.T) {
		rec, res, err := f.run(t, r, "kubectl apply -f -", podYAML)
		if err != nil {
			t.Fatalf("apply: %v\nstderr: %s", err, rec.text(Stderr))
		}
		if got, want := rec.text(Stdout), "pod/demo created\n"; got != want {
			t.Errorf("stdout: got %q, want %q", got, want)
		}
		if res.ExitCode != 0 {
			t.Errorf("exit code: got %d, want 0", res.ExitCode)
		}
		if _, err := f.cluster.Client.CoreV1().Pods("default").Get(context.Background(), "demo", metav1.GetOptions{}); err != nil {
			t.Errorf("the applied pod is not in the cluster: %v", err)
		}
	})

	t.Run("get pods", func(t *testing.T) {
		rec, _, err := f.run(t, r, "kubectl get pods -o name", "")
		if err != nil {
			t.Fatalf("get pods: %v\nstderr: %s", err, rec.text(Stderr))
		}
		if got, want := rec.text(Stdout), "pod/demo\n"; got != want {
			t.Errorf("stdout: got %q, want %q", got, want)
		}
	})

	t.Run("non-zero exit", func(t *testing.T) {
		rec, res, err := f.run(t, r, "kubectl get pod nosuch", "")
		var exit *ExitError
		if !errors.As(err, &exit) || exit.Code != 1 || res.ExitCode != 1 {
			t.Fatalf("got %v (result %+v), want an *ExitError with code 1", err, res)
		}
		if got := rec.text(Stderr); !strings.Contains(got, `pods "nosuch" not found`) {
			t.Errorf("stderr: got %q, want kubectl's NotFound", got)
		}
	})

	t.Run("diff -f -", func(t *testing.T) {
		if r.diff == "" {
			t.Skip("diff(1) is not installed on this machine")
		}
		changed := strings.Replace(podYAML, "app: demo", "app: changed", 1)
		rec, res, err := f.run(t, r, "kubectl diff -f -", changed)
		if res == nil || res.ExitCode != 1 {
			t.Fatalf("got %v (result %+v), want exit code 1 (differences found)\nstderr: %s", err, res, rec.text(Stderr))
		}
		if got := rec.text(Stdout); !strings.Contains(got, "+    app: changed") {
			t.Errorf("stdout: got %q, want the changed label", got)
		}
	})

	t.Run("minimal environment", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rec := newRecorder()
		done := make(chan error, 1)
		go func() {
			_, err := r.Run(ctx, Request{Target: Target{Owner: "ada", Kubeconfig: f.kubeconfig}, Line: "kubectl get pods -w", Output: rec.add})
			done <- err
		}()
		select {
		case <-rec.first:
		case err := <-done:
			t.Fatalf("get -w ended before any output: %v", err)
		case <-time.After(time.Minute):
			t.Fatal("get -w wrote nothing in a minute")
		}
		env := kubectlEnv(t)
		cancel()
		<-done
		var keys []string
		for _, kv := range env {
			k, _, _ := strings.Cut(kv, "=")
			keys = append(keys, k)
		}
		slices.Sort(keys)
		want := []string{"HOME", "KUBECONFIG", "KUBECTL_KUBERC", "KUBERC", "PATH", "TMPDIR"}
		if r.Sandboxed() {
			want = append(want, "PWD") // bwrap --chdir sets it
			slices.Sort(want)
		}
		if !slices.Equal(keys, want) {
			t.Errorf("kubectl's environment: got %q, want exactly %q", keys, want)
		}
	})

	t.Run("get -w stopped by its context kills the process group", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rec := newRecorder()
		type outcome struct {
			res *Result
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			res, err := r.Run(ctx, Request{Target: Target{Owner: "ada", Kubeconfig: f.kubeconfig}, Line: "kubectl get pods -w", Output: rec.add})
			done <- outcome{res, err}
		}()
		// kubectl may write the header and the pod's line in separate
		// chunks: wait for the pod's line itself.
		deadline := time.After(time.Minute)
		for !strings.Contains(rec.text(Stdout), "demo") {
			select {
			case o := <-done:
				t.Fatalf("get -w ended before the pod's line: %v (stdout %q)", o.err, rec.text(Stdout))
			case <-deadline:
				t.Fatalf("get -w wrote no line of the pod in a minute (stdout %q)", rec.text(Stdout))
			case <-time.After(20 * time.Millisecond):
			}
		}
		cancel()
		o := <-done
		if !errors.Is(o.err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", o.err)
		}
		if !strings.Contains(rec.text(Stdout), "demo") {
			t.Errorf("stdout: got %q, want the pod's line", rec.text(Stdout))
		}
		if live := liveInGroup(o.res.PID); len(live) > 0 {
			t.Errorf("process group %d after cancel: got live processes %v, want none", o.res.PID, live)
		}
	})

	t.Run("completion", func(t *testing.T) {
		c := r.Completer(Target{Owner: "ada", Kubeconfig: f.kubeconfig, Remote: nil})
		tests := []struct {
			line string
			from int
			want []string // all of these, in order, among the candidates
			only bool     // and nothing else
		}{
			{line: "kubectl ro", from: 8, want: []string{"rollout"}, only: true},
			{line: "kubectl ex", from: 8, want: []string{"explain", "expose"}, only: true}, // no exec: no containers
			{line: "k rollout st", from: 10, want: []string{"status"}, only: true},
			{line: "kubectl get pods --watch", from: 17, want: []string{"--watch", "--watch-only"}, only: true},
			{line: "kubectl get po", from: 12, want: []string{"poddisruptionbudgets", "pods", "podtemplates"}},
			{line: "kubectl get deployments.a", from: 12, want: []string{"deployments.apps"}, only: true},
			{line: "kubectl get pods de", from: 17, want: []string{"demo"}, only: true},
			{line: "kubectl describe pod/d", from: 17, want: []string{"pod/demo"}, only: true},
			{line: "kubectl logs ", from: 13, want: []string{"demo"}, only: true},
			{line: "kubectl get pods -n kube-", from: 20, want: []string{"kube-node-lease", "kube-public", "kube-system"}, only: true},
			{line: "kubectl get pods -o js", from: 20, want: []string{"json", "jsonpath="}, only: true},
			{line: "kubectl get pods 'unbalanced ", from: 17, want: nil, only: true},
		}
		for _, tt := range tests {
			got, err := c.Complete(context.Background(), tt.line)
			if err != nil {
				t.Errorf("Complete(%q): %v", tt.line, err)
				continue
			}
			if got.From != tt.from {
				t.Errorf("Complete(%q): from got %d, want %d", tt.line, got.From, tt.from)
			}
			switch {
			case tt.only && !slices.Equal(got.Candidates, append([]string{}, tt.want...)):
				t.Errorf("Complete(%q): got %q, want %q", tt.line, got.Candidates, tt.want)
			case !tt.only:
				for _, w := range tt.want {
					if !slices.Contains(got.Candidates, w) {
						t.Errorf("Complete(%q): got %q, want it to hold %q", tt.line, got.Candidates, w)
					}
				}
			}
		}
	})

	t.Run("private directories are removed", func(t *testing.T) {
		entries, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), "console-etc-") {
				t.Errorf("left behind in the runner's directory: %s", e.Name())
			}
		}
	})

	t.Run("time limit", func(t *testing.T) {
		r := f.runner(t, Options{FollowTimeout: 2 * time.Second})
		rec, res, err := f.run(t, r, "kubectl get pods -w", "")
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("got %v, want ErrTimeout", err)
		}
		if res.ExitCode != -1 {
			t.Errorf("exit code: got %d, want -1 (killed)", res.ExitCode)
		}
		if got := rec.text(Notice); !strings.Contains(got, "ran longer than the console's limit of 2s") {
			t.Errorf("notice: got %q, want the time limit named", got)
		}
	})

	t.Run("output cap", func(t *testing.T) {
		const limit = 100
		r := f.runner(t, Options{MaxOutput: limit})
		rec, res, err := f.run(t, r, "kubectl api-resources", "")
		if !errors.Is(err, ErrOutputLimit) || !res.Truncated {
			t.Fatalf("got %v (truncated %v), want ErrOutputLimit", err, res != nil && res.Truncated)
		}
		if got := rec.bytes(); got != limit {
			t.Errorf("bytes passed on: got %d, want %d", got, limit)
		}
		if got := rec.text(Notice); !strings.Contains(got, "output truncated") {
			t.Errorf("notice: got %q, want the truncation shown", got)
		}
	})
}

// kubectlEnv returns the environment of the one kubectl running now that
// this test process started (its child, or under bubblewrap its
// grandchild's child): another test binary's kubectl on the machine,
// whatever its environment, is not the one asked about.
func kubectlEnv(t *testing.T) []string {
	t.Helper()
	self := os.Getpid()
	var found []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil || strings.TrimSpace(string(comm)) != "kubectl" || !descends(pid, self) {
			continue
		}
		found = append(found, pid)
	}
	if len(found) != 1 {
		t.Fatalf("got %d running kubectl processes started by this test (%v), want 1", len(found), found)
	}
	environ, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(found[0]), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(environ), "\x00"), "\x00")
}

// descends reports whether process pid descends from ancestor, by the
// parents /proc/<pid>/stat names (the host's PIDs, whatever namespace the
// process sees).
func descends(pid, ancestor int) bool {
	for range 64 { // deeper than any sandbox's chain
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		// "pid (comm) state ppid ...": the command may hold spaces.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 {
			return false
		}
		if pid, err = strconv.Atoi(f[1]); err != nil || pid <= 1 {
			return false
		}
		if pid == ancestor {
			return true
		}
	}
	return false
}

// TestRefusedStartsNothing runs a stand-in kubectl that records each start:
// an accepted line starts it, a refused one does not, nor makes a directory.
func TestRefusedStartsNothing(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	kubectl := filepath.Join(dir, "kubectl")
	script := "#!/bin/sh\necho \"$@\" >> " + marker + "\n"
	if err := os.WriteFile(kubectl, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	r, err := New(context.Background(), Options{Kubectl: kubectl, Sandbox: bwrap.Off, TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	req := Request{Target: Target{Owner: "ada", Kubeconfig: []byte("apiVersion: v1\nkind: Config\n")}}

	req.Line = "kubectl version --client"
	if _, err := r.Run(ctx, req); err != nil {
		t.Fatalf("accepted line: %v", err)
	}
	if got, err := os.ReadFile(marker); err != nil || string(got) != "version --client\n" {
		t.Fatalf("stand-in kubectl: got %q (%v), want it started with version --client", got, err)
	}
	os.Remove(marker)

	for _, line := range []string{
		"kubectl get pods --kubeconfig=/etc/kubernetes/admin.conf",
		"kubectl cp demo-0:/etc/passwd x",
		"kubectl get pods | sh",
		"kubectl apply -f -", // accepted, but the editor is empty
	} {
		req.Line = line
		res, err := r.Run(ctx, req)
		if !errors.Is(err, ErrRefused) || res != nil {
			t.Errorf("%q: got %v, %v; want a refusal and no result", line, res, err)
		}
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused line started kubectl: %v", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("a refused line made a directory: %v", entries)
	}
}
