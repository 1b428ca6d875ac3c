package engine

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/oplog"
)

// TestSinceFiles reads the previous run's log, then the current one,
// keeping the lines at or after since; a missing file is empty.
func TestSinceFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	previous, current := filepath.Join(dir, "previous.log"), filepath.Join(dir, "current.log")
	write := func(path, data string) {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(previous, "2026-01-02T10:00:00.5Z stderr F old line\n"+
		"2026-01-02T10:00:01.2Z stderr F last of the previous run\n")
	write(current, "2026-01-02T10:00:01.000000001Z stderr P first half, \n"+
		"2026-01-02T10:00:01.1Z stderr F second half\n"+
		"2026-01-02T10:00:02Z stdout F \n"+
		"not a cri line at all\n"+
		"2026-01-02T10:00:03Z stderr F forbidden: cannot update\n")
	since := time.Date(2026, 1, 2, 10, 0, 1, 0, time.UTC)
	got, err := Since{Log: oplog.Files{filepath.Join(dir, "missing.log"), previous, current}}.Lines(t.Context(), since)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"last of the previous run", "first half, second half", "", "not a cri line at all", "forbidden: cannot update"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSeenAt(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 1, 2, 10, 0, 1, 500_000_000, time.UTC)
	at := func(sec, nsec int) time.Time { return time.Date(2026, 1, 2, 10, 0, sec, nsec, time.UTC) }
	tests := []struct {
		name string
		ev   corev1.Event
		want bool
	}{
		{"micro time after", corev1.Event{EventTime: metav1.NewMicroTime(at(1, 600_000_000))}, true},
		{"micro time before", corev1.Event{EventTime: metav1.NewMicroTime(at(1, 400_000_000))}, false},
		{"series seen again after", corev1.Event{EventTime: metav1.NewMicroTime(at(0, 0)), Series: &corev1.EventSeries{LastObservedTime: metav1.NewMicroTime(at(2, 0))}}, true},
		{"core time in the same second", corev1.Event{LastTimestamp: metav1.NewTime(at(1, 0))}, true},
		{"core time a second before", corev1.Event{LastTimestamp: metav1.NewTime(at(0, 0))}, false},
		{"only first timestamp", corev1.Event{FirstTimestamp: metav1.NewTime(at(3, 0))}, true},
	}
	for _, tt := range tests {
		if got := seenAt(tt.ev, since); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
