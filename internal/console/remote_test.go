package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serveEnv, when set to an API server's address, makes the test binary a
// Remote's far end (Serve) for the call its arguments hold, running the
// kubectl named by serveKubectlEnv; it points the kubeconfig it is given
// from farAway at that address, as a cell points it at its loopback.
const (
	serveEnv        = "OPLAB_CONSOLE_SERVE_SERVER"
	serveKubectlEnv = "OPLAB_CONSOLE_SERVE_KUBECTL"
	farAway         = "https://far-end.invalid:1"
)

func serveCall(server string) int {
	c, err := ParseCall(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	return Serve(context.Background(), ServeOptions{
		Kubectl: os.Getenv(serveKubectlEnv), TempDir: os.TempDir(),
		Local: func(kc []byte) ([]byte, error) {
			if !bytes.Contains(kc, []byte(farAway)) {
				return nil, errors.New("not the kubeconfig the caller gave")
			}
			return bytes.ReplaceAll(kc, []byte(farAway), []byte(server)), nil
		},
	}, c, os.Stdin, os.Stdout, os.Stderr)
}

// processRemote runs the far end as a process of its own, as the pods
// provider's exec runs it in a cell, and plays the worst way its caller
// can go: nothing reaches the far end — its stdin stays open, as over an
// exec stream left half-open — and nothing kills it from outside; only
// the missing beat tells. (A stream that closes ends stdin, which the
// pods provider's kind test sees.)
type processRemote struct {
	t       *testing.T
	kubectl string
	server  string     // the API server as the far end reaches it
	ended   chan error // the far end's exit, once per call
}

type exitStatus int

func (e exitStatus) Error() string {
	return fmt.Sprintf("command terminated with exit code %d", int(e))
}
func (e exitStatus) ExitStatus() int { return int(e) }

func (p *processRemote) Run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, argv...)
	cmd.Env = append(os.Environ(), serveEnv+"="+p.server, serveKubectlEnv+"="+p.kubectl)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() {
		// Copied while the caller is there; never closed before the far
		// end exits.
		_, _ = io.Copy(in, stdin)
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		// The stream is gone; the far end is left to notice.
		go func() {
			p.ended <- <-done
			in.Close()
		}()
		return ctx.Err()
	}
	p.ended <- err
	in.Close()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exitStatus(exit.ExitCode())
	}
	return err
}

