package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"oplab.dev/oplab/internal/operator/install"
	"oplab.dev/oplab/internal/oplog"
)

// LogSource reads the operator's log lines written at or after since,
// oldest first.
type LogSource interface {
	Lines(ctx context.Context, since time.Time) ([]string, error)
}

// FileLogs reads log files in the CRI format (the operator's host process
// log, and its previous run's first: oplog.Location.Files), oldest file
// first. A missing file is read as empty.
type FileLogs []string

var _ LogSource = FileLogs(nil)

// Lines implements LogSource. A line that is not in the CRI format has no
// time and is kept whatever since is.
func (f FileLogs) Lines(_ context.Context, since time.Time) ([]string, error) {
	var out []string
	for _, path := range f {
		err := oplog.ReadFile(path, func(l oplog.Line) error {
			if l.Time.IsZero() || !l.Time.Before(since) {
				out = append(out, l.Text)
			}
			return nil
		})
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	return out, nil
}

// PodLogs reads the log of the operator's newest pod through the API
// server, for clusters where the operator runs as a pod.
type PodLogs struct {
	Client kubernetes.Interface
}

var _ LogSource = PodLogs{}

// Lines implements LogSource.
func (p PodLogs) Lines(ctx context.Context, since time.Time) ([]string, error) {
	pods, err := p.Client.CoreV1().Pods(install.Namespace).List(ctx, metav1.ListOptions{LabelSelector: operatorSelector})
	if err != nil {
		return nil, fmt.Errorf("operator pods: %w", err)
	}
	live := slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return p.Status.Phase != corev1.PodRunning })
	if len(live) == 0 {
		return nil, nil
	}
	pod := slices.MaxFunc(live, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	st := metav1.NewTime(since)
	rc, err := p.Client.CoreV1().Pods(install.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
		Container: install.Container, Timestamps: true, SinceTime: &st,
	}).Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("logs of operator pod %s: %w", pod.Name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("logs of operator pod %s: %w", pod.Name, err)
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\n")
		ts, text, ok := strings.Cut(line, " ")
		if t, err := time.Parse(time.RFC3339Nano, ts); ok && err == nil {
			if t.Before(since) {
				continue
			}
			line = text
		}
		out = append(out, line)
	}
	return out, nil
}
