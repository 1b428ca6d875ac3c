package install

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"oplab.dev/oplab/internal/oplog"
)

// ErrNotInstalled is returned when the operator is not installed.
var ErrNotInstalled = errors.New("operator not installed")

// ErrNoOperatorPod: the operator's Deployment has no running pod (scaled
// to zero, or starting).
var ErrNoOperatorPod = errors.New("no running pod")

// PodLog is the log of the operator's pod, read through the API server:
// the operator's log wherever it runs as a pod (kind), or on any provider
// through the pod KWOK serves. It is an oplog.Source.
type PodLog struct {
	Config *rest.Config
	// Release names the operator's Deployment; Reference by default.
	Release Release
	// Since, when set, leaves out what was written before it (to the
	// second: the API server's precision).
	Since time.Time
	// Retry is how long a follow waits before it looks for the pod again
	// after its stream ended (the pod was replaced); a second when zero.
	Retry time.Duration
}

var _ oplog.Source = PodLog{}

// Lines reads the newest running pod's log and, with follow, goes on with
// the pod that replaces it when it is deleted, without repeating a line.
func (p PodLog) Lines(ctx context.Context, follow bool, emit func(oplog.Line) error) error {
	cs, err := kubernetes.NewForConfig(p.Config)
	if err != nil {
		return err
	}
	retry := p.Retry
	if retry <= 0 {
		retry = time.Second
	}
	var last time.Time // of the newest line emitted
	if !p.Since.IsZero() {
		last = p.Since.Add(-time.Nanosecond)
	}
	for {
		err := p.stream(ctx, cs, follow, &last, emit)
		if !follow || ctx.Err() != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		// The stream ended: the pod is gone, or not running yet. The
		// follow goes on with the next one.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(retry):
		}
	}
}

// stream copies one pod's log, from after *last, updating *last.
func (p PodLog) stream(ctx context.Context, cs kubernetes.Interface, follow bool, last *time.Time, emit func(oplog.Line) error) error {
	rel := p.Release.orReference()
	pod, err := operatorPod(ctx, cs, rel, true)
	if err != nil {
		return err
	}
	o := &corev1.PodLogOptions{Container: rel.Container, Follow: follow, Timestamps: true}
	if !last.IsZero() {
		// SinceTime is whole seconds: lines up to *last are skipped below.
		o.SinceTime = &metav1.Time{Time: last.Truncate(time.Second)}
	}
	rc, err := cs.CoreV1().Pods(rel.Namespace).GetLogs(pod, o).Stream(ctx)
	if err != nil {
		return fmt.Errorf("logs of pod %s/%s: %w", rel.Namespace, pod, err)
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		l := timestamped(sc.Text())
		if !l.Time.IsZero() {
			if !l.Time.After(*last) {
				continue // already emitted from the pod's earlier stream
			}
			*last = l.Time
		}
		if err := emit(l); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("logs of pod %s/%s: %w", rel.Namespace, pod, err)
	}
	return nil
}

// timestamped splits a line of a log read with timestamps into its time
// and text.
func timestamped(s string) oplog.Line {
	ts, text, ok := strings.Cut(s, " ")
	if t, err := time.Parse(time.RFC3339Nano, ts); ok && err == nil {
		return oplog.Line{Time: t, Stream: "stdout", Text: text}
	}
	return oplog.Line{Text: s}
}

// operatorPod names the newest pod of the operator's Deployment that is not
// being deleted and, if running is set, runs.
func operatorPod(ctx context.Context, cs kubernetes.Interface, rel Release, running bool) (string, error) {
	dep, err := cs.AppsV1().Deployments(rel.Namespace).Get(ctx, rel.Deployment, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("deployment %s/%s: %w: %w", rel.Namespace, rel.Deployment, ErrNotInstalled, err)
	}
	sel, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil {
		return "", err
	}
	pods, err := cs.CoreV1().Pods(rel.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return "", fmt.Errorf("pods of deployment %s/%s: %w", rel.Namespace, rel.Deployment, err)
	}
	live := slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool {
		return running && p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil
	})
	if len(live) == 0 {
		return "", fmt.Errorf("deployment %s/%s: %w", rel.Namespace, rel.Deployment, ErrNoOperatorPod)
	}
	newest := slices.MaxFunc(live, func(a, b corev1.Pod) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	return newest.Name, nil
}
