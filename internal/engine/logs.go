package engine

import (
	"bufio"
	"bytes"
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
)

// LogSource reads the operator's log lines written at or after since,
// oldest first.
type LogSource interface {
	Lines(ctx context.Context, since time.Time) ([]string, error)
}

// FileLogs reads log files in the CRI format (the operator's host process
// log, and its previous run's first), oldest file first. A missing file is
// read as empty.
type FileLogs []string

var _ LogSource = FileLogs(nil)

// Lines implements LogSource.
func (f FileLogs) Lines(_ context.Context, since time.Time) ([]string, error) {
	var out []string
	for _, path := range f {
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read operator log: %w", err)
		}
		out = append(out, criLines(data, since)...)
	}
	return out, nil
}

// criLines parses CRI log lines ("<RFC3339Nano> <stream> <P|F> <text>"),
// joins partial lines and keeps those at or after since. A line that is not
// in the format is kept as it is.
func criLines(data []byte, since time.Time) []string {
	var out []string
	var partial strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), " ", 4)
		if len(fields) < 3 {
			continue
		}
		ts, err := time.Parse(time.RFC3339Nano, fields[0])
		if err != nil {
			out = append(out, sc.Text())
			continue
		}
		text := ""
		if len(fields) == 4 {
			text = fields[3]
		}
		partial.WriteString(text)
		if fields[2] == "P" {
			continue
		}
		line := partial.String()
		partial.Reset()
		if !ts.Before(since) {
			out = append(out, line)
		}
	}
	return out
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