// TestRemote runs console commands through a Remote whose far end (Serve)
// is a process of its own running real kubectl against a real cluster: the
// output, exit status, the YAML editor's input, completion, the caller's
// time limit, and a follow command stopped by the caller, whose kubectl
// is gone when its stream is.
func TestRemote(t *testing.T) {
	f := newFixture(t)
	// The kubeconfig as this side reaches the API server: the far end
	// reaches it elsewhere, and is given only this one.
	server := regexp.MustCompile(`server: (\S+)`).FindSubmatch(f.kubeconfig)
	if server == nil {
		t.Fatalf("no server in %s", f.kubeconfig)
	}
	kc := bytes.ReplaceAll(f.kubeconfig, server[1], []byte(farAway))
	remote := &processRemote{t: t, kubectl: f.kubectl, server: string(server[1]), ended: make(chan error, 8)}
	// RemoteOnly: this runner has no kubectl of its own to fall back on.
	r, err := New(context.Background(), Options{RemoteOnly: true, FollowTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The far end's own limit is this runner's: a follow it did not stop
	// when its stdin ended would run on for ten minutes.
	long, err := New(context.Background(), Options{RemoteOnly: true, FollowTimeout: 10 * time.Minute, RemoteBeat: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runOn := func(r *Runner, ctx context.Context, line, stdin string) (*recorder, *Result, error) {
		rec := newRecorder()
		res, err := r.Run(ctx, Request{Target: Target{Owner: "ada", Kubeconfig: kc, Remote: remote}, Line: line, Stdin: []byte(stdin), Output: rec.add})
		return rec, res, err
	}
	run := func(ctx context.Context, line, stdin string) (*recorder, *Result, error) {
		return runOn(r, ctx, line, stdin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("output and status", func(t *testing.T) {
		rec, res, err := run(ctx, "kubectl get namespaces -o name", "")
		if err != nil || res.ExitCode != 0 || !strings.Contains(rec.text(Stdout), "namespace/default") {
			t.Fatalf("get namespaces: %v, %+v, stdout %q stderr %q", err, res, rec.text(Stdout), rec.text(Stderr))
		}
		rec, res, err = run(ctx, "kubectl get configmap nosuch", "")
		var exit *ExitError
		if !errors.As(err, &exit) || exit.Code != 1 || res.ExitCode != 1 || !strings.Contains(rec.text(Stderr), "NotFound") {
			t.Fatalf("get a missing object: %v, %+v, stderr %q", err, res, rec.text(Stderr))
		}
	})
	t.Run("input", func(t *testing.T) {
		yaml := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-remote\ndata:\n  k: v\n"
		if rec, _, err := run(ctx, "kubectl apply -f -", yaml); err != nil {
			t.Fatalf("apply -f -: %v: %s", err, rec.text(Stderr))
		}
		rec, _, err := run(ctx, "kubectl get configmap from-remote -o jsonpath={.data.k}", "")
		if err != nil || rec.text(Stdout) != "v" {
			t.Fatalf("the applied ConfigMap: %v, %q", err, rec.text(Stdout))
		}
	})
	t.Run("refused here", func(t *testing.T) {
		// The allow-list holds before anything reaches the cell.
		_, _, err := run(ctx, "kubectl --kubeconfig /etc/passwd get pods", "")
		if !errors.Is(err, ErrRefused) {
			t.Fatalf("--kubeconfig: %v, want refused", err)
		}
		if _, err := r.Run(ctx, Request{Target: Target{Owner: "ada", Kubeconfig: f.kubeconfig}, Line: "kubectl get pods"}); err == nil ||
			!strings.Contains(err.Error(), "only in a learner's cell") {
			t.Fatalf("a request without a Remote on a remote-only runner: %v", err)
		}
	})
	t.Run("completion", func(t *testing.T) {
		c, err := r.Completer(Target{Owner: "ada", Kubeconfig: kc, Remote: remote}).Complete(ctx, "kubectl get configm")
		if err != nil || !strings.Contains(strings.Join(c.Candidates, " "), "configmaps") {
			t.Fatalf("complete: %v, %+v", err, c)
		}
	})
	for len(remote.ended) > 0 {
		<-remote.ended
	}
	t.Run("follow stopped by the caller", func(t *testing.T) {
		marker := "oplab-remote-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		cctx, stop := context.WithCancel(ctx)
		go func() {
			waitKubectl(t, marker, true)
			stop()
		}()
		_, res, err := runOn(long, cctx, "kubectl get configmaps -w -l "+marker, "")
		if !errors.Is(err, context.Canceled) || res.ExitCode != -1 {
			t.Fatalf("a stopped follow: %v, %+v", err, res)
		}
		select {
		case <-remote.ended:
		case <-time.After(30 * time.Second):
			t.Fatal("the far end runs on after its caller went")
		}
		waitKubectl(t, marker, false)
	})
	t.Run("the caller's limit", func(t *testing.T) {
		rec, res, err := run(ctx, "kubectl get configmaps -w", "")
		if !errors.Is(err, ErrTimeout) || res.ExitCode != -1 || !strings.Contains(rec.text(Notice), "limit of 3s") {
			t.Fatalf("a follow past the limit: %v, %+v, notice %q", err, res, rec.text(Notice))
		}
		<-remote.ended
	})
}

// waitKubectl waits until a kubectl process whose command line holds
// marker runs (running) or none does.
func waitKubectl(t *testing.T, marker string, running bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		found := false
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			zombie := strings.Contains(string(stat), ") Z ")
			if err == nil && !zombie && strings.HasPrefix(filepath.Base(strings.SplitN(string(cmdline), "\x00", 2)[0]), "kubectl") &&
				strings.Contains(string(cmdline), marker) {
				found = true
			}
		}
		if found == running {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl with %s running: %v, want %v", marker, found, running)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
