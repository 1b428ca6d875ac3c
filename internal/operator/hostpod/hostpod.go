// Package hostpod plays the kubelet for one simulated pod whose container
// runs as a host process.
//
// On the embedded provider KWOK simulates pods: they become Running but no
// container runs. For the operator, oplab runs the program on the host
// instead, and hostpod keeps that process in step with the pod, as a kubelet
// keeps a container: it runs while a Running pod matches the selector, is
// stopped when the pod goes (kubectl scale --replicas=0), restarted as a new
// process when the pod is replaced (kubectl delete pod, rollout restart),
// killed at once when its pod is deleted with no grace period (kubectl
// delete --force --grace-period=0: a crash) and restarted with a capped
// backoff when it exits. The program's output is
// written in the CRI log format to the file KWOK serves as the pod's log; the
// previous run's log is kept for kubectl logs --previous. RefreshTokens keeps
// the program's ServiceAccount token fresh, as a kubelet keeps a projected
// token.
package hostpod

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"oplab.dev/oplab/internal/operator/crilog"
)

// Options say which pod to play and what to run.
type Options struct {
	// Client watches the pods.
	Client kubernetes.Interface
	// Namespace and Selector (a label selector) find the pod.
	Namespace string
	Selector  string
	// Argv is the program and its arguments; Env its environment, to which
	// POD_NAME (the pod played) is added.
	Argv []string
	Env  []string
	// LogPath receives the program's output as CRI log lines; at each start
	// the last run's log is moved to PreviousLogPath.
	LogPath         string
	PreviousLogPath string
	// StopGrace is how long the program gets to exit after SIGTERM; 10 s
	// when zero.
	StopGrace time.Duration
	// Logger receives hostpod's own messages.
	Logger *slog.Logger
}

// Backoff between restarts of a program that exits: doubled from
// minBackoff up to maxBackoff, reset after a run of resetAfter.
const (
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
	resetAfter = 30 * time.Second
)

// Run keeps the program in step with the pod until ctx ends, then stops it.
func Run(ctx context.Context, o Options) error {
	if len(o.Argv) == 0 {
		return errors.New("no program to run")
	}
	if o.StopGrace == 0 {
		o.StopGrace = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	sel, err := labels.Parse(o.Selector)
	if err != nil {
		return fmt.Errorf("pod selector: %w", err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(o.Client, 0,
		informers.WithNamespace(o.Namespace),
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = sel.String() }))
	podInformer := factory.Core().V1().Pods()
	wake := make(chan struct{}, 1)
	poke := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	deleted := &graces{}
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { deleted.seen(obj, false); poke() },
		UpdateFunc: func(_, obj any) { deleted.seen(obj, false); poke() },
		DeleteFunc: func(obj any) { deleted.seen(obj, true); poke() },
	}); err != nil {
		return err
	}
	lister := podInformer.Lister()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), podInformer.Informer().HasSynced) {
		return ctx.Err()
	}

	s := &supervisor{o: o}
	// When oplab stops the process group, the program got the signal too:
	// give it a moment before signalling it again.
	defer s.stopAfter(time.Second)
	var retry <-chan time.Time
	for {
		pods, err := lister.List(sel)
		if err != nil {
			return err
		}
		want := runningPod(pods)
		if s.child != nil && s.child.pod != want {
			grace, known := deleted.of(s.child.pod)
			switch {
			case known && grace == 0:
				o.Logger.Info("pod deleted with no grace period: killing the program", "pod", s.child.pod, "now", want)
				s.kill()
			default:
				o.Logger.Info("pod gone or replaced: stopping the program", "pod", s.child.pod, "now", want)
				s.stopAfter(0)
			}
		}
		if s.child == nil && want != "" && !time.Now().Before(s.notBefore) {
			if err := s.start(want); err != nil {
				o.Logger.Error("start program", "pod", want, "err", err)
				s.failed()
			}
		}
		retry = nil
		if s.child == nil && want != "" {
			retry = time.After(time.Until(s.notBefore))
		}
		var exited <-chan struct{}
		if s.child != nil {
			exited = s.child.done
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-retry:
		case <-exited:
			o.Logger.Info("program exited", "pod", s.child.pod, "status", s.child.cmd.ProcessState.String())
			s.reap()
		}
	}
}

// runningPod names the newest Running pod that is not being deleted.
func runningPod(pods []*corev1.Pod) string {
	live := slices.DeleteFunc(slices.Clone(pods), func(p *corev1.Pod) bool {
		return p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil
	})
	if len(live) == 0 {
		return ""
	}
	return slices.MaxFunc(live, func(a, b *corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		if a.Name < b.Name {
			return -1
		}
		return 1
	}).Name
}

// graces remembers, for each pod whose deletion hostpod saw, the grace
// period it was first deleted with, as a kubelet honours it: 0 for a pod
// deleted at once (kubectl delete --force --grace-period=0), whose
// program is killed without a SIGTERM, as a crash would end it. The
// first deletion seen counts: a kubelet's (here KWOK's) last delete of a
// pod whose grace has run out has a period of 0 too.
type graces struct {
	mu sync.Mutex
	by map[string]int64
}

// seen records the grace period of pod obj when it is being deleted, or
// was (gone: a delete event; the object then is its last state, with no
// deletion timestamp when it was deleted at once).
func (g *graces) seen(obj any, gone bool) {
	p, ok := obj.(*corev1.Pod)
	if !ok { // cache.DeletedFinalStateUnknown: how it went is not known
		return
	}
	var grace int64
	switch {
	case p.DeletionTimestamp != nil && p.DeletionGracePeriodSeconds != nil:
		grace = *p.DeletionGracePeriodSeconds
	case p.DeletionTimestamp != nil:
		grace = 30 // the API server's default
	case !gone:
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.by == nil || len(g.by) >= maxGraces {
		g.by = map[string]int64{} // pods never played, forgotten
	}
	if _, ok := g.by[p.Name]; !ok {
		g.by[p.Name] = grace
	}
}

// maxGraces bounds what graces remembers of pods whose program it never
// asks about (deleted while Pending, or replaced before they ran).
const maxGraces = 64

// of returns the grace period pod was first deleted with, and forgets it:
// it is asked once, when the pod's program stops.
func (g *graces) of(pod string) (int64, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	grace, ok := g.by[pod]
	delete(g.by, pod)
	return grace, ok
}

// supervisor owns at most one run of the program.
type supervisor struct {
	o         Options
	child     *child
	backoff   time.Duration
	notBefore time.Time
}

type child struct {
	pod     string
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{}
	log     *os.File
}

func (s *supervisor) start(pod string) error {
	o := s.o
	if fi, err := os.Stat(o.LogPath); err == nil && fi.Size() > 0 && o.PreviousLogPath != "" {
		if err := os.Rename(o.LogPath, o.PreviousLogPath); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(o.Argv[0], o.Argv[1:]...)
	cmd.Env = append(slices.Clone(o.Env), "POD_NAME="+pod)
	outR, err := cmd.StdoutPipe()
	if err != nil {
		f.Close()
		return err
	}
	errR, err := cmd.StderrPipe()
	if err != nil {
		f.Close()
		return err
	}
	stdout, stderr := crilog.NewWriters(f)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "hostpod: start %s: %v\n", o.Argv[0], err)
		f.Close()
		return err
	}
	c := &child{pod: pod, cmd: cmd, started: time.Now(), done: make(chan struct{}), log: f}
	var copies sync.WaitGroup
	for _, p := range []struct {
		w *crilog.Writer
		r io.Reader
	}{{stdout, outR}, {stderr, errR}} {
		copies.Go(func() {
			_, _ = io.Copy(p.w, p.r)
			_ = p.w.Flush()
		})
	}
	go func() {
		copies.Wait() // drain the pipes before Wait closes them
		_ = cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 0 {
			fmt.Fprintf(stderr, "hostpod: %s exited: %v\n", o.Argv[0], cmd.ProcessState)
		}
		close(c.done)
	}()
	s.child = c
	s.o.Logger.Info("program started", "pod", pod, "pid", cmd.Process.Pid)
	return nil
}

// reap forgets a child that exited and schedules the next start.
func (s *supervisor) reap() {
	if s.child == nil {
		return
	}
	ran := time.Since(s.child.started)
	s.child.log.Close()
	s.child = nil
	if ran >= resetAfter {
		s.backoff = 0
	}
	s.failed()
}

// failed pushes the next start back by the backoff and doubles it.
func (s *supervisor) failed() {
	s.backoff = min(max(s.backoff*2, minBackoff), maxBackoff)
	s.notBefore = time.Now().Add(s.backoff)
}

// kill ends the running program at once with SIGKILL. It starts again
// without delay, as after stopAfter: its pod was deleted, and the next
// pod's program is a new one.
func (s *supervisor) kill() {
	c := s.child
	if c == nil {
		return
	}
	_ = c.cmd.Process.Kill()
	<-c.done
	s.stopped()
}

// stopAfter ends the running program: after wait (for it to exit by
// itself) SIGTERM, then SIGKILL after the grace. A program stopped on purpose
// starts again without delay.
func (s *supervisor) stopAfter(wait time.Duration) {
	c := s.child
	if c == nil {
		return
	}
	select {
	case <-c.done:
	case <-time.After(wait):
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(s.o.StopGrace):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	}
	s.stopped()
}

// stopped forgets the child stopped on purpose: the next may start at once.
func (s *supervisor) stopped() {
	s.child.log.Close()
	s.child = nil
	s.backoff = 0
	s.notBefore = time.Time{}
}
